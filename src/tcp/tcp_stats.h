// SPDX-License-Identifier: Apache-2.0
// tcp/tcp_stats.h - a connected socket's TCP state (TCP_INFO and
// TCP_CONGESTION) for observability: what the kernel's TCP did with our
// bytes - retransmissions, reordering, round trip, pacing.
#pragma once

#include <cstdint>
#include <string>

namespace softndk::tcp {

struct TcpStats {
  std::string congestion;  // algorithm name
  uint32_t rtt_us = 0, rttvar_us = 0;
  uint32_t snd_cwnd = 0, snd_mss = 0;           // segments, bytes
  uint32_t total_retrans = 0;                   // segments retransmitted, whole life
  uint32_t reord_seen = 0;                      // reordering events the sender saw
  uint32_t rcv_ooopack = 0;                     // out-of-order segments received
  uint32_t dsack_dups = 0;                      // retransmissions the peer had already
  uint64_t pacing_rate = 0, delivery_rate = 0;  // bytes/s
  uint64_t bytes_sent = 0, bytes_retrans = 0, bytes_received = 0;
};

// False when the socket gives nothing (closed, not TCP). Fields a kernel
// does not report stay 0.
bool read_tcp_stats(int fd, TcpStats* out);

}  // namespace softndk::tcp
