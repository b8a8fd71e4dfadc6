// SPDX-License-Identifier: Apache-2.0
// impair-link - sets up the impaired link (link.h) and keeps it up until
// interrupted or for --seconds, then prints what it did. For trying
// softndk tools over a bad link by hand:
//   impair-link --loss 0.01 --delay-us 500 --jitter-us 2000 &
//   ip netns exec <ns b> ndkperf write_bw --server -d 10.N.0.2 ...
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <thread>

#include "impair/link.h"

namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A lossy, reordering, corrupting IPv4 link between two new network namespaces"};
  using softndk::test::impair::Impairment;
  Impairment imp;
  int net = 99;
  double seconds = 0;
  int64_t delay_us = 0, jitter_us = 0;
  uint64_t seed = 1;
  app.add_option("--net", net, "use 10.NET.0.0/24 (a: .1, b: .2)")->check(CLI::Range(1, 254));
  app.add_option("--loss", imp.loss, "fraction of packets dropped")->check(CLI::Range(0.0, 1.0));
  app.add_option("--delay-us", delay_us, "delay per packet")->check(CLI::Range(0, 10000000));
  app.add_option("--jitter-us", jitter_us, "extra uniform delay 0..J (reorders)")
      ->check(CLI::Range(0, 10000000));
  app.add_option("--duplicate", imp.duplicate, "fraction sent twice")->check(CLI::Range(0.0, 1.0));
  app.add_option("--corrupt", imp.corrupt,
                 "fraction of TCP segments with a payload byte flipped "
                 "(TCP checksum fixed up)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seconds", seconds, "stop after this long (default: until Ctrl-C)")
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--seed", seed, "random seed");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "impair-link: " << e.what() << " (see --help)\n";
    return 2;  // usage
  }
  imp.delay = std::chrono::microseconds(delay_us);
  imp.jitter = std::chrono::microseconds(jitter_us);

  std::string why;
  auto link = softndk::test::impair::ImpairedLink::create(net, &why, seed);
  if (!link) {
    std::cerr << "impair-link: " << why << '\n';
    return 1;  // the link could not be made (not root, no TUN)
  }
  link->set(imp);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::cout << "a: namespace " << link->ns_a() << " address " << link->addr_a() << '\n'
            << "b: namespace " << link->ns_b() << " address " << link->addr_b() << '\n'
            << std::flush;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_stop && (seconds == 0 || std::chrono::steady_clock::now() < end))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto c = link->counters();
  std::cout << "forwarded " << c.forwarded << " dropped " << c.dropped << " duplicated "
            << c.duplicated << " corrupted " << c.corrupted << " reordered " << c.reordered << '\n';
  return 0;
}
