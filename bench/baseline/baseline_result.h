// SPDX-License-Identifier: Apache-2.0
// baseline_result.h - the figures every baseline (raw TCP, iperf3, libfabric
// tcp) reports, in one shape, so ndkperf can print softndk's figure as a ratio
// to any of them from the same run.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace softndk::baseline {

// How completions/readiness are waited for. BusyPoll is perftest's default
// (spin on EAGAIN / fi_cq_read); Blocking is the event-mode comparison (the
// thread sleeps in recv / fi_cq_sread, so every message pays a wake-up).
enum class Mode { BusyPoll, Blocking };

inline const char* mode_name(Mode m) { return m == Mode::BusyPoll ? "busy" : "blocking"; }

// A run ends at whichever comes first: `iterations` messages (0 = no count
// bound) or `max_seconds` of wall clock. The cap keeps a slow machine from
// turning a benchmark into a hang.
struct Limits {
  uint64_t iterations = 0;
  double max_seconds = 10.0;
  uint64_t warmup = 0;  // ping-pong only: untimed round trips before timing
};

struct BaselineResult {
  std::string name;  // "tcp_stream", "fi_write_bw", "iperf3", ...
  std::string mode;  // "busy" | "blocking"
  size_t msg_size = 0;
  double gbps = 0;      // 1e9 bits/s of payload
  double mbps = 0;      // 1e6 bytes/s (perftest's "MB/s")
  double msg_rate = 0;  // messages/s
  // Latency, one way (half a round trip, as perftest's *_lat report it), in
  // microseconds. Zero for bandwidth tests.
  double lat_min_us = 0, lat_p50_us = 0, lat_p99_us = 0, lat_p999_us = 0, lat_max_us = 0;
  uint64_t bytes = 0;                         // payload bytes the receiving side counted
  uint64_t bytes_sent = 0;                    // payload bytes the sending side handed over
  uint64_t iters = 0;                         // messages (or round trips) completed
  double seconds = 0;                         // timed wall clock
  double cpu_user_s = 0, cpu_sys_s = 0;       // both ends together
  double cpu_client_s = 0, cpu_server_s = 0;  // per end (user + sys)
  std::string error;                          // empty on success; a one-line cause otherwise
  bool ok() const { return error.empty(); }
};

// Fills the rate fields from bytes/iters/seconds.
inline void finish_rates(BaselineResult& r) {
  if (r.seconds <= 0) return;
  r.mbps = static_cast<double>(r.bytes) / r.seconds / 1e6;
  r.gbps = static_cast<double>(r.bytes) * 8 / r.seconds / 1e9;
  r.msg_rate = static_cast<double>(r.iters) / r.seconds;
}

// Fills the latency fields from per-iteration round-trip samples (ns); the
// reported figures are half round trips.
inline void finish_latency(BaselineResult& r, std::vector<uint64_t>& rtt_ns) {
  if (rtt_ns.empty()) return;
  std::sort(rtt_ns.begin(), rtt_ns.end());
  auto at = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(rtt_ns.size() - 1) + 0.5);
    return static_cast<double>(rtt_ns[std::min(i, rtt_ns.size() - 1)]) / 2000.0;
  };
  r.lat_min_us = at(0);
  r.lat_p50_us = at(0.5);
  r.lat_p99_us = at(0.99);
  r.lat_p999_us = at(0.999);
  r.lat_max_us = at(1.0);
}

inline void to_json(nlohmann::json& j, const BaselineResult& r) {
  j = nlohmann::json{{"name", r.name},
                     {"mode", r.mode},
                     {"msg_size", r.msg_size},
                     {"gbps", r.gbps},
                     {"mbps", r.mbps},
                     {"msg_rate", r.msg_rate},
                     {"lat_min_us", r.lat_min_us},
                     {"lat_p50_us", r.lat_p50_us},
                     {"lat_p99_us", r.lat_p99_us},
                     {"lat_p999_us", r.lat_p999_us},
                     {"lat_max_us", r.lat_max_us},
                     {"bytes", r.bytes},
                     {"bytes_sent", r.bytes_sent},
                     {"iters", r.iters},
                     {"seconds", r.seconds},
                     {"cpu_user_s", r.cpu_user_s},
                     {"cpu_sys_s", r.cpu_sys_s},
                     {"cpu_client_s", r.cpu_client_s},
                     {"cpu_server_s", r.cpu_server_s}};
  if (!r.ok()) j["error"] = r.error;
}

// CPU time of the calling thread (RUSAGE_THREAD), for per-end accounting.
struct ThreadCpu {
  double user_s = 0, sys_s = 0;
  static ThreadCpu now() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return {sec(u.ru_utime), sec(u.ru_stime)};
  }
  ThreadCpu operator-(const ThreadCpu& o) const { return {user_s - o.user_s, sys_s - o.sys_s}; }
};

// Adds one end's CPU time to a result.
inline void add_cpu(BaselineResult& r, const ThreadCpu& c, bool client) {
  r.cpu_user_s += c.user_s;
  r.cpu_sys_s += c.sys_s;
  (client ? r.cpu_client_s : r.cpu_server_s) += c.user_s + c.sys_s;
}

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace softndk::baseline
