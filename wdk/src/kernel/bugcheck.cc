// SPDX-License-Identifier: Apache-2.0
// The bug-check analysis (bugcheck.h). The handler runs on an alternate
// signal stack and keeps to what is safe there in practice: no locks it
// could already hold (the pool lookup only tries its lock), no malloc
// (snprintf into stack buffers, write(2), libbacktrace's mmap allocator,
// glibc's backtrace() warmed up at install), and a second fault while
// reporting ends the process at once with the same status.
#include "kernel/bugcheck.h"

#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "irql/irql.h"
#include "kernel/pool.h"
#include "kernel/symbolize.h"

namespace softndk::wdk {
namespace {

constexpr size_t kAltStackBytes = 256 * 1024;
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT};

std::atomic<bool> g_installed{false};
std::atomic<int> g_exit_code{7};
std::atomic<long> g_reporter{0};  // the thread reporting

struct Pending {
  std::atomic<bool> set{false};
  ULONG code = 0;
  ULONG_PTR p[4] = {};
  const char* call = "";
  const void* site = nullptr;
};
Pending g_pending;

struct Known {
  ULONG code;
  const char* name;
  const char* meaning;
};
constexpr Known kKnown[] = {
    {0x0a, "IRQL_NOT_LESS_OR_EQUAL",
     "An attempt was made to access a pageable (or completely invalid) address at an interrupt "
     "request level (IRQL) that is too high."},
    {0x1e, "KMODE_EXCEPTION_NOT_HANDLED",
     "A kernel-mode program generated an exception which the error handler did not catch."},
    {0x50, "PAGE_FAULT_IN_NONPAGED_AREA", "Invalid system memory was referenced."},
    {0x7e, "SYSTEM_THREAD_EXCEPTION_NOT_HANDLED",
     "A system thread generated an exception which the error handler did not catch."},
    {0xc1, "SPECIAL_POOL_DETECTED_MEMORY_CORRUPTION",
     "The driver wrote to an invalid section of the special pool."},
    {0xc2, "BAD_POOL_CALLER", "The current thread is making a bad pool request."},
    {0xc4, "DRIVER_VERIFIER_DETECTED_VIOLATION",
     "A device driver attempting to corrupt the system has been caught (the kit's checker, "
     "fatal mode)."},
    {0xe2, "MANUALLY_INITIATED_CRASH", "The driver called KeBugCheckEx with this code."},
    {0xd1, "DRIVER_IRQL_NOT_LESS_OR_EQUAL",
     "An attempt was made to access a pageable (or completely invalid) address at an interrupt "
     "request level (IRQL) that is too high."},
    {0xd5, "DRIVER_PAGE_FAULT_IN_FREED_SPECIAL_POOL",
     "Memory was referenced after it was freed (Special Pool)."},
    {0xd6, "DRIVER_PAGE_FAULT_BEYOND_END_OF_ALLOCATION",
     "The driver accessed memory beyond the end of its pool allocation (Special Pool)."},
};

const Known* Find(ULONG code) {
  for (const Known& k : kKnown) {
    if (k.code == code) return &k;
  }
  return nullptr;
}

// Output straight to stderr, a line at a time.
void Out(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Out(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len = static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1;
  const char* p = buf;
  while (len > 0) {
    ssize_t w = write(2, p, len);
    if (w <= 0) return;
    p += w;
    len -= static_cast<size_t>(w);
  }
}

void OutFrame(const char* indent, int index, uintptr_t pc, bool return_address,
              SymbolizedFrame* first_driver_frame) {
  SymbolizedFrame f;
  Symbolize(pc, return_address, &f);
  char line[512];
  FormatFrame(f, line, sizeof line);
  Out("%s#%-2d %016lx %s\n", indent, index, static_cast<unsigned long>(pc), line);
  if (first_driver_frame != nullptr && !f.in_kit && first_driver_frame->module[0] == '\0') {
    *first_driver_frame = f;
  }
}

// A recorded stack (allocation or free), skipping the kit's own frames.
void OutStack(void* const* frames, int n) {
  int shown = 0;
  for (int i = 0; i < n; i++) {
    SymbolizedFrame f;
    Symbolize(reinterpret_cast<uintptr_t>(frames[i]), true, &f);
    if (f.in_kit && shown == 0) continue;
    char line[512];
    FormatFrame(f, line, sizeof line);
    Out("      #%-2d %s\n", shown++, line);
  }
}

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "signal";
  }
}

// The exception Windows raises for a signal (STATUS_* values).
ULONG_PTR ExceptionCode(int sig, int si_code) {
  switch (sig) {
    case SIGSEGV:
    case SIGBUS:
      return 0xc0000005;  // STATUS_ACCESS_VIOLATION
    case SIGILL:
      return 0xc000001d;  // STATUS_ILLEGAL_INSTRUCTION
    case SIGFPE:
      if (si_code == FPE_INTDIV) return 0xc0000094;  // STATUS_INTEGER_DIVIDE_BY_ZERO
      if (si_code == FPE_INTOVF) return 0xc0000095;  // STATUS_INTEGER_OVERFLOW
      return 0xc0000090;                             // STATUS_FLOAT_INVALID_OPERATION
    case SIGTRAP:
      return 0x80000003;  // STATUS_BREAKPOINT
    default:
      return 0x40000015;  // STATUS_FATAL_APP_EXIT (abort)
  }
}

struct Analysis {
  ULONG code = 0x1e;
  ULONG_PTR p[4] = {};
  const char* arg_text[4] = {"", "", "", ""};
};

void Handler(int sig, siginfo_t* info, void* context) {
  const long tid = syscall(SYS_gettid);
  long expected = 0;
  if (!g_reporter.compare_exchange_strong(expected, tid)) {
    // A fault while reporting ends the process at once; another thread's
    // fault waits for the report in progress to end the process.
    if (expected == tid) _exit(g_exit_code.load());
    for (;;) pause();
  }
  auto* uc = static_cast<ucontext_t*>(context);
  uintptr_t ip = 0;
  bool write_access = false;
  bool exec_access = false;
#if defined(__x86_64__)
  ip = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  write_access = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
  exec_access = (uc->uc_mcontext.gregs[REG_ERR] & 16) != 0;
#elif defined(__aarch64__)
  ip = static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
#endif
  const auto fault = reinterpret_cast<uintptr_t>(info->si_addr);
  const KIRQL irql = CurrentIrql();
  const bool memory_fault = sig == SIGSEGV || sig == SIGBUS;

  PoolAddressInfo pool;
  if (memory_fault) LookupPoolAddress(fault, &pool);

  Analysis a;
  const ULONG_PTR rw = exec_access ? 8 : (write_access ? 1 : 0);
  if (sig == SIGABRT && g_pending.set.load()) {
    a.code = g_pending.code;
    for (int i = 0; i < 4; i++) a.p[i] = g_pending.p[i];
    a.arg_text[0] = a.arg_text[1] = a.arg_text[2] = a.arg_text[3] = "";
    if (a.code == 0x1e) {
      a.arg_text[0] = "the exception code that was not handled";
      a.arg_text[1] = "the address where the exception occurred";
    }
  } else if (memory_fault && pool.found && pool.special && pool.freed) {
    a.code = 0xd5;
    a.p[0] = fault, a.p[1] = write_access ? 1 : 0, a.p[2] = ip;
    a.arg_text[0] = "memory referenced";
    a.arg_text[1] = "value 0 = read operation, 1 = write operation";
    a.arg_text[2] = "if non-zero, the address which referenced memory";
    a.arg_text[3] = "(reserved)";
  } else if (memory_fault && pool.found && pool.special && fault >= pool.start + pool.size) {
    a.code = 0xd6;
    a.p[0] = fault, a.p[1] = write_access ? 1 : 0, a.p[2] = ip;
    a.arg_text[0] = "memory referenced";
    a.arg_text[1] = "value 0 = read operation, 1 = write operation";
    a.arg_text[2] = "if non-zero, the address which referenced memory";
    a.arg_text[3] = "(reserved)";
  } else if (memory_fault && irql >= DISPATCH_LEVEL) {
    a.code = 0xd1;
    a.p[0] = fault, a.p[1] = irql, a.p[2] = rw, a.p[3] = ip;
    a.arg_text[0] = "memory referenced";
    a.arg_text[1] = "IRQL";
    a.arg_text[2] = "value 0 = read operation, 1 = write operation, 8 = execute";
    a.arg_text[3] = "address which referenced memory";
  } else if (memory_fault && fault >= 0x10000) {
    a.code = 0x50;
    a.p[0] = fault, a.p[1] = rw == 8 ? 10 : rw, a.p[2] = ip, a.p[3] = 2;
    a.arg_text[0] = "memory referenced";
    a.arg_text[1] = "value 0 = read operation, 1 = write operation, 10 = execute";
    a.arg_text[2] = "if non-zero, the instruction address which referenced the bad memory";
    a.arg_text[3] = "(reserved)";
  } else {
    a.code = 0x1e;
    a.p[0] = ExceptionCode(sig, info->si_code);
    a.p[1] = ip;
    a.p[2] = memory_fault ? rw : 0;
    a.p[3] = memory_fault ? fault : 0;
    a.arg_text[0] = "the exception code that was not handled";
    a.arg_text[1] = "the address where the exception occurred";
    a.arg_text[2] = memory_fault ? "parameter 0 of the exception (0 read, 1 write, 8 execute)"
                                 : "parameter 0 of the exception";
    a.arg_text[3] = memory_fault ? "parameter 1 of the exception (the address referenced)"
                                 : "parameter 1 of the exception";
  }
  const Known* k = Find(a.code);
  const char* name = k ? k->name : "BUGCHECK";

  Out("\n*******************************************************************************\n"
      "*                                                                             *\n"
      "*                  Bugcheck Analysis (softndk-wdk, !analyze -v)               *\n"
      "*                                                                             *\n"
      "*******************************************************************************\n\n");
  Out("%s (%lx)\n", name, static_cast<unsigned long>(a.code));
  if (k != nullptr) Out("%s\n", k->meaning);
  Out("Arguments:\n");
  for (int i = 0; i < 4; i++) {
    Out("Arg%d: %016lx, %s\n", i + 1, static_cast<unsigned long>(a.p[i]), a.arg_text[i]);
  }
  Out("\n");
  if (sig == SIGABRT && g_pending.set.load()) {
    SymbolizedFrame f;
    Symbolize(reinterpret_cast<uintptr_t>(g_pending.site), true, &f);
    char line[512];
    FormatFrame(f, line, sizeof line);
    Out("RAISED_BY: %s, called from %s\n", g_pending.call, line);
  } else {
    Out("SIGNAL: %s (si_code %d)\n", SignalName(sig), info->si_code);
  }
  if (memory_fault) {
    Out("FAULTING_ADDRESS: %016lx (%s)\n", static_cast<unsigned long>(fault),
        exec_access ? "execute" : (write_access ? "write" : "read"));
  }
  if (ip != 0) {
    SymbolizedFrame f;
    Symbolize(ip, false, &f);
    char line[512];
    FormatFrame(f, line, sizeof line);
    Out("FAULTING_IP: %s\n", line);
  }
  Out("CURRENT_IRQL: %u (%s)\n", static_cast<unsigned>(irql), IrqlName(irql));
  char thread_name[32] = "?";
  pthread_getname_np(pthread_self(), thread_name, sizeof thread_name);
  Out("THREAD: %ld (%s)\n", tid, thread_name);

  if (memory_fault) {
    Out("ADDRESS_ANALYSIS: ");
    if (fault < 0x10000) {
      Out("NULL + 0x%lx: a NULL pointer dereference (a member at offset 0x%lx of a structure "
          "whose pointer is NULL)\n",
          static_cast<unsigned long>(fault), static_cast<unsigned long>(fault));
    } else if (pool.found) {
      const char* what = pool.special ? "special pool block" : "pool block";
      if (fault >= pool.start + pool.size) {
        Out("%lu bytes past the end of %s %016lx (tag '%c%c%c%c', %zu bytes)%s\n",
            static_cast<unsigned long>(fault - (pool.start + pool.size)), what,
            static_cast<unsigned long>(pool.start), static_cast<char>(pool.tag & 0xff),
            static_cast<char>((pool.tag >> 8) & 0xff), static_cast<char>((pool.tag >> 16) & 0xff),
            static_cast<char>((pool.tag >> 24) & 0xff), pool.size,
            pool.freed ? ", which was freed" : "");
      } else if (fault < pool.start) {
        Out("%lu bytes before the start of %s %016lx (tag '%c%c%c%c', %zu bytes)%s\n",
            static_cast<unsigned long>(pool.start - fault), what,
            static_cast<unsigned long>(pool.start), static_cast<char>(pool.tag & 0xff),
            static_cast<char>((pool.tag >> 8) & 0xff), static_cast<char>((pool.tag >> 16) & 0xff),
            static_cast<char>((pool.tag >> 24) & 0xff), pool.size,
            pool.freed ? ", which was freed" : "");
      } else {
        Out("offset 0x%lx inside %s %016lx (tag '%c%c%c%c', %zu bytes)%s\n",
            static_cast<unsigned long>(fault - pool.start), what,
            static_cast<unsigned long>(pool.start), static_cast<char>(pool.tag & 0xff),
            static_cast<char>((pool.tag >> 8) & 0xff), static_cast<char>((pool.tag >> 16) & 0xff),
            static_cast<char>((pool.tag >> 24) & 0xff), pool.size,
            pool.freed ? ", which was FREED" : "");
      }
      SymbolizedFrame f;
      char line[512];
      Symbolize(reinterpret_cast<uintptr_t>(pool.alloc_site), true, &f);
      FormatFrame(f, line, sizeof line);
      Out("    allocated by %s at %s\n", pool.alloc_call, line);
      if (pool.alloc_frames > 0) OutStack(pool.alloc_stack, pool.alloc_frames);
      if (pool.freed) {
        Symbolize(reinterpret_cast<uintptr_t>(pool.free_site), true, &f);
        FormatFrame(f, line, sizeof line);
        Out("    freed by %s at %s\n", pool.free_call, line);
        if (pool.free_frames > 0) OutStack(pool.free_stack, pool.free_frames);
      }
    } else {
      Out("%016lx is not a pool block the kit knows (not mapped, or memory the driver did not "
          "get from the pool)\n",
          static_cast<unsigned long>(fault));
    }
  }

  // The stack of the faulting thread: glibc unwinds through the signal
  // frame; the frames before the faulting instruction are the handler's.
  void* frames[64];
  int n = backtrace(frames, 64);
  int start = 0;
  for (int i = 0; i < n; i++) {
    if (reinterpret_cast<uintptr_t>(frames[i]) == ip) {
      start = i;
      break;
    }
  }
  Out("\nSTACK_TEXT:\n");
  SymbolizedFrame culprit;
  int index = 0;
  if (start == 0 && ip != 0) {
    OutFrame("  ", index++, ip, false, &culprit);
    start = n > 2 ? 2 : n;  // the handler and the signal trampoline
  }
  for (int i = start; i < n; i++) {
    OutFrame("  ", index++, reinterpret_cast<uintptr_t>(frames[i]), i != start || ip == 0,
             &culprit);
  }
  Out("\n");
  if (culprit.module[0] != '\0') {
    Out("MODULE_NAME: %s\n", culprit.module);
    Out("SYMBOL_NAME: %s!%s+0x%lx\n", culprit.module, culprit.function[0] ? culprit.function : "?",
        static_cast<unsigned long>(culprit.offset));
    if (culprit.file[0] != '\0') Out("SOURCE: %s:%d\n", culprit.file, culprit.line);
  }
  Out("BUGCHECK_CODE: 0x%lx (%s)\n", static_cast<unsigned long>(a.code), name);
  Out("softndk-wdk: bug check 0x%lx %s%s%s; ending the process (exit %d)\n",
      static_cast<unsigned long>(a.code), name, culprit.module[0] ? " in " : "",
      culprit.module[0] ? culprit.function : "", g_exit_code.load());
  _exit(g_exit_code.load());
}

thread_local struct AltStack {
  void* mem = nullptr;
  ~AltStack() {
    if (mem == nullptr) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    munmap(mem, kAltStackBytes);
  }
} t_alt_stack;

}  // namespace

const char* BugCheckName(ULONG code) {
  const Known* k = Find(code);
  return k ? k->name : "";
}

void PrepareThreadForFaults() {
  if (!g_installed.load() || t_alt_stack.mem != nullptr) return;
  void* m =
      mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return;
  stack_t ss{};
  ss.ss_sp = m;
  ss.ss_size = kAltStackBytes;
  if (sigaltstack(&ss, nullptr) != 0) {
    munmap(m, kAltStackBytes);
    return;
  }
  t_alt_stack.mem = m;
}

void InstallBugCheckHandler(int exit_code) {
  g_exit_code.store(exit_code);
  SymbolizerInit();
  // backtrace() loads libgcc's unwinder on first use: not in the handler.
  void* warm[4];
  backtrace(warm, 4);
  struct sigaction sa {};
  sa.sa_sigaction = Handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaction(s, &sa, nullptr);
  g_installed.store(true);
  PrepareThreadForFaults();
}

void SetPendingBugCheck(ULONG code, ULONG_PTR p1, ULONG_PTR p2, ULONG_PTR p3, ULONG_PTR p4,
                        const char* call, const void* site) {
  if (g_pending.set.load()) return;
  g_pending.code = code;
  g_pending.p[0] = p1;
  g_pending.p[1] = p2;
  g_pending.p[2] = p3;
  g_pending.p[3] = p4;
  g_pending.call = call;
  g_pending.site = site;
  g_pending.set.store(true);
}

}  // namespace softndk::wdk
