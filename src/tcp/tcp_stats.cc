// SPDX-License-Identifier: Apache-2.0
// tcp/tcp_stats.cc - TCP_INFO. Uses <linux/tcp.h>, whose struct tcp_info
// has the fields glibc's <netinet/tcp.h> lacks (reordering, DSACK,
// out-of-order); the two headers cannot share a translation unit.
#include "tcp/tcp_stats.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace softndk::tcp {

bool read_tcp_stats(int fd, TcpStats* out) {
  *out = TcpStats{};
  char name[32] = {};
  socklen_t nlen = sizeof name - 1;
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &nlen) == 0)
    out->congestion.assign(name, strnlen(name, nlen));
  tcp_info ti{};
  socklen_t len = sizeof ti;  // an older kernel fills less and says so
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return false;
  out->rtt_us = ti.tcpi_rtt;
  out->rttvar_us = ti.tcpi_rttvar;
  out->snd_cwnd = ti.tcpi_snd_cwnd;
  out->snd_mss = ti.tcpi_snd_mss;
  out->total_retrans = ti.tcpi_total_retrans;
  out->reord_seen = ti.tcpi_reord_seen;
  out->rcv_ooopack = ti.tcpi_rcv_ooopack;
  out->dsack_dups = ti.tcpi_dsack_dups;
  out->pacing_rate = ti.tcpi_pacing_rate;
  out->delivery_rate = ti.tcpi_delivery_rate;
  out->bytes_sent = ti.tcpi_bytes_sent;
  out->bytes_retrans = ti.tcpi_bytes_retrans;
  out->bytes_received = ti.tcpi_bytes_received;
  return true;
}

}  // namespace softndk::tcp
