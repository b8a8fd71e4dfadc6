// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_place.cc - the receiver's handling of each parsed segment:
// remote access checks, placement into registered memory or the posted
// receive, Send/receive matching by MSN, Read Response matching, Read
// Requests and Terminate (docs/datapath.md "Receive and placement"). Split
// from stream_rx.cc, which reads the bytes and drives the parser.
#include <cstring>

#include "rdmap/placement.h"
#include "rdmap/stream.h"
#include "rdmap/tsan_edge.h"

namespace softndk::rdmap {

// Payload landing: the only code that writes the consumer's registered
// memory. Out of line and named so that tests/datapath/tsan.supp exempts
// exactly these copies (their happens-before edge is the TCP connection,
// which TSan cannot see) and never the engine state around them.
__attribute__((noinline)) void land_copy(uint8_t* dst, const uint8_t* src, size_t n) {
  std::memcpy(dst, src, n);
}

namespace {
// A segment at least this big switches header reads to small reads, so
// that the next large payload is not pulled through the staging buffer.
constexpr uint32_t kLargeSegment = 16384;

bool is_send(wire::Opcode op) {
  return op == wire::Opcode::kSend || op == wire::Opcode::kSendInvalidate ||
         op == wire::Opcode::kSendSolicited || op == wire::Opcode::kSendSolicitedInvalidate;
}

wire::TerminateMessage term_msg(const wire::TerminateCode& code, const wire::SegmentInfo& seg,
                                bool with_read) {
  return segment_terminate(code, seg, with_read);
}
}  // namespace

void Stream::place(uint32_t seg_off, const uint8_t* data, size_t n) {
  if (tgt_ == Tgt::kContig) {
    land_copy(tgt_ptr_ + seg_off, data, n);
    return;
  }
  if (tgt_ != Tgt::kRecv) return;
  uint64_t skip = static_cast<uint64_t>(seg_mo_) + seg_off;
  for (ULONG i = 0; i < recv_.nsge && n > 0; ++i) {
    const NDK_SGE& s = recv_.sge[i];
    if (skip >= s.Length) {
      skip -= s.Length;
      continue;
    }
    size_t take = std::min<size_t>(s.Length - skip, n);
    land_copy(static_cast<uint8_t*>(s.VirtualAddress) + skip, data, take);
    data += take;
    n -= take;
    skip = 0;
  }
}

bool Stream::on_placement(const wire::SegmentInfo& seg) {
  tgt_ = Tgt::kNone;
  resp_len_ = 0;
  if (qp_->state() == provider::QpState::kError) {
    // A CQ overrun put the QP in error (NDKPI 8: its QPs are dead): nothing
    // more is placed or completed; the stream ends and the QP is flushed.
    fail(STATUS_CANCELLED, ECONNABORTED);
    return false;
  }
  large_ = seg.payload_len >= kLargeSegment;
  provider::count_qp(qc_.rdma_in_frames);
  const wire::Opcode op = seg.opcode();
  if (op == wire::Opcode::kWrite) {
    // siw: zero-length Writes (the RTR among them) skip the STag check;
    // nothing is placed.
    if (seg.payload_len == 0) return true;
    AccessCheck c = check_remote_access(stags_, seg.hdr.stag, pd_, qp_, seg.hdr.to, seg.payload_len,
                                        provider::kAccessRemoteWrite, false);
    if (!c.ok) {
      rx_fail_term(term_msg(c.code, seg, false), STATUS_CANCELLED);
      return false;
    }
    tgt_ = Tgt::kContig;
    tgt_ptr_ = c.ptr;
    return true;
  }
  if (op == wire::Opcode::kReadResponse) {
    if (!match_response(seg, seg.payload_len)) return false;
    tgt_ = Tgt::kContig;
    tgt_ptr_ = rd_.sink + rd_off_;
    resp_len_ = seg.last() ? 0 : seg.payload_len;
    return true;
  }
  if (op == wire::Opcode::kSamehostWrite || op == wire::Opcode::kSamehostReadResponse)
    return on_samehost_placement(seg);
  if (op == wire::Opcode::kSamehostAck) return on_samehost_ack(seg);
  if (op == wire::Opcode::kSamehostRing) return on_ring_marker(seg);
  if (is_send(op)) {
    wire::WireError e = send_seq_.on_segment(seg.hdr.msn, seg.hdr.mo, seg.payload_len, seg.last());
    if (e != wire::WireError::kNone) {
      rx_fail_wire(e, &seg);
      return false;
    }
    if (seg.hdr.mo == 0) {
      if (!qp_->rq_take(&recv_)) {
        // No posted receive: DDP untagged "no buffer" (RFC 5041 7.2).
        rx_fail_wire(wire::WireError::kNoBuffer, &seg);
        return false;
      }
      recv_active_ = true;
      // The receive's local keys, checked when it is consumed (the MR may
      // have changed since it was posted): it must grant local write.
      if (!check_local_sgl(stags_, pd_, recv_.sge, recv_.nsge, provider::kAccessLocalWrite)) {
        recv_active_ = false;
        qp_->complete_receive(recv_, STATUS_ACCESS_VIOLATION, 0, false);
        // Not the peer's fault: DDP local catastrophic error, and the QP
        // goes to error as on any local protection error.
        rx_fail_term(
            term_msg({wire::TermLayer::kDdp, wire::term::kDdpLocalCatastrophic, 0x00}, seg, false),
            STATUS_CANCELLED);
        return false;
      }
    }
    if (!recv_active_) {
      rx_fail_wire(wire::WireError::kMoMismatch, &seg);
      return false;
    }
    if (static_cast<uint64_t>(seg.hdr.mo) + seg.payload_len > recv_.length) {
      recv_active_ = false;
      qp_->complete_receive(recv_, STATUS_BUFFER_OVERFLOW, 0, false);
      rx_fail_wire(wire::WireError::kMessageTooLong, &seg);
      return false;
    }
    tgt_ = Tgt::kRecv;
    seg_mo_ = seg.hdr.mo;
    return true;
  }
  if (op == wire::Opcode::kReadRequest) return on_read_request(seg);
  if (op == wire::Opcode::kTerminate) return on_terminate(seg);
  rx_fail_term(term_msg({wire::TermLayer::kRdmap, wire::term::kRdmapRemoteOperation,
                         wire::term::kRdmapUnexpectedOpcode},
                        seg, false),
               STATUS_CANCELLED);
  return false;
}

bool Stream::match_response(const wire::SegmentInfo& seg, uint32_t len) {
  // Validated against our own outstanding reads: the sink needs no
  // remote-write right (NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED).
  if (!rd_active_) {
    std::lock_guard lk(q_mu_);
    if (orq_.empty()) {
      rx_fail_term(
          term_msg({wire::TermLayer::kDdp, wire::term::kDdpTagged, wire::term::kDdpTagInvalidStag},
                   seg, false),
          STATUS_CANCELLED);
      return false;
    }
    rd_ = orq_.front();
    rd_active_ = true;
    rd_off_ = 0;
  }
  bool stag_ok = seg.hdr.stag == rd_.sink_stag;
  bool bounds_ok = seg.hdr.to == rd_.sink_to + rd_off_ && rd_off_ + len <= rd_.size &&
                   (!seg.last() || rd_off_ + len == rd_.size);
  if (!stag_ok || !bounds_ok) {
    uint8_t code = stag_ok ? wire::term::kDdpTagBaseBounds : wire::term::kDdpTagInvalidStag;
    rx_fail_term(term_msg({wire::TermLayer::kDdp, wire::term::kDdpTagged, code}, seg, false),
                 STATUS_CANCELLED);
    return false;
  }
  return true;
}

bool Stream::finish_response_segment(uint32_t len, bool last) {
  rd_off_ += len;
  if (!last) return true;
  OutboundRead r = rd_;
  rd_active_ = false;
  {
    std::lock_guard lk(q_mu_);
    if (!orq_.empty()) orq_.pop();
  }
  if (r.seq != UINT64_MAX) {
    if (r.local_invalidate) local_invalidate(stags_, r.sink_stag, pd_);
    qp_->sq_complete(r.seq, STATUS_SUCCESS, r.size);
    rx_completed_ = true;
  }
  kick_after_rx_ = true;  // an ORD slot is free, a fence may open
  return true;
}

bool Stream::on_segment_done(const wire::SegmentInfo& seg) {
  const wire::Opcode op = seg.opcode();
  tgt_ = Tgt::kNone;
  if (op == wire::Opcode::kReadResponse)
    return finish_response_segment(seg.payload_len, seg.last());
  if (op == wire::Opcode::kSamehostWrite || op == wire::Opcode::kSamehostReadResponse)
    return on_samehost_done(seg);
  if (is_send(op) && seg.last()) {
    uint32_t inv = 0;
    ULONG total = seg.hdr.mo + seg.payload_len;
    if (op == wire::Opcode::kSendInvalidate || op == wire::Opcode::kSendSolicitedInvalidate) {
      // Invalidate before the receive completion is visible (RFC 5040 5.4).
      wire::TerminateCode code;
      uint32_t stag = seg.hdr.invalidate_stag();
      if (!remote_invalidate(stags_, stag, pd_, qp_, &code)) {
        recv_active_ = false;
        qp_->complete_receive(recv_, STATUS_ACCESS_VIOLATION, total, false);
        rx_fail_term(term_msg(code, seg, false), STATUS_CANCELLED);
        return false;
      }
      inv = stag;
    }
    bool solicited =
        op == wire::Opcode::kSendSolicited || op == wire::Opcode::kSendSolicitedInvalidate;
    recv_active_ = false;
    qp_->complete_receive(recv_, STATUS_SUCCESS, total, solicited, inv);
    rx_completed_ = true;
  }
  return true;
}

void Stream::refuse_zero_invalidate(const wire::SegmentInfo& seg) {
  // The parser refuses the header, so nothing of this Send is placed; the
  // receive it was for completes like one whose invalidation was refused
  // for any other STag (on_segment_done), not flushed. Only a segment that
  // is next in sequence has a receive: any other is an MSN/MO error in the
  // first place, and its receive is flushed with the rest.
  if (seg.hdr.msn != send_seq_.expected_msn() || seg.hdr.mo != send_seq_.expected_mo()) return;
  if (!recv_active_) {
    if (seg.hdr.mo != 0 || !qp_->rq_take(&recv_)) return;  // no receive: nothing to complete
  }
  recv_active_ = false;
  qp_->complete_receive(recv_, STATUS_ACCESS_VIOLATION, 0, false);
}

bool Stream::on_read_request(const wire::SegmentInfo& seg) {
  wire::WireError e = rreq_seq_.on_segment(seg.hdr.msn, seg.hdr.mo, 0, true);
  if (e != wire::WireError::kNone) {
    rx_fail_wire(e, &seg);
    return false;
  }
  const wire::ReadRequestBody& rr = seg.read;
  // More outstanding than our IRD: siw answers RDMAP remote operation 0x07.
  bool over;
  {
    std::lock_guard lk(q_mu_);
    over = irq_.full(ird_);
  }
  if (over) {
    rx_fail_term(term_msg({wire::TermLayer::kRdmap, wire::term::kRdmapRemoteOperation,
                           wire::term::kRdmapCatastrophicStream},
                          seg, true),
                 STATUS_CANCELLED);
    return false;
  }
  InboundRead in;
  in.size = rr.size;
  in.sink_stag = rr.sink_stag;
  in.sink_to = rr.sink_to;
  if (rr.size > 0) {
    AccessCheck c = check_remote_access(stags_, rr.source_stag, pd_, qp_, rr.source_to, rr.size,
                                        provider::kAccessRemoteRead, true);
    if (!c.ok) {
      rx_fail_term(term_msg(c.code, seg, true), STATUS_CANCELLED);
      return false;
    }
    in.source = c.ptr;
  }
  {
    std::lock_guard lk(q_mu_);
    irq_.push(in);
  }
  kick_after_rx_ = true;
  return true;
}

bool Stream::on_terminate(const wire::SegmentInfo& seg) {
  auto pr = wire::parse_terminate_payload(seg.body);
  provider::count2(qp_->adapter_counters().terminates_received, qc_.terminates_received);
  if (pr.ok) {
    const auto& c = pr.msg.code;
    term_received_.store(static_cast<uint32_t>(c.layer) << 16 |
                         static_cast<uint32_t>(c.etype) << 8 | c.code);
    // A refused Read Request fails its Read with a specific status; the
    // rest of the queue is flushed.
    bool about_read = pr.msg.r;
    if (!about_read && pr.msg.d && pr.msg.ddp_header.size() == wire::kUntaggedHeaderSize) {
      wire::DdpHeader h;
      about_read = wire::decode_ddp_header(pr.msg.ddp_header, h) != 0 && !h.tagged() &&
                   h.qn == wire::kQnReadRequest;
    }
    if (about_read) {
      uint64_t seq = UINT64_MAX;
      {
        std::lock_guard lk(q_mu_);
        if (!orq_.empty()) seq = orq_.front().seq;
      }
      bool bounds =
          (c.layer == wire::TermLayer::kRdmap && c.code == wire::term::kRdmapBaseBounds) ||
          (c.layer == wire::TermLayer::kDdp && c.etype == wire::term::kDdpTagged &&
           c.code == wire::term::kDdpTagBaseBounds);
      if (seq != UINT64_MAX)
        qp_->sq_complete(seq, bounds ? STATUS_REMOTE_RESOURCES : STATUS_ACCESS_VIOLATION, 0);
    }
  } else {
    term_received_.store(0x00FFFFFFu);
  }
  // Never answer a Terminate with one (RFC 5040 6.1).
  fail(STATUS_CONNECTION_ABORTED, ECONNABORTED);
  return false;
}

void Stream::rx_fail_term(const wire::TerminateMessage& t, NTSTATUS st) {
  queue_terminate(t);
  fail(st, ECONNABORTED);
}

void Stream::rx_fail_wire(wire::WireError e, const wire::SegmentInfo* seg) {
  std::span<const uint8_t> hdr, body;
  uint16_t len = 0;
  if (seg != nullptr) {
    hdr = seg->header_bytes;
    len = static_cast<uint16_t>(seg->payload_len);
    if (seg->opcode() == wire::Opcode::kReadRequest) body = seg->body;
  }
  rx_fail_term(wire::terminate_for(e, hdr, len, body), STATUS_CANCELLED);
}

}  // namespace softndk::rdmap
