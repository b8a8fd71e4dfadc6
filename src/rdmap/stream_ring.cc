// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_ring.cc - the FPDU stream through a shared-memory ring
// (docs/samehost.md section 4).
//
// Once the rendezvous agreed on a ring for a direction (the receiver mapped
// the sender's ring and said so), the sender sends one marker FPDU (opcode
// 0xF) on TCP and from then on writes every FPDU into the ring instead of
// the socket; the receiver, on parsing the marker, reads from the ring.
// The ring carries exactly the bytes TCP would have: the parser, the
// builder, ordering, fences, Terminate and the descriptors are unchanged.
// TCP stays connected underneath and still says EOF (drain the ring first)
// and errors; a byte on it after the marker is a protocol error.
//
// This file is the protocol side of the switch (the marker FPDU, when each
// direction moves) and the reactor's watches; moving the bytes through the
// ring is the same-host transport's byte path (transport/samehost/
// ring_path.h), which the stream then reads and writes like the socket.
#include <sys/epoll.h>

#include "rdmap/placement.h"
#include "rdmap/stream.h"

namespace softndk::rdmap {

namespace {
constexpr size_t kReactorRingBudget = 4u << 20;
void put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
}  // namespace

// ---- transmit -------------------------------------------------------------------

bool Stream::ring_tx_settle() {
  if (sh_ == nullptr) {
    tx_ring_settled_ = true;
    return false;
  }
  if (!sh_->done()) return false;  // later: the next run looks again
  tx_ring_settled_ = true;
  std::shared_ptr<ShmRing> r = sh_->tx_ring();
  // A trace or a fault hook wants real bytes on the wire: this direction
  // stays on TCP for good (docs/samehost.md).
  if (r == nullptr || tx_hooked_ || failed_.load(std::memory_order_acquire)) return false;
  Batch& b = *b_;
  b.clear();
  uint8_t body[4];
  put32(body, static_cast<uint32_t>(samehost::kRingDataSize));
  auto h = wire::DdpHeader::untagged_hdr(wire::Opcode::kSamehostRing, true, 0, 0, 0);
  wire::FpduWriter w;
  auto hdr = w.begin(h, {body, sizeof body}, 0, crc_, b.scratch[b.nfpdu++]);
  auto tr = w.finish();
  b.iov[b.niov++] = {const_cast<uint8_t*>(hdr.data()), hdr.size()};
  b.iov[b.niov++] = {const_cast<uint8_t*>(tr.data()), tr.size()};
  b.total = hdr.size() + tr.size();
  b.ring_switch = true;
  tx_ring_next_ = std::move(r);
  provider::count_qp(qc_.rdma_out_frames);
  return true;
}

void Stream::ring_tx_switched() {
  b_->ring_switch = false;
  if (tx_ring_next_ == nullptr) return;
  tx_ring_ = RingPath::writer(std::move(tx_ring_next_), polled_);
  if (peer_gone_.load(std::memory_order_acquire)) tx_ring_->peer_gone();
  tx_path_ = tx_ring_.get();
  tx_on_ring_.store(true, std::memory_order_release);
  ring_watch(1);
}

// ---- receive --------------------------------------------------------------------

bool Stream::on_ring_marker(const wire::SegmentInfo& seg) {
  std::shared_ptr<ShmRing> r = sh_ != nullptr ? sh_->rx_ring() : nullptr;
  const auto& b = seg.body;
  const uint32_t size =
      b.size() == 4 ? uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3] : 0;
  if (r == nullptr || rx_ring_ != nullptr || size != samehost::kRingDataSize) {
    // No ring agreed (or a second marker): like any opcode we do not take.
    rx_fail_term(segment_terminate({wire::TermLayer::kRdmap, wire::term::kRdmapRemoteOperation,
                                    wire::term::kRdmapUnexpectedOpcode},
                                   seg, false),
                 STATUS_CANCELLED);
    return false;
  }
  rx_ring_ = RingPath::reader(std::move(r), sock_, polled_);
  rx_path_ = rx_ring_.get();
  rx_marker_ = true;
  rx_on_ring_.store(true, std::memory_order_release);
  ring_watch(0);
  return true;
}

void Stream::path_protocol_error() {
  wire::TerminateMessage t;
  t.code = {wire::TermLayer::kRdmap, wire::term::kRdmapRemoteOperation,
            wire::term::kRdmapCatastrophicStream};
  rx_fail_term(t, STATUS_CANCELLED);
}

// ---- the reactor's side ---------------------------------------------------------

void Stream::ring_watch(int which) {
  std::weak_ptr<Stream> weak = weak_from_this();
  conn_->reactor().post([weak, which] {
    auto s = weak.lock();
    if (!s || s->stopped_.load(std::memory_order_acquire)) return;
    auto& reactor = s->conn_->reactor();
    if (which == 0 && !s->ring_watched_[0]) {
      std::shared_ptr<RingPath> r;
      {
        std::lock_guard lk(s->rx_mu_);
        r = s->rx_ring_;
      }
      if (r == nullptr) return;
      s->ring_watched_[0] = true;
      reactor.watch(r->doorbell_fd(), EPOLLIN, [weak, r](uint32_t) {
        r->doorbell_cleared();
        if (auto st = weak.lock()) st->on_ring_data();
      });
      // The socket carries no more messages: keep EPOLLIN on it whatever
      // the polled mode, for EOF and errors.
      s->sync_reactor_rx();
    } else if (which == 1 && !s->ring_watched_[1]) {
      std::shared_ptr<RingPath> r;
      {
        std::lock_guard lk(s->tx_mu_);
        r = s->tx_ring_;
      }
      if (r == nullptr) return;
      s->ring_watched_[1] = true;
      reactor.watch(r->doorbell_fd(), EPOLLIN, [weak, r](uint32_t) {
        r->doorbell_cleared();
        if (auto st = weak.lock()) st->kick_tx();
      });
    }
    const int pidfd = s->sh_ != nullptr ? s->sh_->peer_pidfd() : -1;
    if (!s->pid_watched_ && pidfd >= 0) {
      s->pid_watched_ = true;
      reactor.watch(pidfd, EPOLLIN, [weak](uint32_t) {
        if (auto st = weak.lock()) st->on_peer_exit();
      });
    }
  });
}

void Stream::on_ring_data() {
  if (stopped_.load(std::memory_order_acquire)) return;
  bool kick;
  {
    std::lock_guard lk(rx_mu_);
    run_rx(kReactorRingBudget);
    kick = kick_after_rx_;
    kick_after_rx_ = false;
  }
  if (kick) kick_tx();
  after_unlock();
}

void Stream::on_peer_exit() {
  // Level-triggered for good: once is enough.
  if (pid_watched_ && sh_ != nullptr) conn_->reactor().unwatch(sh_->peer_pidfd());
  pid_watched_ = false;
  if (stopped_.load(std::memory_order_acquire)) return;
  {
    // Writes into its ring fail from now on, like sends to a reset socket
    // (a ring the transmitter moves to later is told in ring_tx_switched).
    std::lock_guard lk(tx_mu_);
    peer_gone_.store(true, std::memory_order_release);
    if (tx_ring_ != nullptr) tx_ring_->peer_gone();
  }
  // What it wrote before dying is valid, as bytes TCP had taken would be.
  on_ring_data();
  // On TCP a transmitter learns of a dead peer from the reset that unread
  // bytes, or its next bytes, earn; bytes into the ring earn nothing, so
  // the peer's exit says it: bytes of ours it never read fail the stream
  // now, as a reset would (every request flushed once), and later writes
  // fail in the ring path's send. A peer that had read everything (a graceful close
  // before it exited) leaves the QP as it was, as on TCP.
  bool lost = false;
  {
    std::lock_guard lk(tx_mu_);
    lost = tx_ring_ != nullptr && (!tx_ring_->drained() || b_->sent != b_->total || msg_.active);
  }
  if (lost) {
    fail(STATUS_CONNECTION_RESET, ECONNRESET);
    after_unlock();
  } else {
    kick_tx();  // anything posted meanwhile fails like a send after a reset
  }
}

void Stream::ring_unwatch(
    util::Reactor& r, const std::pair<std::shared_ptr<RingPath>, std::shared_ptr<RingPath>>& rings,
    const std::shared_ptr<Rendezvous>& sh) {
  // Unconditional: unwatching an fd that was never watched does nothing,
  // and these descriptors are held open by `rings` and `sh` meanwhile, so
  // their numbers cannot belong to anyone else. A watch task that runs
  // after this sees stopped_ and watches nothing.
  if (rings.first) r.unwatch(rings.first->doorbell_fd());
  if (rings.second) r.unwatch(rings.second->doorbell_fd());
  if (sh != nullptr && sh->peer_pidfd() >= 0) r.unwatch(sh->peer_pidfd());
}

}  // namespace softndk::rdmap
