// SPDX-License-Identifier: Apache-2.0
// ping_options.h - ndkping's command line: rping's flags, parsed with CLI11.
#pragma once

#include <cstdint>
#include <string>

namespace softndk::ndkping {

struct PingOptions {
  bool server = false;      // -s
  bool client = false;      // -c
  std::string address;      // -a: server address to bind / connect to
  uint16_t port = 7174;     // -p
  uint64_t count = 0;       // -C: pings (0 = forever, as rping)
  size_t size = 64;         // -S: ping buffer size
  bool verbose = false;     // -v: print ping data
  bool validate = false;    // -V: check the echoed data
  bool debug = false;       // -d: trace the steps
  bool persistent = false;  // -P: server keeps serving, several clients at once
  double timeout = 10;      // --timeout: seconds any step may take (not in rping)
  size_t max_clients = 64;  // --max-clients: -P serves at most this many at once
  // --max-handshakes: -P takes at most this many connections whose
  // handshake (MPA, then the first FPDU) has not finished; they hold no
  // --max-clients slot, so stalled peers cannot keep real clients out.
  size_t max_handshakes = 256;
};

// Returns -1 to go on, or an exit code with `text` (help, or a one-line
// error without the "ndkping: " prefix).
int parse_ping_options(int argc, const char* const* argv, PingOptions& out, std::string& text);

}  // namespace softndk::ndkping
