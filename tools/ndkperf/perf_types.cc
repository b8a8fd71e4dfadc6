// SPDX-License-Identifier: Apache-2.0
// perf_types.cc - test names, size ladder and figure arithmetic.
#include "ndkperf/perf_types.h"

#include <algorithm>

namespace softndk::ndkperf {

namespace {
const char* op_name(Op op) {
  switch (op) {
    case Op::Send:
      return "send";
    case Op::Write:
      return "write";
    case Op::Read:
      return "read";
  }
  return "?";
}
}  // namespace

std::string test_name(Test t) {
  return std::string(op_name(t.op)) + (t.metric == Metric::Bw ? "_bw" : "_lat");
}

std::optional<Test> parse_test(const std::string& name) {
  for (Op op : {Op::Send, Op::Write, Op::Read})
    for (Metric m : {Metric::Bw, Metric::Lat})
      if (test_name({op, m}) == name) return Test{op, m};
  return std::nullopt;
}

std::string test_title(Test t) {
  std::string op = t.op == Op::Send ? "Send" : t.op == Op::Write ? "RDMA_Write" : "RDMA_Read";
  return op + (t.metric == Metric::Bw ? " BW Test" : " Latency Test");
}

const std::vector<std::string>& all_test_names() {
  static const std::vector<std::string> names = {"send_bw",   "send_lat", "write_bw",
                                                 "write_lat", "read_bw",  "read_lat"};
  return names;
}

std::vector<size_t> all_sizes() {
  std::vector<size_t> v;
  for (size_t s = 2; s <= (size_t{8} << 20); s *= 2) v.push_back(s);
  return v;
}

void finish_rates(PerfResult& r) {
  if (r.seconds <= 0) return;
  r.mbps = static_cast<double>(r.bytes) / r.seconds / 1e6;
  r.gbps = static_cast<double>(r.bytes) * 8 / r.seconds / 1e9;
  r.msg_rate = static_cast<double>(r.iters) / r.seconds;
}

void finish_latency(PerfResult& r, std::vector<uint64_t>& ns, bool halve) {
  if (ns.empty()) return;
  std::sort(ns.begin(), ns.end());
  const double div = halve ? 2000.0 : 1000.0;
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(ns.size() - 1) + 0.5);
    return static_cast<double>(ns[std::min(i, ns.size() - 1)]) / div;
  };
  double sum = 0;
  for (uint64_t v : ns) sum += static_cast<double>(v);
  r.lat_min_us = at(0);
  r.lat_p50_us = at(0.5);
  r.lat_p99_us = at(0.99);
  r.lat_p999_us = at(0.999);
  r.lat_max_us = at(1.0);
  r.lat_avg_us = sum / static_cast<double>(ns.size()) / div;
}

void finish_ratio(PerfResult& r) {
  r.ratio = 0;
  if (!r.has_baseline || !r.baseline_error.empty()) return;
  if (r.latency) {
    if (r.base_lat_p50_us > 0 && r.lat_p50_us > 0) r.ratio = r.lat_p50_us / r.base_lat_p50_us;
  } else if (r.base_gbps > 0) {
    r.ratio = r.gbps / r.base_gbps;
  }
}

}  // namespace softndk::ndkperf
