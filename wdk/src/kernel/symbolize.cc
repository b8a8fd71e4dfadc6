// SPDX-License-Identifier: Apache-2.0
// The symbolizer (symbolize.h).
#include "kernel/symbolize.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#ifdef SOFTNDK_WDK_HAVE_LIBBACKTRACE
#include <backtrace.h>
#endif

namespace softndk::wdk {
namespace {

#ifdef SOFTNDK_WDK_HAVE_LIBBACKTRACE
backtrace_state* g_state = nullptr;

void IgnoreError(void*, const char*, int) {}

struct PcInfo {
  SymbolizedFrame* out;
  bool done;
};

int OnPcInfo(void* data, uintptr_t, const char* file, int line, const char* function) {
  auto* info = static_cast<PcInfo*>(data);
  // Called innermost (inlined) frame first: file:line is the code that ran,
  // the function is the outermost one, the function the object holds.
  if (function != nullptr) {
    std::snprintf(info->out->function, sizeof info->out->function, "%s", function);
  }
  if (!info->done && file != nullptr) {
    std::snprintf(info->out->file, sizeof info->out->file, "%s", file);
    info->out->line = line;
    info->done = true;
  }
  return 0;
}

void OnSymInfo(void* data, uintptr_t pc, const char* symname, uintptr_t symval, uintptr_t) {
  auto* out = static_cast<SymbolizedFrame*>(data);
  if (symname != nullptr && out->function[0] == '\0') {
    std::snprintf(out->function, sizeof out->function, "%s", symname);
  }
  if (symname != nullptr) out->offset = pc - symval;
}
#endif

bool KitModule(const char* name) {
  return std::strncmp(name, "libsoftndk", 10) == 0 || std::strncmp(name, "libc.so", 7) == 0 ||
         std::strncmp(name, "libstdc++", 9) == 0 || std::strncmp(name, "libgcc", 6) == 0 ||
         std::strncmp(name, "softndk-wdk-run", 15) == 0;
}

}  // namespace

void SymbolizerInit() {
#ifdef SOFTNDK_WDK_HAVE_LIBBACKTRACE
  if (g_state == nullptr) g_state = backtrace_create_state(nullptr, 1, IgnoreError, nullptr);
  // The first lookup reads the loaded objects' debug info: do it now, not
  // in a signal handler.
  SymbolizedFrame f;
  Symbolize(reinterpret_cast<uintptr_t>(&SymbolizerInit), false, &f);
#endif
}

void Symbolize(uintptr_t pc, bool return_address, SymbolizedFrame* out) {
  *out = SymbolizedFrame{};
  uintptr_t lookup = return_address ? pc - 1 : pc;
  Dl_info dl{};
  uintptr_t symval = 0;
  if (dladdr(reinterpret_cast<void*>(lookup), &dl) != 0) {
    const char* m = dl.dli_fname != nullptr ? std::strrchr(dl.dli_fname, '/') : nullptr;
    m = m != nullptr ? m + 1 : (dl.dli_fname != nullptr ? dl.dli_fname : "?");
    std::snprintf(out->module, sizeof out->module, "%s", m);
    out->in_kit = KitModule(out->module);
    if (dl.dli_sname != nullptr) {
      std::snprintf(out->function, sizeof out->function, "%s", dl.dli_sname);
      symval = reinterpret_cast<uintptr_t>(dl.dli_saddr);
    }
    out->offset = pc - (symval != 0 ? symval : reinterpret_cast<uintptr_t>(dl.dli_fbase));
  }
#ifdef SOFTNDK_WDK_HAVE_LIBBACKTRACE
  if (g_state != nullptr) {
    PcInfo info{out, false};
    char exported[sizeof out->function];
    std::memcpy(exported, out->function, sizeof exported);
    out->function[0] = '\0';
    backtrace_pcinfo(g_state, lookup, OnPcInfo, IgnoreError, &info);
    if (out->function[0] == '\0') {
      backtrace_syminfo(g_state, lookup, OnSymInfo, IgnoreError, out);
    } else {
      // An offset from the symbol table's start of the function.
      SymbolizedFrame probe;
      backtrace_syminfo(g_state, lookup, OnSymInfo, IgnoreError, &probe);
      if (probe.function[0] != '\0') out->offset = probe.offset + (pc - lookup);
    }
    if (out->function[0] == '\0') std::memcpy(out->function, exported, sizeof exported);
  }
#endif
}

void FormatFrame(const SymbolizedFrame& f, char* buf, size_t n) {
  int k = std::snprintf(buf, n, "%s!%s+0x%lx", f.module[0] ? f.module : "?",
                        f.function[0] ? f.function : "?", static_cast<unsigned long>(f.offset));
  if (f.file[0] != '\0' && k > 0 && static_cast<size_t>(k) < n) {
    std::snprintf(buf + k, n - k, " [%s:%d]", f.file, f.line);
  }
}

}  // namespace softndk::wdk
