// perf_baseline.h - `--baseline tcp`: the same pattern over plain TCP sockets
// (bench/baseline's softndk_baseline), in the same run, so softndk's figure
// can be printed as a ratio to it. Bandwidth tests compare with TCP streaming
// (tcp_stream), latency tests with a TCP ping-pong (tcp_pingpong); busy-poll
// mode against busy-polling sockets, event mode (-e) against blocking ones.
#pragma once

#include "ndkperf/perf_types.h"

namespace softndk::ndkperf {

// True if this ndkperf was built with the baseline library.
bool baseline_available();

// Runs the TCP baseline for r.test at r.size with the same iteration count
// or duration and fills r's baseline fields and ratio. Never throws.
void run_tcp_baseline(PerfResult& r, uint64_t iters, double duration, bool events);

}  // namespace softndk::ndkperf
