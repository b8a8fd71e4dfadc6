// iperf3.cc - iperf3 over loopback as a second streaming reference: a
// one-shot server (`-s -1`) and a JSON client, both child processes. Every
// wait is bounded; a missing binary or a failed run is an error string.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "baseline/tcp_baseline.h"

namespace softndk::baseline {
namespace {

bool on_path(const std::string& prog) {
  const char* path = getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string f = (dir.empty() ? "." : dir) + "/" + prog;
    if (access(f.c_str(), X_OK) == 0) return true;
  }
  return false;
}

// An ephemeral port that was free a moment ago (racy, but a collision just
// makes iperf3 fail with a clear message).
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

// fork+exec with stdout to a pipe (if out_fd) and stderr to /dev/null.
pid_t spawn(const std::vector<std::string>& argv, int* out_fd) {
  int p[2] = {-1, -1};
  if (out_fd && pipe2(p, O_CLOEXEC) < 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDWR);
    dup2(out_fd ? p[1] : devnull, 1);
    dup2(devnull, 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  if (out_fd) {
    close(p[1]);
    if (pid < 0) {
      close(p[0]);
    } else {
      *out_fd = p[0];
    }
  }
  return pid;
}

// Waits for a child up to timeout_s, then kills it. Returns its wait status.
int reap(pid_t pid, double timeout_s) {
  int st = 0;
  auto end = Clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  while (Clock::now() < end) {
    if (waitpid(pid, &st, WNOHANG) == pid) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  return st;
}

// Runs the client once; returns its stdout (empty on timeout).
std::string run_client(const std::vector<std::string>& argv, double timeout_s) {
  int fd = -1;
  pid_t pid = spawn(argv, &fd);
  if (pid < 0) return {};
  std::string out;
  auto end = Clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  char buf[4096];
  for (;;) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count());
    if (left <= 0) break;
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, left) <= 0) continue;
    ssize_t k = read(fd, buf, sizeof buf);
    if (k <= 0) break;
    out.append(buf, static_cast<size_t>(k));
  }
  close(fd);
  reap(pid, 1.0);
  return out;
}

}  // namespace

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
    std::string out = run_client(cli, secs + 15.0);
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
