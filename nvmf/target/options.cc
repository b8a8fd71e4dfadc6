// SPDX-License-Identifier: Apache-2.0
// options.cc - see options.h.
#include "target/options.h"

#include <CLI/CLI.hpp>

#include "ndkapp/version.h"

namespace nvmf::target {

int parse_options(int argc, const char* const* argv, Options& o, std::string& out,
                  std::string& err) {
  CLI::App app{
      "ndk-nvmet - NVMe over Fabrics (RDMA) target on softndk: exports files, block devices or\n"
      "RAM as namespaces of one subsystem to NVMe/RDMA hosts (Linux nvme-rdma, ndk-nvme).",
      "ndk-nvmet"};
  bool version = false;
  TargetConfig& c = o.cfg;
  app.add_option("-a,--address", o.address,
                 "softndk adapter to listen on: interface name or local address (default "
                 "127.0.0.1)");
  app.add_option("-p,--port", c.port, "TCP port (default 4420)");
  app.add_option("-n,--nqn", c.subnqn, "subsystem NQN")->required();
  app.add_option("--ns", o.ns, "namespace, repeatable: file:PATH | blk:DEVICE | ram:SIZE")
      ->required();
  app.add_option("--host", c.hosts, "host NQN allowed to connect (repeatable)");
  app.add_flag("--allow-any-host", c.allow_any, "any host NQN may connect");
  app.add_option("--queues", c.max_io_queues, "I/O queues per controller (default 8)")
      ->check(CLI::Range(1, 64));
  app.add_option("--queue-depth", c.max_io_depth, "entries per I/O queue (default 128)")
      ->check(CLI::Range(2, 1024));
  app.add_option("--kato", c.kato_default_ms,
                 "keep alive timeout in ms for hosts that connect with KATO 0 (default 120000)");
  app.add_option("--inline-data", c.inline_data,
                 "in-capsule data bytes per command (IOCCSZ; default 4096)")
      ->check(CLI::Range(0, 65536));
  app.add_option("--advertise-addr", o.advertise,
                 "transport address in the discovery log (default: the listen address)");
  app.add_option("--advertise-port", o.advertise_port,
                 "transport service id (port) in the discovery log (default: --port)");
  app.add_option("--crc", o.crc, "MPA CRC32c: on (required) | off (only if the peer asks)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_flag("--poll", c.poll, "busy-poll the I/O queues (lowest latency, one core per queue)");
  app.add_option("--duration", o.duration,
                 "stop after this many seconds (default: at SIGINT/SIGTERM)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--json", o.json, "write counters as JSON at exit to FILE (- for stdout)");
  app.add_option("--max-connections", o.max_connections,
                 "queues (connections) served at once, all hosts together; more are refused "
                 "(default 1024)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-handshakes", o.max_handshakes,
                 "connections still in their handshake at once (up to the host's first "
                 "capsule); they take no --max-connections slot and each ends after --timeout "
                 "(default 256)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--timeout", o.timeout,
                 "seconds a new connection may take to send its first capsule, and the bound of "
                 "the adapter's waits (default 10)")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_flag("-q,--quiet", o.quiet, "no start-up line");
  app.add_flag("-V,--version", version, "print the version and exit");
  // --version works without the required options.
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "-V" || std::string(argv[i]) == "--version") {
      out = softndk::tools::version_text("ndk-nvmet") + "\n";
      return kExitOk;
    }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out = app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err = std::string("ndk-nvmet: ") + e.what() + "\n";
    return kExitUsage;
  }
  if (!c.allow_any && c.hosts.empty()) {
    err = "ndk-nvmet: name the hosts allowed (--host NQN) or give --allow-any-host\n";
    return kExitUsage;
  }
  if (c.subnqn.empty() || c.subnqn.size() > 223 || c.subnqn == kDiscoveryNqn) {
    err = "ndk-nvmet: --nqn must be 1..223 bytes and not the discovery NQN\n";
    return kExitUsage;
  }
  return -1;
}

}  // namespace nvmf::target
