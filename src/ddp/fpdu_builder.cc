// ddp/fpdu_builder.cc — FPDU construction and message segmentation.
#include "ddp/fpdu_builder.h"

#include <cstring>

#include "mpa/crc32c.h"
#include "util/bytes.h"

namespace softndk::wire {

int FpduPieces::to_iovec(struct iovec out[3]) const {
  int n = 0;
  out[n++] = {const_cast<uint8_t*>(header.data()), header.size()};
  if (!payload.empty()) out[n++] = {const_cast<uint8_t*>(payload.data()), payload.size()};
  out[n++] = {const_cast<uint8_t*>(trailer.data()), trailer.size()};
  return n;
}

std::span<const uint8_t> FpduWriter::begin(const DdpHeader& h, std::span<const uint8_t> body,
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

void FpduWriter::add_payload(std::span<const uint8_t> piece) {
  if (crc_on_) crc_ = crc32c_update(crc_, piece);
}

std::span<const uint8_t> FpduWriter::finish(std::span<const uint8_t> pad_bytes) {
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

bool build_fpdu(const DdpHeader& h, std::span<const uint8_t> body, std::span<const uint8_t> payload,
                bool crc, FpduScratch& s, FpduPieces& out) {
  FpduWriter w;
  out.header = w.begin(h, body, payload.size(), crc, s);
  if (out.header.empty()) return false;
  w.add_payload(payload);
  out.payload = payload;
  out.trailer = w.finish();
  return true;
}

size_t encode_fpdu(const DdpHeader& h, std::span<const uint8_t> body,
                   std::span<const uint8_t> payload, bool crc, std::span<uint8_t> out,
                   std::span<const uint8_t> pad_bytes) {
  FpduScratch s;
  FpduPieces p;
  FpduWriter w;
  p.header = w.begin(h, body, payload.size(), crc, s);
  if (p.header.empty()) return 0;
  w.add_payload(payload);
  p.payload = payload;
  p.trailer = w.finish(pad_bytes);
  if (out.size() < p.size()) return 0;
  uint8_t* o = out.data();
  std::memcpy(o, p.header.data(), p.header.size());
  o += p.header.size();
  if (!p.payload.empty()) std::memcpy(o, p.payload.data(), p.payload.size());
  o += p.payload.size();
  std::memcpy(o, p.trailer.data(), p.trailer.size());
  return p.size();
}

MessageSegmenter::MessageSegmenter(const DdpHeader& first, uint64_t length, uint32_t max_payload)
    : first_(first), len_(length), max_(max_payload == 0 ? 1 : max_payload) {}

MessageSegmenter::Segment MessageSegmenter::next() {
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

bool MessageSegmenter::next_fpdu(std::span<const uint8_t> message, bool crc, FpduScratch& s,
                                 FpduPieces& out) {
  if (done_ || message.size() < len_) return false;
  const Segment seg = next();
  return build_fpdu(seg.hdr, {}, message.subspan(seg.offset, seg.length), crc, s, out);
}

}  // namespace softndk::wire
