// SPDX-License-Identifier: Apache-2.0
// report_test.cc - table, JSON and CSV from synthetic results.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ndkperf/perf_report.h"
#include "proc.h"

namespace softndk::ndkperf {
namespace {

std::vector<PerfResult> synthetic() {
  std::vector<PerfResult> v;
  for (size_t s : {4096, 65536, 1 << 20}) {
    PerfResult r;
    r.test = "write_bw";
    r.size = s;
    r.iters = 1000;
    r.bytes = r.bytes_sent = 1000 * s;
    r.seconds = 0.5;
    finish_rates(r);
    r.cpu_client_s = 0.5;
    r.cpu_server_s = 0.01;
    r.has_baseline = true;
    r.baseline_name = "tcp_stream";
    r.base_gbps = r.gbps * 1.1;
    r.base_mbps = r.mbps * 1.1;
    finish_ratio(r);
    v.push_back(r);
  }
  PerfResult l;
  l.test = "send_lat";
  l.latency = true;
  l.size = 8;
  l.iters = 1000;
  l.bytes = l.bytes_sent = 8000;
  l.seconds = 0.02;
  std::vector<uint64_t> ns;
  for (int i = 0; i < 1000; ++i) ns.push_back(20000 + i * 10);
  finish_latency(l, ns, true);
  finish_rates(l);
  v.push_back(l);
  PerfResult bad;
  bad.test = "read_bw";
  bad.size = 64;
  bad.error = "server refused: \"peer runs write_bw\"";
  v.push_back(bad);
  return v;
}

TEST(Report, JsonIsValidAndComplete) {
  RunInfo in;
  in.baseline = "tcp";
  in.per_test = {{"write_bw", 128, 0}, {"send_lat", 1, 220}};
  std::string text = results_json(synthetic(), in).dump(2);
  nlohmann::json j = nlohmann::json::parse(text);  // throws if invalid
  EXPECT_EQ(j["tool"], "ndkperf");
  EXPECT_EQ(j["config"]["mode"], "loopback");
  ASSERT_EQ(j["results"].size(), 5u);
  const auto& w = j["results"][0];
  EXPECT_EQ(w["test"], "write_bw");
  EXPECT_EQ(w["bytes"], w["bytes_sent"]);
  EXPECT_GT(w["gbps"].get<double>(), 0);
  EXPECT_NEAR(w["ratio"].get<double>(), 1 / 1.1, 1e-9);
  EXPECT_EQ(w["baseline"]["name"], "tcp_stream");
  const auto& l = j["results"][3];
  for (const char* k : {"min", "median", "avg", "p99", "p99_9", "max"})
    EXPECT_GT(l["latency_us"][k].get<double>(), 0) << k;
  EXPECT_TRUE(j["results"][4].contains("error"));
  // Each result carries its own test's settings, not the first test's.
  EXPECT_EQ(w["tx_depth"], 128);
  EXPECT_EQ(w["inline_size"], 0);
  EXPECT_EQ(l["test"], "send_lat");
  EXPECT_EQ(l["tx_depth"], 1);
  EXPECT_EQ(l["inline_size"], 220);
  EXPECT_EQ(l["cq_mod"], 1);
  ASSERT_EQ(j["config"]["tests"].size(), 2u);
  EXPECT_EQ(j["config"]["tests"][1]["inline_size"], 220);
  EXPECT_FALSE(j["config"].contains("inline_size"));
}

TEST(Report, CsvHasHeaderAndOneLinePerResult) {
  std::string csv = format_csv(synthetic());
  EXPECT_EQ(tools_test::count_lines(csv), 6);
  EXPECT_EQ(csv.rfind("test,size,iterations,bytes,bytes_sent", 0), 0u);
  EXPECT_NE(csv.find("\"server refused: \"\"peer runs write_bw\"\"\""), std::string::npos);
}

TEST(Report, TableLooksLikePerftest) {
  RunInfo in;
  in.baseline = "tcp";
  std::string t = format_table(synthetic(), in);
  EXPECT_NE(t.find("RDMA_Write BW Test"), std::string::npos);
  EXPECT_NE(t.find("Send Latency Test"), std::string::npos);
  EXPECT_NE(t.find("#bytes"), std::string::npos);
  EXPECT_NE(t.find("BW average[MB/s]"), std::string::npos);
  EXPECT_NE(t.find("t_p99.9[us]"), std::string::npos);
  EXPECT_NE(t.find("TCP BW[MB/s]"), std::string::npos);
  EXPECT_NE(t.find("0.91x"), std::string::npos);
  EXPECT_NE(t.find("failed: server refused"), std::string::npos);
  in.report_gbits = true;
  EXPECT_NE(format_table(synthetic(), in).find("BW average[Gb/s]"), std::string::npos);
}

}  // namespace
}  // namespace softndk::ndkperf

namespace softndk::ndkperf {
namespace {

// Issue 28 item 10: the header shows what was negotiated, not what was asked.
TEST(Report, HeaderShowsNegotiatedValues) {
  PerfResult r;
  r.test = "read_bw";
  r.size = 65536;
  r.iters = 10;
  r.mpa_revision = 1;  // the peer spoke revision 1
  r.crc = true;        // the server required CRC
  r.ord = 16;          // Reads in flight capped below the TX depth
  RunInfo in;
  in.crc = -1;
  in.mpa_revision = 2;
  in.tx_depth = 128;
  std::string t = format_table({r}, in);
  EXPECT_NE(t.find("MPA rev : 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("CRC : on "), std::string::npos) << t;
  EXPECT_NE(t.find("TX depth : 128 (Reads in flight: 16, the negotiated ORD)"), std::string::npos)
      << t;
  // Nothing negotiated known (a run that failed before it connected): what
  // was asked, marked so.
  PerfResult f;
  f.test = "write_bw";
  f.error = "refused";
  t = format_table({f}, in);
  EXPECT_NE(t.find("MPA rev : 2 (asked)"), std::string::npos) << t;
  EXPECT_NE(t.find("CRC : default (asked)"), std::string::npos) << t;
}

}  // namespace
}  // namespace softndk::ndkperf
