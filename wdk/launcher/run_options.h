// SPDX-License-Identifier: Apache-2.0
// softndk-wdk-run's command line and exit statuses (docs/wdk.md, "Running a
// driver"; a test checks the table there against kExitCodes).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace softndk::wdk::run {

enum ExitCode : int {
  kExitOk = 0,
  kExitEntryFailed = 1,
  kExitDriverFailed = 2,
  kExitChecker = 3,
  kExitTimeout = 4,
  kExitInterruptedEntry = 5,
  kExitUnloadHung = 6,
  kExitBugCheck = 7,
  kExitUsage = 64,
  kExitNoLoad = 66,
  kExitForcedSigint = 130,
  kExitForcedSigterm = 143,
};

struct ExitCodeInfo {
  int code;
  const char* meaning;
};

// Every status the host can end with, in the order --help prints them.
inline constexpr ExitCodeInfo kExitCodes[] = {
    {kExitOk,
     "clean: DriverEntry succeeded, the driver was unloaded (its own request with success, "
     "--stop-after, or SIGINT/SIGTERM as `sc stop`), DriverUnload returned, no checker report"},
    {kExitEntryFailed, "DriverEntry failed (DriverUnload is not called, as on Windows)"},
    {kExitDriverFailed, "the driver requested unload with a failure status"},
    {kExitChecker, "the checker reported violations (leaks included)"},
    {kExitTimeout,
     "--timeout passed before the driver requested unload (or while DriverEntry ran)"},
    {kExitInterruptedEntry, "SIGINT/SIGTERM while DriverEntry was still running"},
    {kExitUnloadHung,
     "DriverUnload (or the drain after it) did not return within --unload-timeout"},
    {kExitBugCheck,
     "bug check: the driver faulted (SIGSEGV, SIGBUS, SIGILL, SIGFPE, abort) or called "
     "KeBugCheckEx, raised an exception nothing handles, or broke a rule with --check fatal"},
    {kExitUsage, "usage error (unknown option, bad value)"},
    {kExitNoLoad, "the driver could not be loaded (dlopen, or no DriverEntry)"},
    {kExitForcedSigint, "a second SIGINT while unloading: ended at once"},
    {kExitForcedSigterm, "a second SIGTERM while unloading: ended at once"},
};

struct RunOptions {
  std::string path;
  std::string name;
  double timeout_s = 0;         // 0: none
  double stop_after_s = 0;      // 0: none
  double unload_timeout_s = 0;  // 0: the kit's rundown limit (SOFTNDK_WDK_RUNDOWN_WAIT_MS)
  bool special_pool = false;
  std::vector<std::string> special_pool_tags;  // empty: every allocation
  bool special_pool_align_start = false;
  std::string pcap;     // --pcap FILE
  std::string trace;    // --trace FILE
  bool stress = false;  // --stress SEED
  unsigned long long stress_seed = 0;
  std::vector<const char*> driver_args;
};

void PrintUsage(FILE* out);

// Parses argv. Returns -1 to run, otherwise the status to exit with (after
// --help, --version or a usage error, each already printed).
int ParseRunOptions(int argc, char** argv, RunOptions* options);

}  // namespace softndk::wdk::run
