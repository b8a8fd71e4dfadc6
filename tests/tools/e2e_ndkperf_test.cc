// SPDX-License-Identifier: Apache-2.0
// e2e_ndkperf_test.cc - ndkperf over softndk for real (label tools-e2e):
// every test type in loopback with sane figures (non-zero, bytes counted ==
// bytes sent) and valid JSON; event mode, several QPs, CRC; the plot and the
// TCP baseline; two processes; and the bad-input cases (peer of another
// test, port in use, nobody listening) ending in one line and non-zero.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "proc.h"

namespace {

using tools_test::count_lines;
using tools_test::Proc;
using tools_test::run;

nlohmann::json run_json(std::vector<std::string> args, double limit = 60) {
  args.insert(args.begin(), NDKPERF_BIN);
  auto r = run(args, limit);
  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "invalid JSON: " << e.what() << "\n" << r.out << r.err;
    return {};
  }
}

void expect_sane(const nlohmann::json& res, uint64_t iters) {
  ASSERT_TRUE(res.is_object());
  EXPECT_FALSE(res.contains("error")) << res.dump();
  EXPECT_EQ(res["iterations"].get<uint64_t>(), iters) << res.dump();
  EXPECT_GT(res["bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(res["bytes"], res["bytes_sent"]) << res.dump();
  EXPECT_EQ(res["bytes_sent"].get<uint64_t>(), iters * res["size"].get<uint64_t>());
  EXPECT_GT(res["seconds"].get<double>(), 0);
  EXPECT_GT(res["gbps"].get<double>(), 0);
  EXPECT_GT(res["mbps"].get<double>(), 0);
  EXPECT_GT(res["msg_rate"].get<double>(), 0);
  // The connection's TCP state (SoftNdkQueryConnectionTcpInfo).
  ASSERT_TRUE(res.contains("tcp")) << res.dump();
  EXPECT_FALSE(res["tcp"]["congestion"].get<std::string>().empty()) << res.dump();
  EXPECT_LE(res["tcp"]["bytes_retransmitted"].get<uint64_t>(),
            res["bytes_sent"].get<uint64_t>() + (1u << 20));
  if (res.contains("latency_us")) {
    const auto& l = res["latency_us"];
    EXPECT_GT(l["min"].get<double>(), 0);
    EXPECT_LE(l["min"].get<double>(), l["median"].get<double>());
    EXPECT_LE(l["median"].get<double>(), l["p99"].get<double>());
    EXPECT_LE(l["p99"].get<double>(), l["p99_9"].get<double>());
    EXPECT_LE(l["p99_9"].get<double>(), l["max"].get<double>());
  }
}

class EveryTest : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryTest, LoopbackSmallSize) {
  std::string t = GetParam();
  bool lat = t.find("_lat") != std::string::npos;
  auto j = run_json({t, "--loopback", "-s", lat ? "64" : "4096", "-n", "200", "--json", "--timeout",
                     "10", "--quiet"});
  ASSERT_EQ(j["results"].size(), 1u) << j.dump();
  EXPECT_EQ(j["results"][0]["test"], t);
  expect_sane(j["results"][0], 200);
}

TEST_P(EveryTest, LoopbackMultiFpduSize) {
  std::string t = GetParam();
  auto j = run_json({t, "-s", "1M", "-n", "20", "--json", "--timeout", "10", "--quiet"});
  ASSERT_EQ(j["results"].size(), 1u) << j.dump();
  expect_sane(j["results"][0], 20);
}

INSTANTIATE_TEST_SUITE_P(Ndkperf, EveryTest,
                         ::testing::Values("send_bw", "send_lat", "write_bw", "write_lat",
                                           "read_bw", "read_lat"));

TEST(NdkperfE2e, EventMode) {
  for (const char* t : {"send_bw", "read_lat", "send_lat", "write_bw"}) {
    auto j = run_json({t, "-e", "-s", "4096", "-n", "100", "--json", "--quiet"});
    ASSERT_EQ(j["results"].size(), 1u) << t;
    expect_sane(j["results"][0], 100);
    EXPECT_EQ(j["config"]["events"], true);
  }
}

TEST(NdkperfE2e, SeveralQpsAndSmallTxDepth) {
  auto j =
      run_json({"write_bw", "-q", "3", "-t", "4", "-s", "8192", "-n", "50", "--json", "--quiet"});
  expect_sane(j["results"][0], 150);  // iterations are per QP
  j = run_json({"send_bw", "-q", "2", "-t", "2", "-s", "100", "-n", "500", "--json", "--quiet"});
  expect_sane(j["results"][0], 1000);
}

// send_lat -Q (perftest's CQ moderation): pings and pongs go
// NDK_OP_FLAG_SILENT_SUCCESS but one in 8; a count that is no multiple of 8,
// a time limit and event mode each end with every request accounted for
// (the last ping is signaled; the server's Report covers its last pongs).
TEST(NdkperfE2e, SendLatCqModeration) {
  auto j =
      run_json({"send_lat", "-t", "16", "-Q", "8", "-s", "64", "-n", "203", "--json", "--quiet"});
  ASSERT_EQ(j["results"].size(), 1u);
  expect_sane(j["results"][0], 203);
  EXPECT_EQ(j["results"][0]["cq_mod"], 8);
  EXPECT_EQ(j["results"][0]["tx_depth"], 16);
  j = run_json(
      {"send_lat", "-e", "-t", "16", "-Q", "8", "-s", "64", "-n", "100", "--json", "--quiet"});
  expect_sane(j["results"][0], 100);
  j = run_json({"send_lat", "-t", "16", "-Q", "8", "-s", "64", "-D", "0.3", "--json", "--quiet"});
  const auto& d = j["results"][0];
  EXPECT_FALSE(d.contains("error")) << d.dump();
  EXPECT_GT(d["iterations"].get<uint64_t>(), 0u) << d.dump();
  EXPECT_EQ(d["bytes"], d["bytes_sent"]) << d.dump();
  // At the default depth of 1 there is nothing to moderate (perftest too).
  j = run_json({"send_lat", "-Q", "8", "-s", "64", "-n", "50", "--json", "--quiet"});
  expect_sane(j["results"][0], 50);
  EXPECT_EQ(j["results"][0]["cq_mod"], 1);
}

TEST(NdkperfE2e, CrcOnAndMpaRevision) {
  auto j = run_json({"read_bw", "--crc", "on", "-s", "65536", "-n", "50", "--json", "--quiet"});
  expect_sane(j["results"][0], 50);
  EXPECT_EQ(j["config"]["crc"], "on");
  j = run_json({"write_bw", "--mpa-rev", "2", "-s", "4096", "-n", "50", "--json", "--quiet"});
  expect_sane(j["results"][0], 50);
}

TEST(NdkperfE2e, AllSizesWithDuration) {
  auto j = run_json({"write_bw", "-a", "-D", "0.05", "--json", "--quiet"}, 110);
  ASSERT_EQ(j["results"].size(), 23u);
  for (const auto& r : j["results"]) {
    EXPECT_GT(r["bytes"].get<uint64_t>(), 0u) << r.dump();
    EXPECT_EQ(r["bytes"], r["bytes_sent"]);
  }
}

// A run past two seconds shows a progress line on stderr (once a second);
// inline sends and Gb/s reporting on the same run.
TEST(NdkperfE2e, ProgressLineInlineAndGbits) {
  auto r = run({NDKPERF_BIN, "send_bw", "-s", "64", "-I", "64", "-D", "3", "--report_gbits"}, 60);
  ASSERT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ndkperf: send_bw 64 B: "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("BW average[Gb/s]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Inline : 64"), std::string::npos) << r.out;
}

TEST(NdkperfE2e, PlotAndBaseline) {
  std::string svg = "/tmp/ndkperf_e2e_" + std::to_string(getpid()) + ".svg";
  auto r = run({NDKPERF_BIN, "write_bw", "-s", "65536", "-n", "200", "--baseline", "tcp", "--plot",
                svg, "--quiet"},
               60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("RDMA_Write BW Test"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TCP BW"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("x\n"), std::string::npos) << r.out;  // the ratio column
  std::string why;
  EXPECT_TRUE(tools_test::xml_well_formed(svg, &why)) << why;
  std::remove(svg.c_str());
  auto j = run_json({"send_lat", "-s", "8", "-n", "200", "--baseline", "tcp", "--json", "--quiet"});
  const auto& res = j["results"][0];
  EXPECT_GT(res["ratio"].get<double>(), 0) << res.dump();
  EXPECT_GT(res["baseline"]["lat_median_us"].get<double>(), 0);
}

// The same-host reference (docs/samehost.md): ucx_perftest beside softndk
// (deps.sh installs ucx-utils, so a missing one fails here).
TEST(NdkperfE2e, UcxBaseline) {
  auto r = run(
      {NDKPERF_BIN, "write_bw", "-s", "65536", "-n", "200", "--baseline", "ucx", "--quiet"}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("UCX BW"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("baseline failed"), std::string::npos) << r.out;
  auto j = run_json({"send_lat", "-s", "8", "-n", "200", "--baseline", "ucx", "--json", "--quiet"});
  const auto& res = j["results"][0];
  EXPECT_EQ(res["baseline"]["name"], "ucx ucp_am_lat") << res.dump();
  EXPECT_GT(res["ratio"].get<double>(), 0) << res.dump();
  EXPECT_GT(res["baseline"]["lat_median_us"].get<double>(), 0);
}

TEST(NdkperfE2e, CsvOutput) {
  auto r = run({NDKPERF_BIN, "read_lat", "-s", "64", "-n", "100", "--csv", "--quiet"}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_lines(r.out), 2) << r.out;
  EXPECT_EQ(r.out.rfind("test,size,", 0), 0u);
}

TEST(NdkperfE2e, ServerAndClientProcesses) {
  std::string port = std::to_string(tools_test::free_port());
  Proc server({NDKPERF_BIN, "write_bw", "--server", "-d", "127.0.0.1", "-p", port, "-s", "4096",
               "-n", "300", "--timeout", "10"});
  ASSERT_TRUE(tools_test::wait_tcp_listening(std::stoi(port))) << "no listener on " << port;
  auto c = run({NDKPERF_BIN, "write_bw", "127.0.0.1", "-p", port, "-s", "4096", "-n", "300",
                "--json", "--quiet", "--timeout", "10"},
               60);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  auto j = nlohmann::json::parse(c.out);
  expect_sane(j["results"][0], 300);
  EXPECT_EQ(j["config"]["mode"], "client");
  auto s = server.wait(30);
  EXPECT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("RDMA_Write BW Test"), std::string::npos) << s.out;
}

TEST(NdkperfE2e, PeerOfAnotherTestIsRefused) {
  std::string port = std::to_string(tools_test::free_port());
  Proc server({NDKPERF_BIN, "write_bw", "--server", "-d", "127.0.0.1", "-p", port, "-s", "4096",
               "--timeout", "5"});
  ASSERT_TRUE(tools_test::wait_tcp_listening(std::stoi(port))) << "no listener on " << port;
  auto c =
      run({NDKPERF_BIN, "read_bw", "127.0.0.1", "-p", port, "-s", "4096", "--timeout", "5"}, 40);
  EXPECT_FALSE(c.timed_out);
  EXPECT_NE(c.exit_code, 0);
  EXPECT_EQ(count_lines(c.err), 1) << c.err;
  EXPECT_NE(c.err.find("refused"), std::string::npos) << c.err;
  auto s = server.wait(30);
  EXPECT_FALSE(s.timed_out);
  EXPECT_NE(s.exit_code, 0);
  EXPECT_NE(s.err.find("read_bw"), std::string::npos) << s.err;
  EXPECT_NE(s.err.find("write_bw"), std::string::npos) << s.err;
}

TEST(NdkperfE2e, SizeMismatchIsRefused) {
  std::string port = std::to_string(tools_test::free_port());
  Proc server({NDKPERF_BIN, "send_bw", "--server", "-d", "127.0.0.1", "-p", port, "-s", "4096",
               "--timeout", "5"});
  ASSERT_TRUE(tools_test::wait_tcp_listening(std::stoi(port))) << "no listener on " << port;
  auto c = run({NDKPERF_BIN, "send_bw", "127.0.0.1", "-p", port, "-s", "64", "--timeout", "5"}, 40);
  EXPECT_NE(c.exit_code, 0);
  EXPECT_EQ(count_lines(c.err), 1) << c.err;
  auto s = server.wait(30);
  EXPECT_NE(s.exit_code, 0);
  EXPECT_NE(s.err.find("size 64"), std::string::npos) << s.err;
}

TEST(NdkperfE2e, PortInUse) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::string port = std::to_string(ntohs(a.sin_port));
  auto r = run({NDKPERF_BIN, "write_bw", "--server", "-d", "127.0.0.1", "-p", port}, 30);
  close(fd);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("port in use"), std::string::npos) << r.err;
  // The same in loopback with an explicit port.
  fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  r = run({NDKPERF_BIN, "write_bw", "-p", port, "-n", "10"}, 30);
  close(fd);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("port in use"), std::string::npos) << r.err;
}

TEST(NdkperfE2e, NobodyListening) {
  std::string port = std::to_string(tools_test::free_port());
  auto t0 = std::chrono::steady_clock::now();
  auto r = run({NDKPERF_BIN, "write_bw", "127.0.0.1", "-p", port, "--timeout", "5"}, 40);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST(NdkperfE2e, HostNotAnswering) {
  // A peer whose TCP accepts (the kernel's backlog) but who never answers
  // the MPA Request: the client must give up after --timeout, say so in one
  // line and exit non-zero, not hang.
  tools_test::SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  auto t0 = std::chrono::steady_clock::now();
  auto r = run(
      {NDKPERF_BIN, "write_bw", "127.0.0.1", "-p", std::to_string(silent.port()), "--timeout", "2"},
      40);
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_FALSE(r.timed_out) << "hung";
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no answer"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("timed out"), std::string::npos) << r.err;
  EXPECT_GE(took, std::chrono::milliseconds(1500));  // it waited for the peer
  EXPECT_LT(took, std::chrono::seconds(20));
}

TEST(NdkperfE2e, Demo) {
  std::string svg = "/tmp/ndkperf_demo_" + std::to_string(getpid()) + ".svg";
  auto r = run({NDKPERF_BIN, "--demo", "-D", "0.2", "--plot", svg, "--quiet"}, 110);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* s :
       {"Send BW Test", "RDMA_Write BW Test", "RDMA_Read BW Test", "Send Latency Test"})
    EXPECT_NE(r.out.find(s), std::string::npos) << r.out;
  EXPECT_TRUE(tools_test::xml_well_formed(svg));
  std::remove(svg.c_str());
}

}  // namespace
