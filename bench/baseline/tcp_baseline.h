// SPDX-License-Identifier: Apache-2.0
// tcp_baseline.h - raw TCP on loopback, driven the way softndk is driven, as
// the project's performance yardstick (issue 5, "Performance"; issue 6,
// `ndkperf --baseline tcp`). Both ends run in the calling process on two
// threads over 127.0.0.1 with TCP_NODELAY. None of these functions throw: a
// failure comes back in BaselineResult::error.
#pragma once

#include <cstddef>
#include <string>

#include "baseline/baseline_result.h"

namespace softndk::baseline {

// Streaming bandwidth: one thread writes msg_size-byte application writes
// (1 MiB is the reference), the other reads into a 1 MiB buffer and counts.
// Limits::iterations counts writes. Timed until the reader has seen the last
// byte. Compare with RDMA Write/Read/Send bandwidth.
BaselineResult tcp_stream(size_t msg_size, const Limits& limits, Mode mode);

// Ping-pong: the client sends msg_size bytes, the server reads them whole and
// echoes them, the client reads the echo whole. Latency is half the round
// trip (as perftest's *_lat). Limits::iterations counts round trips.
BaselineResult tcp_pingpong(size_t msg_size, const Limits& limits, Mode mode);

// Message rate: like tcp_stream, but the receiver reads exactly one message
// per recv (a Send's receiver sees one completion per message), so the
// figure is messages/s at small sizes, not coalesced bytes.
BaselineResult tcp_msg_rate(size_t msg_size, const Limits& limits, Mode mode);

// iperf3 as a second reference: `iperf3 -s -1 -p PORT` and
// `iperf3 -c 127.0.0.1 -p PORT -l LEN -t SECONDS -J`, JSON parsed. Missing
// iperf3 or a failed run gives an error in the result, never a crash.
BaselineResult run_iperf3(double seconds, size_t write_len = 1 << 20);

}  // namespace softndk::baseline
