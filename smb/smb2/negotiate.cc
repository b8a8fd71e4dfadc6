// SPDX-License-Identifier: Apache-2.0
#include "negotiate.h"

#include <algorithm>

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;

namespace {

void pad8(std::vector<uint8_t>* out, size_t msg_start) {
  while ((out->size() - msg_start) % 8) out->push_back(0);
}

// Contexts start 8-aligned; each is 8 bytes of header plus data, and every
// context but the last is followed by padding to 8 (2.2.3.1).
void append_contexts(const std::vector<NegotiateContext>& cs, std::vector<uint8_t>* out,
                     size_t msg_start) {
  for (size_t i = 0; i < cs.size(); ++i) {
    if (i) pad8(out, msg_start);
    const size_t at = out->size();
    out->resize(at + 8);
    le::store16(out->data() + at, cs[i].type);
    le::store16(out->data() + at + 2, uint16_t(cs[i].data.size()));
    le::store32(out->data() + at + 4, 0);
    out->insert(out->end(), cs[i].data.begin(), cs[i].data.end());
  }
}

ParseError parse_contexts(std::span<const uint8_t> m, uint64_t off, uint16_t count,
                          std::vector<NegotiateContext>* out) {
  out->clear();
  for (uint16_t i = 0; i < count; ++i) {
    if (i) off = (off + 7) & ~uint64_t(7);
    if (!within(m.size(), off, 8)) return ParseError::kOutOfBounds;
    const uint8_t* p = m.data() + off;
    NegotiateContext c;
    c.type = le::load16(p);
    const uint16_t len = le::load16(p + 2);
    if (!within(m.size(), off + 8, len)) return ParseError::kOutOfBounds;
    c.data.assign(p + 8, p + 8 + len);
    out->push_back(std::move(c));
    off += 8 + len;
  }
  return ParseError::kNone;
}

}  // namespace

void append_negotiate_request(const NegotiateRequest& r, std::vector<uint8_t>* out) {
  const size_t msg_start = out->size() - kHeaderSize;
  const size_t at = out->size();
  const bool ctx = !r.contexts.empty();
  out->resize(at + 36 + 2 * r.dialects.size());
  uint8_t* p = out->data() + at;
  le::store16(p, 36);
  le::store16(p + 2, uint16_t(r.dialects.size()));
  le::store16(p + 4, r.security_mode);
  le::store16(p + 6, 0);
  le::store32(p + 8, r.capabilities);
  std::copy(r.client_guid.begin(), r.client_guid.end(), p + 12);
  le::store64(p + 28, 0);  // ClientStartTime, or the context fields filled below
  for (size_t i = 0; i < r.dialects.size(); ++i) le::store16(p + 36 + 2 * i, r.dialects[i]);
  if (!ctx) return;
  pad8(out, msg_start);
  const uint32_t ctx_off = uint32_t(out->size() - msg_start);
  le::store32(out->data() + at + 28, ctx_off);
  le::store16(out->data() + at + 32, uint16_t(r.contexts.size()));
  append_contexts(r.contexts, out, msg_start);
}

ParseError parse_negotiate_request(std::span<const uint8_t> m, NegotiateRequest* r) {
  if (m.size() < kHeaderSize + 36) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 36) return ParseError::kBadStructureSize;
  const uint16_t n = le::load16(p + 2);
  r->security_mode = le::load16(p + 4);
  r->capabilities = le::load32(p + 8);
  std::copy(p + 12, p + 28, r->client_guid.begin());
  if (!within(m.size(), kHeaderSize + 36, 2 * uint64_t(n))) return ParseError::kOutOfBounds;
  r->dialects.resize(n);
  for (uint16_t i = 0; i < n; ++i) r->dialects[i] = le::load16(p + 36 + 2 * i);
  r->contexts.clear();
  if (std::find(r->dialects.begin(), r->dialects.end(), kDialect311) == r->dialects.end())
    return ParseError::kNone;
  const uint32_t off = le::load32(p + 28);
  const uint16_t count = le::load16(p + 32);
  if (!count) return ParseError::kNone;
  if (off < kHeaderSize + 36) return ParseError::kOutOfBounds;
  return parse_contexts(m, off, count, &r->contexts);
}

void append_negotiate_response(const NegotiateResponse& r, std::vector<uint8_t>* out) {
  const size_t msg_start = out->size() - kHeaderSize;
  const size_t at = out->size();
  out->resize(at + 64);
  uint8_t* p = out->data() + at;
  le::store16(p, 65);
  le::store16(p + 2, r.security_mode);
  le::store16(p + 4, r.dialect);
  le::store16(p + 6, uint16_t(r.contexts.size()));
  std::copy(r.server_guid.begin(), r.server_guid.end(), p + 8);
  le::store32(p + 24, r.capabilities);
  le::store32(p + 28, r.max_transact_size);
  le::store32(p + 32, r.max_read_size);
  le::store32(p + 36, r.max_write_size);
  le::store64(p + 40, r.system_time);
  le::store64(p + 48, r.server_start_time);
  le::store16(p + 56, uint16_t(kHeaderSize + 64));
  le::store16(p + 58, uint16_t(r.security_buffer.size()));
  le::store32(p + 60, 0);
  out->insert(out->end(), r.security_buffer.begin(), r.security_buffer.end());
  if (r.contexts.empty()) {
    if (r.security_buffer.empty()) out->push_back(0);  // the variable part is at least 1 byte
    return;
  }
  pad8(out, msg_start);
  le::store32(out->data() + at + 60, uint32_t(out->size() - msg_start));
  append_contexts(r.contexts, out, msg_start);
}

ParseError parse_negotiate_response(std::span<const uint8_t> m, NegotiateResponse* r) {
  if (m.size() < kHeaderSize + 64) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 65) return ParseError::kBadStructureSize;
  r->security_mode = le::load16(p + 2);
  r->dialect = le::load16(p + 4);
  r->context_count = le::load16(p + 6);
  std::copy(p + 8, p + 24, r->server_guid.begin());
  r->capabilities = le::load32(p + 24);
  r->max_transact_size = le::load32(p + 28);
  r->max_read_size = le::load32(p + 32);
  r->max_write_size = le::load32(p + 36);
  r->system_time = le::load64(p + 40);
  r->server_start_time = le::load64(p + 48);
  const uint16_t sb_off = le::load16(p + 56), sb_len = le::load16(p + 58);
  r->context_offset = le::load32(p + 60);
  if (sb_len && (sb_off < kHeaderSize + 64 || !within(m.size(), sb_off, sb_len)))
    return ParseError::kOutOfBounds;
  r->security_buffer = sb_len ? m.subspan(sb_off, sb_len) : std::span<const uint8_t>{};
  r->contexts.clear();
  if (r->dialect != kDialect311 || !r->context_count) return ParseError::kNone;
  if (r->context_offset < kHeaderSize + 64) return ParseError::kOutOfBounds;
  return parse_contexts(m, r->context_offset, r->context_count, &r->contexts);
}

std::vector<uint8_t> preauth_integrity_data(const PreauthIntegrity& pi) {
  std::vector<uint8_t> d(4 + 2 * pi.hash_algorithms.size());
  le::store16(d.data(), uint16_t(pi.hash_algorithms.size()));
  le::store16(d.data() + 2, uint16_t(pi.salt.size()));
  for (size_t i = 0; i < pi.hash_algorithms.size(); ++i)
    le::store16(d.data() + 4 + 2 * i, pi.hash_algorithms[i]);
  d.insert(d.end(), pi.salt.begin(), pi.salt.end());
  return d;
}

ParseError parse_preauth_integrity(std::span<const uint8_t> d, PreauthIntegrity* out) {
  if (d.size() < 4) return ParseError::kTooShort;
  const uint16_t n = le::load16(d.data()), salt = le::load16(d.data() + 2);
  if (!n) return ParseError::kBadStructureSize;  // 2.2.3.1.1: at least one algorithm
  if (!within(d.size(), 4, 2 * uint64_t(n) + salt)) return ParseError::kOutOfBounds;
  out->hash_algorithms.resize(n);
  for (uint16_t i = 0; i < n; ++i) out->hash_algorithms[i] = le::load16(d.data() + 4 + 2 * i);
  out->salt.assign(d.begin() + 4 + 2 * n, d.begin() + 4 + 2 * n + salt);
  return ParseError::kNone;
}

std::vector<uint8_t> id_list_data(std::span<const uint16_t> ids) {
  std::vector<uint8_t> d(2 + 2 * ids.size());
  le::store16(d.data(), uint16_t(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) le::store16(d.data() + 2 + 2 * i, ids[i]);
  return d;
}

ParseError parse_id_list(std::span<const uint8_t> d, std::vector<uint16_t>* out) {
  if (d.size() < 2) return ParseError::kTooShort;
  const uint16_t n = le::load16(d.data());
  if (!n) return ParseError::kBadStructureSize;
  if (!within(d.size(), 2, 2 * uint64_t(n))) return ParseError::kOutOfBounds;
  out->resize(n);
  for (uint16_t i = 0; i < n; ++i) (*out)[i] = le::load16(d.data() + 2 + 2 * i);
  return ParseError::kNone;
}

const NegotiateContext* find_context(const std::vector<NegotiateContext>& c, uint16_t type) {
  for (const auto& x : c)
    if (x.type == type) return &x;
  return nullptr;
}

}  // namespace smb::smb2
