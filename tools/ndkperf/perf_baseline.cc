// SPDX-License-Identifier: Apache-2.0
// perf_baseline.cc - bridge from ndkperf results to softndk_baseline.
#include "ndkperf/perf_baseline.h"

#include <algorithm>
#include <cctype>

#if NDKPERF_HAVE_BASELINE
#include "baseline/tcp_baseline.h"
#include "baseline/ucx_perftest.h"
#endif

namespace softndk::ndkperf {

std::string baseline_label(const std::string& kind) {
  std::string s = kind;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

#if NDKPERF_HAVE_BASELINE

namespace {

namespace bl = softndk::baseline;

bl::UcxTest ucx_test_for(const std::string& test) {
  if (test == "write_bw") return bl::UcxTest::PutBw;
  if (test == "read_bw") return bl::UcxTest::GetBw;
  if (test == "write_lat") return bl::UcxTest::PutLat;
  if (test == "read_lat") return bl::UcxTest::GetLat;
  if (test == "send_lat") return bl::UcxTest::AmLat;
  return bl::UcxTest::AmBw;
}

}  // namespace

bool baseline_available() { return true; }

void run_baseline(PerfResult& r, const std::string& kind, uint64_t iters, double duration,
                  bool events) {
  bl::Limits lim;
  lim.iterations = iters;
  // A duration bounds the run; with a count, the cap only stops a hang.
  lim.max_seconds = duration > 0 ? duration : 30.0;
  lim.warmup = r.latency ? 10 : 0;
  bl::Mode mode = events ? bl::Mode::Blocking : bl::Mode::BusyPoll;
  bl::BaselineResult b;
  const bool ucx = kind == "ucx";
  try {
    if (ucx)
      b = bl::run_ucx_perftest(ucx_test_for(r.test), r.size, lim, mode);
    else
      b = r.latency ? bl::tcp_pingpong(r.size, lim, mode) : bl::tcp_stream(r.size, lim, mode);
  } catch (const std::exception& e) {
    b.error = e.what();
  }
  r.has_baseline = true;
  r.baseline_name = !b.name.empty() ? b.name
                    : ucx           ? "ucx"
                    : r.latency     ? "tcp_pingpong"
                                    : "tcp_stream";
  r.baseline_error = b.error;
  r.base_gbps = b.gbps;
  r.base_mbps = b.mbps;
  r.base_msg_rate = b.msg_rate;
  r.base_lat_p50_us = b.lat_p50_us;
  r.base_cpu_s = b.cpu_client_s + b.cpu_server_s;
  // read_lat reports whole reads (a request/response round trip); compare
  // with the whole TCP round trip, not its half (ucp_get's latency already
  // is the whole get).
  if (r.test == "read_lat" && !ucx) r.base_lat_p50_us *= 2;
  finish_ratio(r);
}

#else

bool baseline_available() { return false; }

void run_baseline(PerfResult& r, const std::string& kind, uint64_t, double, bool) {
  r.has_baseline = true;
  r.baseline_name = kind == "ucx" ? "ucx" : r.latency ? "tcp_pingpong" : "tcp_stream";
  r.baseline_error = "this ndkperf was built without bench/baseline";
  r.ratio = 0;
}

#endif

}  // namespace softndk::ndkperf
