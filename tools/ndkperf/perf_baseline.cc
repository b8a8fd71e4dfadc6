// perf_baseline.cc - bridge from ndkperf results to softndk_baseline.
#include "ndkperf/perf_baseline.h"

#if NDKPERF_HAVE_BASELINE
#include "baseline/tcp_baseline.h"
#endif

namespace softndk::ndkperf {

#if NDKPERF_HAVE_BASELINE

bool baseline_available() { return true; }

void run_tcp_baseline(PerfResult& r, uint64_t iters, double duration, bool events) {
  namespace bl = softndk::baseline;
  bl::Limits lim;
  lim.iterations = iters;
  // A duration bounds the run; with a count, the cap only stops a hang.
  lim.max_seconds = duration > 0 ? duration : 30.0;
  lim.warmup = r.latency ? 10 : 0;
  bl::Mode mode = events ? bl::Mode::Blocking : bl::Mode::BusyPoll;
  bl::BaselineResult b;
  try {
    b = r.latency ? bl::tcp_pingpong(r.size, lim, mode) : bl::tcp_stream(r.size, lim, mode);
  } catch (const std::exception& e) {
    b.error = e.what();
  }
  r.has_baseline = true;
  r.baseline_name = b.name.empty() ? (r.latency ? "tcp_pingpong" : "tcp_stream") : b.name;
  r.baseline_error = b.error;
  r.base_gbps = b.gbps;
  r.base_mbps = b.mbps;
  r.base_msg_rate = b.msg_rate;
  r.base_lat_p50_us = b.lat_p50_us;
  r.base_cpu_s = b.cpu_client_s + b.cpu_server_s;
  // read_lat reports whole reads (a request/response round trip); compare
  // with the whole TCP round trip, not its half.
  if (r.test == "read_lat") r.base_lat_p50_us *= 2;
  finish_ratio(r);
}

#else

bool baseline_available() { return false; }

void run_tcp_baseline(PerfResult& r, uint64_t, double, bool) {
  r.has_baseline = true;
  r.baseline_name = r.latency ? "tcp_pingpong" : "tcp_stream";
  r.baseline_error = "this ndkperf was built without bench/baseline";
  r.ratio = 0;
}

#endif

}  // namespace softndk::ndkperf
