// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_tx.cc - the transmitter: who runs it (kicks), direct sends
// from the posting thread, and the run loop that hands batches of FPDUs to
// TCP (or the same-host ring) with scatter-gather sendmsg straight from
// registered memory (docs/datapath.md "Transmit"), through the byte path the
// transmitter is on (transport/byte_path.h). Building a batch is in
// stream_tx_build.cc, local work requests in stream_local.cc.
//
// Every kick (a posting thread, the receiver with Read Responses to send or
// an ORD slot freed, the reactor on EPOLLOUT) counts itself in tx_kicks_;
// the one that finds the count at zero becomes the runner and transmits
// until no kick arrived during its last pass; the others leave at once.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "rdmap/placement.h"
#include "rdmap/stream.h"
#include "rdmap/tsan_edge.h"

namespace softndk::rdmap {

namespace {
// One sendmsg carries at most this much (many FPDUs).
constexpr uint64_t kBatchBytes = 2u << 20;
}  // namespace

wire::Opcode send_opcode(const provider::WorkRequestHead& wr) {
  bool se = wr.flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT;
  bool inv = wr.stag != 0;
  if (inv) return se ? wire::Opcode::kSendSolicitedInvalidate : wire::Opcode::kSendInvalidate;
  return se ? wire::Opcode::kSendSolicited : wire::Opcode::kSend;
}

void Stream::kick_tx() {
  // A "set a flag, try-lock, leave if busy" protocol lost kicks: the lock is
  // also held outside the transmitter (begin, flushed, stop, after_unlock),
  // and those holders never re-checked the flag; nor does a failed try-lock
  // order the flag store before the holder's unlock-then-check. Ownership
  // by a single atomic counter has neither hole: a kick either makes its
  // caller the runner or is seen by the runner's fetch_sub, which fails to
  // reach zero and sends it round once more.
  if (tx_kicks_.fetch_add(1, std::memory_order_acq_rel) != 0) return;
  uint32_t seen = tx_kicks_.load(std::memory_order_acquire);
  {
    // Only the runner transmits; the other holders are brief (attach,
    // flush, stop), so waiting for them here is bounded.
    std::lock_guard lk(tx_mu_);
    run_tx();
  }
  leave_tx(seen);
}

void Stream::leave_tx(uint32_t seen) {
  while (tx_kicks_.fetch_sub(seen, std::memory_order_acq_rel) != seen) {
    seen = tx_kicks_.load(std::memory_order_acquire);
    std::lock_guard lk(tx_mu_);
    run_tx();
  }
  after_unlock();
}

// ---- direct sends (docs/datapath.md) ----------------------------------------
// A small inline Send or Write posted while the transmitter is idle goes out
// from the posting thread: one FPDU encoded from the caller's SGL straight
// into the batch's gather buffer and handed to send(), without the kick's
// queue scan and batch building. If TCP takes it all, it completes here; a short
// write, EAGAIN or an error leave the batch to run_tx, which carries on as
// with one of its own.

bool Stream::direct_begin() {
  // The runner's role, taken only if nobody holds it (no waiting).
  uint32_t idle = 0;
  if (tx_kicks_.load(std::memory_order_relaxed) != 0 ||
      !tx_kicks_.compare_exchange_strong(idle, 1, std::memory_order_acq_rel))
    return false;
  tx_mu_.lock();
  const Batch& b = *b_;
  // Idle: the last batch is out and retired, no message half sent, no Read
  // Responses or Terminate waiting, no trace or fault hook, transmission
  // allowed and the QP alive. A post that finds anything else goes the
  // ordinary way (push and kick).
  if (!tx_done_ && !tx_hooked_ && sock_.fd() >= 0 && b.sent == b.total && b.mark_pos == b.nmarks &&
      !b.has_terminate && !msg_.active && !tx_blocked_ && irq_.empty_hint() &&
      !stopped_.load(std::memory_order_relaxed) && !tx_gated_.load(std::memory_order_acquire) &&
      !failed_.load(std::memory_order_acquire) && !term_pending_.load(std::memory_order_acquire) &&
      (tx_ring_settled_ || (sh_ != nullptr && !sh_->done())) &&
      qp_->state() == provider::QpState::kConnected)
    return true;
  tx_mu_.unlock();
  leave_tx(1);  // transmits for any kick that came meanwhile
  return false;
}

void Stream::direct_end(const provider::WorkRequestHead* wr, uint64_t seq, const NDK_SGE* sgl,
                        ULONG nsge) {
  if (wr != nullptr) {
    Batch& b = *b_;
    b.clear();
    // One FPDU carries it all: a Send on the Send queue (its MSN), or a
    // Write to the peer's buffer.
    wire::DdpHeader h = wr->type == NdkOperationTypeWrite
                            ? wire::DdpHeader::tagged_hdr(wire::Opcode::kWrite, true,
                                                          wr->remote_token, wr->remote_addr)
                            : wire::DdpHeader::untagged_hdr(send_opcode(*wr), true, wire::kQnSend,
                                                            send_msn_.next(), 0, wr->stag);
    // An inline payload (at most the adapter's MaxInlineDataSize) and its
    // headers fit the gather buffer. The payload comes from the caller's
    // buffers, straight into the FPDU: the post returns after this copy.
    static_assert(kGatherBytes >= provider::kMaxInlineData + 64);
    wire::FpduWriter w;
    auto hdr = w.begin(h, {}, wr->length, crc_, b.scratch[0]);
    uint8_t* o = b.gather;
    std::memcpy(o, hdr.data(), hdr.size());
    o += hdr.size();
    for (ULONG i = 0; i < nsge; ++i) {
      if (sgl[i].Length == 0) continue;
      std::memcpy(o, sgl[i].VirtualAddress, sgl[i].Length);
      w.add_payload({o, sgl[i].Length});
      o += sgl[i].Length;
    }
    auto tr = w.finish();
    std::memcpy(o, tr.data(), tr.size());
    o += tr.size();
    const size_t n = static_cast<size_t>(o - b.gather);
    b.iov[b.niov++] = {b.gather, n};
    b.total = n;
    b.marks[b.nmarks++] = {n, seq, static_cast<ULONG>(wr->length)};
    provider::count_qp(qc_.rdma_out_frames);
    tsan::before_send(tsan_edge_);
    const ssize_t sent = tx_send(b.iov, 1);
    if (sent == static_cast<ssize_t>(n)) {
      // The common case, finished here: TCP took it all, so it is complete
      // (RFC 5040), and the transmitter is idle again.
      provider::count_qp(qc_.rdma_out_octets, n);
      tx_beats_.store(tx_beats_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      b.sent = n;
      b.iov_pos = 1;
      retire_marks(true);
      tx_mu_.unlock();
      leave_tx(1);
      return;
    }
    if (sent > 0) {
      // A short write: run_tx sends the rest.
      provider::count_qp(qc_.rdma_out_octets, static_cast<uint64_t>(sent));
      b.sent = static_cast<uint64_t>(sent);
      b.iov[0] = {b.gather + sent, n - static_cast<size_t>(sent)};
    }
    // EAGAIN, a short write or an error: run_tx deals with it as with its own.
  }
  // Sends it (and completes it once TCP took it all), or finds the older
  // requests that kept it from starting.
  run_tx();
  tx_mu_.unlock();
  leave_tx(1);
}

void Stream::run_local_head() {
  // A responder sends nothing before the initiator's first FPDU (RFC 5044
  // 7.1.2), but only wire operations wait for it: FastRegister, Bind and
  // Invalidate at the head of the SQ touch nothing but local state and
  // complete now (NDKPI: purely local requests never wait for the peer). A
  // wire operation at the head keeps everything behind it in SQ order.
  while (!msg_.active && !failed_.load(std::memory_order_acquire) &&
         qp_->sq_start(&msg_.wr, &msg_.seq, /*local_only=*/true))
    execute_local(msg_.wr, msg_.seq);
}

bool Stream::batch_room(int pieces) const {
  return b_->niov + pieces + 2 <= kMaxIov && b_->nfpdu < kMaxFpdu && b_->nmarks < kMaxMarks &&
         b_->total < kBatchBytes;
}

void Stream::run_tx() {
  if (tx_hooked_) tx_hook_pass();  // traces, faults: held bytes go first
  if (tx_done_ || stopped_.load(std::memory_order_relaxed) || sock_.fd() < 0) return;
  if (tx_gated_.load(std::memory_order_acquire)) {  // feed() opens it and kicks
    run_local_head();
    return;
  }
  Batch& b = *b_;
  for (;;) {
    if (b.sent == b.total) {
      retire_marks(true);
      if (b.ring_switch) ring_tx_switched();
      if (tx_done_) return;
      if (!tx_ring_settled_ && ring_tx_settle()) continue;  // the marker goes first
      if (!build_batch()) break;
      if (b.total == 0) {
        retire_marks(true);
        continue;
      }
    }
    msghdr m{};
    m.msg_iov = &b.iov[b.iov_pos];
    m.msg_iovlen = static_cast<size_t>(std::min(b.niov - b.iov_pos, IOV_MAX));
    tsan::before_send(tsan_edge_);
    const uint64_t asked = b.total - b.sent;
    iovec whole;
    if (!b.registered && m.msg_iovlen > 1 && asked <= sizeof b.gather) {
      // Small messages (inline Sends, Read Requests, a Terminate): TCP pays
      // for every iovec it copies from, ~300 cycles each here, against a
      // few for copying them ourselves: an 8-byte Send's header, payload
      // and trailer leave as one piece (ping-pong half round trip ~4% shorter).
      // Registered memory is never copied (zero copy, docs/datapath.md).
      uint8_t* o = b.gather;
      for (size_t i = 0; i < m.msg_iovlen; ++i) {
        std::memcpy(o, m.msg_iov[i].iov_base, m.msg_iov[i].iov_len);
        o += m.msg_iov[i].iov_len;
      }
      whole = {b.gather, asked};
      m.msg_iov = &whole;
      m.msg_iovlen = 1;
    }
    // On the ring a trace still sees the bytes (tx_send taps them); faults
    // are refused there (inject_fault).
    const bool hooked = tx_hooked_ && tx_path_ == &sock_;
    ssize_t n = hooked ? emit_hooked(&m) : tx_send(m.msg_iov, static_cast<int>(m.msg_iovlen));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        tx_block();
        return;
      }
      fail(STATUS_CONNECTION_RESET, errno);
      tx_done_ = true;
      return;
    }
    // emit_hooked() counts what reached the socket itself (a fault may
    // drop or hold bytes it took).
    if (!hooked) provider::count_qp(qc_.rdma_out_octets, static_cast<uint64_t>(n));
    tx_beats_.store(tx_beats_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    b.sent += static_cast<uint64_t>(n);
    size_t left = static_cast<size_t>(n);
    while (left > 0) {
      iovec& v = b.iov[b.iov_pos];
      if (left >= v.iov_len) {
        left -= v.iov_len;
        ++b.iov_pos;
      } else {
        v.iov_base = static_cast<uint8_t*>(v.iov_base) + left;
        v.iov_len -= left;
        left = 0;
      }
    }
    retire_marks(false);
    if (static_cast<uint64_t>(n) < asked && !hooked) {
      // A short write: the socket buffer is full now, and the next call
      // would only say EAGAIN.
      tx_block();
      return;
    }
  }
  tx_blocked_ = false;
  tx_waiting_.store(false, std::memory_order_relaxed);
  disarm_write();
}

ssize_t Stream::tx_send(const iovec* iov, int niov) {
  // The socket by its concrete type: a direct call, as before the paths.
  if (tx_path_ == &sock_) return sock_.send(iov, niov);
  ssize_t n = tx_path_->send(iov, niov);
  // Unlike sendmsg, the ring's copy out of the consumer's buffer is a read
  // TSan sees: release again after it, so that a consumer that reuses the
  // buffer once the peer answered (the answer's receive acquires this edge)
  // is ordered after the copy even when the peer is another process.
  tsan::before_send(tsan_edge_);
  if (n > 0) {
    if (tx_hooked_) tap_tx(iov, niov, static_cast<size_t>(n), b_->sent == 0);
    ring_tx_octets_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  }
  return n;
}

void Stream::disarm_write() {
  if (!write_armed_.exchange(false, std::memory_order_acq_rel)) return;
  auto conn = conn_;
  conn->reactor().post([conn] { conn->want_write(false); });
}

void Stream::tx_block() {
  tx_blocked_ = true;
  // Before polled_ is read: whoever ends polled mode stores polled_ and
  // then reads tx_waiting_ (kick_pending), so one of us arms EPOLLOUT.
  tx_waiting_.store(true, std::memory_order_seq_cst);
  // A path with its own doorbell (the ring's space doorbell, armed by its
  // send unless polled) or the busy poller wakes the transmitter; EPOLLOUT
  // would fire at once.
  if (tx_path_ != &sock_ && tx_path_->wakes_writer()) return;
  // A busy poller retries the send itself (progress()): no EPOLLOUT, whose
  // reactor wake-ups take a core from the pollers on every block/unblock.
  if (polled_.load(std::memory_order_seq_cst)) {
    // Armed before polling began (a watchdog gap): a transmitter that never
    // drains (16 Reads outstanding keep the responder busy) would keep it
    // armed, and the reactor would compete with the poller on every ACK.
    disarm_write();
    return;
  }
  if (write_armed_.exchange(true, std::memory_order_acq_rel)) return;
  auto conn = conn_;
  conn->reactor().post([conn] { conn->want_write(true); });
}

void Stream::retire_marks(bool all) {
  Batch& b = *b_;
  while (b.mark_pos < b.nmarks && (all || b.marks[b.mark_pos].end <= b.sent)) {
    const Mark& mk = b.marks[b.mark_pos++];
    // RFC 5040: a Send or Write is complete once TCP accepted its last byte.
    if (mk.seq == provider::kDirectNoSlot)
      qp_->direct_finish(STATUS_SUCCESS, mk.bytes);
    else
      qp_->sq_complete(mk.seq, STATUS_SUCCESS, mk.bytes);
  }
  if (all && b.has_terminate && b.sent == b.total) {
    // The Terminate is the last FPDU (RFC 5040 6.1); FIN follows as siw does.
    b.has_terminate = false;
    tx_shutdown();
    tx_done_ = true;
  }
}

}  // namespace softndk::rdmap
