// SPDX-License-Identifier: Apache-2.0
// fi_tcp_bench - libfabric's tcp provider doing what softndk is compared on,
// perftest-style, both ends in this process over 127.0.0.1:
//   fi_tcp_bench [write_bw|read_bw|send_bw|write_lat|send_lat|write_rate|all]
//                [-s SIZE] [-n ITERS] [-D SECS] [-t WINDOW] [--event]
//                [--auto-progress] [--repeat N] [--json]
// "all" runs the issue-5 set: write/read/send bandwidth at -s (1 MiB), 8-byte
// write and send ping-pong, 8-byte write rate.
#include <CLI/CLI.hpp>
#include <iostream>

#include "baseline/report.h"
#include "fabric/fi_baseline.h"

using namespace softndk::baseline;

int main(int argc, char** argv) {
  CLI::App app{"libfabric tcp provider baselines for softndk (FI_EP_MSG over loopback)"};
  std::string test = "all", size_s;
  uint64_t iters = 0;
  double secs = 3;
  int window = 16, repeat = 1;
  bool event = false, auto_prog = false, json = false;
  std::string provider = "tcp";
  app.add_option("test", test,
                 "write_bw | read_bw | send_bw | write_lat | send_lat | write_rate | all")
      ->capture_default_str();
  app.add_option("-s,--size", size_s,
                 "message size, K/M suffixes (default 1M for *_bw, 8 for *_lat and write_rate)");
  app.add_option("-n,--iters", iters, "operations or round trips (0 = until -D)")
      ->capture_default_str();
  app.add_option("-D,--duration", secs, "wall-clock cap per test, seconds")->capture_default_str();
  app.add_option("-t,--tx-depth", window, "outstanding operations (bw/rate)")
      ->check(CLI::Range(1, 128))
      ->capture_default_str();
  app.add_flag("-e,--event", event, "wait with fi_cq_sread on a wait object instead of polling");
  app.add_flag("--auto-progress", auto_prog, "FI_PROGRESS_AUTO (provider thread) not MANUAL");
  app.add_option("--provider", provider, "libfabric provider name")->capture_default_str();
  app.add_option("-r,--repeat", repeat, "run each test N times; adds the median run")
      ->check(CLI::PositiveNumber);
  app.add_flag("--json", json, "JSON output: {\"results\": [...], \"medians\": [...]}");
  CLI11_PARSE(app, argc, argv);

  std::vector<FiTest> tests;
  FiTest one;
  if (test == "all") {
    tests = {FiTest::WriteBw,  FiTest::ReadBw,  FiTest::SendBw,
             FiTest::WriteLat, FiTest::SendLat, FiTest::WriteRate};
  } else if (fi_test_from_name(test, one)) {
    tests = {one};
  } else {
    std::cerr << "fi_tcp_bench: unknown test '" << test << "'\n";
    return 2;
  }
  size_t size_arg = 0;
  try {
    if (!size_s.empty()) size_arg = parse_size(size_s);
  } catch (const std::exception& e) {
    std::cerr << "fi_tcp_bench: " << e.what() << "\n";
    return 2;
  }

  nlohmann::json results = nlohmann::json::array(), medians = nlohmann::json::array();
  bool ok = true;
  if (!json) print_header();
  for (FiTest t : tests) {
    FiOptions o;
    o.test = t;
    bool small = t == FiTest::WriteLat || t == FiTest::SendLat || t == FiTest::WriteRate;
    // In "all", -s applies to the bandwidth tests; the others are 8-byte tests.
    o.msg_size = size_arg && (test != "all" || !small) ? size_arg : (small ? 8 : 1 << 20);
    o.limits = {iters, secs, small && t != FiTest::WriteRate ? 1000u : 0u};
    o.window = window;
    o.mode = event ? Mode::Blocking : Mode::BusyPoll;
    o.auto_progress = auto_prog;
    o.provider = provider;
    if (event && t == FiTest::WriteLat) continue;  // no event mode: it polls memory
    std::vector<BaselineResult> runs;
    for (int i = 0; i < repeat; ++i) {
      BaselineResult r = fi_run(o);
      ok = ok && r.ok();
      if (!json) print_row(r);
      results.push_back(r);
      runs.push_back(r);
    }
    bool all_ok = std::all_of(runs.begin(), runs.end(), [](auto& r) { return r.ok(); });
    if (repeat > 1 && all_ok) {
      BaselineResult m = median_of(runs);
      if (!json) print_row(m, "(median)");
      medians.push_back(m);
    }
  }
  if (json) {
    nlohmann::json out{{"results", results}};
    if (repeat > 1) out["medians"] = medians;
    std::cout << out.dump(2) << "\n";
  }
  return ok ? 0 : 1;
}
