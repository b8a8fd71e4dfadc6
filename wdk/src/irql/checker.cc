// SPDX-License-Identifier: Apache-2.0
// The checker's reports, counters and modes (checker.h, softndk_wdk/kit.h).
#include "irql/checker.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernel/bugcheck.h"
#include "kernel/symbolize.h"

namespace softndk::wdk {
namespace {

constexpr const char* kRuleNames[SoftNdkWdkRuleCount] = {
    "wait-at-dispatch",
    "paged-code-at-raised-irql",
    "irql-too-high",
    "irql-mismatch",
    "spin-lock-not-held",
    "spin-lock-recursion",
    "lock-not-owned",
    "pool-wrong-tag",
    "double-free",
    "uninitialized-object",
    "irp-completed-twice",
    "irp-misuse",
    "work-item-misuse",
    "invalid-parameter",
    "leak",
    "rundown-timeout",
    "assertion",
    "bugcheck",
};

SOFTNDK_WDK_CHECK_MODE ModeFromEnvironment() {
  const char* v = std::getenv("SOFTNDK_WDK_CHECK");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "report") == 0) return SoftNdkWdkCheckReport;
  if (std::strcmp(v, "fatal") == 0) return SoftNdkWdkCheckFatal;
  if (std::strcmp(v, "quiet") == 0) return SoftNdkWdkCheckQuiet;
  std::fprintf(stderr,
               "softndk-wdk: SOFTNDK_WDK_CHECK=%s is not fatal|report|quiet; using report\n", v);
  return SoftNdkWdkCheckReport;
}

ULONG RundownLimitFromEnvironment() {
  const char* v = std::getenv("SOFTNDK_WDK_RUNDOWN_WAIT_MS");
  if (v == nullptr || *v == '\0') return 30000;
  char* end = nullptr;
  unsigned long ms = std::strtoul(v, &end, 10);
  if (*end != '\0' || ms == 0 || ms > 3600000) {
    std::fprintf(stderr,
                 "softndk-wdk: SOFTNDK_WDK_RUNDOWN_WAIT_MS=%s is not 1..3600000; using 30000\n", v);
    return 30000;
  }
  return static_cast<ULONG>(ms);
}

struct CheckerState {
  std::atomic<int> mode{ModeFromEnvironment()};
  std::atomic<ULONG> counts[SoftNdkWdkRuleCount] = {};
  std::atomic<ULONG> rundown_limit_ms{RundownLimitFromEnvironment()};
  std::mutex mutex;  // serialises output, last_call, reporters
  std::string last_call;
  std::vector<std::pair<std::string, LeakReporter>> reporters;
};

CheckerState& State() {
  // Never destroyed: kit threads may report during process exit.
  static CheckerState* state = new CheckerState;
  return *state;
}

}  // namespace

std::string DescribeAddress(const void* address) {
  if (address == nullptr) return "?";
  // Static functions too, with file:line where the driver has debug info.
  static const bool init = (SymbolizerInit(), true);
  (void)init;
  SymbolizedFrame f;
  Symbolize(reinterpret_cast<uintptr_t>(address), true, &f);
  char buf[512];
  if (f.module[0] == '\0') {
    std::snprintf(buf, sizeof buf, "%p", address);
  } else {
    FormatFrame(f, buf, sizeof buf);
  }
  return buf;
}

void Report(SOFTNDK_WDK_RULE rule, const char* call, const void* site, const char* fmt, ...) {
  CheckerState& s = State();
  if (rule < 0 || rule >= SoftNdkWdkRuleCount) rule = SoftNdkWdkRuleInvalidParameter;
  s.counts[rule].fetch_add(1);
  char message[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  auto mode = static_cast<SOFTNDK_WDK_CHECK_MODE>(s.mode.load());
  std::lock_guard<std::mutex> lock(s.mutex);
  s.last_call = call ? call : "";
  if (mode == SoftNdkWdkCheckQuiet) return;
  std::string where = DescribeAddress(site);
  std::fprintf(stderr, "softndk-wdk: CHECK %s: %s: %s\n  called from %s\n", kRuleNames[rule],
               call ? call : "?", message, where.c_str());
  // A leak's stack would be the leak check's own; its site says enough.
  void* frames[32];
  int n = rule == SoftNdkWdkRuleLeak ? 0 : backtrace(frames, 32);
  char** symbols = n > 0 ? backtrace_symbols(frames, n) : nullptr;
  // Frame 0 is Report itself.
  for (int i = 1; i < n; i++) {
    std::fprintf(stderr, "    #%-2d %s\n", i - 1, symbols ? symbols[i] : "?");
  }
  std::free(symbols);
  std::fflush(stderr);
  if (mode == SoftNdkWdkCheckFatal) {
    // Driver Verifier stops the machine here: DRIVER_VERIFIER_DETECTED_VIOLATION
    // (the kit's rule number as parameter 1, its own numbering).
    SetPendingBugCheck(0xc4, static_cast<ULONG_PTR>(rule), reinterpret_cast<ULONG_PTR>(site), 0, 0,
                       call ? call : "?", site);
    std::fprintf(stderr,
                 "softndk-wdk: fatal checker (SOFTNDK_WDK_CHECK=fatal): aborting at the first "
                 "violation (%s in %s)\n",
                 kRuleNames[rule], call ? call : "?");
    std::fflush(stderr);
    std::abort();
  }
}

void RegisterLeakReporter(const char* what, LeakReporter reporter) {
  CheckerState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.reporters.emplace_back(what, std::move(reporter));
}

ULONG RundownWaitLimitMs() { return State().rundown_limit_ms.load(); }

}  // namespace softndk::wdk

using softndk::wdk::State;

extern "C" {

VOID SoftNdkWdkSetCheckMode(SOFTNDK_WDK_CHECK_MODE Mode) { State().mode.store(Mode); }

SOFTNDK_WDK_CHECK_MODE SoftNdkWdkGetCheckMode(void) {
  return static_cast<SOFTNDK_WDK_CHECK_MODE>(State().mode.load());
}

ULONG SoftNdkWdkCheckCount(SOFTNDK_WDK_RULE Rule) {
  if (Rule < 0 || Rule >= SoftNdkWdkRuleCount) return 0;
  return State().counts[Rule].load();
}

ULONG SoftNdkWdkCheckTotal(void) {
  ULONG total = 0;
  for (auto& c : State().counts) total += c.load();
  return total;
}

VOID SoftNdkWdkCheckReset(void) {
  auto& s = State();
  for (auto& c : s.counts) c.store(0);
  std::lock_guard<std::mutex> lock(s.mutex);
  s.last_call.clear();
}

PCSTR SoftNdkWdkRuleName(SOFTNDK_WDK_RULE Rule) {
  if (Rule < 0 || Rule >= SoftNdkWdkRuleCount) return "unknown";
  return softndk::wdk::kRuleNames[Rule];
}

PCSTR SoftNdkWdkLastReportCall(void) {
  // Reports are rare; a thread-local copy keeps the pointer valid for the caller.
  thread_local std::string copy;
  auto& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  copy = s.last_call;
  return copy.c_str();
}

ULONG SoftNdkWdkCheckLeaks(void) {
  auto& s = State();
  std::vector<std::pair<std::string, softndk::wdk::LeakReporter>> reporters;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    reporters = s.reporters;
  }
  ULONG leaked = 0;
  for (auto& [what, reporter] : reporters) leaked += reporter();
  return leaked;
}

VOID SoftNdkWdkSetRundownWaitLimit(ULONG Milliseconds) {
  State().rundown_limit_ms.store(Milliseconds == 0 ? 1 : Milliseconds);
}

}  // extern "C"
