// SPDX-License-Identifier: Apache-2.0
// perf_options.cc - CLI11 definition of ndkperf's options and their checks.
#include "ndkperf/perf_options.h"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "ndkapp/size_text.h"
#include "ndkapp/version.h"

namespace softndk::ndkperf {

namespace {

std::string first_line(std::string s) {
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

}  // namespace

int parse_perf_options(int argc, const char* const* argv, PerfOptions& o, std::string& text) {
  CLI::App app{
      "ndkperf - perftest-style RDMA benchmark over softndk (NDKPI on software iWARP).\n"
      "  ndkperf TEST             loopback: both ends in this process over 127.0.0.1\n"
      "  ndkperf TEST --server    wait for a client\n"
      "  ndkperf TEST HOST        run against a server on HOST\n"
      "TEST: send_bw send_lat write_bw write_lat read_bw read_lat",
      "ndkperf"};
  std::string test;
  std::string crc;
  bool loopback = false, server = false, ignored = false;
  app.add_option("test", test, "send_bw|send_lat|write_bw|write_lat|read_bw|read_lat")
      ->check(CLI::IsMember(all_test_names()));
  app.add_option("host", o.host, "server to connect to (client mode)");
  app.add_flag("--loopback", loopback, "both ends in one process over 127.0.0.1 (the default)");
  app.add_flag("--server", server, "wait for a client (perftest's server side)");
  app.add_option("-d,--ib-dev", o.device,
                 "softndk adapter: interface name or address (server default: listen on "
                 "every address, 0.0.0.0, as perftest; client: the address routing to HOST)");
  // The tools' one size parser (ndkapp/size_text.h): K, M, G, T, with an
  // optional B or iB, powers of 1024.
  CLI::Validator size_text(
      [](std::string& s) {
        std::string why;
        auto v = softndk::tools::parse_size(s, &why);
        if (!v) return why;
        s = std::to_string(*v);
        return std::string();
      },
      "SIZE");
  app.add_option("-s,--size", o.size, "message size in bytes (K/M/G suffixes: 64K = 65536)")
      ->transform(size_text)
      ->check(CLI::Range(size_t{1}, size_t{1} << 30));
  app.add_flag("-a,--all", o.all_sizes, "all sizes from 2 B to 8 MiB");
  app.add_option("-n,--iters", o.iters, "iterations per size")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option("-D,--duration", o.duration, "seconds per size (instead of -n)")
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("-q,--qp", o.qps, "number of QPs (connections)")->check(CLI::Range(1u, 64u));
  app.add_option("-Q,--cq-mod", o.cq_mod,
                 "send_lat: signal one Send in this many, the others silent (default 100, "
                 "at most the TX depth: 1 unless -t is given, as perftest)")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("-t,--tx-depth", o.tx_depth, "outstanding work requests per QP")
      ->check(CLI::Range(1u, 4096u));
  auto* inl = app.add_option("-I,--inline_size", o.inline_size,
                             "inline data up to this size, 0-256 (the adapter's "
                             "MaxInlineDataSize; default: 220 for send_lat and write_lat, as "
                             "perftest; 0 otherwise)")
                  ->check(CLI::Range(0u, 256u));
  auto* port = app.add_option("-p,--port", o.port, "TCP port (default 18515; loopback: any)");
  app.add_flag("--report_gbits", o.report_gbits, "bandwidth column in Gb/s instead of MB/s");
  app.add_option("--crc", crc,
                 "MPA CRC32c: on (required) | off (only if the peer asks) (default: the library's, "
                 "on off-host)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--mpa-rev", o.mpa_revision, "MPA revision 1|2 (default 2)")
      ->check(CLI::IsMember({1u, 2u}));
  app.add_flag("-e,--events", o.events, "wait for CQ notifications instead of busy-polling");
  app.add_flag("--shm-buffers", o.shm_buffers,
               "RDMA buffers from SoftNdkAllocateSharedMemory (a same-host peer maps them)");
  app.add_flag("--json", o.json, "print the results as one JSON document");
  app.add_flag("--csv", o.csv, "print the results as CSV");
  app.add_option("--plot", o.plot, "write bandwidth/latency vs size as SVG to this file");
  app.add_option("--baseline", o.baseline,
                 "run the same pattern beside it: tcp (plain TCP sockets) or ucx (ucx_perftest, "
                 "UCX_TLS=posix,cma,self: the same-host reference)")
      ->check(CLI::IsMember({"tcp", "ucx", "none"}));
  app.add_flag("--demo", o.demo,
               "loopback demo: send/write/read bw at 4 KiB, 64 KiB, 1 MiB and send_lat, with the "
               "TCP baseline (or --baseline ucx), plot to " +
                   std::string(kDemoPlot) + " (" + kDemoPlotHere + " outside a source tree)");
  app.add_option("--timeout", o.timeout, "seconds without progress before giving up")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--max-handshakes", o.max_handshakes,
                 "--server: connections still in their handshake at once (up to the client's "
                 "first message); each ends after --timeout, the first to finish is served "
                 "(default 256)")
      ->check(CLI::Range(1, 100000));
  app.add_flag("--quiet", o.quiet, "no progress line");
  app.add_flag("-F,-R", ignored, "accepted for perftest compatibility; no effect");
  app.set_version_flag("--version", softndk::tools::version_text("ndkperf"),
                       "print the softndk version and exit");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    text = app.help();
    return 0;
  } catch (const CLI::CallForVersion& e) {
    text = std::string(e.what()) + "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    text = first_line(e.what()) + " (see ndkperf --help)";
    return 2;
  }
  o.port_given = port->count() > 0;
  o.inline_given = inl->count() > 0;
  if (o.baseline == "none") o.baseline.clear();
  if (crc == "on") o.crc = 1;
  if (crc == "off") o.crc = 0;

  if (!test.empty()) o.tests.push_back(*parse_test(test));
  if (o.demo) {
    if (server || !o.host.empty()) {
      text = "--demo runs in loopback; it takes no HOST and no --server";
      return 2;
    }
    if (o.tests.empty())
      o.tests = {{Op::Send, Metric::Bw},
                 {Op::Write, Metric::Bw},
                 {Op::Read, Metric::Bw},
                 {Op::Send, Metric::Lat}};
    if (o.baseline.empty()) o.baseline = "tcp";
    // build/ndkperf-demo.svg in a source tree; elsewhere (no build/ here)
    // the current directory.
    if (o.plot.empty()) {
      struct stat st {};
      o.plot = ::stat("build", &st) == 0 && S_ISDIR(st.st_mode) ? kDemoPlot : kDemoPlotHere;
    }
    if (o.duration == 0 && o.iters == 0) o.duration = 1.0;
  }
  if (o.tests.empty()) {
    text = "no test given: one of send_bw send_lat write_bw write_lat read_bw read_lat";
    return 2;
  }
  int roles = (server ? 1 : 0) + (loopback ? 1 : 0) + (!o.host.empty() ? 1 : 0);
  if (roles > 1) {
    text = "choose one of --server, --loopback or a HOST";
    return 2;
  }
  o.role = server ? Role::Server : !o.host.empty() ? Role::Client : Role::Loopback;
  if (o.role == Role::Loopback && !o.port_given) o.port = 0;
  if (o.all_sizes && o.size) {
    text = "-a and -s exclude each other";
    return 2;
  }
  if (o.json && o.csv) {
    text = "--json and --csv exclude each other";
    return 2;
  }
  if (o.iters && o.duration > 0) {
    text = "-n and -D exclude each other";
    return 2;
  }
  for (Test t : o.tests) {
    if (t.metric == Metric::Lat && o.qps != 1) {
      text = test_name(t) + " runs on one QP (-q 1)";
      return 2;
    }
    if (t == Test{Op::Write, Metric::Lat} && o.events) {
      text = "write_lat polls memory for the peer's write; it has no event mode (-e)";
      return 2;
    }
  }
  if (o.role != Role::Loopback && (!o.baseline.empty() || o.tests.size() > 1)) {
    if (!o.baseline.empty()) {
      text = "--baseline runs both ends locally; use it with --loopback";
      return 2;
    }
  }
  return -1;
}

std::vector<size_t> sizes_for(const PerfOptions& o, Test t) {
  if (o.all_sizes) return all_sizes();
  if (o.size) return {o.size};
  if (o.demo)
    return t.metric == Metric::Bw ? std::vector<size_t>{4096, 65536, 1 << 20}
                                  : std::vector<size_t>{8, 4096, 65536};
  return {t.metric == Metric::Bw ? size_t{65536} : size_t{2}};
}

uint64_t iters_for(const PerfOptions& o, Test) {
  if (o.iters) return o.iters;
  if (o.duration > 0) return 0;
  return 1000;
}

unsigned tx_depth_for(const PerfOptions& o, Test t) {
  // The latency tests keep one request in flight whatever the depth; -t
  // sizes the send queue (and with it -Q's ceiling), as perftest's.
  if (t.metric == Metric::Lat) return o.tx_depth ? o.tx_depth : 1;
  return o.tx_depth ? o.tx_depth : 128;
}

unsigned cq_mod_for(const PerfOptions& o, Test t) {
  if (t != Test{Op::Send, Metric::Lat}) return 1;
  return std::max(1u, std::min(o.cq_mod, tx_depth_for(o, t)));
}

unsigned inline_for(const PerfOptions& o, Test t) {
  if (o.inline_given) return o.inline_size;
  return t.metric == Metric::Lat && t.op != Op::Read ? kLatInlineDefault : 0;
}

std::vector<Job> make_plan(const PerfOptions& o) {
  std::vector<Job> plan;
  for (Test t : o.tests)
    for (size_t s : sizes_for(o, t)) plan.push_back({t, s});
  return plan;
}

}  // namespace softndk::ndkperf
