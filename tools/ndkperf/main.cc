// SPDX-License-Identifier: Apache-2.0
// main.cc - ndkperf entry point: parse, run, exit code (see docs/ndkperf.md).
#include <iostream>

#include "ndkperf/perf_options.h"
#include "ndkperf/perf_run.h"

int main(int argc, char** argv) {
  using namespace softndk::ndkperf;
  PerfOptions opt;
  std::string text;
  int rc = parse_perf_options(argc, argv, opt, text);
  if (rc >= 0) {
    (rc == 0 ? std::cout : std::cerr)
        << (rc == 0 ? "" : "ndkperf: ") << text << (rc == 0 ? "" : "\n");
    return rc;
  }
  return run_ndkperf(opt, std::cout, std::cerr);
}
