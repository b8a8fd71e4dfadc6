// SPDX-License-Identifier: Apache-2.0
// ping_clients_bench.cc - how many sequential, verified ndkping clients a
// persistent server (`ndkping -s -P`) handles per second on loopback, side
// by side with the same loop of processes that each make one plain TCP
// connection and exchange 16 bytes (the cost of a process plus a connect:
// the ceiling for any per-process client) and with a loop of
// `ndkping --help` (the cost of starting ndkping itself).
//
//   ping_clients_bench [-n CLIENTS] [--rounds R] [--ndkping PATH]
//                      [--before PATH [--before-lib DIR]]
//
// Each round runs the TCP loop, then CLIENTS `ndkping -c -C 1 -V` against
// a fresh server of each binary (this build's, and with --before an older
// one, run with LD_LIBRARY_PATH=DIR so it finds its own libsoftndk), in
// that order. Prints clients/s per round and the median ratios to the TCP
// loop. A client that fails is counted and reported; the exit code is 1 if
// any did.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "baseline/child_process.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// Starts argv with stdout/stderr to /dev/null and `env` (nullptr: ours).
pid_t spawn(const std::vector<std::string>& argv, char** env = nullptr) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), env ? env : environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

int wait_exit(pid_t pid) {
  int st = 0;
  if (pid <= 0 || waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// --tcp-client PORT: one connection, 16 bytes there and back.
int tcp_client(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return 1;
  char b[16] = "ping";
  if (write(fd, b, sizeof b) != static_cast<ssize_t>(sizeof b)) return 1;
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t n = read(fd, b + got, sizeof b - got);
    if (n <= 0) return 1;
    got += static_cast<size_t>(n);
  }
  close(fd);
  return 0;
}

// The TCP loop's server: accepts and echoes 16 bytes, one client at a time.
struct EchoServer {
  int fd = -1, port = 0;
  std::atomic<bool> stop{false};
  std::thread t;
  EchoServer() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd, 64);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    t = std::thread([this] {
      for (;;) {
        int c = accept(fd, nullptr, nullptr);
        if (c < 0 || stop) {
          if (c >= 0) close(c);
          return;
        }
        char b[16];
        size_t got = 0;
        while (got < sizeof b) {
          ssize_t n = read(c, b + got, sizeof b - got);
          if (n <= 0) break;
          got += static_cast<size_t>(n);
        }
        if (got == sizeof b) (void)!write(c, b, sizeof b);
        close(c);
      }
    });
  }
  ~EchoServer() {
    stop = true;
    shutdown(fd, SHUT_RDWR);
    t.join();
    close(fd);
  }
};

struct Loop {
  double per_s = 0;
  int failed = 0;
};

Loop tcp_loop(const std::string& self, int n, int port) {
  Loop l;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i)
    if (wait_exit(spawn({self, "--tcp-client", std::to_string(port)})) != 0) ++l.failed;
  l.per_s = n / std::chrono::duration<double>(Clock::now() - t0).count();
  return l;
}

// `ndkping --help` N times: starting the binary (its libraries, libsoftndk
// among them) and nothing else - the floor under any ndkping client.
Loop help_loop(const std::string& bin, int n) {
  Loop l;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i)
    if (wait_exit(spawn({bin, "--help"})) != 0) ++l.failed;
  l.per_s = n / std::chrono::duration<double>(Clock::now() - t0).count();
  return l;
}

Loop ping_loop(const std::string& bin, const std::string& lib, int n) {
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "LD_LIBRARY_PATH=", 16) != 0) env_s.push_back(*e);
  if (!lib.empty()) env_s.push_back("LD_LIBRARY_PATH=" + lib);
  std::vector<char*> env;
  for (auto& s : env_s) env.push_back(s.data());
  env.push_back(nullptr);
  std::string port = std::to_string(softndk::baseline::free_port());
  pid_t server = spawn({bin, "-s", "-P", "-a", "127.0.0.1", "-p", port}, env.data());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Loop l;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i)
    if (wait_exit(spawn({bin, "-c", "-a", "127.0.0.1", "-p", port, "-C", "1", "-V"}, env.data())) !=
        0)
      ++l.failed;
  l.per_s = n / std::chrono::duration<double>(Clock::now() - t0).count();
  kill(server, SIGKILL);
  waitpid(server, nullptr, 0);
  return l;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int n = 200, rounds = 3;
  std::string bin = NDKPING_BIN, before, before_lib;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ping_clients_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--tcp-client") return tcp_client(std::atoi(next().c_str()));
    if (a == "-n")
      n = std::max(1, std::atoi(next().c_str()));
    else if (a == "--rounds")
      rounds = std::max(1, std::atoi(next().c_str()));
    else if (a == "--ndkping")
      bin = next();
    else if (a == "--before")
      before = next();
    else if (a == "--before-lib")
      before_lib = next();
    else {
      std::fprintf(stderr,
                   "usage: ping_clients_bench [-n CLIENTS] [--rounds R] [--ndkping PATH] "
                   "[--before PATH [--before-lib DIR]]\n");
      return 2;
    }
  }
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = 0;
  EchoServer echo;
  std::vector<double> tcp, help, now, old;
  int failed = 0;
  std::printf("%d sequential clients per loop, %d rounds\n", n, rounds);
  std::printf("%-6s %14s %14s %14s %14s\n", "round", "tcp conn/s", "--help/s", "ndkping/s",
              before.empty() ? "" : "before/s");
  for (int r = 0; r < rounds; ++r) {
    Loop t = tcp_loop(self, n, echo.port);
    Loop h = help_loop(bin, n);
    Loop a = ping_loop(bin, "", n);
    Loop b;
    if (!before.empty()) b = ping_loop(before, before_lib, n);
    failed += t.failed + a.failed + b.failed;
    tcp.push_back(t.per_s);
    help.push_back(h.per_s);
    now.push_back(a.per_s);
    if (!before.empty()) old.push_back(b.per_s);
    std::printf("%-6d %14.1f %14.1f %14.1f", r + 1, t.per_s, h.per_s, a.per_s);
    if (!before.empty()) std::printf(" %14.1f", b.per_s);
    std::printf("   failed: %d/%d/%d\n", t.failed, a.failed, b.failed);
  }
  std::vector<double> ratio_now, ratio_help, ratio_old, speedup;
  for (size_t i = 0; i < tcp.size(); ++i) {
    ratio_now.push_back(now[i] / tcp[i]);
    ratio_help.push_back(now[i] / help[i]);
    if (!old.empty()) {
      ratio_old.push_back(old[i] / tcp[i]);
      speedup.push_back(now[i] / old[i]);
    }
  }
  std::printf(
      "median: tcp %.1f/s, ndkping --help %.1f/s, ndkping %.1f/s (%.2f of tcp, %.2f of --help)",
      median(tcp), median(help), median(now), median(ratio_now), median(ratio_help));
  if (!old.empty())
    std::printf(", before %.1f/s (%.2f of tcp); ndkping/before %.1fx", median(old),
                median(ratio_old), median(speedup));
  std::printf("\n");
  if (failed) std::printf("%d clients failed\n", failed);
  return failed ? 1 : 0;
}
