// SPDX-License-Identifier: Apache-2.0
// fi_baseline.h - libfabric's tcp provider (the closest existing peer of
// softndk) driven like perftest drives a verbs device: a connected FI_EP_MSG
// endpoint over 127.0.0.1, both ends as two threads of the calling process.
// Results come back in the same BaselineResult as the raw-TCP baselines; a
// failure (e.g. the provider cannot initialise) is BaselineResult::error.
#pragma once

#include <string>

#include "baseline/baseline_result.h"

namespace softndk::baseline {

enum class FiTest {
  WriteBw,    // fi_write, `window` outstanding, initiator-side completions
  ReadBw,     // fi_read, same
  SendBw,     // fi_send against pre-posted receives
  WriteLat,   // write ping-pong, each end polls its landing buffer's last byte
  SendLat,    // send ping-pong, each end waits for its receive completion
  WriteRate,  // WriteBw reported as messages/s (use a small size, e.g. 8)
};

const char* fi_test_name(FiTest t);  // "fi_write_bw", ...
// Parses "write_bw", "read_bw", "send_bw", "write_lat", "send_lat",
// "write_rate"; false if unknown.
bool fi_test_from_name(const std::string& s, FiTest& out);

struct FiOptions {
  FiTest test = FiTest::WriteBw;
  size_t msg_size = 1 << 20;
  Limits limits{0, 5.0, 0};
  int window = 16;  // outstanding operations for the bandwidth/rate tests
  // BusyPoll: fi_cq_read spin. Blocking: fi_cq_sread on a wait object (event
  // mode). WriteLat has no event mode: it polls memory, as perftest does.
  Mode mode = Mode::BusyPoll;
  // Manual: all progress happens inside our own fi_cq_read calls (as a verbs
  // device's would in hardware, the two app threads are the only CPU users).
  // Auto: let the provider run its own progress thread.
  bool auto_progress = false;
  std::string provider = "tcp";
};

BaselineResult fi_run(const FiOptions& opt);

}  // namespace softndk::baseline
