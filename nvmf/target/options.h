// SPDX-License-Identifier: Apache-2.0
// options.h - ndk-nvmet's command line.
#pragma once

#include <string>
#include <vector>

#include "target/subsystem.h"

namespace nvmf::target {

// Exit codes (also in the man page and docs/nvmf.md).
inline constexpr int kExitOk = 0;        // stopped by SIGINT/SIGTERM or --duration
inline constexpr int kExitFailed = 1;    // could not start (adapter, listener, namespace)
inline constexpr int kExitUsage = 2;     // bad command line
inline constexpr int kExitForced = 130;  // a second SIGINT/SIGTERM: quit without the orderly stop

struct Options {
  TargetConfig cfg;
  std::string address = "127.0.0.1";  // adapter: interface name or address
  std::vector<std::string> ns;        // file:PATH, blk:DEV, ram:SIZE
  std::string advertise;              // traddr in the discovery log (default: address)
  uint16_t advertise_port = 0;        // trsvcid in the discovery log (default: --port)
  double duration = 0;                // 0: until a signal
  std::string json;                   // stats file at exit ("-": stdout)
  std::string crc;                    // "", "on", "off"
  bool quiet = false;
  // Connections in their handshake (MPA, RDMA CM, up to the host's first
  // capsule) at once; they hold no --max-connections slot, and each ends
  // after --timeout (ndkapp/handshake_gate.h).
  size_t max_handshakes = 256;
  size_t max_connections = 1024;  // queues served at once (all hosts)
  double timeout = 10;            // seconds a handshake may take
};

// Returns -1 to go on, else the exit code (help/version printed to `out`,
// errors to `err`).
int parse_options(int argc, const char* const* argv, Options& o, std::string& out,
                  std::string& err);

}  // namespace nvmf::target
