// SPDX-License-Identifier: Apache-2.0
// tcp_bench - the raw-TCP and iperf3 baselines from the command line, for
// rerunning the comparison by hand:
//   tcp_bench stream|pingpong|rate|iperf3 -s SIZE -n ITERS -D SECS
//             --mode busy|blocking [--repeat N] [--json]
#include <CLI/CLI.hpp>
#include <iostream>

#include "baseline/report.h"
#include "baseline/tcp_baseline.h"

using namespace softndk::baseline;

int main(int argc, char** argv) {
  CLI::App app{"Raw TCP loopback baselines for softndk (both ends in this process)"};
  std::string test, size_s = "1M", mode_s = "busy";
  uint64_t iters = 0;
  double secs = 5;
  int repeat = 1;
  bool json = false;
  app.add_option("test", test, "stream | pingpong | rate | iperf3")
      ->required()
      ->check(CLI::IsMember({"stream", "pingpong", "rate", "iperf3"}));
  app.add_option("-s,--size", size_s, "message/write size (K/M suffixes)")->capture_default_str();
  app.add_option("-n,--iters", iters, "messages or round trips (0 = until -D)")
      ->capture_default_str();
  app.add_option("-D,--duration", secs, "wall-clock cap in seconds")->capture_default_str();
  app.add_option("--mode", mode_s, "busy (non-blocking, spin) | blocking (sleep in recv)")
      ->check(CLI::IsMember({"busy", "blocking"}))
      ->capture_default_str();
  app.add_option("-r,--repeat", repeat, "run N times; the table adds the median run")
      ->check(CLI::PositiveNumber);
  app.add_flag("--json", json, "JSON output (an object, or an array when --repeat > 1)");
  CLI11_PARSE(app, argc, argv);

  size_t size;
  try {
    size = parse_size(size_s);
  } catch (const std::exception& e) {
    std::cerr << "tcp_bench: " << e.what() << "\n";
    return 2;
  }
  Mode mode = mode_s == "busy" ? Mode::BusyPoll : Mode::Blocking;
  Limits lim{iters, secs, test == "pingpong" ? std::min<uint64_t>(1000, iters / 10 + 10) : 0};

  std::vector<BaselineResult> runs;
  bool ok = true;
  for (int i = 0; i < repeat; ++i) {
    BaselineResult r;
    if (test == "stream") r = tcp_stream(size, lim, mode);
    if (test == "pingpong") r = tcp_pingpong(size, lim, mode);
    if (test == "rate") r = tcp_msg_rate(size, lim, mode);
    if (test == "iperf3") r = run_iperf3(secs, size);
    ok = ok && r.ok();
    runs.push_back(r);
  }
  if (json) {
    nlohmann::json j = runs.size() == 1 ? nlohmann::json(runs[0]) : nlohmann::json(runs);
    std::cout << j.dump(2) << "\n";
  } else {
    print_header();
    for (auto& r : runs) print_row(r);
    if (ok && runs.size() > 1) print_row(median_of(runs), "(median)");
  }
  return ok ? 0 : 1;
}
