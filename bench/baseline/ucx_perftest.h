// SPDX-License-Identifier: Apache-2.0
// ucx_perftest.h - UCX as the same-host reference (issue 21): its own
// benchmark, `ucx_perftest` (Debian package ucx-utils), run as a server and a
// client on 127.0.0.1 with UCX_TLS=posix,cma,self, the transports a user
// picks for RDMA-like traffic between two processes on one machine. Both
// ends are child processes; every wait is bounded; a missing binary or a
// failed run is an error string in the result, never a crash or a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "baseline/baseline_result.h"

namespace softndk::baseline {

// The UCP tests that match softndk's: put ~ RDMA Write, get ~ RDMA Read,
// active messages ~ Sends.
enum class UcxTest { PutBw, GetBw, AmBw, AmLat, PutLat, GetLat };

const char* ucx_test_name(UcxTest t);  // "ucp_put_bw", ...
bool ucx_is_latency(UcxTest t);

// ucx_perftest's "Final:" line: iterations; latency 50th percentile,
// average and overall (us); bandwidth average and overall (MB/s of 2^20
// bytes); message rate average and overall (msg/s). One-way latency for the
// *_lat tests (half a round trip), the whole operation for get.
struct UcxFinal {
  uint64_t iterations = 0;
  double lat_p50_us = 0, lat_avg_us = 0;
  double bw_mib_s = 0;
  double msg_rate = 0;
};
// The last "Final:" line of ucx_perftest's output; nullopt if there is none
// or it does not have its eight numbers.
std::optional<UcxFinal> parse_ucx_final(std::string_view output);

// Runs `test` with `size`-byte messages. Limits::iterations (0: derived from
// max_seconds) counts messages or round trips; Mode::Blocking adds `-E
// sleep` (UCX waits for completions asleep, like softndk's event mode).
// Fills name ("ucx ucp_put_bw"), mode, msg_size, iters, seconds (wall clock
// of the client, set-up included), gbps/mbps/msg_rate for the bandwidth tests
// and lat_p50_us for the latency tests (UCX prints no other percentile).
BaselineResult run_ucx_perftest(UcxTest test, size_t size, const Limits& limits, Mode mode);

}  // namespace softndk::baseline
