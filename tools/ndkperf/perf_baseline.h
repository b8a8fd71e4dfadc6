// SPDX-License-Identifier: Apache-2.0
// perf_baseline.h - `--baseline tcp|ucx`: the same pattern over another
// transport (bench/baseline's softndk_baseline), in the same run, so
// softndk's figure can be printed as a ratio to it.
//   tcp: bandwidth tests against TCP streaming (tcp_stream), latency tests
//        against a TCP ping-pong (tcp_pingpong); busy-poll mode against
//        busy-polling sockets, event mode (-e) against blocking ones.
//   ucx: ucx_perftest with UCX_TLS=posix,cma,self, the same-host reference
//        (docs/samehost.md): write ~ ucp_put_bw/ucp_put_lat, read ~ ucp_get,
//        send ~ ucp_am_bw/ucp_am_lat; event mode (-e) as `-E sleep`.
#pragma once

#include <string>

#include "ndkperf/perf_types.h"

namespace softndk::ndkperf {

// True if this ndkperf was built with the baseline library.
bool baseline_available();

// Runs baseline `kind` ("tcp" or "ucx") for r.test at r.size with the same
// iteration count or duration and fills r's baseline fields and ratio.
// Never throws; a baseline that cannot run leaves its error in
// r.baseline_error.
void run_baseline(PerfResult& r, const std::string& kind, uint64_t iters, double duration,
                  bool events);

// "TCP" or "UCX": how tables and plots name the baseline.
std::string baseline_label(const std::string& kind);

}  // namespace softndk::ndkperf
