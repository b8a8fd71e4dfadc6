// SPDX-License-Identifier: Apache-2.0
// perf_options_test.cc - ndkperf's command line: perftest names, roles,
// defaults and every refused combination.
#include "ndkperf/perf_options.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

namespace softndk::ndkperf {
namespace {

int parse(std::vector<std::string> args, PerfOptions& o, std::string& text) {
  args.insert(args.begin(), "ndkperf");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  return parse_perf_options(static_cast<int>(argv.size()), argv.data(), o, text);
}

TEST(PerfOptions, LoopbackIsTheDefaultWithoutHost) {
  PerfOptions o;
  std::string t;
  ASSERT_EQ(parse({"write_bw"}, o, t), -1) << t;
  EXPECT_EQ(o.role, Role::Loopback);
  ASSERT_EQ(o.tests.size(), 1u);
  EXPECT_EQ(o.tests[0], (ndkperf::Test{Op::Write, Metric::Bw}));
  EXPECT_EQ(o.port, 0);  // loopback picks a free port unless -p
  EXPECT_EQ(sizes_for(o, o.tests[0]), std::vector<size_t>{65536});
  EXPECT_EQ(iters_for(o, o.tests[0]), 1000u);
  EXPECT_EQ(tx_depth_for(o, o.tests[0]), 128u);
}

// -Q as perftest's: default 100, at most the TX depth (1 for the latency
// tests unless -t), send_lat only.
TEST(PerfOptions, CqModeration) {
  PerfOptions o;
  std::string t;
  ASSERT_EQ(parse({"send_lat"}, o, t), -1) << t;
  EXPECT_EQ(o.cq_mod, 100u);
  EXPECT_EQ(tx_depth_for(o, o.tests[0]), 1u);
  EXPECT_EQ(cq_mod_for(o, o.tests[0]), 1u);
  PerfOptions deep;
  ASSERT_EQ(parse({"send_lat", "-t", "128"}, deep, t), -1) << t;
  EXPECT_EQ(tx_depth_for(deep, deep.tests[0]), 128u);
  EXPECT_EQ(cq_mod_for(deep, deep.tests[0]), 100u);
  PerfOptions clamp;
  ASSERT_EQ(parse({"send_lat", "-t", "4", "-Q", "8"}, clamp, t), -1) << t;
  EXPECT_EQ(cq_mod_for(clamp, clamp.tests[0]), 4u);
  PerfOptions other;
  ASSERT_EQ(parse({"write_lat", "-t", "16", "-Q", "8"}, other, t), -1) << t;
  EXPECT_EQ(cq_mod_for(other, other.tests[0]), 1u);
  PerfOptions sbw;
  ASSERT_EQ(parse({"send_bw", "-Q", "8"}, sbw, t), -1) << t;
  EXPECT_EQ(cq_mod_for(sbw, sbw.tests[0]), 1u);
  PerfOptions bad;
  EXPECT_EQ(parse({"send_lat", "-Q", "0"}, bad, t), 2);
  EXPECT_NE(t.find("cq-mod"), std::string::npos) << t;
}

TEST(PerfOptions, ServerAndClientRoles) {
  PerfOptions s, c;
  std::string t;
  ASSERT_EQ(parse({"read_lat", "--server", "-p", "20000"}, s, t), -1) << t;
  EXPECT_EQ(s.role, Role::Server);
  EXPECT_EQ(s.port, 20000);
  ASSERT_EQ(parse({"read_lat", "10.1.2.3"}, c, t), -1) << t;
  EXPECT_EQ(c.role, Role::Client);
  EXPECT_EQ(c.host, "10.1.2.3");
  EXPECT_EQ(c.port, 18515);
  EXPECT_EQ(sizes_for(c, c.tests[0]), std::vector<size_t>{2});
  EXPECT_EQ(tx_depth_for(c, c.tests[0]), 1u);
}

// As perftest: latency tests send small messages inline unless -I says
// otherwise (-I 0 turns it off); bandwidth tests and Reads do not.
TEST(PerfOptions, InlineDefaultsLikePerftest) {
  std::string t;
  for (const char* name : {"send_lat", "write_lat"}) {
    PerfOptions o;
    ASSERT_EQ(parse({name}, o, t), -1) << t;
    EXPECT_EQ(inline_for(o, o.tests[0]), 220u) << name;
    PerfOptions off;
    ASSERT_EQ(parse({name, "-I", "0"}, off, t), -1) << t;
    EXPECT_EQ(inline_for(off, off.tests[0]), 0u) << name;
  }
  for (const char* name : {"read_lat", "send_bw", "write_bw", "read_bw"}) {
    PerfOptions o;
    ASSERT_EQ(parse({name}, o, t), -1) << t;
    EXPECT_EQ(inline_for(o, o.tests[0]), 0u) << name;
  }
  PerfOptions bw;
  ASSERT_EQ(parse({"send_bw", "-I", "64"}, bw, t), -1) << t;
  EXPECT_EQ(inline_for(bw, bw.tests[0]), 64u);
  // The range --help states (the adapter's MaxInlineDataSize, 256).
  PerfOptions big;
  EXPECT_EQ(parse({"send_lat", "-I", "300"}, big, t), 2);
  EXPECT_NE(t.find("inline"), std::string::npos) << t;
  PerfOptions max;
  EXPECT_EQ(parse({"send_lat", "-I", "256"}, max, t), -1) << t;
}

TEST(PerfOptions, PerftestOptionNames) {
  PerfOptions o;
  std::string t;
  ASSERT_EQ(
      parse({"send_bw", "-s",         "64K",       "-n",        "50", "-q",     "4",
             "-t",      "32",         "-I",        "128",       "-p", "19000",  "--report_gbits",
             "--crc",   "on",         "--mpa-rev", "1",         "-e", "--json", "--plot",
             "x.svg",   "--baseline", "tcp",       "--timeout", "3",  "-F"},
            o, t),
      -1)
      << t;
  EXPECT_EQ(o.size, 65536u);
  EXPECT_EQ(o.iters, 50u);
  EXPECT_EQ(o.qps, 4u);
  EXPECT_EQ(o.tx_depth, 32u);
  EXPECT_EQ(o.inline_size, 128u);
  EXPECT_EQ(o.port, 19000);
  EXPECT_TRUE(o.report_gbits);
  EXPECT_EQ(o.crc, 1);
  EXPECT_EQ(o.mpa_revision, 1u);
  EXPECT_TRUE(o.events);
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.plot, "x.svg");
  EXPECT_EQ(o.baseline, "tcp");
  EXPECT_DOUBLE_EQ(o.timeout, 3);
}

TEST(PerfOptions, AllSizesAndDuration) {
  PerfOptions o;
  std::string t;
  ASSERT_EQ(parse({"write_bw", "-a", "-D", "0.5", "--crc", "off"}, o, t), -1) << t;
  auto sizes = sizes_for(o, o.tests[0]);
  ASSERT_EQ(sizes.size(), 23u);
  EXPECT_EQ(sizes.front(), 2u);
  EXPECT_EQ(sizes.back(), 8u << 20);
  EXPECT_EQ(iters_for(o, o.tests[0]), 0u);  // the duration bounds the run
  EXPECT_EQ(o.crc, 0);
  EXPECT_EQ(make_plan(o).size(), 23u);
}

TEST(PerfOptions, DemoPreset) {
  PerfOptions o;
  std::string t;
  ASSERT_EQ(parse({"--demo"}, o, t), -1) << t;
  EXPECT_EQ(o.role, Role::Loopback);
  EXPECT_EQ(o.baseline, "tcp");
  // build/ndkperf-demo.svg in a source tree, the current directory elsewhere.
  struct stat st {};
  const bool tree = ::stat("build", &st) == 0 && S_ISDIR(st.st_mode);
  EXPECT_EQ(o.plot, tree ? kDemoPlot : kDemoPlotHere);
  ASSERT_EQ(o.tests.size(), 4u);
  EXPECT_GT(o.duration, 0);
  auto plan = make_plan(o);
  EXPECT_EQ(plan.size(), 12u);
}

TEST(PerfOptions, RefusedInputs) {
  const std::vector<std::vector<std::string>> bad = {
      {"write_bw", "--bogus"},
      {"write_bw", "-x"},
      {"copy_bw"},
      {},
      {"write_bw", "-s", "0"},
      {"write_bw", "-s", "abc"},
      {"write_bw", "-a", "-s", "64"},
      {"write_bw", "-n", "10", "-D", "1"},
      {"write_bw", "--crc", "maybe"},
      {"write_bw", "--mpa-rev", "3"},
      {"write_bw", "--server", "host1"},
      {"write_bw", "--server", "--loopback"},
      {"send_lat", "-q", "2"},
      {"write_lat", "-e"},
      {"write_bw", "--json", "--csv"},
      {"write_bw", "h1", "--baseline", "tcp"},
      {"--demo", "--server"},
      {"write_bw", "-q", "0"},
      {"write_bw", "h1", "extra"},
  };
  for (const auto& args : bad) {
    PerfOptions o;
    std::string t;
    EXPECT_EQ(parse(args, o, t), 2) << "accepted: " << ::testing::PrintToString(args);
    EXPECT_FALSE(t.empty());
    EXPECT_EQ(t.find('\n'), std::string::npos) << "not one line: " << t;
  }
}

TEST(PerfOptions, HelpExitsZero) {
  PerfOptions o;
  std::string t;
  EXPECT_EQ(parse({"--help"}, o, t), 0);
  EXPECT_NE(t.find("write_bw"), std::string::npos);
  EXPECT_NE(t.find("--baseline"), std::string::npos);
}

TEST(PerfTypes, NamesRoundTrip) {
  for (const auto& n : all_test_names()) {
    auto t = parse_test(n);
    ASSERT_TRUE(t.has_value()) << n;
    EXPECT_EQ(test_name(*t), n);
  }
  EXPECT_FALSE(parse_test("write").has_value());
  EXPECT_EQ(test_title({Op::Read, Metric::Lat}), "RDMA_Read Latency Test");
}

TEST(PerfTypes, LatencyPercentilesAndRates) {
  PerfResult r;
  std::vector<uint64_t> ns;
  for (uint64_t i = 1; i <= 1000; ++i) ns.push_back(i * 1000);  // 1..1000 us
  finish_latency(r, ns, false);
  EXPECT_DOUBLE_EQ(r.lat_min_us, 1);
  EXPECT_NEAR(r.lat_p50_us, 500, 1);
  EXPECT_NEAR(r.lat_p99_us, 990, 1);
  EXPECT_NEAR(r.lat_p999_us, 999, 1);
  EXPECT_DOUBLE_EQ(r.lat_max_us, 1000);
  finish_latency(r, ns, true);
  EXPECT_DOUBLE_EQ(r.lat_max_us, 500);
  r.bytes = 1000000000;
  r.iters = 1000;
  r.seconds = 2;
  finish_rates(r);
  EXPECT_DOUBLE_EQ(r.mbps, 500);
  EXPECT_DOUBLE_EQ(r.gbps, 4);
  EXPECT_DOUBLE_EQ(r.msg_rate, 500);
}

TEST(PerfTypes, Ratios) {
  PerfResult bw;
  bw.gbps = 9;
  bw.has_baseline = true;
  bw.base_gbps = 10;
  finish_ratio(bw);
  EXPECT_DOUBLE_EQ(bw.ratio, 0.9);
  PerfResult lat;
  lat.latency = true;
  lat.lat_p50_us = 12;
  lat.has_baseline = true;
  lat.base_lat_p50_us = 10;
  finish_ratio(lat);
  EXPECT_DOUBLE_EQ(lat.ratio, 1.2);
  lat.baseline_error = "failed";
  finish_ratio(lat);
  EXPECT_EQ(lat.ratio, 0);
}

}  // namespace
}  // namespace softndk::ndkperf
