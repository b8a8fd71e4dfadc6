// softndk-wdk-run: the host for a Windows kernel driver built as a shared
// object against the WDK kit (docs/wdk.md).
//
//   softndk-wdk-run <driver.so> [--timeout S] [--check fatal|report|quiet]
//                   [--name NAME] [-- driver arguments...]
//
// Loads the driver, calls its DriverEntry at PASSIVE_LEVEL with a
// DRIVER_OBJECT and the registry path
// \Registry\Machine\System\CurrentControlSet\Services\NAME, then waits until
// the driver calls SoftNdkWdkRequestUnload(status), the timeout passes, or
// SIGINT/SIGTERM arrives; calls DriverUnload, drains the kit's DPC and work
// item queues, runs the leak check, and exits:
//   0   DriverEntry succeeded, the driver requested unload with success, no
//       checker report
//   1   DriverEntry failed (DriverUnload is not called, as on Windows)
//   2   the driver requested unload with a failure status
//   3   the checker reported violations (leaks included; also when
//       DriverUnload does not return within SOFTNDK_WDK_RUNDOWN_WAIT_MS)
//   4   timeout: the driver did not request unload within --timeout
//   5   interrupted by SIGINT/SIGTERM
//   64  usage error
//   66  the driver could not be loaded (dlopen, or no DriverEntry)
// When several apply, the first in this order wins: 1, 2, 4, 5, 3.
#include <dlfcn.h>
#include <signal.h>
#include <softndk/softndk.h>
#include <wdm.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "irql/checker.h"
#include "kernel/device.h"
#include "kernel/host.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitEntryFailed = 1;
constexpr int kExitDriverFailed = 2;
constexpr int kExitChecker = 3;
constexpr int kExitTimeout = 4;
constexpr int kExitInterrupted = 5;
constexpr int kExitUsage = 64;
constexpr int kExitNoLoad = 66;

// The options one a line, as the other tools' --help lists them: the manual
// page (tools/man/softndk-wdk-run.1) is checked against these lines.
void Usage(FILE* out) {
  std::fprintf(out,
               "usage: softndk-wdk-run <driver.so> [--timeout S] [--check fatal|report|quiet]\n"
               "                       [--name NAME] [-- driver arguments...]\n"
               "Runs a WDK-kit driver: DriverEntry, until SoftNdkWdkRequestUnload (or the\n"
               "timeout, or SIGINT/SIGTERM), DriverUnload, then the leak check.\n"
               "options:\n"
               "  --timeout S      unload after S seconds without an unload request (exit 4)\n"
               "  --check MODE     checker reports: fatal, report (default) or quiet\n"
               "  --name NAME      service name (registry path, default: from the file name)\n"
               "  -h,--help        print this and exit\n"
               "  --version        print the softndk version and exit\n"
               "exit: 0 clean, 1 DriverEntry failed, 2 driver reported failure, 3 checker\n"
               "reports, 4 timeout, 5 interrupted, 64 usage, 66 cannot load\n");
}

std::wstring Widen(const std::string& s) { return std::wstring(s.begin(), s.end()); }

std::atomic<bool> g_interrupted{false};

// Calls DriverUnload; if it has not returned within the kit's rundown limit
// (SOFTNDK_WDK_RUNDOWN_WAIT_MS), reports it with the leaks found so far and
// ends the process with exit status 3: an unload never hangs the host.
void CallUnloadBounded(PDRIVER_OBJECT driver) {
  std::mutex mutex;
  std::condition_variable cv;
  bool returned = false;
  ULONG limit = softndk::wdk::RundownWaitLimitMs();
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (cv.wait_for(lock, std::chrono::milliseconds(limit), [&] { return returned; })) return;
    softndk::wdk::Report(SoftNdkWdkRuleRundownTimeout, "DriverUnload",
                         reinterpret_cast<const void*>(driver->DriverUnload),
                         "DriverUnload has not returned after %u ms; ending the process", limit);
    SoftNdkWdkCheckLeaks();
    std::fprintf(stderr, "softndk-wdk-run: %u checker report(s)\n", SoftNdkWdkCheckTotal());
    std::fflush(stderr);
    std::_Exit(kExitChecker);
  });
  driver->DriverUnload(driver);
  {
    std::lock_guard<std::mutex> lock(mutex);
    returned = true;
  }
  cv.notify_all();
  watchdog.join();
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  double timeout_s = 0;
  std::string name;
  std::vector<const char*> driver_args;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--") {
      for (int j = i + 1; j < argc; j++) driver_args.push_back(argv[j]);
      break;
    }
    if (a == "-h" || a == "--help") {
      Usage(stdout);
      return kExitOk;
    }
    if (a == "--version") {
      const char* text = nullptr;
      SoftNdkGetVersion(&text);
      std::printf("softndk-wdk-run (softndk) %s\n", text != nullptr ? text : "?");
      return kExitOk;
    }
    if ((a == "--timeout" || a == "--check" || a == "--name") && i + 1 >= argc) {
      std::fprintf(stderr, "softndk-wdk-run: %s needs a value\n", a.c_str());
      return kExitUsage;
    }
    if (a == "--timeout") {
      char* end = nullptr;
      errno = 0;
      timeout_s = std::strtod(argv[++i], &end);
      if (*end != '\0' || errno != 0 || !(timeout_s > 0) || timeout_s > 86400) {
        std::fprintf(stderr,
                     "softndk-wdk-run: --timeout %s is not a number of seconds in (0, 86400]\n",
                     argv[i]);
        return kExitUsage;
      }
    } else if (a == "--check") {
      std::string m = argv[++i];
      if (m == "fatal") {
        SoftNdkWdkSetCheckMode(SoftNdkWdkCheckFatal);
      } else if (m == "report") {
        SoftNdkWdkSetCheckMode(SoftNdkWdkCheckReport);
      } else if (m == "quiet") {
        SoftNdkWdkSetCheckMode(SoftNdkWdkCheckQuiet);
      } else {
        std::fprintf(stderr, "softndk-wdk-run: --check %s is not fatal|report|quiet\n", m.c_str());
        return kExitUsage;
      }
    } else if (a == "--name") {
      name = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "softndk-wdk-run: unknown option %s\n", a.c_str());
      Usage(stderr);
      return kExitUsage;
    } else if (path.empty()) {
      path = a;
    } else {
      std::fprintf(
          stderr,
          "softndk-wdk-run: one driver only (extra argument %s; driver arguments go after --)\n",
          a.c_str());
      return kExitUsage;
    }
  }
  if (path.empty()) {
    Usage(stderr);
    return kExitUsage;
  }
  if (name.empty()) {
    size_t slash = path.find_last_of('/');
    name = path.substr(slash == std::string::npos ? 0 : slash + 1);
    if (name.rfind("lib", 0) == 0) name = name.substr(3);
    size_t dot = name.find('.');
    if (dot != std::string::npos) name = name.substr(0, dot);
    if (name.empty()) name = "driver";
  }

  // SIGINT/SIGTERM go to one thread (blocked everywhere else: threads
  // created later inherit the mask), which turns them into an unload.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread([signals] {
    int sig = 0;
    if (sigwait(&signals, &sig) == 0) {
      g_interrupted = true;
      SoftNdkWdkRequestUnload(STATUS_CANCELLED);
    }
  }).detach();

  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    std::fprintf(stderr, "softndk-wdk-run: cannot load %s: %s\n", path.c_str(), dlerror());
    return kExitNoLoad;
  }
  auto* entry = reinterpret_cast<PDRIVER_INITIALIZE>(dlsym(module, "DriverEntry"));
  if (entry == nullptr) {
    std::fprintf(stderr,
                 "softndk-wdk-run: %s has no DriverEntry (a C++ driver declares it extern \"C\")\n",
                 path.c_str());
    return kExitNoLoad;
  }
  SoftNdkWdkSetArguments(static_cast<ULONG>(driver_args.size()), driver_args.data());

  std::wstring wname = Widen(name);
  PDRIVER_OBJECT driver = softndk::wdk::CreateDriverObject(wname.c_str());
  std::wstring registry = L"\\Registry\\Machine\\System\\CurrentControlSet\\Services\\" + wname;
  UNICODE_STRING registry_path;
  RtlInitUnicodeString(&registry_path, registry.c_str());
  driver->DriverInit = entry;

  NTSTATUS st = entry(driver, &registry_path);
  if (KeGetCurrentIrql() != PASSIVE_LEVEL) {
    std::fprintf(stderr, "softndk-wdk-run: DriverEntry returned at IRQL %u\n", KeGetCurrentIrql());
  }
  int code = kExitOk;
  if (!NT_SUCCESS(st)) {
    std::fprintf(stderr, "softndk-wdk-run: DriverEntry failed: 0x%08x\n",
                 static_cast<unsigned>(st));
    code = kExitEntryFailed;
  } else {
    NTSTATUS driver_status = STATUS_SUCCESS;
    ULONG ms = timeout_s > 0 ? static_cast<ULONG>(timeout_s * 1000 + 0.5) : 0;
    if (ms == 0 && timeout_s > 0) ms = 1;
    bool requested = SoftNdkWdkWaitForUnloadRequest(ms, &driver_status);
    if (!requested) {
      std::fprintf(stderr, "softndk-wdk-run: timeout: no unload request within %g s\n", timeout_s);
      code = kExitTimeout;
    } else if (g_interrupted) {
      std::fprintf(stderr, "softndk-wdk-run: interrupted; unloading\n");
      code = kExitInterrupted;
    } else if (!NT_SUCCESS(driver_status)) {
      std::fprintf(stderr, "softndk-wdk-run: the driver reported failure: 0x%08x\n",
                   static_cast<unsigned>(driver_status));
      code = kExitDriverFailed;
    }
    if (driver->DriverUnload != nullptr) {
      CallUnloadBounded(driver);
    } else {
      std::fprintf(stderr, "softndk-wdk-run: the driver has no DriverUnload (not unloadable)\n");
    }
  }
  softndk::wdk::DrainForUnload("DriverUnload");
  SoftNdkWdkCheckLeaks();
  ULONG reports = SoftNdkWdkCheckTotal();
  if (reports != 0) {
    std::fprintf(stderr, "softndk-wdk-run: %u checker report(s)\n", reports);
    if (code == kExitOk) code = kExitChecker;
  }
  softndk::wdk::DeleteDriverObject(driver);
  // The driver's code stays mapped: kit threads may still hold its addresses.
  std::fflush(stdout);
  return code;
}
