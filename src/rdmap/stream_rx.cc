// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_rx.cc - the receiver's reading side: taking bytes off the
// socket (or the same-host ring) and driving the parser with them, direct
// placement of large payloads, batched Read Response reads (docs/datapath.md
// "Receive and placement"). What the parser's callbacks do with each
// segment is in stream_place.cc.
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
#include "rdmap/placement.h"
#include "rdmap/stream.h"
#include "rdmap/tsan_edge.h"
#include "tcp/sock_io.h"

namespace softndk::rdmap {

// Payload landing by recvmsg straight into the target (see land_copy in
// stream_place.cc for why it is out of line and named).
__attribute__((noinline)) ssize_t land_recvmsg(int fd, msghdr* m) {
  return tcp::sock_recvmsg(fd, m, MSG_DONTWAIT);
}

namespace {
// Payload left in a segment from which we recv directly into the target.
constexpr size_t kDirectMin = 4096;
constexpr size_t kSmallRead = 64;
// Bytes read after a directly placed payload, into staging: trailer (pad +
// CRC, at most 7) and the next header (tagged 16, untagged 20, Read
// Request 48), with a little to spare.
constexpr size_t kTailRead = 64;
// response_recv(): at least this much of a response must remain after a
// speculated segment (below it softndk evens out the last two segments).
constexpr uint64_t kSpecMinTail = 16384 + 64;
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
        n = rx_ring_ ? ring_peek() : tcp::sock_recv(fd_, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
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
          n = tcp::sock_recv(fd_, staging_.data(), want, MSG_DONTWAIT);
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
      // The peer spoke: a pending wake-up check has nothing left to do.
      if (wake_timer_.load(std::memory_order_relaxed) != 0) wake_cancel();
      done += static_cast<size_t>(n);
      provider::count_qp(qc_.rdma_in_octets, static_cast<uint64_t>(n));
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
    // A tap attached mid-stream whose reads all began inside an FPDU starts
    // at the first FPDU the parser begins here.
    if (rx_hooked_ && parser_.at_fpdu_boundary()) tap_rx_staged(in.data(), in.size());
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
  iovec iov[provider::kMaxSge + 1];
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

}  // namespace softndk::rdmap
