// SPDX-License-Identifier: Apache-2.0
// perf_options.h - ndkperf's command line (perftest's option names where they
// exist), parsed with CLI11 into PerfOptions, and the run plan it implies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndkperf/perf_types.h"

namespace softndk::ndkperf {

enum class Role { Loopback, Server, Client };

struct PerfOptions {
  std::vector<Test> tests;  // one, or several with --demo
  Role role = Role::Loopback;
  std::string host;    // client: the server
  std::string device;  // adapter (interface or address); "" = automatic
  size_t size = 0;     // 0 = the test's default (65536 bw, 2 lat)
  bool all_sizes = false;
  uint64_t iters = 0;   // 0 = default (1000 bw/lat) unless a duration is given
  double duration = 0;  // seconds per measured point; 0 = use iterations
  unsigned qps = 1;
  unsigned tx_depth = 0;  // 0 = default (128 bw, 1 lat)
  // send_lat: one ping (pong) in cq_mod is signaled, the others are posted
  // NDK_OP_FLAG_SILENT_SUCCESS; at most tx_depth, as perftest's -Q (its
  // default 100, so 1 at the latency tests' default depth of 1).
  unsigned cq_mod = 100;
  unsigned inline_size = 0;
  bool inline_given = false;  // -I on the command line (else inline_for's default)
  uint16_t port = 18515;
  bool port_given = false;
  bool report_gbits = false;
  int crc = -1;  // -1 default, 0 off, 1 on
  unsigned mpa_revision = 0;
  bool events = false;
  bool shm_buffers = false;
  bool json = false;
  bool csv = false;
  std::string plot;      // SVG path, "" = none
  std::string baseline;  // "" or "tcp"
  bool demo = false;
  double timeout = 10;          // seconds without progress before giving up
  bool quiet = false;           // no progress line
  size_t max_handshakes = 256;  // --server: handshakes taken side by side
};

// Parses argv. Returns -1 to go on, or the exit code to leave with; `text`
// then holds what to print (help on stdout for code 0, else a one-line error
// for stderr, without the "ndkperf: " prefix).
int parse_perf_options(int argc, const char* const* argv, PerfOptions& out, std::string& text);

// The default plot file of --demo.
inline constexpr const char* kDemoPlot = "build/ndkperf-demo.svg";
inline constexpr const char* kDemoPlotHere = "ndkperf-demo.svg";  // no build/ directory here

// One measured point of the plan.
struct Job {
  Test test;
  size_t size;
};
std::vector<Job> make_plan(const PerfOptions& o);

// Sizes, iteration count and depth the options give for a test.
std::vector<size_t> sizes_for(const PerfOptions& o, Test t);
uint64_t iters_for(const PerfOptions& o, Test t);
unsigned tx_depth_for(const PerfOptions& o, Test t);
// The CQ moderation a test runs with: min(-Q, tx depth) for send_lat (as
// perftest clamps it), 1 for the others.
unsigned cq_mod_for(const PerfOptions& o, Test t);
// Inline data size: -I if given; otherwise, like perftest, 220 bytes for the
// Send and Write latency tests (its DEF_INLINE_WRITE) and none for the rest.
inline constexpr unsigned kLatInlineDefault = 220;
unsigned inline_for(const PerfOptions& o, Test t);

}  // namespace softndk::ndkperf
