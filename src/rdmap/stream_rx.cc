// rdmap/stream_rx.cc - the receiver: parser driving, remote access checks,
// direct placement, Send/receive matching by MSN, Read Requests, Terminate
// (docs/datapath.md "Receive and placement").
//
// Headers and small payloads come through a staging buffer; a large payload
// the parser has announced is recv'd straight into its target (registered
// memory, or the posted receive's SGL) with the CRC computed over the
// landed bytes as they arrive.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mpa/crc32c.h"
#include "ndk/adapter.h"
#include "rdmap/placement.h"
#include "rdmap/sock_io.h"
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
__attribute__((noinline)) ssize_t land_recvmsg(int fd, msghdr* m) {
  return sock_recvmsg(fd, m, MSG_DONTWAIT);
}

namespace {
// Payload left in a segment from which we recv directly into the target.
constexpr size_t kDirectMin = 4096;
// A segment at least this big switches header reads to small reads, so
// that the next large payload is not pulled through the staging buffer.
constexpr uint32_t kLargeSegment = 16384;
constexpr size_t kSmallRead = 64;
// Bytes read after a directly placed payload, into staging: trailer (pad +
// CRC, at most 7) and the next header (tagged 16, untagged 20, Read
// Request 48), with a little to spare.
constexpr size_t kTailRead = 64;
// response_recv(): at least this much of a response must remain after a
// speculated segment (below it softndk evens out the last two segments).
constexpr uint64_t kSpecMinTail = 16384 + 64;

bool is_send(wire::Opcode op) {
  return op == wire::Opcode::kSend || op == wire::Opcode::kSendInvalidate ||
         op == wire::Opcode::kSendSolicited || op == wire::Opcode::kSendSolicitedInvalidate;
}

wire::TerminateMessage term_msg(const wire::TerminateCode& code, const wire::SegmentInfo& seg,
                                bool with_read) {
  return segment_terminate(code, seg, with_read);
}
}  // namespace

bool Stream::run_rx(size_t budget, bool stop_on_completion) {
  rx_completed_ = false;
  if (rx_done_ || stopped_.load(std::memory_order_relaxed) || fd_ < 0) return false;
  size_t done = 0;
  rx_short_ = false;
  for (;;) {
    // Staged bytes are always parsed before the budget may end the turn: a
    // socket that is empty by now would never wake the reactor for them
    // (level-triggered EPOLLIN), and a Read Request or the last segment of a
    // message left in staging would stall the peer until someone polls.
    if (st_pos_ < st_len_) {
      std::span<const uint8_t> in(staging_.data() + st_pos_, st_len_ - st_pos_);
      bool ok = feed(in);
      st_pos_ = st_len_ - in.size();
      if (st_pos_ == st_len_) st_pos_ = st_len_ = 0;
      if (!ok) {
        rx_done_ = true;
        return false;
      }
      continue;
    }
    if (done >= budget) {
      // The socket still readable: EPOLLIN fires again. The ring has no
      // level-triggered readiness: ring its doorbell ourselves.
      if (rx_ring_) ShmRing::ring(rx_ring_->data_efd());
      break;
    }
    // The last read took less than it asked for: the socket was empty then,
    // and another read now would most likely only say EAGAIN - a syscall
    // between a landed Write and the poller that watches its memory, or on
    // every reactor wake-up. Bytes arriving meanwhile are found by the next
    // poll, or by the level-triggered EPOLLIN.
    if (rx_short_) break;
    // A poller waits for exactly this completion: hand it over now rather
    // than after one more recv() that would most likely say EAGAIN. (Bytes
    // still in the socket wait for the next poll, or the reactor's EPOLLIN
    // when not muted.)
    if (stop_on_completion && rx_completed_) {
      // The ring has no level-triggered readiness: bytes left behind for a
      // consumer that is not busy-polling (it may arm its CQ and wait next)
      // get the doorbell now, so the reactor reads them.
      if (rx_ring_ && !polled_.load(std::memory_order_relaxed) && rx_ring_->readable() > 0)
        ShmRing::ring(rx_ring_->data_efd());
      break;
    }
    ssize_t n;
    // The rest of a large segment's payload goes straight to its target
    // however little is left: loopback TCP hands over whatever skbs are
    // queued, so a direct read often stops a few hundred bytes short of the
    // payload's end, and reading that remainder through staging 64 bytes at
    // a time cost a 1 MiB Write ~26 extra recv calls.
    const size_t prem = parser_.payload_remaining();
    if (parser_.state() == wire::StreamParser::State::kPayload && tgt_ != Tgt::kNone &&
        (prem >= kDirectMin || (large_ && prem > 0))) {
      n = resp_len_ != 0 && !rx_hooked_ && !staging_.empty() ? response_recv() : direct_recv();
      if (n == kRxFailed) {  // a speculated segment failed the parser
        rx_done_ = true;
        return false;
      }
    } else {
      if (staging_.empty()) {
        // No staging buffer while the connection has been idle: peek, and
        // take it once bytes are here (EOF and errors are handled below).
        uint8_t probe;
        n = rx_ring_ ? ring_peek() : sock_recv(fd_, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) {
          staging_.resize(kStagingSize);
          arm_staging_release();
        }
      }
      if (!staging_.empty()) {
        size_t want = large_ ? kSmallRead : staging_.size();
        if (rx_ring_) {
          iovec v{staging_.data(), want};
          n = ring_recv(&v, 1);
        } else {
          n = sock_recv(fd_, staging_.data(), want, MSG_DONTWAIT);
          rx_short_ = n >= 0 && static_cast<size_t>(n) < want;
        }
        if (n > 0) {
          // Staging was empty: the bytes start where the parser stands.
          if (rx_hooked_)
            tap_rx(staging_.data(), static_cast<size_t>(n), parser_.at_fpdu_boundary());
          tsan::after_recv(tsan_edge_);
          st_pos_ = 0;
          st_len_ = static_cast<size_t>(n);
        }
      }
    }
    if (n == kRxFailed) {  // the ring or the socket after it broke the protocol
      rx_done_ = true;
      return false;
    }
    if (n > 0) {
      ++rx_reads_;
      done += static_cast<size_t>(n);
      ndk::count_qp(qc_.rdma_in_octets, static_cast<uint64_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    peer_closed_.store(true);
    rx_done_ = true;
    if (n == 0) {
      // The peer's graceful close (FIN) is no error (NDKPI 6.4): nothing
      // more arrives, but the QP stays connected and nothing is flushed
      // until the consumer's own NdkDisconnect; the connection layer only
      // delivers the disconnect event (after_unlock reports it).
      eof_.store(true);
      return false;
    }
    // A socket error: the peer is gone. Outstanding requests flush.
    fail(STATUS_CONNECTION_RESET, errno);
    return false;
  }
  return true;
}

bool Stream::feed(std::span<const uint8_t>& in) {
  while (!in.empty()) {
    wire::Event ev = parser_.next(in);
    if (ev.kind != wire::EventKind::kNeedMore && tx_gated_.load(std::memory_order_relaxed)) {
      // The initiator's first FPDU (or a bad one, to be answered with a
      // Terminate): the responder may transmit from now on.
      tx_gated_.store(false, std::memory_order_release);
      kick_after_rx_ = true;
    }
    switch (ev.kind) {
      case wire::EventKind::kNeedMore:
        return true;
      case wire::EventKind::kPlacement:
        // Coalesced parser (docs/wire.md): the event may also carry the
        // payload already staged and end the segment.
        if (!on_placement(*ev.segment)) return false;
        if (!ev.data.empty()) place(ev.offset, ev.data.data(), ev.data.size());
        if (ev.segment_done && !on_segment_done(*ev.segment)) return false;
        break;
      case wire::EventKind::kPayload:
        place(ev.offset, ev.data.data(), ev.data.size());
        if (ev.segment_done && !on_segment_done(*ev.segment)) return false;
        break;
      case wire::EventKind::kSegmentDone:
        if (!on_segment_done(*ev.segment)) return false;
        break;
      case wire::EventKind::kError:
        if (ev.error == wire::WireError::kZeroStagInvalidate && ev.segment != nullptr)
          refuse_zero_invalidate(*ev.segment);
        rx_fail_wire(ev.error, ev.segment);
        return false;
    }
    if (rx_marker_) {
      // The stream moved to the ring: nothing more may come on TCP.
      rx_marker_ = false;
      if (!in.empty()) {
        ring_protocol_error();
        return false;
      }
    }
  }
  return true;
}

ssize_t Stream::recv_iov(iovec* iov, int niov) {
  if (rx_ring_) return ring_recv(iov, niov);
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = static_cast<size_t>(niov);
  ssize_t n = land_recvmsg(fd_, &m);
  if (n > 0) {
    size_t asked = 0;
    for (int i = 0; i < niov; ++i) asked += iov[i].iov_len;
    rx_short_ = static_cast<size_t>(n) < asked;
  }
  return n;
}

ssize_t Stream::direct_recv() {
  uint32_t off = parser_.payload_offset();
  size_t rem = parser_.payload_remaining();
  iovec iov[ndk::kMaxSge + 1];
  int niov = 0;
  if (tgt_ == Tgt::kContig) {
    iov[niov++] = {tgt_ptr_ + off, rem};
  } else {
    uint64_t skip = static_cast<uint64_t>(seg_mo_) + off;
    for (ULONG i = 0; i < recv_.nsge && rem > 0; ++i) {
      const NDK_SGE& s = recv_.sge[i];
      if (skip >= s.Length) {
        skip -= s.Length;
        continue;
      }
      size_t take = std::min<size_t>(s.Length - skip, rem);
      iov[niov++] = {static_cast<uint8_t*>(s.VirtualAddress) + skip, take};
      rem -= take;
      skip = 0;
    }
  }
  const size_t want = parser_.payload_remaining();
  // The same call also reads what follows the payload - the MPA trailer and
  // the next FPDU's header - into the (empty) staging buffer: one syscall
  // per FPDU instead of two on a stream of large segments. Only a few
  // bytes of the next payload can come along, so nearly nothing is copied.
  // Not while a trace is on: a tap attached mid-stream starts at the first
  // read that begins on an FPDU boundary, which this read never does.
  const int ntarget = niov;
  if (!staging_.empty() && !rx_hooked_) iov[niov++] = {staging_.data(), kTailRead};
  ssize_t n = recv_iov(iov, niov);
  if (n <= 0) return n;
  if (rx_hooked_) tap_rx(iov, niov, static_cast<size_t>(n), false);
  tsan::after_recv(tsan_edge_);
  const size_t landed = std::min(static_cast<size_t>(n), want);
  uint32_t crc = 0;
  if (crc_) {
    // CRC over the bytes as they landed, right after they arrived.
    crc = parser_.crc_state();
    size_t left = landed;
    for (int i = 0; i < ntarget && left > 0; ++i) {
      size_t k = std::min(left, iov[i].iov_len);
      crc = wire::crc32c_update(crc, static_cast<const uint8_t*>(iov[i].iov_base), k);
      left -= k;
    }
  }
  parser_.consume_payload(landed, crc);
  if (static_cast<size_t>(n) > landed) {
    // Staging was empty (run_rx parses every staged byte before reading).
    st_pos_ = 0;
    st_len_ = static_cast<size_t>(n) - landed;
  }
  return n;
}

// A Read Response streams in as full segments of one size until its last
// two (softndk evens those out, siw's last one is short): for the segments
// that both rules make full, the layout of the bytes is known before they
// arrive - trailer, a 16-byte tagged header, the payload at the next sink
// offset. One recvmsg then takes many FPDUs: payloads straight into the sink,
// trailers and headers into a small area that the parser reads afterwards.
// Every header is still parsed and checked (on_placement) before its
// payload counts; one that differs from the prediction (another segment
// size, an interleaved Send or Read Request, a Terminate) means the bytes
// after it landed in the wrong place - they are gathered in stream order and
// fed through the ordinary path, which places them where they belong. The
// speculative payloads lie inside this read's own sink, which the response
// overwrites entirely before the read completes, so a misprediction never
// leaves a visible byte. With CRC, each payload region is CRC'd right after
// the read that landed it (still in cache), as direct_recv does, and the
// parser checks it at the FPDU's trailer, as on the ordinary path.
ssize_t Stream::response_recv() {
  const size_t rem0 = parser_.payload_remaining();
  const uint32_t p = resp_len_;
  // Bytes of this response after the current segment.
  uint64_t after = rd_.size - (rd_off_ + p);
  uint8_t* next = tgt_ptr_ + p;  // sink position of the next segment
  iovec iov[2 + 2 * kSpecSegments];
  int niov = 0;
  iov[niov++] = {tgt_ptr_ + parser_.payload_offset(), rem0};
  uint32_t cur = p;
  int nspec = 0;
  while (nspec < kSpecSegments && after >= uint64_t{p} + kSpecMinTail) {
    // trailer of the previous segment (pad + CRC field) + the next header
    const uint32_t ulpdu = 14 + cur;
    const uint32_t pad = (4 - (2 + ulpdu) % 4) % 4;
    uint8_t* s = spec_hdr_[nspec];
    iov[niov++] = {s, pad + 4 + 16};
    iov[niov++] = {next, p};
    next += p;
    after -= p;
    cur = p;
    ++nspec;
  }
  if (nspec == 0) return direct_recv();
  iov[niov++] = {staging_.data(), kTailRead};
  ssize_t got = recv_iov(iov, niov);
  if (got <= 0) return got;
  tsan::after_recv(tsan_edge_);
  size_t left = static_cast<size_t>(got);
  // Walk the regions in stream order.
  size_t k = std::min(left, rem0);
  parser_.consume_payload({static_cast<const uint8_t*>(iov[0].iov_base), k});
  left -= k;
  int i = 1;
  for (; left > 0 && i + 1 < niov - 1; i += 2) {
    const size_t hl = std::min(left, iov[i].iov_len);
    std::span<const uint8_t> in(static_cast<const uint8_t*>(iov[i].iov_base), hl);
    if (!feed(in)) {
      return kRxFailed;
    }
    left -= hl;
    if (left == 0) break;
    const uint8_t* want = static_cast<const uint8_t*>(iov[i + 1].iov_base);
    if (parser_.state() != wire::StreamParser::State::kPayload || tgt_ != Tgt::kContig ||
        tgt_ptr_ + parser_.payload_offset() != want || parser_.payload_remaining() != p) {
      // Misprediction: everything after this header goes the ordinary way.
      spec_misses_.fetch_add(1, std::memory_order_relaxed);
      std::vector<uint8_t> rest;
      rest.reserve(left);
      for (int j = i + 1; j < niov && left > 0; ++j) {
        const size_t t = std::min(left, iov[j].iov_len);
        const uint8_t* b = static_cast<const uint8_t*>(iov[j].iov_base);
        rest.insert(rest.end(), b, b + t);
        left -= t;
      }
      std::span<const uint8_t> r(rest.data(), rest.size());
      if (!feed(r)) {
        return kRxFailed;
      }
      return got;
    }
    k = std::min(left, iov[i + 1].iov_len);
    parser_.consume_payload({want, k});
    left -= k;
    spec_fpdus_.fetch_add(1, std::memory_order_relaxed);
  }
  if (left > 0) {
    // The tail: trailer and next header, in the (empty) staging buffer.
    st_pos_ = 0;
    st_len_ = left;
  }
  return got;
}

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
  if (qp_->state() == ndk::QpState::kError) {
    // A CQ overrun put the QP in error (NDKPI 8: its QPs are dead): nothing
    // more is placed or completed; the stream ends and the QP is flushed.
    fail(STATUS_CANCELLED, ECONNABORTED);
    return false;
  }
  large_ = seg.payload_len >= kLargeSegment;
  ndk::count_qp(qc_.rdma_in_frames);
  const wire::Opcode op = seg.opcode();
  if (op == wire::Opcode::kWrite) {
    // siw: zero-length Writes (the RTR among them) skip the STag check;
    // nothing is placed.
    if (seg.payload_len == 0) return true;
    AccessCheck c = check_remote_access(stags_, seg.hdr.stag, pd_, qp_, seg.hdr.to, seg.payload_len,
                                        ndk::kAccessRemoteWrite, false);
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
      if (!check_local_sgl(stags_, pd_, recv_.sge, recv_.nsge, ndk::kAccessLocalWrite)) {
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
                                        ndk::kAccessRemoteRead, true);
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
  ndk::count2(adapter_->counters().terminates_received, qc_.terminates_received);
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
