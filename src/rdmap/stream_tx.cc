// rdmap/stream_tx.cc - the transmitter: SQ messages and Read Responses cut
// into FPDUs and handed to TCP with scatter-gather sendmsg straight from
// registered memory (docs/datapath.md "Transmit").
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

#include "ndk/adapter.h"
#include "ndk/mr.h"
#include "ndk/mw.h"
#include "rdmap/fr_map.h"
#include "rdmap/placement.h"
#include "rdmap/sock_io.h"
#include "rdmap/stream.h"
#include "rdmap/tsan_edge.h"

namespace softndk::rdmap {

// The transmitter's only read of the consumer's memory (Send/Write payload,
// Read Response source): out of line and named for tests/datapath/tsan.supp.
// A Read Response reads memory the peer-side consumer filled before the peer
// posted its Read; that happens-before edge is the TCP connection.
__attribute__((noinline)) ssize_t emit_sendmsg(int fd, const msghdr* m) {
  constexpr int kFlags = MSG_DONTWAIT | MSG_NOSIGNAL;
  // One piece: send() skips sendmsg's copy-in of the header and iovec
  // array (~300 cycles of an 8-byte ping-pong's half round trip here).
  if (m->msg_iovlen == 1)
    return sock_send(fd, m->msg_iov[0].iov_base, m->msg_iov[0].iov_len, kFlags);
  return sock_sendmsg(fd, m, kFlags);
}

namespace {
// Fairness (docs/datapath.md): one turn of the SQ or of the Read Responses
// adds at most this much before the other side gets a turn.
constexpr uint64_t kTurnBytes = 256 * 1024;
// One sendmsg carries at most this much (many FPDUs).
constexpr uint64_t kBatchBytes = 2u << 20;

// Payload of the next DDP segment when `rem` bytes of the message are left:
// full segments, except that a short tail is avoided by splitting the last
// two segments evenly. A 64 KiB Send becomes two 32 KiB FPDUs, not 65516 +
// 20 bytes: a tiny tail segment costs the receiver a read of its own, and
// the staging read after it pulls the next message's payload through the
// staging buffer (a copy). Equal segments all through measured slower on
// loopback than full ones, so only the last two are evened out.
uint32_t next_segment(uint64_t rem, uint32_t maxp) {
  if (rem <= maxp) return static_cast<uint32_t>(rem);
  constexpr uint64_t kMinTail = 16384;
  if (rem >= uint64_t{maxp} + kMinTail) return maxp;
  uint64_t half = ((rem + 1) / 2 + 63) & ~uint64_t{63};
  return static_cast<uint32_t>(std::min<uint64_t>(half, maxp));
}

wire::Opcode send_opcode(const ndk::WorkRequestHead& wr) {
  bool se = wr.flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT;
  bool inv = wr.stag != 0;
  if (inv) return se ? wire::Opcode::kSendSolicitedInvalidate : wire::Opcode::kSendInvalidate;
  return se ? wire::Opcode::kSendSolicited : wire::Opcode::kSend;
}
}  // namespace

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
  if (!tx_done_ && !tx_hooked_ && fd_ >= 0 && b.sent == b.total && b.mark_pos == b.nmarks &&
      !b.has_terminate && !msg_.active && !tx_blocked_ && irq_.empty_hint() &&
      !stopped_.load(std::memory_order_relaxed) && !tx_gated_.load(std::memory_order_acquire) &&
      !failed_.load(std::memory_order_acquire) && !term_pending_.load(std::memory_order_acquire) &&
      (tx_ring_settled_ || (sh_ != nullptr && !sh_->done())) &&
      qp_->state() == ndk::QpState::kConnected)
    return true;
  tx_mu_.unlock();
  leave_tx(1);  // transmits for any kick that came meanwhile
  return false;
}

void Stream::direct_end(const ndk::WorkRequestHead* wr, uint64_t seq, const NDK_SGE* sgl,
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
    static_assert(kGatherBytes >= ndk::Limits::kMaxInlineData + 64);
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
    ndk::count_qp(qc_.rdma_out_frames);
    tsan::before_send(tsan_edge_);
    const ssize_t sent =
        tx_ring_ ? ring_emit(b.iov, 1) : sock_send(fd_, b.gather, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent == static_cast<ssize_t>(n)) {
      // The common case, finished here: TCP took it all, so it is complete
      // (RFC 5040), and the transmitter is idle again.
      ndk::count_qp(qc_.rdma_out_octets, n);
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
      ndk::count_qp(qc_.rdma_out_octets, static_cast<uint64_t>(sent));
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
  if (tx_done_ || stopped_.load(std::memory_order_relaxed) || fd_ < 0) return;
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
    // On the ring a trace still sees the bytes (ring_emit taps them); faults
    // are refused there (inject_fault).
    const bool hooked = tx_hooked_ && !tx_ring_;
    ssize_t n = tx_ring_ ? ring_emit(m.msg_iov, static_cast<int>(m.msg_iovlen))
                : hooked ? emit_hooked(&m)
                         : emit_sendmsg(fd_, &m);
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
    if (!hooked) ndk::count_qp(qc_.rdma_out_octets, static_cast<uint64_t>(n));
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
  // The ring's space doorbell (armed by ring_emit unless polled) or the
  // busy poller wakes the transmitter; EPOLLOUT would fire at once.
  if (tx_ring_) return;
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
    if (mk.seq == ndk::kDirectNoSlot)
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

bool Stream::build_batch() {
  Batch& b = *b_;
  b.clear();
  // failed_ first: whoever fails queues its Terminate before setting it.
  bool failed = failed_.load(std::memory_order_acquire);
  if (!failed && qp_->state() == ndk::QpState::kError) {
    // CQ overrun (NDKPI 8): the QP is dead, nothing more goes out.
    fail(STATUS_CANCELLED, ECONNABORTED);
    failed = true;
  }
  if (term_pending_.load(std::memory_order_acquire)) {
    std::lock_guard lk(q_mu_);
    if (term_pending_.load(std::memory_order_relaxed)) {
      term_pending_.store(false, std::memory_order_relaxed);
      size_t n = std::min(term_len_, sizeof b.term);
      std::memcpy(b.term, term_fpdu_, n);
      b.iov[b.niov++] = {b.term, n};
      b.total = n;
      b.has_terminate = true;
      return true;
    }
  }
  if (failed) {
    tx_shutdown();
    tx_done_ = true;
    return false;
  }
  add_samehost_ack();  // Writes the peer's descriptors named are in place
  for (;;) {
    bool progressed;
    if (sq_turn_) {
      progressed = add_sq_work() || irq_turn();
    } else {
      progressed = irq_turn() || add_sq_work();
    }
    sq_turn_ = !sq_turn_;
    if (!progressed || !batch_room(2)) break;
  }
  // FPDUs the fault queue takes are counted when they reach the socket.
  if (b.nfpdu > 0 && (!tx_hooked_ || !tx_through_faults()))
    ndk::count_qp(qc_.rdma_out_frames, static_cast<uint64_t>(b.nfpdu));
  return b.total > 0 || b.nmarks > 0;
}

bool Stream::add_sq_work() {
  if (failed_.load(std::memory_order_relaxed)) return false;
  if (!msg_.active) {
    if (!batch_room(2)) return false;
    if (!qp_->sq_start(&msg_.wr, &msg_.seq)) return false;
    msg_.active = true;
    msg_.off = 0;
    msg_.sge = msg_.sge_off = 0;
    msg_.msn = 0;
    const ndk::WorkRequest& wr = msg_.wr;
    if (wr.inline_data == nullptr &&
        (wr.type == NdkOperationTypeSend || wr.type == NdkOperationTypeWrite ||
         wr.type == NdkOperationTypeRead)) {
      // Local keys are checked when the request is processed, in SQ order
      // (an earlier FastRegister/Invalidate of this queue may change them),
      // before any byte of it goes out. Inline data was copied at post
      // time; its tokens are ignored (NDKPI 2.3).
      const uint32_t need =
          wr.type == NdkOperationTypeRead ? ndk::kAccessLocalWrite : ndk::kAccessLocalRead;
      // msg_.wr is our copy: fast-registered SGEs are translated in it.
      if (!check_local_sgl(stags_, pd_, msg_.wr.sge, wr.nsge, need)) {
        msg_.active = false;
        fail_local(msg_.seq, STATUS_ACCESS_VIOLATION);
        return true;
      }
    }
  }
  const ndk::WorkRequest& wr = msg_.wr;
  if (wr.flags & NDK_OP_FLAG_READ_FENCE) {
    // Local only (NDKPI 12): wait for every earlier Read's response.
    std::lock_guard lk(q_mu_);
    if (!orq_.empty()) return false;
  }
  switch (wr.type) {
    case NdkOperationTypeWrite:
      if (msg_.off == 0 && wr.inline_data == nullptr && samehost_tx(wr.length))
        return add_samehost_write();
      return add_message_fpdus(kTurnBytes);
    case NdkOperationTypeSend:
      return add_message_fpdus(kTurnBytes);
    case NdkOperationTypeRead:
      return add_read_request();
    default:
      execute_local(wr, msg_.seq);
      msg_.active = false;
      return true;
  }
}

bool Stream::add_message_fpdus(uint64_t budget) {
  Batch& b = *b_;
  ndk::WorkRequest& wr = msg_.wr;
  const bool tagged = wr.type == NdkOperationTypeWrite;
  const uint32_t maxp = tagged ? max_tagged_ : max_untagged_;
  if (!tagged && msg_.msn == 0) msg_.msn = send_msn_.next();
  uint64_t added = 0;
  bool progressed = false;
  while (added < budget) {
    uint32_t len = next_segment(wr.length - msg_.off, maxp);
    int pieces = wr.inline_data != nullptr ? 1 : static_cast<int>(wr.nsge) + 1;
    if (!batch_room(pieces)) break;
    bool last = msg_.off + len == wr.length;
    wire::DdpHeader h =
        tagged ? wire::DdpHeader::tagged_hdr(wire::Opcode::kWrite, last, wr.remote_token,
                                             wr.remote_addr + msg_.off)
               : wire::DdpHeader::untagged_hdr(send_opcode(wr), last, wire::kQnSend, msg_.msn,
                                               static_cast<uint32_t>(msg_.off), wr.stag);
    wire::FpduWriter w;
    auto hdr = w.begin(h, {}, len, crc_, b.scratch[b.nfpdu++]);
    b.iov[b.niov++] = {const_cast<uint8_t*>(hdr.data()), hdr.size()};
    if (wr.inline_data != nullptr) {
      if (len > 0) {
        const uint8_t* p = wr.inline_data + msg_.off;
        w.add_payload({p, len});
        b.iov[b.niov++] = {const_cast<uint8_t*>(p), len};
      }
    } else {
      uint32_t rem = len;
      while (rem > 0) {
        const NDK_SGE& s = wr.sge[msg_.sge];
        uint32_t avail = s.Length - msg_.sge_off;
        if (avail == 0) {
          ++msg_.sge;
          msg_.sge_off = 0;
          continue;
        }
        uint32_t take = std::min(avail, rem);
        const uint8_t* p = static_cast<const uint8_t*>(s.VirtualAddress) + msg_.sge_off;
        w.add_payload({p, take});
        b.iov[b.niov++] = {const_cast<uint8_t*>(p), take};
        b.registered = true;
        msg_.sge_off += take;
        rem -= take;
      }
    }
    auto tr = w.finish();
    b.iov[b.niov++] = {const_cast<uint8_t*>(tr.data()), tr.size()};
    b.total += hdr.size() + len + tr.size();
    msg_.off += len;
    added += len;
    progressed = true;
    if (last) {
      b.marks[b.nmarks++] = {b.total, msg_.seq, static_cast<ULONG>(wr.length)};
      msg_.active = false;
      break;
    }
  }
  return progressed;
}

bool Stream::add_read_request() {
  const ndk::WorkRequest& wr = msg_.wr;
  if (ord_ == 0) {
    // No outbound reads were negotiated: the peer would refuse it.
    qp_->sq_complete(msg_.seq, STATUS_REMOTE_RESOURCES, 0);
    msg_.active = false;
    return true;
  }
  {
    std::lock_guard lk(q_mu_);
    if (orq_.full(ord_)) return false;  // ORD: wait for a response
  }
  if (!batch_room(0)) return false;
  Batch& b = *b_;
  OutboundRead r;
  r.seq = msg_.seq;
  r.size = static_cast<uint32_t>(wr.length);
  if (wr.nsge > 0) {
    r.sink_stag = wr.sge[0].MemoryRegionToken;
    r.sink = static_cast<uint8_t*>(wr.sge[0].VirtualAddress);
    r.sink_to = reinterpret_cast<uintptr_t>(r.sink);
  }
  r.local_invalidate = wr.flags & NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE;
  wire::ReadRequestBody body{r.sink_stag, r.sink_to, r.size, wr.remote_token, wr.remote_addr};
  uint8_t raw[wire::kReadRequestBodySize];
  wire::encode_read_request(body, raw);
  wire::DdpHeader h = wire::DdpHeader::untagged_hdr(wire::Opcode::kReadRequest, true,
                                                    wire::kQnReadRequest, rreq_msn_.next(), 0);
  wire::FpduWriter w;
  auto hdr = w.begin(h, {raw, sizeof raw}, 0, crc_, b.scratch[b.nfpdu++]);
  auto tr = w.finish();
  b.iov[b.niov++] = {const_cast<uint8_t*>(hdr.data()), hdr.size()};
  b.iov[b.niov++] = {const_cast<uint8_t*>(tr.data()), tr.size()};
  b.total += hdr.size() + tr.size();
  {
    // Before the bytes leave: the response may come back at once.
    std::lock_guard lk(q_mu_);
    orq_.push(r);
  }
  msg_.active = false;
  return true;
}

bool Stream::add_irq_work() {
  InboundRead r;
  {
    std::lock_guard lk(q_mu_);
    if (irq_.empty()) return false;
    r = irq_.front();
  }
  if (resp_off_ == 0 && r.size > 0 && samehost_tx(r.size)) return add_samehost_response(r);
  Batch& b = *b_;
  uint64_t added = 0;
  bool progressed = false;
  while (added < kTurnBytes && batch_room(1)) {
    uint32_t len = next_segment(r.size - resp_off_, max_tagged_);
    bool last = resp_off_ + len == r.size;
    auto h = wire::DdpHeader::tagged_hdr(wire::Opcode::kReadResponse, last, r.sink_stag,
                                         r.sink_to + resp_off_);
    wire::FpduWriter w;
    auto hdr = w.begin(h, {}, len, crc_, b.scratch[b.nfpdu++]);
    b.iov[b.niov++] = {const_cast<uint8_t*>(hdr.data()), hdr.size()};
    if (len > 0) {
      const uint8_t* p = r.source + resp_off_;
      w.add_payload({p, len});
      b.iov[b.niov++] = {const_cast<uint8_t*>(p), len};
      b.registered = true;
    }
    auto tr = w.finish();
    b.iov[b.niov++] = {const_cast<uint8_t*>(tr.data()), tr.size()};
    b.total += hdr.size() + len + tr.size();
    resp_off_ += len;
    added += len;
    progressed = true;
    if (last) {
      // Responses go out strictly in request order (IWARP.md 4.4).
      std::lock_guard lk(q_mu_);
      irq_.pop();
      resp_off_ = 0;
      break;
    }
  }
  return progressed;
}

void Stream::execute_local(const ndk::WorkRequest& wr, uint64_t seq) {
  // Local STag state changes, executed in SQ order (NDKPI 12).
  NTSTATUS st = STATUS_SUCCESS;
  switch (wr.type) {
    case NdkOperationTypeFastRegister: {
      // This request's own page array, taken whatever happens next.
      std::vector<NDK_LOGICAL_ADDRESS> pages = wr.mr->take_fr_pages(wr.fr_ticket);
      // The MR must be invalid (never registered, or invalidated locally or
      // by the peer) - the iWARP verbs rule that siw and RNICs enforce.
      // With one token per MR's lifetime this is what keeps a token that
      // is still advertised from silently moving to a new range.
      ndk::StagInfo cur;
      if (!stags_.lookup(wr.stag, &cur) || cur.valid) {
        st = STATUS_INVALID_PARAMETER;
        break;
      }
      bool contiguous = !pages.empty();
      for (size_t i = 1; i < pages.size() && contiguous; ++i)
        contiguous =
            pages[i].QuadPart == pages[0].QuadPart + static_cast<int64_t>(i * NDK_PAGE_SIZE);
      int64_t delta = contiguous ? pages[0].QuadPart + static_cast<int64_t>(wr.fbo) -
                                       static_cast<int64_t>(wr.va)
                                 : 0;
      fr_set(&stags_, wr.stag, delta, contiguous);
      if (!stags_.validate(wr.stag, wr.va, wr.length, wr.access)) st = STATUS_INVALID_PARAMETER;
      break;
    }
    case NdkOperationTypeBind:
      if (!wr.mw->execute_bind(wr.mr, wr.stag, wr.va, wr.length, wr.access, qp_))
        st = STATUS_INVALID_PARAMETER;
      break;
    case NdkOperationTypeInvalidate:
      if (!local_invalidate(stags_, wr.stag, pd_)) st = STATUS_INVALID_PARAMETER;
      break;
    default:
      st = STATUS_INVALID_PARAMETER;
  }
  if (st != STATUS_SUCCESS) {
    // Like a local protection/operation error on an RNIC: the failed
    // request completes with its status and the QP goes to error.
    fail_local(seq, st);
    return;
  }
  qp_->sq_complete(seq, st, 0);
}

void Stream::fail_local(uint64_t seq, NTSTATUS st) {
  qp_->sq_complete(seq, st, 0);
  wire::TerminateMessage t;
  t.code = {wire::TermLayer::kRdmap, wire::term::kRdmapLocalCatastrophic, 0x00};
  queue_terminate(t);
  fail(st, ECONNABORTED);
}

}  // namespace softndk::rdmap
