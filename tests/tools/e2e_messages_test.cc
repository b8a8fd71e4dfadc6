// SPDX-License-Identifier: Apache-2.0
// e2e_messages_test.cc - the tools run as a user runs them, against what a
// user meets by mistake, say what they met (issue 28, "Messages and exit
// codes"; label tools-e2e): the data path in the headers, a peer of another
// protocol or service, a privileged port, an interface without an address,
// a client killed mid-run, `--json -` with stdout for the document alone,
// ndkperf --server listening on every address.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "proc.h"
#include "util/netns.h"

namespace {

using tools_test::Proc;
using tools_test::run;
namespace ns = softndk::test::netns;

bool has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// argv with SOFTNDK_SAMEHOST=off in the child's environment (env(1)), the
// way a user turns the same-host path off.
std::vector<std::string> samehost_off(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/env", "SOFTNDK_SAMEHOST=off"});
  return argv;
}

// The "Data path" line of ndkperf's header: after the settings, before the
// column titles; "" when missing.
std::string header_path(const std::string& out) {
  size_t cols = out.find("#bytes");
  size_t at = out.find(" Data path       : ");
  if (at == std::string::npos || cols == std::string::npos || at > cols) return "";
  size_t end = out.find('\n', at);
  return out.substr(at + 19, end - at - 19);
}

// --------------------------------------------------------------- data path

TEST(DataPathHeader, NdkperfShowsTheRingByDefaultAndTcpWhenOff) {
  auto on = run({NDKPERF_BIN, "send_lat", "-n", "200", "--timeout", "10"}, 60);
  ASSERT_EQ(on.exit_code, 0) << on.err;
  // "samehost (ring)" once the FPDU stream moved to the ring both ways;
  // each direction moves on its own, so a short run may show "(ring in)".
  EXPECT_EQ(header_path(on.out).rfind("samehost", 0), 0u) << on.out;
  EXPECT_FALSE(has(on.out, "probing")) << on.out;
  auto off = run(samehost_off({NDKPERF_BIN, "write_bw", "-n", "200", "--timeout", "10"}), 60);
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(header_path(off.out), "tcp (disabled)") << off.out;
}

TEST(DataPathHeader, NdkperfTwoProcessesBothHeaders) {
  for (bool off : {false, true}) {
    int port = tools_test::free_port();
    std::vector<std::string> s = {NDKPERF_BIN, "read_lat",           "--server", "-d", "127.0.0.1",
                                  "-p",        std::to_string(port), "-n",       "100"};
    std::vector<std::string> c = {NDKPERF_BIN,          "read_lat", "127.0.0.1", "-p",
                                  std::to_string(port), "-n",       "100"};
    Proc server(off ? samehost_off(s) : s);
    ASSERT_TRUE(tools_test::wait_tcp_listening(port)) << server.err_so_far();
    auto cr = run(off ? samehost_off(c) : c, 60);
    auto sr = server.wait(30);
    ASSERT_EQ(cr.exit_code, 0) << cr.err;
    ASSERT_EQ(sr.exit_code, 0) << sr.err;
    const char* want = off ? "tcp (disabled)" : "samehost";
    EXPECT_EQ(header_path(cr.out).rfind(want, 0), 0u) << cr.out;
    EXPECT_EQ(header_path(sr.out).rfind(want, 0), 0u) << sr.out;
  }
}

TEST(DataPathHeader, NdkpingDebugNamesThePath) {
  for (bool off : {false, true}) {
    int port = tools_test::free_port();
    std::vector<std::string> s = {NDKPING_BIN,          "-s", "-a", "127.0.0.1", "-p",
                                  std::to_string(port), "-C", "3",  "-d"};
    std::vector<std::string> c = {NDKPING_BIN,          "-c", "-a", "127.0.0.1", "-p",
                                  std::to_string(port), "-C", "3",  "-d"};
    Proc server(off ? samehost_off(s) : s);
    ASSERT_TRUE(tools_test::wait_tcp_listening(port)) << server.err_so_far();
    auto cr = run(off ? samehost_off(c) : c, 60);
    auto sr = server.wait(30);
    ASSERT_EQ(cr.exit_code, 0) << cr.err;
    ASSERT_EQ(sr.exit_code, 0) << sr.err;
    // After one ping the ring may carry one direction only: "(ring in)".
    std::string want = off ? "data path: tcp (disabled)\n" : "data path: samehost";
    EXPECT_TRUE(has(cr.out, want)) << cr.out;
    EXPECT_TRUE(has(sr.out, want)) << sr.out;
  }
}

// -------------------------------------------------------- wrong-type peers

// A TCP server that answers whatever comes with an HTTP error, as a web
// server answers a request it cannot parse.
class HttpServer {
 public:
  HttpServer() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(fd_, 16) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return;
    port_ = ntohs(a.sin_port);
    th_ = std::thread([this] {
      while (!stop_) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) break;
        timeval tv{5, 0};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char buf[1024];
        if (recv(c, buf, sizeof buf, 0) > 0) {
          static const char kReply[] =
              "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
          (void)!send(c, kReply, sizeof kReply - 1, MSG_NOSIGNAL);
        }
        close(c);
      }
    });
  }
  ~HttpServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    if (th_.joinable()) th_.join();
    close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread th_;
};

TEST(WrongPeer, HttpServerIsNotAnIwarpPeer) {
  HttpServer http;
  ASSERT_NE(http.port(), 0);
  std::string p = std::to_string(http.port());
  auto ping = run({NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", p, "-C", "1"}, 60);
  EXPECT_EQ(ping.exit_code, 1) << ping.err;
  EXPECT_TRUE(has(ping.err, "127.0.0.1:" + p + " is not an iWARP peer")) << ping.err;
  EXPECT_FALSE(has(ping.err, "STATUS_DATA_ERROR")) << ping.err;
  auto perf = run({NDKPERF_BIN, "send_bw", "127.0.0.1", "-p", p, "-n", "10"}, 60);
  EXPECT_EQ(perf.exit_code, 1) << perf.err;
  EXPECT_TRUE(has(perf.err, "is not an iWARP peer")) << perf.err;
  EXPECT_FALSE(has(perf.err, "STATUS_DATA_ERROR")) << perf.err;
}

// A TCP server that accepts and closes without sending a byte (a service
// that drops a request it does not understand) is named as such, not as a
// reset: the tools ask whether it is an iWARP peer at all.
TEST(WrongPeer, SilentCloserIsNotAnIwarpPeer) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), len), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  std::atomic<bool> stop{false};
  // Reads the MPA Request (so the close is a FIN, not a reset for unread
  // bytes), then closes without a word.
  std::thread th([&] {
    while (!stop) {
      int c = accept(fd, nullptr, nullptr);
      if (c < 0) break;
      timeval tv{5, 0};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char buf[1024];
      (void)!recv(c, buf, sizeof buf, 0);
      close(c);
    }
  });
  std::string p = std::to_string(ntohs(a.sin_port));
  const std::string want = "the server at 127.0.0.1:" + p +
                           " closed the connection without answering the MPA Request: not an "
                           "iWARP peer?";
  auto ping = run({NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", p, "-C", "1"}, 60);
  auto perf = run({NDKPERF_BIN, "send_bw", "127.0.0.1", "-p", p, "-n", "10"}, 60);
  stop = true;
  shutdown(fd, SHUT_RDWR);
  th.join();
  close(fd);
  EXPECT_EQ(ping.exit_code, 1) << ping.err;
  EXPECT_TRUE(has(ping.err, want)) << ping.err;
  EXPECT_FALSE(has(ping.err, "reset before the MPA exchange")) << ping.err;
  EXPECT_EQ(perf.exit_code, 1) << perf.err;
  EXPECT_TRUE(has(perf.err, want)) << perf.err;
  EXPECT_FALSE(has(perf.err, "reset before the MPA exchange")) << perf.err;
}

#ifdef NDK_NVME_BIN
TEST(WrongPeer, NdkperfServerIsNotAnNvmeTarget) {
  int port = tools_test::free_port();
  Proc server({NDKPERF_BIN, "send_bw", "--server", "-d", "127.0.0.1", "-p", std::to_string(port)});
  ASSERT_TRUE(tools_test::wait_tcp_listening(port)) << server.err_so_far();
  auto r = run({NDK_NVME_BIN, "-a", "127.0.0.1", "-s", std::to_string(port), "-n",
                "nqn.2014-08.org.example:x", "--timeout", "10", "connect"},
               60);
  EXPECT_EQ(r.exit_code, 3) << r.err;  // kExitConnect
  EXPECT_TRUE(has(r.err, "is not an NVMe/RDMA target")) << r.err;
  EXPECT_FALSE(has(r.err, "unknown reject status")) << r.err;
}

// --json: stdout is one JSON document also when the command fails before
// its result (nobody listens): {"error", "exit_code"}.
TEST(JsonStdout, NvmeFailureIsAJsonError) {
  int port = tools_test::free_port();
  auto r = run({NDK_NVME_BIN, "-a", "127.0.0.1", "-s", std::to_string(port), "-n",
                "nqn.2014-08.org.example:x", "--json", "connect"},
               60);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  try {
    auto j = nlohmann::json::parse(r.out);
    EXPECT_NE(j.value("error", "").find("refused"), std::string::npos) << r.out;
    EXPECT_EQ(j.value("exit_code", 0), 3) << r.out;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "stdout is not one JSON document: " << e.what() << "\n" << r.out;
  }
}

TEST(WrongPeer, NdkpingServerIsNotAnNvmeTarget) {
  int port = tools_test::free_port();
  Proc server({NDKPING_BIN, "-s", "-P", "-a", "127.0.0.1", "-p", std::to_string(port)});
  ASSERT_TRUE(tools_test::wait_tcp_listening(port)) << server.err_so_far();
  auto r = run({NDK_NVME_BIN, "-a", "127.0.0.1", "-s", std::to_string(port), "-n",
                "nqn.2014-08.org.example:x", "--timeout", "10", "connect"},
               60);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(has(r.err, "is not an NVMe/RDMA target: it accepted")) << r.err;
}
#endif

// ------------------------------------------------------- privileged ports

TEST(PrivilegedPort, UnprivilegedListenSaysPermissionDenied) {
  std::ifstream f("/proc/sys/net/ipv4/ip_unprivileged_port_start");
  int start = 1024;
  f >> start;
  if (start <= 80) GTEST_SKIP() << "ip_unprivileged_port_start is " << start << ": port 80 is open";
  // As root, drop to nobody with no capabilities (setpriv, util-linux),
  // the way the tools meet an unprivileged user.
  std::vector<std::string> pre;
  if (geteuid() == 0) {
    if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "root and no setpriv to drop to";
    pre = {"/usr/bin/setpriv", "--reuid=65534",   "--regid=65534",
           "--clear-groups",   "--inh-caps=-all", "--bounding-set=-all"};
    // nobody must reach the build tree: a clone under a 0700 folder (what
    // `mktemp -d` makes) keeps it out, and the tools would fail to load
    // their library instead of meeting the port.
    std::vector<std::string> probe = pre;
    probe.insert(probe.end(), {"/usr/bin/test", "-x", NDKPERF_BIN});
    if (run(probe, 30).exit_code != 0)
      GTEST_SKIP() << "uid 65534 cannot reach " << NDKPERF_BIN
                   << " (a parent folder closed to others, such as mktemp -d's 0700)";
  }
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.begin(), pre.begin(), pre.end());
    return a;
  };
  auto perf = run(with({NDKPERF_BIN, "send_bw", "--server", "-d", "127.0.0.1", "-p", "80"}), 30);
  EXPECT_EQ(perf.exit_code, 1) << perf.err;
  EXPECT_TRUE(has(perf.err, "permission denied: cannot listen on 127.0.0.1:80")) << perf.err;
  EXPECT_FALSE(has(perf.err, "CONNECTION_REFUSED")) << perf.err;
  auto ping = run(with({NDKPING_BIN, "-s", "-a", "127.0.0.1", "-p", "80"}), 30);
  EXPECT_EQ(ping.exit_code, 1) << ping.err;
  EXPECT_TRUE(has(ping.err, "permission denied")) << ping.err;
}

// ------------------------------------------- interface without an address

TEST(Interfaces, NoAddressAndNoSuchInterfaceAreTold) {
  if (!ns::available()) GTEST_SKIP() << "network namespaces need root and ip(8)";
  ns::NetNs n;
  ASSERT_TRUE(n.ok());
  // An interface that is up and has no address: one end of a veth pair.
  ASSERT_EQ(ns::sh(n.exec("ip link add t28dummy type veth peer name t28peer")), 0);
  ASSERT_EQ(ns::sh(n.exec("ip link set t28dummy up")), 0);
  std::vector<std::string> in = {"/usr/sbin/ip", "netns", "exec", n.name()};
  if (access(in[0].c_str(), X_OK) != 0) in[0] = "/sbin/ip";
  auto cmd = [&](std::vector<std::string> a) {
    a.insert(a.begin(), in.begin(), in.end());
    return a;
  };
  auto bare = run(cmd({NDKPERF_BIN, "send_bw", "--server", "-d", "t28dummy"}), 30);
  EXPECT_EQ(bare.exit_code, 1) << bare.err;
  EXPECT_TRUE(has(bare.err, "interface 't28dummy' has no IPv4 or IPv6 address")) << bare.err;
  auto none = run(cmd({NDKPERF_BIN, "send_bw", "--server", "-d", "t28nosuch"}), 30);
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_TRUE(has(none.err, "no interface or address 't28nosuch' (no such interface")) << none.err;
  auto ping = run(cmd({NDKPING_BIN, "-s", "-a", "t28dummy"}), 30);
  EXPECT_EQ(ping.exit_code, 1) << ping.err;
  EXPECT_TRUE(has(ping.err, "has no IPv4 or IPv6 address") || has(ping.err, "cannot resolve"))
      << ping.err;
}

// ------------------------------------------------- a client killed mid-run

TEST(KilledClient, NdkperfServerSaysTheClientDisconnected) {
  const std::pair<const char*, bool> cases[] = {
      {"send_bw", false}, {"read_bw", false}, {"read_bw", true}, {"send_lat", true}};
  for (auto [t, off] : cases) {
    SCOPED_TRACE(std::string(t) + (off ? " SOFTNDK_SAMEHOST=off" : ""));
    int port = tools_test::free_port();
    std::vector<std::string> s = {NDKPERF_BIN, t,    "--server",          "-d",
                                  "127.0.0.1", "-p", std::to_string(port)};
    std::vector<std::string> c = {NDKPERF_BIN,          t,    "127.0.0.1", "-p",
                                  std::to_string(port), "-D", "60"};
    Proc server(off ? samehost_off(s) : s);
    ASSERT_TRUE(tools_test::wait_tcp_listening(port)) << server.err_so_far();
    Proc client(off ? samehost_off(c) : c);
    // The run is under way once the client shows progress (after 2 s).
    ASSERT_TRUE(client.wait_for_err(" iterations, ", 30)) << client.err_so_far();
    client.signal(SIGKILL);
    auto sr = server.wait(60);
    EXPECT_FALSE(sr.timed_out);
    EXPECT_EQ(sr.exit_code, 1) << sr.err;
    EXPECT_TRUE(has(sr.err, "the client disconnected")) << sr.err;
    EXPECT_FALSE(has(sr.err, "STATUS_CANCELLED")) << sr.err;
  }
}

TEST(KilledClient, NdkpingServerSaysTheClientDisconnected) {
  for (bool off : {false, true}) {
    SCOPED_TRACE(off ? "SOFTNDK_SAMEHOST=off" : "default");
    int port = tools_test::free_port();
    // The server expects many more pings (-C): a killed client's socket may
    // close gracefully (a FIN: nothing unread on the same-host ring), which
    // only the count tells from the end of a session.
    std::vector<std::string> s = {NDKPING_BIN,          "-s", "-a",       "127.0.0.1", "-p",
                                  std::to_string(port), "-C", "100000000"};
    std::vector<std::string> c = {NDKPING_BIN,          "-c", "-a", "127.0.0.1", "-p",
                                  std::to_string(port), "-v"};
    Proc server(off ? samehost_off(s) : s);
    ASSERT_TRUE(tools_test::wait_tcp_listening(port)) << server.err_so_far();
    Proc client(off ? samehost_off(c) : c);
    // Pinging (-v prints each ping's data to stdout): kill it mid-run.
    auto t0 = std::chrono::steady_clock::now();
    while (tools_test::count_lines(client.out_so_far()) < 50 &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    client.signal(SIGKILL);
    auto sr = server.wait(60);
    EXPECT_FALSE(sr.timed_out);
    EXPECT_EQ(sr.exit_code, 1) << sr.err;
    EXPECT_TRUE(has(sr.err, "disconnected")) << sr.err;
    EXPECT_FALSE(has(sr.err, "STATUS_CANCELLED")) << sr.err;
  }
}

// ---------------------------------------------------- ndkperf --server

TEST(PerfServerDefault, ListensOnEveryAddressWithoutD) {
  int port = tools_test::free_port();
  Proc server({NDKPERF_BIN, "send_bw", "--server", "-p", std::to_string(port), "-n", "50"});
  ASSERT_TRUE(server.wait_for_err("server waiting on 0.0.0.0:" + std::to_string(port), 30))
      << server.err_so_far();
  // 127.0.0.2 is no address a server bound to one interface's address
  // answers on; a wildcard listener does.
  auto c = run({NDKPERF_BIN, "send_bw", "127.0.0.2", "-p", std::to_string(port), "-n", "50"}, 60);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  auto sr = server.wait(30);
  EXPECT_EQ(sr.exit_code, 0) << sr.err;
}

// ---------------------------------------------------------- --json -

#ifdef NDK_NVMET_BIN
TEST(JsonStdout, NvmetStdoutIsOneJsonDocument) {
  int port = tools_test::free_port();
  auto r = run({NDK_NVMET_BIN, "-a", "127.0.0.1", "-p", std::to_string(port), "-n",
                "nqn.2014-08.org.example:t28", "--ns", "ram:1M", "--allow-any-host", "--duration",
                "0.5", "--json", "-"},
               60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  try {
    auto j = nlohmann::json::parse(r.out);
    EXPECT_TRUE(j.is_object()) << r.out;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "stdout is not one JSON document: " << e.what() << "\n" << r.out;
  }
  EXPECT_TRUE(has(r.err, "ndk-nvmet: nqn.2014-08.org.example:t28 on 127.0.0.1")) << r.err;
}
#endif

}  // namespace
