// SPDX-License-Identifier: Apache-2.0
// report.h - shared by the baseline CLIs (tcp_bench, fi_tcp_bench): size
// parsing with K/M/G suffixes, the short table, medians over repeated runs.
#pragma once

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline/baseline_result.h"

namespace softndk::baseline {

// "64K", "1M", "8" -> bytes (binary multiples, as perftest reads -s).
inline size_t parse_size(const std::string& s) {
  size_t pos = 0;
  unsigned long long v = std::stoull(s, &pos);
  std::string suf = s.substr(pos);
  if (suf == "" || suf == "B" || suf == "b") return v;
  if (suf == "K" || suf == "k" || suf == "KiB") return v << 10;
  if (suf == "M" || suf == "m" || suf == "MiB") return v << 20;
  if (suf == "G" || suf == "g" || suf == "GiB") return v << 30;
  throw std::invalid_argument("bad size suffix in '" + s + "'");
}

// The run whose headline figure is the median: bandwidth for throughput
// runs, p50 latency for ping-pongs (lat_p50_us != 0).
inline BaselineResult median_of(std::vector<BaselineResult> runs) {
  bool lat = !runs.empty() && runs[0].lat_p50_us > 0;
  std::sort(runs.begin(), runs.end(), [&](const auto& a, const auto& b) {
    return lat ? a.lat_p50_us < b.lat_p50_us : a.msg_rate < b.msg_rate;
  });
  return runs[runs.size() / 2];
}

inline void print_header() {
  std::printf("%-16s %-8s %9s %10s %8s %9s %10s %8s %8s %8s %8s %7s %7s\n", "test", "mode", "bytes",
              "iters", "Gb/s", "MB/s", "msg/s", "lat_min", "lat_p50", "lat_p99", "lat_max",
              "cpu_cl", "cpu_sv");
}

inline void print_row(const BaselineResult& r, const char* tag = nullptr) {
  if (!r.ok()) {
    std::printf("%-16s %-8s error: %s\n", r.name.c_str(), r.mode.c_str(), r.error.c_str());
    return;
  }
  std::printf("%-16s %-8s %9zu %10llu %8.2f %9.1f %10.0f %8.2f %8.2f %8.2f %8.2f %7.2f %7.2f%s%s\n",
              r.name.c_str(), r.mode.c_str(), r.msg_size, static_cast<unsigned long long>(r.iters),
              r.gbps, r.mbps, r.msg_rate, r.lat_min_us, r.lat_p50_us, r.lat_p99_us, r.lat_max_us,
              r.cpu_client_s, r.cpu_server_s, tag ? "  " : "", tag ? tag : "");
}

}  // namespace softndk::baseline
