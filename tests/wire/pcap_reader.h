// SPDX-License-Identifier: Apache-2.0
// tests/wire/pcap_reader.h — minimal TCP stream reassembly over libpcap for
// the golden tests: IPv4 over Ethernet / Linux cooked (SLL, SLL2) / raw IP,
// per-direction byte streams ordered by sequence number, retransmissions and
// overlaps dropped, the frame number of every byte's first segment kept.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace softndk::wire::test {

struct TcpDirection {
  std::string src;  // "ip:port"
  std::string dst;
  std::vector<uint8_t> bytes;        // reassembled payload from ISN+1
  std::vector<uint32_t> frame_of;    // pcap frame number (1-based) of each byte
  std::vector<size_t> segment_ends;  // stream offsets where TCP segments ended
  bool gap = false;                  // a hole could not be filled
};

struct TcpConnection {
  std::string initiator;  // "ip:port" that sent the SYN
  std::string responder;
  uint32_t first_frame = 0;
  TcpDirection to_responder;  // I->R
  TcpDirection to_initiator;  // R->I
};

// Reads `path`; on failure returns false and sets `error`.
bool read_tcp_connections(const std::string& path, std::vector<TcpConnection>& out,
                          std::string& error);

}  // namespace softndk::wire::test
