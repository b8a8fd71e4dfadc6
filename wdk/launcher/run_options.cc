// SPDX-License-Identifier: Apache-2.0
// softndk-wdk-run's command line (run_options.h).
#include "run_options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "softndk/softndk.h"
#include "softndk_wdk/kit.h"

namespace softndk::wdk::run {
namespace {

// Seconds in (0, 86400].
bool ParseSeconds(const std::string& option, const std::string& v, double* out) {
  char* end = nullptr;
  errno = 0;
  double s = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0 || !(s > 0) || s > 86400) {
    std::fprintf(stderr, "softndk-wdk-run: %s %s is not a number of seconds in (0, 86400]\n",
                 option.c_str(), v.c_str());
    return false;
  }
  *out = s;
  return true;
}

// A pool tag as it reads in memory: 1 to 4 printable characters ('*' and
// '?' match any).
bool ParseTags(const std::string& list, std::vector<std::string>* tags) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    std::string t = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    bool ok = !t.empty() && t.size() <= 4;
    for (char c : t) ok = ok && c >= 0x20 && c < 0x7f;
    if (!ok) {
      std::fprintf(stderr,
                   "softndk-wdk-run: --special-pool tag '%s' is not 1 to 4 printable characters "
                   "(as the tag reads in memory, e.g. Sndk; '*' and '?' match any)\n",
                   t.c_str());
      return false;
    }
    while (t.size() < 4) t += ' ';  // 'ab' is "ab  " as Windows pads short tags
    tags->push_back(t);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

}  // namespace

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: softndk-wdk-run <driver.so> [options] [-- driver arguments...]\n"
               "Runs a Windows kernel driver built against the WDK kit: DriverEntry, then\n"
               "until the driver requests unload (SoftNdkWdkRequestUnload), --stop-after,\n"
               "SIGINT/SIGTERM (as `sc stop`) or --timeout; DriverUnload; the leak check.\n"
               "options:\n"
               "  --timeout S          bound for a driver expected to finish by itself\n"
               "                       (DriverEntry included); exit 4 when it passes\n"
               "  --stop-after S       unload S seconds after DriverEntry returned, as\n"
               "                       `sc stop` would (exit 0 when clean)\n"
               "  --unload-timeout S   deadline for DriverUnload and the drain after it\n"
               "                       (default SOFTNDK_WDK_RUNDOWN_WAIT_MS, 30 s)\n"
               "  --check fatal|report|quiet  the checker's mode (fatal: bug check 0xC4)\n"
               "  --special-pool[=TAG,...]    Driver Verifier's Special Pool, for every\n"
               "                       allocation or the tags given (as they read in\n"
               "                       memory: Sndk; '*' and '?' match any)\n"
               "  --special-pool-align=end|start  guard page after (default) or before\n"
               "  --trace FILE         every NDK call (arguments, NTSTATUS), callback and\n"
               "                       completion, with the thread and IRQL\n"
               "  --pcap FILE          iWARP traffic of every adapter the driver opens\n"
               "                       (FILE, then FILE.2, ... before the extension)\n"
               "  --stress SEED        seeded random delays where Windows may interleave\n"
               "                       (DPC/work item dispatch, NDK completions and CQ\n"
               "                       notifications, lock release, IRQL lowering)\n"
               "  --name NAME          service name (registry path); default: the file's\n"
               "  --version, -h/--help\n"
               "exit status:\n");
  for (const auto& e : kExitCodes) std::fprintf(out, "  %3d  %s\n", e.code, e.meaning);
}

int ParseRunOptions(int argc, char** argv, RunOptions* o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--") {
      for (int j = i + 1; j < argc; j++) o->driver_args.push_back(argv[j]);
      break;
    }
    // --opt=value and --opt value.
    std::string value;
    bool has_value = false;
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_value = true;
      }
    }
    auto need_value = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "softndk-wdk-run: %s needs a value\n", a.c_str());
        return false;
      }
      value = argv[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      PrintUsage(stdout);
      return kExitOk;
    }
    if (a == "--version") {
      const char* lib = nullptr;
      SoftNdkGetVersion(&lib);
      std::printf("softndk-wdk-run %s (libsoftndk %s)\n", SOFTNDK_VERSION_STRING,
                  lib != nullptr ? lib : "?");
      return kExitOk;
    }
    if (a == "--timeout" || a == "--stop-after" || a == "--unload-timeout") {
      if (!need_value()) return kExitUsage;
      double* target = a == "--timeout"      ? &o->timeout_s
                       : a == "--stop-after" ? &o->stop_after_s
                                             : &o->unload_timeout_s;
      if (!ParseSeconds(a, value, target)) return kExitUsage;
    } else if (a == "--check") {
      if (!need_value()) return kExitUsage;
      if (value == "fatal") {
        SoftNdkWdkSetCheckMode(SoftNdkWdkCheckFatal);
      } else if (value == "report") {
        SoftNdkWdkSetCheckMode(SoftNdkWdkCheckReport);
      } else if (value == "quiet") {
        SoftNdkWdkSetCheckMode(SoftNdkWdkCheckQuiet);
      } else {
        std::fprintf(stderr, "softndk-wdk-run: --check %s is not fatal|report|quiet\n",
                     value.c_str());
        return kExitUsage;
      }
    } else if (a == "--trace") {
      if (!need_value()) return kExitUsage;
      o->trace = value;
    } else if (a == "--pcap") {
      if (!need_value()) return kExitUsage;
      o->pcap = value;
    } else if (a == "--stress") {
      if (!need_value()) return kExitUsage;
      char* end = nullptr;
      errno = 0;
      o->stress_seed = std::strtoull(value.c_str(), &end, 0);
      if (value.empty() || *end != '\0' || errno != 0 || value[0] == '-') {
        std::fprintf(stderr, "softndk-wdk-run: --stress %s is not a seed (an unsigned number)\n",
                     value.c_str());
        return kExitUsage;
      }
      o->stress = true;
    } else if (a == "--name") {
      if (!need_value()) return kExitUsage;
      o->name = value;
    } else if (a == "--special-pool") {
      o->special_pool = true;
      if (has_value && !ParseTags(value, &o->special_pool_tags)) return kExitUsage;
    } else if (a == "--special-pool-align") {
      if (!need_value()) return kExitUsage;
      if (value != "end" && value != "start") {
        std::fprintf(stderr, "softndk-wdk-run: --special-pool-align %s is not end|start\n",
                     value.c_str());
        return kExitUsage;
      }
      o->special_pool_align_start = value == "start";
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "softndk-wdk-run: unknown option %s (see --help)\n", argv[i]);
      return kExitUsage;
    } else if (o->path.empty()) {
      o->path = a;
    } else {
      std::fprintf(
          stderr,
          "softndk-wdk-run: one driver only (extra argument %s; driver arguments go after --)\n",
          a.c_str());
      return kExitUsage;
    }
  }
  if (o->path.empty()) {
    std::fprintf(stderr, "softndk-wdk-run: no driver given\n");
    PrintUsage(stderr);
    return kExitUsage;
  }
  return -1;
}

}  // namespace softndk::wdk::run
