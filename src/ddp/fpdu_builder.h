// SPDX-License-Identifier: Apache-2.0
// ddp/fpdu_builder.h — the sender side: FPDU construction without copying
// payload, and segmentation of one RDMAP message into MSS-sized FPDUs.
// Owns: writing ULPDU_Length + DDP/RDMAP header (+ control body) into a small
// caller-owned scratch, the pad + CRC trailer, and the three iovec-able pieces
// (header, payload in registered memory, trailer) for sendmsg().
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "ddp/ddp_header.h"
#include "mpa/crc32c.h"
#include "mpa/fpdu.h"
#include "util/bytes.h"

namespace softndk::wire {

// Per in-flight FPDU storage for the header and trailer pieces; must outlive
// the sendmsg() that uses the pieces.
struct FpduScratch {
  alignas(8) uint8_t header[2 + kUntaggedHeaderSize + 52 + 2];
  alignas(4) uint8_t trailer[8];
};

struct FpduPieces {
  std::span<const uint8_t> header;   // ULPDU_Length + DDP header (+ control body)
  std::span<const uint8_t> payload;  // caller's payload (not copied); may be empty
  std::span<const uint8_t> trailer;  // pad (0..3 zero bytes) + CRC (4)
  size_t size() const { return header.size() + payload.size() + trailer.size(); }
  // Fills up to 3 iovecs (an empty payload is skipped); returns the count.
  int to_iovec(struct iovec out[3]) const;
};

// Incremental writer for one FPDU whose payload arrives in pieces (e.g. an
// SGE list): begin() -> add_payload()* -> finish(). Inline: the transmitter
// runs it once per FPDU, and out of line its calls and the header copies
// between them were a third of the per-FPDU framing cost (docs/wire.md).
class FpduWriter {
 public:
  // Writes the header into `s`. `body` is a control body (Read Request,
  // Terminate, atomics) copied into the header piece; `payload_len` is the
  // total of the add_payload() pieces. Returns an empty span if the ULPDU
  // would exceed 65535 or the body is larger than the scratch allows.
  std::span<const uint8_t> begin(const DdpHeader& h, std::span<const uint8_t> body,
                                 size_t payload_len, bool crc, FpduScratch& s) {
    const size_t hs = h.size();
    if (body.size() > sizeof(s.header) - 2 - hs) return {};
    const size_t ulpdu = hs + body.size() + payload_len;
    if (ulpdu > kMaxUlpduLength) return {};
    s_ = &s;
    ulpdu_ = static_cast<uint16_t>(ulpdu);
    crc_on_ = crc;
    store_be16(s.header, ulpdu_);
    encode_ddp_header(h, s.header + 2);
    if (!body.empty()) std::memcpy(s.header + 2 + hs, body.data(), body.size());
    const size_t n = 2 + hs + body.size();
    if (crc) crc_ = crc32c_update(kCrc32cInit, s.header, n);
    return {s.header, n};
  }
  // CRCs the payload piece (when CRC is on); nothing is copied.
  void add_payload(std::span<const uint8_t> piece) {
    if (crc_on_) crc_ = crc32c_update(crc_, piece);
  }
  // Writes pad + CRC (zero when CRC is off) and returns the trailer piece.
  // Pad bytes are zero (RFC 5044) unless `pad_bytes` (exactly the pad length)
  // is given: only for reproducing captured traffic, where Linux siw leaves
  // stale bytes in the pad. Without a successful begin() there is no
  // scratch to write into: empty span. (GCC 12 at -O3 also threads the
  // failed-begin path of build_fpdu() into here and warned about the write
  // through the null scratch; the check makes that path defined.)
  std::span<const uint8_t> finish(std::span<const uint8_t> pad_bytes = {}) {
    if (s_ == nullptr) return {};
    const size_t pad = mpa_pad(ulpdu_);
    uint8_t* t = s_->trailer;
    if (pad_bytes.size() == pad && pad > 0)
      std::memcpy(t, pad_bytes.data(), pad);
    else
      std::memset(t, 0, pad);
    uint32_t v = 0;
    if (crc_on_) v = crc32c_final(crc32c_update(crc_, t, pad));
    store_le32(t + pad, v);
    return {t, pad + 4};
  }

 private:
  FpduScratch* s_ = nullptr;
  uint32_t crc_ = 0;
  uint16_t ulpdu_ = 0;
  bool crc_on_ = false;
};

// One FPDU with a contiguous payload. Returns false if too large.
inline bool build_fpdu(const DdpHeader& h, std::span<const uint8_t> body,
                       std::span<const uint8_t> payload, bool crc, FpduScratch& s,
                       FpduPieces& out) {
  FpduWriter w;
  out.header = w.begin(h, body, payload.size(), crc, s);
  if (out.header.empty()) return false;
  w.add_payload(payload);
  out.payload = payload;
  out.trailer = w.finish();
  return true;
}

// Contiguous FPDU into `out` (copies payload; for small/control messages and
// tests). Returns the wire size, 0 if `out` is too small or the ULPDU too long.
size_t encode_fpdu(const DdpHeader& h, std::span<const uint8_t> body,
                   std::span<const uint8_t> payload, bool crc, std::span<uint8_t> out,
                   std::span<const uint8_t> pad_bytes = {});

// Splits one RDMAP message into segments of at most `max_payload` bytes:
// TO (tagged) or MO (untagged) advance, L is set on the last one. A zero-
// length message yields one segment. siw sends messages whole and in order;
// so does this.
class MessageSegmenter {
 public:
  // `first`: the header of the first segment (TO = message start, MO = 0);
  // `max_payload`: from FpduSizing::max_payload(first.tagged()).
  // Inline (with next()): built once per message from a header the caller
  // just wrote field by field; an out-of-line copy of it stalls on store
  // forwarding (docs/wire.md "Performance").
  MessageSegmenter(const DdpHeader& first, uint64_t length, uint32_t max_payload)
      : first_(first), len_(length), max_(max_payload == 0 ? 1 : max_payload) {}

  bool done() const { return done_; }
  uint64_t offset() const { return off_; }  // message offset of the next segment
  // Header and payload length of the next segment; advances.
  struct Segment {
    DdpHeader hdr;
    uint64_t offset;  // within the message
    uint32_t length;
  };
  Segment next() {
    Segment s;
    s.offset = off_;
    const uint64_t rem = len_ - off_;
    s.length = static_cast<uint32_t>(rem < max_ ? rem : max_);
    s.hdr = first_;
    if (s.hdr.tagged())
      s.hdr.to = first_.to + off_;
    else
      s.hdr.mo = static_cast<uint32_t>(first_.mo + off_);
    off_ += s.length;
    done_ = off_ >= len_;
    s.hdr.set_last(done_);
    return s;
  }
  // Convenience for a contiguous message buffer: builds the next FPDU.
  bool next_fpdu(std::span<const uint8_t> message, bool crc, FpduScratch& s, FpduPieces& out) {
    if (done_ || message.size() < len_) return false;
    const Segment seg = next();
    return build_fpdu(seg.hdr, {}, message.subspan(seg.offset, seg.length), crc, s, out);
  }

 private:
  DdpHeader first_;
  uint64_t len_;
  uint64_t off_ = 0;
  uint32_t max_;
  bool done_ = false;
};

}  // namespace softndk::wire
