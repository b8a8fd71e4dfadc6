// SPDX-License-Identifier: Apache-2.0
// engine/iwarp_connection.cc - the connection classes of the software iWARP
// provider (iwarp_connection.h): MPA facts for the object model, the RTR and
// the stream start on CompleteConnect/Accept, TCP_INFO for the queries.
#include "engine/iwarp_connection.h"

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <utility>

#include "rdmap/rtr.h"
#include "rdmap/stream.h"
#include "tcp/tcp_stats.h"

namespace softndk::engine {

namespace {

// The first bound of a silent peer's wake-up (rdmap/stream_wake.cc): the
// adapter's fixed value, or twice the MPA round trip of this connection -
// the peer answered our Request within one, so an answer to our first FPDU
// within two is the normal case - between 20 ms (LAN round trips are
// microseconds; a bound that short would wake peers that merely think
// before they answer, and siw's race window is a few instructions there)
// and 500 ms. docs/compatibility.md note 1 has the measurements.
std::chrono::milliseconds wake_bound(int32_t fixed_ms, std::chrono::microseconds mpa_rtt) {
  using std::chrono::milliseconds;
  if (fixed_ms >= 0) return milliseconds(fixed_ms);
  auto b = std::chrono::duration_cast<milliseconds>(2 * mpa_rtt);
  return std::clamp(b, milliseconds(20), milliseconds(500));
}

}  // namespace

IwarpConnection::IwarpConnection(std::shared_ptr<tcp::Connection> c, bool samehost,
                                 int32_t silent_wake_ms)
    : c_(std::move(c)), samehost_(samehost), silent_wake_ms_(silent_wake_ms) {
  const mpa::NegotiatedParams& p = c_->params();
  facts_.ird = p.ird;
  facts_.ord = p.ord;
  facts_.revision = p.revision;
  facts_.crc = p.crc;
  facts_.markers = p.markers;
  facts_.p2p = p.p2p;
  facts_.rtr = p.p2p ? p.rtr : 0;
  facts_.local = c_->local();
  facts_.peer = c_->peer();
  facts_.mpa_round_trip_us = static_cast<uint32_t>(
      std::min<int64_t>(c_->mpa_round_trip().count(), std::numeric_limits<uint32_t>::max()));
}

const std::vector<uint8_t>& IwarpConnection::peer_private_data() const {
  return c_->params().peer_private_data;
}

void IwarpConnection::post(std::function<void()> fn) { c_->reactor().post(std::move(fn)); }

std::shared_ptr<provider::QpEngine> IwarpConnection::start(provider::QpHost* qp, bool initiator) {
  if (c_->closed()) return nullptr;
  const mpa::NegotiatedParams& p = c_->params();
  rdmap::StreamOptions so;
  if (initiator && p.p2p) {
    // The RTR (RFC 6581): our first FPDU; the responder's Accept completes
    // on it. Sent here, on the connection's reactor, so it precedes every
    // FPDU of the stream.
    uint8_t buf[wire::kRtrReadSize + 8];
    size_t n = p.rtr == mpa::kRtrRead ? wire::encode_rtr_read(std::span<uint8_t>(buf), 1, p.crc)
                                      : wire::encode_rtr_write(std::span<uint8_t>(buf), p.crc);
    ssize_t k = ::send(c_->fd(), buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == 0 || k != static_cast<ssize_t>(n)) return nullptr;
    // An FPDU like any other: the peer counts it in, so do we out.
    provider::count_qp(qp->counters().rdma_out_frames);
    provider::count_qp(qp->counters().rdma_out_octets, n);
    so.sent_rtr.assign(buf, buf + n);
  }
  so.await_peer_fpdu = !initiator;  // RFC 5044 7.1.2 (with P2P the RTR is here already)
  so.samehost = samehost_ ? 1 : 0;
  if (initiator) so.wake_silent_after = wake_bound(silent_wake_ms_, c_->mpa_round_trip());
  return rdmap::start_stream(qp, c_, so);
}

void IwarpConnection::on_peer_close(std::function<void(NTSTATUS)> cb) {
  c_->on_peer_close(std::move(cb));
}

void IwarpConnection::disconnect(std::function<void(NTSTATUS)> cb) {
  c_->disconnect(std::move(cb));
}

bool IwarpConnection::tcp_info(SOFTNDK_TCP_INFO* info) const {
  tcp::TcpStats t;
  if (!c_->tcp_stats(&t)) return false;
  const ULONG size = info->Size;
  std::memset(info, 0, sizeof *info);
  info->Size = size;
  std::strncpy(info->CongestionControl, t.congestion.c_str(), sizeof info->CongestionControl - 1);
  info->RttUs = t.rtt_us;
  info->RttVarUs = t.rttvar_us;
  info->SendCwnd = t.snd_cwnd;
  info->SendMss = t.snd_mss;
  info->TotalRetransmits = t.total_retrans;
  info->ReorderingSeen = t.reord_seen;
  info->OutOfOrderReceived = t.rcv_ooopack;
  info->DsackDups = t.dsack_dups;
  info->PacingRate = t.pacing_rate;
  info->DeliveryRate = t.delivery_rate;
  info->BytesSent = t.bytes_sent;
  info->BytesRetransmitted = t.bytes_retrans;
  info->BytesReceived = t.bytes_received;
  return true;
}

IwarpIncoming::IwarpIncoming(std::shared_ptr<tcp::PendingConnection> p, bool samehost)
    : p_(std::move(p)), samehost_(samehost) {
  // Not negotiated yet: what the peer's MPA Request asks for, so that a
  // listener can judge a request before accepting or rejecting it.
  const mpa::PeerRequest& r = p_->request();
  facts_.ird = r.proposed_ird;
  facts_.ord = r.proposed_ord;
  facts_.revision = r.rev;
  facts_.crc = r.crc;
  facts_.markers = r.markers;
  facts_.p2p = r.p2p;
  facts_.rtr = r.p2p ? r.rtr_offered : 0;
  facts_.local = p_->local();
  facts_.peer = p_->peer();
}

const std::vector<uint8_t>& IwarpIncoming::private_data() const {
  return p_->request().private_data;
}

NTSTATUS IwarpIncoming::accept(
    provider::QpHost* /*qp: the software engine starts the stream at start()*/, uint16_t ird,
    uint16_t ord, std::vector<uint8_t> private_data,
    std::function<void(NTSTATUS, std::shared_ptr<provider::Connection>)> cb) {
  const bool sh = samehost_;
  return p_->accept(ird, ord, std::move(private_data),
                    [cb = std::move(cb), sh](NTSTATUS st, std::shared_ptr<tcp::Connection> c) {
                      std::shared_ptr<provider::Connection> pc;
                      if (c) pc = std::make_shared<IwarpConnection>(std::move(c), sh);
                      cb(st, std::move(pc));
                    });
}

NTSTATUS IwarpIncoming::reject(std::span<const uint8_t> private_data) {
  return p_->reject(private_data);
}

}  // namespace softndk::engine
