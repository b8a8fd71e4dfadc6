// SPDX-License-Identifier: Apache-2.0
// e2e_ndkping_server_test.cc - ndkping's server over many clients and when
// things go wrong (label tools-e2e): a persistent server stays flat over
// 1,000 sequential clients, refuses clients beyond --max-clients and under
// an address-space limit and keeps serving, and its exit code says how a
// connection ended (clean, Terminate after a CRC error, reset, short count).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "proc.h"

namespace {

using tools_test::count_lines;
using tools_test::Proc;
using tools_test::run;

// The server listens (bounded; read from /proc/net/tcp, no connection).
void wait_listening(const std::string& port) {
  ASSERT_TRUE(tools_test::wait_tcp_listening(std::stoi(port))) << "no listener on port " << port;
}

// What a process holds, from /proc.
struct Usage {
  long vm_kb = -1, rss_kb = -1, threads = -1, fds = -1, maps = -1;
  std::string text() const {
    std::ostringstream s;
    s << "VmSize " << vm_kb << " kB, VmRSS " << rss_kb << " kB, " << threads << " threads, " << fds
      << " fds, " << maps << " maps";
    return s.str();
  }
};

Usage usage_of(pid_t pid) {
  Usage u;
  std::string dir = "/proc/" + std::to_string(pid);
  std::ifstream st(dir + "/status");
  for (std::string l; std::getline(st, l);) {
    auto field = [&](const char* k, long& v) {
      if (l.rfind(k, 0) == 0) v = std::stol(l.substr(std::strlen(k)));
    };
    field("VmSize:", u.vm_kb);
    field("VmRSS:", u.rss_kb);
    field("Threads:", u.threads);
  }
  std::error_code ec;
  u.fds = 0;
  for (auto it = std::filesystem::directory_iterator(dir + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); ++it)
    ++u.fds;
  std::ifstream maps(dir + "/maps");
  u.maps = 0;
  for (std::string l; std::getline(maps, l);) ++u.maps;
  return u;
}

// After a client returns, its worker may still be closing its objects: the
// server is sampled once it has no worker left (its thread count back to
// `idle_threads`), or after 2 s.
Usage settled_usage(pid_t pid, long idle_threads) {
  Usage u;
  for (int i = 0; i < 200; ++i) {
    u = usage_of(pid);
    if (u.threads <= idle_threads) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return u;
}

// Still running? (WNOWAIT: the exit status stays for Proc::wait.)
bool alive(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == 0;
}

std::vector<std::string> ping_client(const std::string& port, const std::string& count) {
  return {NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", port, "-C", count, "-V", "--timeout", "10"};
}

// A client that prints each ping it completed (-v): one that printed one
// has been served (the server takes its service slot at the first ping).
std::vector<std::string> served_client(const std::string& port) {
  auto argv = ping_client(port, "0");
  argv.push_back("-v");
  return argv;
}

bool was_served(const Proc& p) { return p.out_so_far().find("ping data:") != std::string::npos; }

// Waits (bounded) until every client either was served or has ended: how
// long a client takes to get there depends on the host's load (a fixed
// sleep once judged a client that had not started yet as served).
void wait_decided(const std::vector<std::unique_ptr<Proc>>& clients, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    bool all = true;
    for (auto& p : clients) all = all && (!alive(p->pid()) || was_served(*p));
    if (all || std::chrono::steady_clock::now() >= end) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Issue 17 item 2: a worker per client used to stay unjoined (+9.5 MB of
// address space and ~2 mappings per client). Over 1,000 sequential clients
// the server must stay flat; the loop is bounded in time too (it took 200 s
// when every teardown waited for a 0.2 s poll).
// 1,000 clients in the plain build; under ASan a client process starts ~20x
// slower, and a loaded 2-core host makes that 0.36-0.55 s a client (250
// clients once took 90.8 s against the 90 s bound), so fewer: the first
// sample after 50 instead of 100, and still 50 after it (a leak of the old
// size, ~9.5 MB and ~2 mappings a client, could not hide in the bounds
// below). The time bound then only catches a hang there; the plain build
// keeps catching the slow teardown.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kSequentialClients = 100;
constexpr int kFirstSample = 50;
#else
constexpr int kSequentialClients = 1000;
constexpr int kFirstSample = 100;
#endif

TEST(NdkpingServer, ThousandSequentialClientsStayFlat) {
  std::string port = std::to_string(tools_test::free_port());
  Proc server({NDKPING_BIN, "-s", "-P", "-a", "127.0.0.1", "-p", port, "--timeout", "10"});
  wait_listening(port);
  const long idle_threads = usage_of(server.pid()).threads;
  ASSERT_GT(idle_threads, 0) << "server not running";
  auto start = std::chrono::steady_clock::now();
  Usage at100, at1000;
  int failures = 0;
  std::string first_failure;
  for (int i = 1; i <= kSequentialClients; ++i) {
    auto r = run(ping_client(port, "1"), 30);
    if (r.exit_code != 0 && failures++ == 0) first_failure = r.err;
    if (i == kFirstSample) at100 = settled_usage(server.pid(), idle_threads);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_LT(s, 90.0) << "only " << i << " clients in 90 s";
  }
  at1000 = settled_usage(server.pid(), idle_threads);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d clients in %.1f s (%.0f/s)\n  at %d: %s\n  at the end: %s\n", kSequentialClients,
              s, kSequentialClients / s, kFirstSample, at100.text().c_str(), at1000.text().c_str());
  EXPECT_EQ(failures, 0) << first_failure;
  EXPECT_TRUE(alive(server.pid()));
  EXPECT_LE(at1000.threads, at100.threads);
  EXPECT_LE(at1000.fds, at100.fds + 2) << at1000.text();
  EXPECT_LE(at1000.maps, at100.maps + 8) << at100.text() << " -> " << at1000.text();
  EXPECT_LE(at1000.vm_kb, at100.vm_kb + 16 * 1024) << at100.text() << " -> " << at1000.text();
#if !defined(__SANITIZE_ADDRESS__)
  // ASan keeps freed memory in its quarantine (up to 256 MB): RSS grows
  // there whatever the server does, so only the plain build checks it.
  EXPECT_LE(at1000.rss_kb, at100.rss_kb + 8 * 1024) << at100.text() << " -> " << at1000.text();
#endif
  server.kill_now();
}

// Clients beyond --max-clients are refused at once, with one line on the
// server's stderr; the server goes on serving.
TEST(NdkpingServer, RefusesClientsBeyondMaxClients) {
  std::string port = std::to_string(tools_test::free_port());
  Proc server({NDKPING_BIN, "-s", "-P", "--max-clients", "2", "-a", "127.0.0.1", "-p", port,
               "--timeout", "10"});
  wait_listening(port);
  std::vector<std::unique_ptr<Proc>> longs;
  for (int i = 0; i < 2; ++i) longs.push_back(std::make_unique<Proc>(served_client(port)));
  // Both hold their service slot (they completed a ping) before the third
  // comes: a fixed 700 ms was not always enough under ASan on a busy host.
  wait_decided(longs, 60);
  for (auto& l : longs)
    ASSERT_TRUE(was_served(*l)) << "a long client was not served: " << l->err_so_far();
  auto refused = run(ping_client(port, "1"), 30);
  EXPECT_FALSE(refused.timed_out);
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_EQ(count_lines(refused.err), 1) << refused.err;
  EXPECT_NE(refused.err.find("refused"), std::string::npos) << refused.err;
  std::string serr = server.err_so_far();
  EXPECT_EQ(count_lines(serr), 1) << serr;
  EXPECT_NE(serr.find("already serving 2 clients (--max-clients)"), std::string::npos) << serr;
  for (auto& l : longs) EXPECT_TRUE(alive(l->pid())) << "a served client ended";
  for (auto& l : longs) l->kill_now();
  // Its workers end (the killed clients' connections break) and new
  // clients are served again.
  bool served = false;
  for (int i = 0; i < 40 && !served; ++i) {
    served = run(ping_client(port, "2"), 30).exit_code == 0;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(served);
  EXPECT_TRUE(alive(server.pid()));
  server.kill_now();
}

// Issue 17 item 3: under an address-space limit a thread that cannot be
// made used to end the server with "terminate called without an active
// exception" (exit 134). Now the client it was for is refused with a
// message, and the server goes on serving.
TEST(NdkpingServer, AddressSpaceLimitRefusesAndKeepsServing) {
  std::string port = std::to_string(tools_test::free_port());
  Proc server({NDKPING_BIN, "-s", "-P", "-a", "127.0.0.1", "-p", port, "--timeout", "10"});
  wait_listening(port);
  // Warm up first (malloc arenas, cached thread stacks, the library's
  // pools): the limit is then set on a server in its steady state.
  std::vector<std::unique_ptr<Proc>> warm;
  for (int i = 0; i < 4; ++i) warm.push_back(std::make_unique<Proc>(ping_client(port, "20")));
  for (auto& p : warm) ASSERT_EQ(p->wait(60).exit_code, 0);
  for (int i = 0; i < 30; ++i) ASSERT_EQ(run(ping_client(port, "1"), 30).exit_code, 0);
  Usage idle = usage_of(server.pid());
  ASSERT_GT(idle.vm_kb, 0);
  // Room for a few workers (a client needs ~1.5 MiB; the server wants 4 MiB
  // free to start one), not for twelve at once: RLIMIT_AS, as
  // `prlimit --pid=PID --as=BYTES` sets it.
  rlimit lim{};
  lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(idle.vm_kb + 14 * 1024) * 1024;
  ASSERT_EQ(prlimit(server.pid(), RLIMIT_AS, &lim, nullptr), 0) << std::strerror(errno);
  // Sequential clients under the limit: each worker's memory comes back
  // (the limit leaves room for a few workers: 40 are plenty to show it;
  // under ASan, where a client process takes up to 0.55 s on a busy host,
  // 100 made the test take 80 s of its 120 s).
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kUnderTheLimit = 40;
#else
  constexpr int kUnderTheLimit = 100;
#endif
  for (int i = 0; i < kUnderTheLimit; ++i) {
    auto r = run(ping_client(port, "1"), 30);
    ASSERT_EQ(r.exit_code, 0) << "client " << i << ": " << r.err
                              << "\nserver: " << server.err_so_far();
  }
  // Sixteen at once, pinging until killed: some are refused (they end at
  // once, non-zero, with one line), the rest are being served.
  std::vector<std::unique_ptr<Proc>> many;
  for (int i = 0; i < 16; ++i) many.push_back(std::make_unique<Proc>(served_client(port)));
  // Each is decided (served: it completed a ping; refused: it ended)
  // however long the busy host takes to start sixteen processes (a fixed
  // 2 s counted clients that had not connected yet as served).
  wait_decided(many, 90);
  int served = 0, refused = 0;
  for (auto& p : many) {
    if (was_served(*p)) {
      ++served;
      continue;
    }
    ASSERT_FALSE(alive(p->pid())) << "a client neither served nor refused within 90 s";
    auto r = p->wait(1);
    ++refused;
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
  }
  for (auto& p : many) p->kill_now();
  std::string serr = server.err_so_far();
  ASSERT_TRUE(alive(server.pid())) << "server died: " << serr;
  EXPECT_GT(refused, 0) << "the limit refused nobody; raise the concurrency";
  EXPECT_GT(served, 0) << serr;
  // One line per client it could not serve, each naming the client.
  EXPECT_GE(count_lines(serr), refused) << serr;
  std::istringstream lines(serr);
  for (std::string l; std::getline(lines, l);)
    EXPECT_TRUE(l.rfind("ndkping: refused client ", 0) == 0 ||
                l.rfind("ndkping: client ", 0) == 0 || l.rfind("softndk: out of memory", 0) == 0)
        << l;
  settled_usage(server.pid(), idle.threads);
  // And later clients are served.
  for (int i = 0; i < 10; ++i) {
    auto r = run(ping_client(port, "1"), 30);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_TRUE(alive(server.pid()));
  server.kill_now();
}

// Issue 17 item 4: exit codes say how the connection ended.
struct ServerEnd {
  int exit_code;
  std::string err;
};

ServerEnd one_server_run(const std::vector<std::string>& client, const std::string& port,
                         const std::string& count = "0") {
  Proc server({NDKPING_BIN, "-s", "-a", "127.0.0.1", "-p", port, "-C", count, "--timeout", "5"});
  wait_listening(port);
  auto c = run(client, 30);
  auto s = server.wait(30);
  EXPECT_FALSE(s.timed_out);
  return {s.exit_code, s.err + (c.out.empty() ? "" : "[client: " + c.out + "]")};
}

TEST(NdkpingServerExit, CrcErrorIsTheTerminateItSent) {
  std::string port = std::to_string(tools_test::free_port());
  auto r = one_server_run({PING_FAULT_CLIENT_BIN, port, "corrupt"}, port);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("sent a Terminate: LLP layer, MPA CRC error (0x00020002)"),
            std::string::npos)
      << r.err;
  // The client saw the same Terminate from its side.
  EXPECT_NE(r.err.find("[client: ended: the peer sent a Terminate: LLP layer, MPA CRC error"),
            std::string::npos)
      << r.err;
}

TEST(NdkpingServerExit, ResetIsNamed) {
  std::string port = std::to_string(tools_test::free_port());
  auto r = one_server_run({PING_FAULT_CLIENT_BIN, port, "reset"}, port);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("connection reset (STATUS_CONNECTION_RESET)"), std::string::npos) << r.err;
}

TEST(NdkpingServerExit, FewerPingsThanAgreed) {
  std::string port = std::to_string(tools_test::free_port());
  auto r = one_server_run(ping_client(port, "2"), port, "3");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("disconnected after 2 pings; -C asked for 3"), std::string::npos) << r.err;
}

TEST(NdkpingServerExit, CleanDisconnectAfterTheCountIsZero) {
  std::string port = std::to_string(tools_test::free_port());
  auto r = one_server_run(ping_client(port, "3"), port, "3");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

}  // namespace
