// SPDX-License-Identifier: Apache-2.0
// transport/samehost/samehost_wire.cc - encoders and parsers of samehost_wire.h.
#include "transport/samehost/samehost_wire.h"

#include <cstring>

namespace softndk::wire {
namespace {
void put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
void put64(uint8_t* p, uint64_t v) {
  put32(p, static_cast<uint32_t>(v >> 32));
  put32(p + 4, static_cast<uint32_t>(v));
}
uint32_t get32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
uint64_t get64(const uint8_t* p) { return uint64_t{get32(p)} << 32 | get32(p + 4); }
}  // namespace

size_t encode_samehost_msg(const SamehostMsg& m, std::span<uint8_t> out) {
  if (out.size() < kSamehostMsgSize) return 0;
  uint8_t* p = out.data();
  put32(p, kSamehostMagic);
  p[4] = kSamehostVersion;
  p[5] = static_cast<uint8_t>(m.type);
  p[6] = m.flags;
  p[7] = 0;
  put32(p + 8, m.pid);
  put64(p + 12, m.probe_addr);
  std::memcpy(p + 20, m.nonce, kSamehostNonceSize);
  return kSamehostMsgSize;
}

std::optional<SamehostMsg> parse_samehost_msg(std::span<const uint8_t> in) {
  if (in.size() != kSamehostMsgSize) return std::nullopt;
  const uint8_t* p = in.data();
  if (get32(p) != kSamehostMagic || p[4] != kSamehostVersion || p[7] != 0) return std::nullopt;
  if (p[5] != static_cast<uint8_t>(SamehostMsgType::kHello) &&
      p[5] != static_cast<uint8_t>(SamehostMsgType::kAck))
    return std::nullopt;
  if ((p[6] & ~(kSamehostCanPull | kSamehostRingOk | kSamehostCanMap)) != 0) return std::nullopt;
  SamehostMsg m;
  m.type = static_cast<SamehostMsgType>(p[5]);
  m.flags = p[6];
  m.pid = get32(p + 8);
  m.probe_addr = get64(p + 12);
  std::memcpy(m.nonce, p + 20, kSamehostNonceSize);
  // A hello names a process and a probe; an ack only carries its verdict.
  if (m.type == SamehostMsgType::kHello && (m.pid == 0 || m.probe_addr == 0)) return std::nullopt;
  return m;
}

size_t encode_samehost_desc(const SamehostDesc& d, std::span<uint8_t> out) {
  const size_t n = d.segment ? kSamehostSegDescSize : kSamehostDescSize;
  if (out.size() < n) return 0;
  uint8_t* p = out.data();
  put64(p, d.source);
  put32(p + 8, d.length);
  if (d.segment) {
    put32(p + 12, d.segment->fd);
    put64(p + 16, d.segment->dev);
    put64(p + 24, d.segment->ino);
    put64(p + 32, d.segment->offset);
  }
  return n;
}

std::optional<SamehostDesc> parse_samehost_desc(std::span<const uint8_t> in) {
  if (in.size() != kSamehostDescSize && in.size() != kSamehostSegDescSize) return std::nullopt;
  const uint8_t* p = in.data();
  SamehostDesc d{get64(p), get32(p + 8), std::nullopt};
  if (d.length == 0 || d.source == 0 || d.source + d.length < d.source) return std::nullopt;
  if (in.size() == kSamehostSegDescSize) {
    SamehostSegment s{get32(p + 12), get64(p + 16), get64(p + 24), get64(p + 32)};
    if (s.fd > 0x7FFFFFFFu || s.offset + d.length < s.offset) return std::nullopt;
    d.segment = s;
  }
  return d;
}

size_t encode_samehost_ack(uint32_t count, std::span<uint8_t> out) {
  if (out.size() < kSamehostAckSize) return 0;
  put32(out.data(), count);
  return kSamehostAckSize;
}

std::optional<uint32_t> parse_samehost_ack(std::span<const uint8_t> in) {
  if (in.size() != kSamehostAckSize) return std::nullopt;
  uint32_t n = get32(in.data());
  if (n == 0) return std::nullopt;
  return n;
}

}  // namespace softndk::wire
