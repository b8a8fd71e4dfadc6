// SPDX-License-Identifier: Apache-2.0
// e2e_ndkping_test.cc - ndkping client against ndkping server (label
// tools-e2e): -V verified pings at 64 B and at a multi-FPDU size, the rping
// output lines, and a persistent server serving clients one after another
// and several at once.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "proc.h"

namespace {

using tools_test::count_lines;
using tools_test::Proc;
using tools_test::run;

// The server listens (bounded; read from /proc/net/tcp, no connection).
void wait_listening(const std::string& port) {
  ASSERT_TRUE(tools_test::wait_tcp_listening(std::stoi(port))) << "no listener on port " << port;
}

void ping_pair(const std::string& size, int count) {
  std::string port = std::to_string(tools_test::free_port());
  std::string c = std::to_string(count);
  Proc server({NDKPING_BIN, "-s", "-a", "127.0.0.1", "-p", port, "-C", c, "-S", size, "-v", "-V",
               "--timeout", "10"});
  wait_listening(port);
  auto cl = run({NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", port, "-C", c, "-S", size, "-v", "-V",
                 "--timeout", "10"},
                60);
  EXPECT_FALSE(cl.timed_out);
  EXPECT_EQ(cl.exit_code, 0) << cl.err;
  EXPECT_EQ(count_lines(cl.out), count) << cl.out;
  EXPECT_EQ(cl.out.rfind("ping data: rdma-ping-0: ABCDEFGHIJ", 0), 0u) << cl.out;
  EXPECT_NE(cl.out.find("ping data: rdma-ping-" + std::to_string(count - 1) + ": "),
            std::string::npos);
  EXPECT_EQ(cl.err, "");
  auto sv = server.wait(30);
  EXPECT_EQ(sv.exit_code, 0) << sv.err;
  EXPECT_EQ(count_lines(sv.out), count) << sv.out;
  EXPECT_EQ(sv.out.rfind("server ping data: rdma-ping-0: ABCDEFGHIJ", 0), 0u) << sv.out;
}

TEST(NdkpingE2e, VerifiedPings64) { ping_pair("64", 5); }

TEST(NdkpingE2e, VerifiedPingsMultiFpdu) { ping_pair("100000", 5); }

TEST(NdkpingE2e, PersistentServerSequentialAndConcurrent) {
  std::string port = std::to_string(tools_test::free_port());
  Proc server({NDKPING_BIN, "-s", "-P", "-a", "127.0.0.1", "-p", port, "--timeout", "10"});
  wait_listening(port);
  for (int i = 0; i < 2; ++i) {
    auto r = run({NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", port, "-C", "3", "-V"}, 60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  std::vector<std::unique_ptr<Proc>> clients;
  for (int i = 0; i < 3; ++i)
    clients.push_back(std::make_unique<Proc>(std::vector<std::string>{
        NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", port, "-C", "20", "-S", "4096", "-V"}));
  for (auto& c : clients) {
    auto r = c->wait(60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  server.kill_now();
}

// -P serves clients at once, not one after another: a short client finishes
// while a long one is still being served (it is still running afterwards).
TEST(NdkpingE2e, PersistentServerServesWhileAnotherClientRuns) {
  std::string port = std::to_string(tools_test::free_port());
  Proc server({NDKPING_BIN, "-s", "-P", "-a", "127.0.0.1", "-p", port, "--timeout", "10"});
  wait_listening(port);
  Proc long_client(
      {NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", port, "-C", "100000000", "-V", "-v"});
  // The long client is being served (it completed a ping, -v prints it)
  // before the short one comes; a fixed 0.5 s did not say so on a busy host.
  bool served = false;
  for (int i = 0; i < 3000 && !served; ++i) {
    served = long_client.out_so_far().find("ping data:") != std::string::npos;
    if (!served) usleep(20 * 1000);
  }
  ASSERT_TRUE(served) << "the long client was not served within 60 s: " << long_client.err_so_far();
  auto r = run({NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", port, "-C", "3", "-V"}, 30);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(waitpid(long_client.pid(), nullptr, WNOHANG), 0) << "long client ended early";
  long_client.kill_now();
  server.kill_now();
}

// A second server on a port already served fails at once, naming the cause.
TEST(NdkpingE2e, PortInUse) {
  std::string port = std::to_string(tools_test::free_port());
  Proc first({NDKPING_BIN, "-s", "-P", "-a", "127.0.0.1", "-p", port, "--timeout", "10"});
  wait_listening(port);
  auto r = run({NDKPING_BIN, "-s", "-a", "127.0.0.1", "-p", port, "-C", "1", "--timeout", "3"}, 20);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("port in use"), std::string::npos) << r.err;
  first.kill_now();
}

TEST(NdkpingE2e, HostNotAnswering) {
  // TCP accepted by the kernel, MPA Request never answered.
  tools_test::SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  auto r = run(
      {NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", std::to_string(silent.port()), "-C", "1"}, 40);
  EXPECT_FALSE(r.timed_out) << "hung";
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no answer"), std::string::npos) << r.err;
}

TEST(NdkpingE2e, NobodyListening) {
  std::string port = std::to_string(tools_test::free_port());
  auto r = run({NDKPING_BIN, "-c", "-a", "127.0.0.1", "-p", port, "-C", "1", "--timeout", "5"}, 40);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

}  // namespace
