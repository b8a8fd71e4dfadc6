// SPDX-License-Identifier: Apache-2.0
// perf_run.h - ndkperf from parsed options to printed results: loopback
// (server thread + client in one process), server, client, and --demo; then
// the baseline, the table/JSON/CSV and the plot.
#pragma once

#include <iosfwd>

#include "ndkperf/perf_options.h"

namespace softndk::ndkperf {

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;      // a run failed (peer, network, timeout, library)
inline constexpr int kExitUsage = 2;       // bad command line
inline constexpr int kExitHung = 3;        // the watchdog fired (a library call never returned)
inline constexpr int kExitPeerSilent = 4;  // the peer accepted, then never sent a byte

int run_ndkperf(const PerfOptions& o, std::ostream& out, std::ostream& err);

}  // namespace softndk::ndkperf
