// SPDX-License-Identifier: Apache-2.0
// iperf3.cc - iperf3 over loopback as a second streaming reference: a
// one-shot server (`-s -1`) and a JSON client, both child processes. Every
// wait is bounded; a missing binary or a failed run is an error string.
#include <cerrno>
#include <cstring>
#include <thread>

#include "baseline/child_process.h"
#include "baseline/tcp_baseline.h"

namespace softndk::baseline {

BaselineResult run_iperf3(double seconds, size_t write_len) {
  BaselineResult r;
  r.name = "iperf3";
  r.mode = "blocking";  // iperf3 writes and reads on blocking sockets
  r.msg_size = write_len;
  if (!on_path("iperf3")) {
    r.error = "iperf3 not found on PATH (Debian package iperf3)";
    return r;
  }
  int port = free_port();
  if (port < 0) {
    r.error = std::string("no free port: ") + strerror(errno);
    return r;
  }
  std::string ps = std::to_string(port);
  pid_t srv = spawn({"iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", ps}, nullptr);
  if (srv < 0) {
    r.error = std::string("fork iperf3 -s: ") + strerror(errno);
    return r;
  }
  int secs = std::max(1, static_cast<int>(seconds + 0.5));
  std::vector<std::string> cli = {"iperf3",
                                  "-c",
                                  "127.0.0.1",
                                  "-p",
                                  ps,
                                  "-l",
                                  std::to_string(write_len),
                                  "-t",
                                  std::to_string(secs),
                                  "-J"};
  nlohmann::json j;
  // The server needs a moment to listen; retry while the client cannot connect.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::string out = run_capture(cli, secs + 15.0);
    j = nlohmann::json::parse(out, nullptr, false);
    if (j.is_discarded()) {
      r.error = "iperf3 client gave no JSON";
    } else if (j.contains("error")) {
      r.error = "iperf3: " + j["error"].get<std::string>();
    } else {
      r.error.clear();
      break;
    }
    if (r.error.find("connect") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  reap(srv, 3.0);
  if (!r.ok()) return r;
  try {
    const auto& end = j.at("end");
    const auto& rx = end.at("sum_received");
    const auto& tx = end.at("sum_sent");
    r.bytes = rx.at("bytes").get<uint64_t>();
    r.bytes_sent = tx.at("bytes").get<uint64_t>();
    r.seconds = rx.at("seconds").get<double>();
    r.iters = r.bytes / write_len;
    finish_rates(r);
    if (end.contains("cpu_utilization_percent")) {
      const auto& cpu = end["cpu_utilization_percent"];
      double s = r.seconds / 100.0;
      double cu = cpu.value("host_user", 0.0) * s, cs = cpu.value("host_system", 0.0) * s;
      double su = cpu.value("remote_user", 0.0) * s, ss = cpu.value("remote_system", 0.0) * s;
      r.cpu_user_s = cu + su;
      r.cpu_sys_s = cs + ss;
      r.cpu_client_s = cu + cs;
      r.cpu_server_s = su + ss;
    }
  } catch (const std::exception& e) {
    r.error = std::string("iperf3 JSON: ") + e.what();
  }
  if (r.ok() && r.bytes == 0) r.error = "iperf3 moved no data";
  return r;
}

}  // namespace softndk::baseline
