// SPDX-License-Identifier: Apache-2.0
// perf_report.h - ndkperf's three output forms: a perftest-like table, one
// JSON document, and CSV. Pure functions over results, so tests can feed
// synthetic figures.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ndkperf/perf_types.h"

namespace softndk::ndkperf {

// What the run was, for the table banner and the JSON "config".
struct RunInfo {
  std::string mode = "loopback";  // loopback | server | client
  std::string peer;               // "127.0.0.1:18515"
  unsigned qps = 1;
  unsigned tx_depth = 128;
  unsigned inline_size = 0;
  bool events = false;
  int crc = -1;  // as asked: -1 default, 0 off, 1 on
  unsigned mpa_revision = 0;
  bool report_gbits = false;
  std::string baseline;  // "" or "tcp"
  double duration = 0;
  uint64_t iters = 0;
  // Per test name ("send_lat"), where it differs from the run's first test
  // (--demo: latency tests run with TX depth 1 and inline data).
  struct TestSettings {
    std::string test;
    unsigned tx_depth = 0, inline_size = 0;
    unsigned cq_mod = 1;  // send_lat: one Send in cq_mod signaled (-Q)
  };
  std::vector<TestSettings> per_test;
};

// One banner per test, then one line per size. Bandwidth tests: #bytes,
// #iterations, BW average (MB/s or Gb/s), MsgRate (Mpps), CPU client/server;
// latency tests: t_min, t_median, t_avg, t_p99, t_p99.9, t_max (usec). With a
// baseline: its figure and the ratio.
// Without `footer` the closing rule and data-path line are left out: a run
// prints the table as its sizes finish (each call's text extends the last).
std::string format_table(const std::vector<PerfResult>& results, const RunInfo& info,
                         bool footer = true);

nlohmann::json result_json(const PerfResult& r);
nlohmann::json results_json(const std::vector<PerfResult>& results, const RunInfo& info);

// Header line plus one line per result; the columns are the JSON fields.
std::string format_csv(const std::vector<PerfResult>& results);
// The same in parts, for rows printed as they finish.
std::string csv_header();
std::string csv_row(const PerfResult& r);

}  // namespace softndk::ndkperf
