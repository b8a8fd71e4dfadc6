// SPDX-License-Identifier: Apache-2.0
// softndk-wdk-run: the host for a Windows kernel driver built as a shared
// object against the WDK kit (docs/wdk.md, "Running a driver").
//
// The driver's lifecycle is Windows': DriverEntry at PASSIVE_LEVEL with a
// DRIVER_OBJECT and the registry path
// \Registry\Machine\System\CurrentControlSet\Services\NAME; the driver runs
// until it asks to be unloaded (SoftNdkWdkRequestUnload), --stop-after
// passes, or SIGINT/SIGTERM arrives (`sc stop`); then DriverUnload, the drain
// of the kit's DPC and work item queues and the leak check. DriverEntry and
// DriverUnload run on their own threads while the main thread keeps the
// bounds: --timeout covers DriverEntry too, DriverUnload has a deadline, a
// signal during DriverEntry ends the process, and a second signal during
// the unload ends it at once. A fault in the driver is a bug check report
// (kernel/bugcheck.h). Exit statuses: run_options.h, kExitCodes.
#include <dlfcn.h>
#include <signal.h>
#include <wdm.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "irql/checker.h"
#include "kernel/bugcheck.h"
#include "kernel/device.h"
#include "kernel/host.h"
#include "kernel/pool.h"
#include "kernel/stress.h"
#include "kernel/symbolize.h"
#include "net/adapter_pcap.h"
#include "net/ndk_trace.h"
#include "run_options.h"

using namespace softndk::wdk;
using namespace softndk::wdk::run;
using Clock = std::chrono::steady_clock;

namespace {

std::wstring Widen(const std::string& s) { return std::wstring(s.begin(), s.end()); }

std::string DefaultName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  if (name.rfind("lib", 0) == 0) name = name.substr(3);
  size_t dot = name.find('.');
  if (dot != std::string::npos) name = name.substr(0, dot);
  return name.empty() ? "driver" : name;
}

// "DrvUnload (mydriver.so) [driver.c:88]": a driver routine by name.
std::string RoutineName(const void* fn) {
  SymbolizedFrame f;
  Symbolize(reinterpret_cast<uintptr_t>(fn), false, &f);
  std::string s = f.function[0] ? f.function : "?";
  s += std::string(" (") + (f.module[0] ? f.module : "?") + ")";
  if (f.file[0]) s += std::string(" [") + f.file + ":" + std::to_string(f.line) + "]";
  return s;
}

// SIGINT/SIGTERM, blocked in every thread, taken here with a bound.
sigset_t g_stop_signals;

int WaitStopSignal(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  int s = sigtimedwait(&g_stop_signals, nullptr, &ts);
  return s > 0 ? s : 0;
}

const char* SignalName(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

[[noreturn]] void Exit(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

// Runs DriverUnload, the drain and the leak check on a thread, within the
// unload deadline; a stop signal meanwhile ends the process at once.
int Unload(PDRIVER_OBJECT driver, int code) {
  std::atomic<bool> unload_returned{false};
  std::atomic<bool> done{false};
  std::atomic<ULONG> reports{0};
  const bool has_unload = driver->DriverUnload != nullptr;
  if (!has_unload) {
    std::fprintf(stderr, "softndk-wdk-run: the driver has no DriverUnload (not unloadable)\n");
  }
  std::thread worker([&] {
    PrepareThreadForFaults();
    if (has_unload) driver->DriverUnload(driver);
    unload_returned = true;
    DrainForUnload("DriverUnload");
    SoftNdkWdkCheckLeaks();
    reports = SoftNdkWdkCheckTotal();
    done = true;
  });
  const ULONG limit_ms = RundownWaitLimitMs();
  // The drain and the leak check each have their own bound (the rundown
  // limit per queue); this one covers DriverUnload itself.
  auto deadline = Clock::now() + std::chrono::milliseconds(limit_ms);
  while (!done) {
    int sig = WaitStopSignal(20);
    if (sig != 0) {
      std::fprintf(
          stderr, "softndk-wdk-run: %s again while %s; ending at once\n", SignalName(sig),
          unload_returned
              ? "draining after DriverUnload"
              : ("DriverUnload " +
                 RoutineName(reinterpret_cast<const void*>(driver->DriverUnload)) + " is running")
                    .c_str());
      Exit(sig == SIGINT ? kExitForcedSigint : kExitForcedSigterm);
    }
    if (!unload_returned && Clock::now() > deadline) {
      std::string who = RoutineName(reinterpret_cast<const void*>(driver->DriverUnload));
      Report(SoftNdkWdkRuleRundownTimeout, "DriverUnload",
             reinterpret_cast<const void*>(driver->DriverUnload),
             "DriverUnload %s has not returned after %u ms (--unload-timeout); ending the process",
             who.c_str(), limit_ms);
      SoftNdkWdkCheckLeaks();
      std::fprintf(stderr, "softndk-wdk-run: %u checker report(s)\n", SoftNdkWdkCheckTotal());
      Exit(kExitUnloadHung);
    }
  }
  worker.join();
  if (reports != 0) {
    std::fprintf(stderr, "softndk-wdk-run: %u checker report(s)\n", reports.load());
    if (code == kExitOk) code = kExitChecker;
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  RunOptions o;
  int parsed = ParseRunOptions(argc, argv, &o);
  if (parsed >= 0) return parsed;
  if (o.name.empty()) o.name = DefaultName(o.path);

  // Before any thread exists, so every thread inherits the mask: only the
  // main thread takes SIGINT/SIGTERM (sigtimedwait).
  sigemptyset(&g_stop_signals);
  sigaddset(&g_stop_signals, SIGINT);
  sigaddset(&g_stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &g_stop_signals, nullptr);

  void* module = dlopen(o.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    std::fprintf(stderr, "softndk-wdk-run: cannot load %s: %s\n", o.path.c_str(), dlerror());
    return kExitNoLoad;
  }
  auto* entry = reinterpret_cast<PDRIVER_INITIALIZE>(dlsym(module, "DriverEntry"));
  if (entry == nullptr) {
    std::fprintf(stderr,
                 "softndk-wdk-run: %s has no DriverEntry (a C++ driver declares it extern \"C\")\n",
                 o.path.c_str());
    return kExitNoLoad;
  }
  // After the driver is loaded: the symbolizer reads its debug info now.
  InstallBugCheckHandler(kExitBugCheck);
  if (o.special_pool) ConfigureSpecialPool(true, o.special_pool_tags, o.special_pool_align_start);
  if (!o.pcap.empty() && !net::ConfigureAdapterPcap(o.pcap)) return kExitUsage;
  if (!o.trace.empty() && !net::trace::Configure(o.trace)) return kExitUsage;
  if (o.stress) {
    ConfigureStress(true, o.stress_seed);
    std::fprintf(stderr,
                 "softndk-wdk-run: concurrency stress, seed %llu (--stress %llu repeats it)\n",
                 o.stress_seed, o.stress_seed);
  }
  if (o.unload_timeout_s > 0) {
    SoftNdkWdkSetRundownWaitLimit(static_cast<ULONG>(o.unload_timeout_s * 1000 + 0.5));
  }
  SoftNdkWdkSetArguments(static_cast<ULONG>(o.driver_args.size()), o.driver_args.data());

  std::wstring wname = Widen(o.name);
  PDRIVER_OBJECT driver = CreateDriverObject(wname.c_str());
  std::wstring registry = L"\\Registry\\Machine\\System\\CurrentControlSet\\Services\\" + wname;
  UNICODE_STRING registry_path;
  RtlInitUnicodeString(&registry_path, registry.c_str());
  SoftNdkWdkRegistrySetServiceKey(&registry_path);
  for (const auto& [is_file, arg] : o.registry_inputs) {
    NTSTATUS rs =
        is_file ? SoftNdkWdkRegistryLoad(arg.c_str()) : SoftNdkWdkRegistrySet(arg.c_str());
    if (!NT_SUCCESS(rs)) return kExitUsage;  // the kit said what is wrong on stderr
  }
  driver->DriverInit = entry;

  const Clock::time_point start = Clock::now();
  auto timed_out = [&] { return o.timeout_s > 0 && Since(start) >= o.timeout_s; };

  // DriverEntry, bounded by --timeout and interruptible.
  std::atomic<bool> entry_done{false};
  NTSTATUS st = STATUS_UNSUCCESSFUL;
  std::thread entry_thread([&] {
    PrepareThreadForFaults();
    st = entry(driver, &registry_path);
    if (KeGetCurrentIrql() != PASSIVE_LEVEL) {
      std::fprintf(stderr, "softndk-wdk-run: DriverEntry returned at IRQL %u\n",
                   KeGetCurrentIrql());
    }
    entry_done = true;
  });
  while (!entry_done) {
    int sig = WaitStopSignal(20);
    if (sig != 0) {
      std::fprintf(stderr,
                   "softndk-wdk-run: %s while DriverEntry %s is still running (%.1f s); a driver "
                   "cannot be stopped before DriverEntry returns: ending the process\n",
                   SignalName(sig), RoutineName(reinterpret_cast<const void*>(entry)).c_str(),
                   Since(start));
      Exit(kExitInterruptedEntry);
    }
    if (timed_out()) {
      std::fprintf(stderr,
                   "softndk-wdk-run: timeout: DriverEntry %s has not returned within %g s "
                   "(--timeout); ending the process\n",
                   RoutineName(reinterpret_cast<const void*>(entry)).c_str(), o.timeout_s);
      Exit(kExitTimeout);
    }
  }
  entry_thread.join();

  int code = kExitOk;
  if (!NT_SUCCESS(st)) {
    std::fprintf(stderr, "softndk-wdk-run: DriverEntry failed: 0x%08x\n",
                 static_cast<unsigned>(st));
    code = kExitEntryFailed;
    DrainForUnload("DriverEntry");
    SoftNdkWdkCheckLeaks();
    if (SoftNdkWdkCheckTotal() != 0) {
      std::fprintf(stderr, "softndk-wdk-run: %u checker report(s)\n", SoftNdkWdkCheckTotal());
    }
  } else {
    // Running: until the driver's request, --stop-after, a signal or --timeout.
    const Clock::time_point running = Clock::now();
    NTSTATUS driver_status = STATUS_SUCCESS;
    for (;;) {
      if (SoftNdkWdkWaitForUnloadRequest(20, &driver_status)) {
        if (!NT_SUCCESS(driver_status)) {
          std::fprintf(stderr, "softndk-wdk-run: the driver reported failure: 0x%08x\n",
                       static_cast<unsigned>(driver_status));
          code = kExitDriverFailed;
        }
        break;
      }
      int sig = WaitStopSignal(1);
      if (sig != 0) {
        std::fprintf(stderr,
                     "softndk-wdk-run: %s: stopping the driver (as `sc stop`); a second %s ends "
                     "at once\n",
                     SignalName(sig), SignalName(sig));
        break;
      }
      if (o.stop_after_s > 0 && Since(running) >= o.stop_after_s) {
        std::fprintf(stderr, "softndk-wdk-run: stopping the driver after %g s (--stop-after)\n",
                     o.stop_after_s);
        break;
      }
      if (timed_out()) {
        std::fprintf(stderr, "softndk-wdk-run: timeout: no unload request within %g s\n",
                     o.timeout_s);
        code = kExitTimeout;
        break;
      }
    }
    code = Unload(driver, code);
  }
  DeleteDriverObject(driver);
  // The driver's code stays mapped: kit threads may still hold its addresses.
  std::fflush(stdout);
  std::fflush(stderr);
  return code;
}
