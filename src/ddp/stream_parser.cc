// SPDX-License-Identifier: Apache-2.0
// ddp/stream_parser.cc — streaming FPDU parser state machine.
#include "ddp/stream_parser.h"

#include <cstring>

#include "mpa/crc32c.h"
#include "mpa/fpdu.h"
#include "util/bytes.h"

namespace softndk::wire {

namespace {
// Source STag 0 cannot name real memory; a zero-size Read (siw's Read RTR)
// is exempt because nothing is read (siw skips the check then too).
WireError validate_read_request(const ReadRequestBody& r) {
  if (r.size != 0 && r.source_stag == 0) return WireError::kZeroStagReadSource;
  return WireError::kNone;
}
}  // namespace

void StreamParser::reset() {
  const ParserConfig cfg = cfg_;
  *this = StreamParser(cfg);
}

size_t StreamParser::bytes_wanted() const {
  switch (state_) {
    case State::kHeader:
      return static_cast<size_t>(need_ - have_);
    case State::kPayload:
      return pay_rem_;
    case State::kTrailer:
      return static_cast<size_t>(tr_need_ - tr_have_);
    case State::kError:
      return 0;
  }
  return 0;
}

StreamParser::Step StreamParser::fail(WireError e, bool have_header) {
  state_ = State::kError;
  err_ = e;
  err_has_header_ = have_header;
  return Step::kError;
}

// Called when the bytes of the current stage are in hbuf_; `src` is where
// they are read from: hbuf_, or on the fast path the caller's buffer that
// they were just copied from (reading the copy back at once would stall on
// store forwarding). Control bodies are always read from hbuf_.
// always_inline (with coalesce): each is one call per FPDU from next(), and
// the call and spills were a measurable share of the per-FPDU cost.
__attribute__((always_inline)) inline StreamParser::Step StreamParser::header_complete(
    const uint8_t* src) {
  for (;;) {
    if (stage_ == 0) {
      const uint16_t ulpdu = load_be16(src);
      const size_t hs = (src[2] & kDdpFlagTagged) ? kTaggedHeaderSize : kUntaggedHeaderSize;
      if (ulpdu < hs) return fail(WireError::kUlpduTooShort, false);
      if (ulpdu > cfg_.max_ulpdu) return fail(WireError::kUlpduTooLong, false);
      seg_.ulpdu_len = ulpdu;
      stage_ = 1;
      need_ = static_cast<uint8_t>(2 + hs);
      if (have_ < need_) return Step::kNeedMore;
      continue;
    }
    if (stage_ == 1) {
      DdpHeader& h = seg_.hdr;
      const size_t hs = decode_ddp_header({src + 2, static_cast<size_t>(have_ - 2)}, h);
      seg_.header_bytes = {hbuf_ + 2, hs};
      seg_.body = {};
      const WireError e =
          validate_ddp_header(h, seg_.ulpdu_len, cfg_.accept_rfc7306, cfg_.accept_samehost);
      if (e != WireError::kNone) return fail(e, true);
      const OpcodeInfo* info = opcode_info(h.opcode_value(), cfg_.accept_samehost);
      if (info->max_body > 0) {  // control message: buffer its body (<= 52 bytes)
        stage_ = 2;
        need_ = static_cast<uint8_t>(2 + seg_.ulpdu_len);
        if (have_ < need_) return Step::kNeedMore;
        src = hbuf_;
        continue;
      }
      seg_.payload_len = static_cast<uint32_t>(seg_.ulpdu_len - hs);
      break;
    }
    // stage 2: control body complete
    const size_t hs = seg_.hdr.size();
    seg_.body = {hbuf_ + 2 + hs, static_cast<size_t>(seg_.ulpdu_len - hs)};
    seg_.payload_len = 0;
    if (seg_.hdr.opcode() == Opcode::kReadRequest) {
      seg_.read = *decode_read_request(seg_.body);
      const WireError e = validate_read_request(seg_.read);
      if (e != WireError::kNone) return fail(e, true);
    }
    break;
  }
  // Header (and control body) accepted: announce placement.
  seg_.pad = static_cast<uint8_t>(mpa_pad(seg_.ulpdu_len));
  seg_.crc_field = 0;
  if (cfg_.crc) crc_ = crc32c_update(kCrc32cInit, stage_ == 2 ? hbuf_ : src, have_);
  pay_rem_ = seg_.payload_len;
  pay_off_ = 0;
  tr_have_ = 0;
  tr_need_ = static_cast<uint8_t>(seg_.pad + 4);
  state_ = pay_rem_ > 0 ? State::kPayload : State::kTrailer;
  return Step::kPlacement;
}

bool StreamParser::trailer_ok(const uint8_t* t) {
  seg_.crc_field = load_le32(t + seg_.pad);
  // Pad bytes are covered by the CRC but their value is not checked
  // (RFC 5044: ignored on receipt).
  return !cfg_.crc || crc32c_final(crc32c_update(crc_, t, seg_.pad)) == seg_.crc_field;
}

void StreamParser::end_segment() {
  state_ = State::kHeader;
  stage_ = 0;
  have_ = 0;
  need_ = 4;
}

__attribute__((always_inline)) inline void StreamParser::coalesce(std::span<const uint8_t>& in,
                                                                  Event& ev) {
  if (state_ == State::kPayload) {
    if (in.empty()) return;
    size_t n = pay_rem_;
    if (n > in.size()) n = in.size();
    ev.data = in.first(n);
    ev.offset = pay_off_;
    if (cfg_.crc) crc_ = crc32c_update(crc_, in.data(), n);
    in = in.subspan(n);
    consumed_ += n;
    pay_off_ += static_cast<uint32_t>(n);
    pay_rem_ -= static_cast<uint32_t>(n);
    if (pay_rem_ != 0) return;
    state_ = State::kTrailer;
  }
  // A partial trailer is staged by the next call; a bad CRC stays in `in`
  // so that the next call reports it after this event's payload.
  if (tr_have_ != 0 || in.size() < tr_need_ || !trailer_ok(in.data())) return;
  in = in.subspan(tr_need_);
  consumed_ += tr_need_;
  end_segment();
  ev.segment_done = true;
}

Event StreamParser::next(std::span<const uint8_t>& in) {
  // One Event for every return, so that it is built in the caller's slot:
  // assembling it in a temporary (partly in callees) and copying it out cost
  // a store-forwarding stall per event (docs/wire.md "Performance").
  Event ev;
  for (;;) {
    switch (state_) {
      case State::kError:
        ev.kind = EventKind::kError;
        ev.error = err_;
        ev.segment = err_has_header_ ? &seg_ : nullptr;
        return ev;
      case State::kHeader: {
        if (in.empty()) return ev;
        size_t n;
        const uint8_t* src = hbuf_;
        if (have_ == 0 && in.size() >= 2 + kMaxDdpHeaderSize) {
          // Fast path: the whole DDP header is in the caller's buffer (the
          // usual case when many FPDUs arrive in one read): one fixed-size
          // copy instead of the staged 4-byte + rest copies.
          seg_.stream_offset = consumed_;
          n = 2 + ((in[2] & kDdpFlagTagged) ? kTaggedHeaderSize : kUntaggedHeaderSize);
          std::memcpy(hbuf_, in.data(), 2 + kMaxDdpHeaderSize);
          src = in.data();
          have_ = static_cast<uint8_t>(n);
        } else {
          if (have_ == 0) seg_.stream_offset = consumed_;
          n = static_cast<size_t>(need_ - have_);
          if (n > in.size()) n = in.size();
          std::memcpy(hbuf_ + have_, in.data(), n);
          have_ = static_cast<uint8_t>(have_ + n);
        }
        in = in.subspan(n);
        consumed_ += n;
        if (have_ < need_) return ev;
        const Step step = header_complete(src);
        if (step == Step::kNeedMore) continue;  // next stage wants more bytes
        if (step == Step::kError) continue;     // reported by the kError case
        ev.kind = EventKind::kPlacement;
        ev.segment = &seg_;
        if (cfg_.coalesce) coalesce(in, ev);
        return ev;
      }
      case State::kPayload: {
        if (in.empty()) return ev;
        ev.kind = EventKind::kPayload;
        ev.segment = &seg_;
        if (cfg_.coalesce) {
          coalesce(in, ev);
          return ev;
        }
        size_t n = pay_rem_;
        if (n > in.size()) n = in.size();
        ev.data = in.first(n);
        ev.offset = pay_off_;
        if (cfg_.crc) crc_ = crc32c_update(crc_, in.data(), n);
        in = in.subspan(n);
        consumed_ += n;
        pay_off_ += static_cast<uint32_t>(n);
        pay_rem_ -= static_cast<uint32_t>(n);
        if (pay_rem_ == 0) state_ = State::kTrailer;
        return ev;
      }
      case State::kTrailer: {
        if (in.empty()) return ev;
        const uint8_t* t;
        if (tr_have_ == 0 && in.size() >= tr_need_) {
          // Whole trailer in the buffer: verify it where it lies.
          t = in.data();
          in = in.subspan(tr_need_);
          consumed_ += tr_need_;
        } else {
          size_t n = static_cast<size_t>(tr_need_ - tr_have_);
          if (n > in.size()) n = in.size();
          std::memcpy(tbuf_ + tr_have_, in.data(), n);
          tr_have_ = static_cast<uint8_t>(tr_have_ + n);
          in = in.subspan(n);
          consumed_ += n;
          if (tr_have_ < tr_need_) return ev;
          t = tbuf_;
        }
        if (!trailer_ok(t)) {
          fail(WireError::kCrcMismatch, true);
          continue;  // reported by the kError case
        }
        end_segment();
        ev.kind = EventKind::kSegmentDone;
        ev.segment = &seg_;
        return ev;
      }
    }
  }
}

bool StreamParser::consume_payload(std::span<const uint8_t> placed) {
  if (state_ != State::kPayload || placed.size() > pay_rem_) return false;
  const uint32_t c = cfg_.crc ? crc32c_update(crc_, placed.data(), placed.size()) : crc_;
  return consume_payload(placed.size(), c);
}

bool StreamParser::consume_payload(size_t n, uint32_t crc_state_after) {
  if (state_ != State::kPayload || n > pay_rem_) return false;
  if (cfg_.crc) crc_ = crc_state_after;
  consumed_ += n;
  pay_off_ += static_cast<uint32_t>(n);
  pay_rem_ -= static_cast<uint32_t>(n);
  if (pay_rem_ == 0) state_ = State::kTrailer;
  return true;
}

FpduDecodeResult decode_fpdu(std::span<const uint8_t> in, FpduView& v, const ParserConfig& cfg) {
  FpduDecodeResult r;
  if (in.size() < 4) {
    r.need_more = true;
    r.needed = 4;
    return r;
  }
  const uint16_t ulpdu = load_be16(in.data());
  const size_t total = fpdu_wire_size(ulpdu);
  const size_t hs = (in[2] & kDdpFlagTagged) ? kTaggedHeaderSize : kUntaggedHeaderSize;
  if (ulpdu < hs) {
    r.error = WireError::kUlpduTooShort;
    return r;
  }
  if (ulpdu > cfg.max_ulpdu) {
    r.error = WireError::kUlpduTooLong;
    return r;
  }
  if (in.size() < total) {
    r.need_more = true;
    r.needed = total;
    return r;
  }
  v.ulpdu_len = ulpdu;
  v.pad = static_cast<uint8_t>(mpa_pad(ulpdu));
  v.bytes = in.first(total);
  const auto ulpdu_span = in.subspan(2, ulpdu);
  decode_ddp_header(ulpdu_span, v.hdr);
  v.ddp_header = ulpdu_span.first(hs);
  v.pad_bytes = in.subspan(2 + ulpdu, v.pad);
  v.crc_field = load_le32(&in[total - 4]);
  v.crc_computed = crc32c(in.first(total - 4));
  WireError e = validate_ddp_header(v.hdr, ulpdu, cfg.accept_rfc7306, cfg.accept_samehost);
  if (e == WireError::kNone) {
    const OpcodeInfo* info = opcode_info(v.hdr.opcode_value(), cfg.accept_samehost);
    if (info->max_body > 0) {
      v.body = ulpdu_span.subspan(hs);
      v.payload = {};
      if (v.hdr.opcode() == Opcode::kReadRequest)
        e = validate_read_request(*decode_read_request(v.body));
    } else {
      v.body = {};
      v.payload = ulpdu_span.subspan(hs);
    }
  }
  // Header errors win over a CRC error, mirroring the stream parser, which
  // announces headers before the CRC arrives.
  if (e == WireError::kNone && cfg.crc && v.crc_field != v.crc_computed)
    e = WireError::kCrcMismatch;
  r.error = e;
  return r;
}

}  // namespace softndk::wire
