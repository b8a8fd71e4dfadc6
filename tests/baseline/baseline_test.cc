// SPDX-License-Identifier: Apache-2.0
// baseline_test - each baseline run for a tiny bounded amount: the figures
// must be sane and non-zero, and the receiving side must have counted every
// byte the sending side handed over. These check the yardsticks work; they
// time nothing (performance is measured by ndkperf, side by side).
#include <gtest/gtest.h>

#include "baseline/tcp_baseline.h"
#include "baseline/ucx_perftest.h"
#include "fabric/fi_baseline.h"

using namespace softndk::baseline;

namespace {

constexpr size_t k64K = 64 << 10;
const Limits kSmall{200, 10.0, 0};
const Limits kPing{200, 10.0, 20};

void expect_bandwidth(const BaselineResult& r, uint64_t iters, size_t size) {
  ASSERT_TRUE(r.ok()) << r.name << ": " << r.error;
  EXPECT_EQ(r.iters, iters);
  EXPECT_EQ(r.bytes, iters * size);
  EXPECT_EQ(r.bytes, r.bytes_sent);
  EXPECT_GT(r.seconds, 0);
  EXPECT_GT(r.gbps, 0);
  EXPECT_GT(r.mbps, 0);
  EXPECT_GT(r.msg_rate, 0);
  EXPECT_GE(r.cpu_user_s + r.cpu_sys_s, 0);
}

void expect_latency(const BaselineResult& r, uint64_t iters, size_t size) {
  ASSERT_TRUE(r.ok()) << r.name << ": " << r.error;
  EXPECT_EQ(r.iters, iters);
  EXPECT_EQ(r.bytes, iters * size);
  EXPECT_EQ(r.bytes, r.bytes_sent);
  EXPECT_GT(r.lat_min_us, 0);
  EXPECT_LE(r.lat_min_us, r.lat_p50_us);
  EXPECT_LE(r.lat_p50_us, r.lat_p99_us);
  EXPECT_LE(r.lat_p99_us, r.lat_p999_us);
  EXPECT_LE(r.lat_p999_us, r.lat_max_us);
  EXPECT_LT(r.lat_p50_us, 100000) << "a loopback round trip of over 0.2 s";
}

// libfabric failing to come up is a clear failure, not a skip: CI machines
// have the tcp provider.
BaselineResult fi(FiTest t, size_t size, Limits lim, Mode mode = Mode::BusyPoll) {
  FiOptions o;
  o.test = t;
  o.msg_size = size;
  o.limits = lim;
  o.mode = mode;
  BaselineResult r = fi_run(o);
  if (r.error.find("fi_getinfo") != std::string::npos)
    ADD_FAILURE() << "libfabric's tcp provider did not initialise on this machine "
                     "(Debian libfabric1/libfabric-dev; FI_PROVIDER must allow tcp): "
                  << r.error;
  return r;
}

}  // namespace

TEST(TcpBaseline, StreamBusy) {
  expect_bandwidth(tcp_stream(k64K, kSmall, Mode::BusyPoll), 200, k64K);
}
TEST(TcpBaseline, StreamBlocking) {
  expect_bandwidth(tcp_stream(k64K, kSmall, Mode::Blocking), 200, k64K);
}
TEST(TcpBaseline, MsgRateBusy) {
  expect_bandwidth(tcp_msg_rate(8, {2000, 10.0, 0}, Mode::BusyPoll), 2000, 8);
}
TEST(TcpBaseline, MsgRateBlocking) {
  expect_bandwidth(tcp_msg_rate(8, {2000, 10.0, 0}, Mode::Blocking), 2000, 8);
}
TEST(TcpBaseline, PingPongBusy) { expect_latency(tcp_pingpong(8, kPing, Mode::BusyPoll), 200, 8); }
TEST(TcpBaseline, PingPongBlocking) {
  expect_latency(tcp_pingpong(8, kPing, Mode::Blocking), 200, 8);
}
TEST(TcpBaseline, PingPongLarge) {
  expect_latency(tcp_pingpong(k64K, kPing, Mode::BusyPoll), 200, k64K);
}

TEST(TcpBaseline, DurationCapEndsAnUnboundedRun) {
  BaselineResult r = tcp_stream(k64K, {0, 0.2, 0}, Mode::BusyPoll);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GT(r.iters, 0u);
  EXPECT_EQ(r.bytes, r.bytes_sent);
  EXPECT_LT(r.seconds, 2.0);
}

TEST(TcpBaseline, BadInputIsAnErrorNotACrash) {
  EXPECT_FALSE(tcp_stream(0, kSmall, Mode::BusyPoll).ok());
  EXPECT_FALSE(tcp_pingpong(8, {0, 0, 0}, Mode::BusyPoll).ok());
}

// ucx_perftest's output as printed by UCX 1.13 (the tail of a ucp_put_bw run).
constexpr const char* kUcxPutBw =
    "+--------------+--------------+------------------------------+---------------------+\n"
    "|    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |\n"
    "+--------------+--------------+----------+---------+---------+----------+----------+\n"
    "Final:                  3000     21.693    22.650    22.650    44149.48   44149.48"
    "       44149       44149\n";

TEST(UcxFinal, ParsesTheFinalLine) {
  auto f = parse_ucx_final(kUcxPutBw);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->iterations, 3000u);
  EXPECT_DOUBLE_EQ(f->lat_p50_us, 21.693);
  EXPECT_DOUBLE_EQ(f->lat_avg_us, 22.650);
  EXPECT_DOUBLE_EQ(f->bw_mib_s, 44149.48);
  EXPECT_DOUBLE_EQ(f->msg_rate, 44149);
}

TEST(UcxFinal, RefusesWhatIsNotAResult) {
  EXPECT_FALSE(parse_ucx_final(""));
  EXPECT_FALSE(parse_ucx_final("[1700000000.1] ucp_ep.c:1 UCX ERROR connection refused\n"));
  EXPECT_FALSE(parse_ucx_final("Final: 3000 21.6 22.6\n"));       // cut short
  EXPECT_FALSE(parse_ucx_final("Final: 3000 x 1 1 1 1 1 1\n"));   // not a number
  EXPECT_FALSE(parse_ucx_final("Final: 3000 -1 1 1 1 1 1 1\n"));  // negative
}

// deps.sh installs ucx-utils, so a missing ucx_perftest fails here.
TEST(Ucx, PutBandwidth) {
  BaselineResult r = run_ucx_perftest(UcxTest::PutBw, k64K, {2000, 10.0, 100}, Mode::BusyPoll);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.name, "ucx ucp_put_bw");
  EXPECT_EQ(r.iters, 2000u);
  EXPECT_GT(r.gbps, 0);
  EXPECT_GT(r.msg_rate, 0);
}

TEST(Ucx, ActiveMessageLatencyBusyAndAsleep) {
  for (Mode m : {Mode::BusyPoll, Mode::Blocking}) {
    BaselineResult r = run_ucx_perftest(UcxTest::AmLat, 8, {2000, 10.0, 100}, m);
    ASSERT_TRUE(r.ok()) << mode_name(m) << ": " << r.error;
    EXPECT_EQ(r.iters, 2000u);
    EXPECT_GT(r.lat_p50_us, 0);
    EXPECT_LT(r.lat_p50_us, 100000);
  }
}

TEST(Ucx, ZeroSizeIsAnError) {
  EXPECT_FALSE(run_ucx_perftest(UcxTest::AmBw, 0, kSmall, Mode::BusyPoll).ok());
}

TEST(Iperf3, RunsOrSaysWhyNot) {
  BaselineResult r = run_iperf3(1.0);
  if (r.error.find("not found") != std::string::npos) GTEST_SKIP() << r.error;
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GT(r.bytes, 0u);
  EXPECT_GT(r.gbps, 0);
}

TEST(FabricBaseline, WriteBw) { expect_bandwidth(fi(FiTest::WriteBw, k64K, kSmall), 200, k64K); }
TEST(FabricBaseline, ReadBw) { expect_bandwidth(fi(FiTest::ReadBw, k64K, kSmall), 200, k64K); }
TEST(FabricBaseline, SendBw) { expect_bandwidth(fi(FiTest::SendBw, k64K, kSmall), 200, k64K); }
TEST(FabricBaseline, WriteRate) {
  expect_bandwidth(fi(FiTest::WriteRate, 8, {2000, 10.0, 0}), 2000, 8);
}
TEST(FabricBaseline, WriteLat) { expect_latency(fi(FiTest::WriteLat, 8, kPing), 200, 8); }
TEST(FabricBaseline, WriteLatLarge) {
  expect_latency(fi(FiTest::WriteLat, k64K, kPing), 200, k64K);
}
TEST(FabricBaseline, SendLat) { expect_latency(fi(FiTest::SendLat, 8, kPing), 200, 8); }
TEST(FabricBaseline, EventModeSendLat) {
  expect_latency(fi(FiTest::SendLat, 8, kPing, Mode::Blocking), 200, 8);
}
TEST(FabricBaseline, EventModeWriteBw) {
  expect_bandwidth(fi(FiTest::WriteBw, k64K, kSmall, Mode::Blocking), 200, k64K);
}
TEST(FabricBaseline, WriteLatHasNoEventMode) {
  BaselineResult r = fi(FiTest::WriteLat, 8, kPing, Mode::Blocking);
  EXPECT_FALSE(r.ok());
}
