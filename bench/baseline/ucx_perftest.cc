// SPDX-License-Identifier: Apache-2.0
// ucx_perftest.cc - see ucx_perftest.h.
#include "baseline/ucx_perftest.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <thread>
#include <vector>

#include "baseline/child_process.h"

namespace softndk::baseline {

const char* ucx_test_name(UcxTest t) {
  switch (t) {
    case UcxTest::PutBw:
      return "ucp_put_bw";
    case UcxTest::GetBw:
      return "ucp_get";
    case UcxTest::AmBw:
      return "ucp_am_bw";
    case UcxTest::AmLat:
      return "ucp_am_lat";
    case UcxTest::PutLat:
      return "ucp_put_lat";
    case UcxTest::GetLat:
      return "ucp_get";
  }
  return "?";
}

bool ucx_is_latency(UcxTest t) {
  return t == UcxTest::AmLat || t == UcxTest::PutLat || t == UcxTest::GetLat;
}

std::optional<UcxFinal> parse_ucx_final(std::string_view output) {
  size_t at = output.rfind("Final:");
  if (at == std::string_view::npos) return std::nullopt;
  size_t eol = output.find('\n', at);
  std::string line(output.substr(at + 6, eol == std::string_view::npos ? eol : eol - at - 6));
  std::istringstream is(line);
  double v[8];
  for (double& x : v)
    if (!(is >> x) || x < 0) return std::nullopt;
  UcxFinal f;
  f.iterations = static_cast<uint64_t>(v[0]);
  f.lat_p50_us = v[1];
  f.lat_avg_us = v[2];
  f.bw_mib_s = v[5];  // overall
  f.msg_rate = v[7];  // overall
  return f;
}

BaselineResult run_ucx_perftest(UcxTest test, size_t size, const Limits& limits, Mode mode) {
  BaselineResult r;
  r.name = std::string("ucx ") + ucx_test_name(test);
  r.mode = mode_name(mode);
  r.msg_size = size;
  if (!on_path("ucx_perftest")) {
    r.error = "ucx_perftest not found on PATH (Debian package ucx-utils)";
    return r;
  }
  if (size == 0) {
    r.error = "ucx_perftest needs a message size above 0";
    return r;
  }
  const bool lat = ucx_is_latency(test);
  const double secs = limits.max_seconds > 0 ? limits.max_seconds : 2.0;
  // ucx_perftest runs a count, not a time: without one, aim at `secs` from
  // generous speeds (20 GB/s, 0.1 M round trips/s); the cap below ends a
  // run that takes much longer.
  uint64_t n = limits.iterations;
  if (n == 0)
    n = lat ? static_cast<uint64_t>(secs * 1e5)
            : static_cast<uint64_t>(secs * 20e9 / static_cast<double>(size));
  n = std::clamp<uint64_t>(n, 100, 10'000'000);
  uint64_t warm = limits.warmup > 0 ? limits.warmup : std::min<uint64_t>(10000, n / 10 + 1);
  const std::vector<std::pair<std::string, std::string>> env = {{"UCX_TLS", "posix,cma,self"}};
  std::optional<UcxFinal> f;
  std::string out;
  // The server needs a moment to listen: retry a client that did not get to
  // run, with a fresh server each time (it serves one client and exits).
  for (int attempt = 0; attempt < 10 && !f; ++attempt) {
    int port = free_port();
    if (port < 0) {
      r.error = "no free port";
      return r;
    }
    const std::string ps = std::to_string(port);
    pid_t srv = spawn({"ucx_perftest", "-p", ps}, nullptr, env);
    if (srv < 0) {
      r.error = "fork ucx_perftest";
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 100 * attempt));
    std::vector<std::string> cli = {
        "ucx_perftest", "127.0.0.1",         "-p", ps,
        "-t",           ucx_test_name(test), "-s", std::to_string(size),
        "-n",           std::to_string(n),   "-w", std::to_string(warm)};
    if (mode == Mode::Blocking) {
      cli.push_back("-E");
      cli.push_back("sleep");
    }
    auto t0 = std::chrono::steady_clock::now();
    out = run_capture(cli, secs * 5 + 20, env);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    reap(srv, 3.0);
    f = parse_ucx_final(out);
    if (!f && r.seconds > 2.0) break;  // it ran and failed: do not retry
  }
  if (!f) {
    size_t nl = out.find_last_not_of("\n ");
    std::string tail = out.substr(out.rfind('\n', nl == std::string::npos ? 0 : nl) + 1);
    r.error = "ucx_perftest gave no result" + (tail.empty() ? std::string() : ": " + tail);
    return r;
  }
  r.iters = f->iterations;
  r.msg_rate = f->msg_rate;
  if (lat) {
    r.lat_p50_us = f->lat_p50_us;
  } else {
    const double bytes_s = f->bw_mib_s * 1048576.0;
    r.mbps = bytes_s / 1e6;
    r.gbps = bytes_s * 8 / 1e9;
    r.bytes = r.bytes_sent = f->iterations * size;
  }
  if ((lat && r.lat_p50_us <= 0) || (!lat && r.mbps <= 0)) r.error = "ucx_perftest: zero figure";
  return r;
}

}  // namespace softndk::baseline
