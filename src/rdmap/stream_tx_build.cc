// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_tx_build.cc - building the transmitter's next batch: SQ
// messages and Read Responses cut into FPDUs (payload pieces point into
// registered memory), Read Requests under the ORD, and the fairness between
// the SQ and the responses (docs/datapath.md "Transmit"). Split from
// stream_tx.cc, which runs the batches.
#include <algorithm>
#include <climits>
#include <cstring>

#include "rdmap/placement.h"
#include "rdmap/stream.h"

namespace softndk::rdmap {

namespace {
// Fairness (docs/datapath.md): one turn of the SQ or of the Read Responses
// adds at most this much before the other side gets a turn.
constexpr uint64_t kTurnBytes = 256 * 1024;

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
}  // namespace

bool Stream::build_batch() {
  Batch& b = *b_;
  b.clear();
  // failed_ first: whoever fails queues its Terminate before setting it.
  bool failed = failed_.load(std::memory_order_acquire);
  if (!failed && qp_->state() == provider::QpState::kError) {
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
  if (add_wake_up()) return true;  // alone: a silent peer's wake-up
  add_samehost_ack();              // Writes the peer's descriptors named are in place
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
    provider::count_qp(qc_.rdma_out_frames, static_cast<uint64_t>(b.nfpdu));
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
    const provider::WorkRequest& wr = msg_.wr;
    if (wr.inline_data == nullptr &&
        (wr.type == NdkOperationTypeSend || wr.type == NdkOperationTypeWrite ||
         wr.type == NdkOperationTypeRead)) {
      // Local keys are checked when the request is processed, in SQ order
      // (an earlier FastRegister/Invalidate of this queue may change them),
      // before any byte of it goes out. Inline data was copied at post
      // time; its tokens are ignored (NDKPI 2.3).
      const uint32_t need = wr.type == NdkOperationTypeRead ? provider::kAccessLocalWrite
                                                            : provider::kAccessLocalRead;
      // msg_.wr is our copy: fast-registered SGEs are translated in it.
      if (!check_local_sgl(stags_, pd_, msg_.wr.sge, wr.nsge, need)) {
        msg_.active = false;
        fail_local(msg_.seq, STATUS_ACCESS_VIOLATION);
        return true;
      }
    }
  }
  const provider::WorkRequest& wr = msg_.wr;
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
  provider::WorkRequest& wr = msg_.wr;
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
  const provider::WorkRequest& wr = msg_.wr;
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

}  // namespace softndk::rdmap
