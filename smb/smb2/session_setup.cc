// SPDX-License-Identifier: Apache-2.0
#include "session_setup.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;

namespace {
// A security buffer's (offset, length) must lie within the message and
// after the fixed part of the body.
ParseError buffer_at(std::span<const uint8_t> m, size_t fixed_end, uint16_t off, uint16_t len,
                     std::span<const uint8_t>* out) {
  if (!len) {
    *out = {};
    return ParseError::kNone;
  }
  if (off < fixed_end || !within(m.size(), off, len)) return ParseError::kOutOfBounds;
  *out = m.subspan(off, len);
  return ParseError::kNone;
}
}  // namespace

void append_session_setup_request(const SessionSetupRequest& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 24);
  uint8_t* p = out->data() + at;
  le::store16(p, 25);
  p[2] = r.flags;
  p[3] = r.security_mode;
  le::store32(p + 4, r.capabilities);
  le::store32(p + 8, r.channel);
  le::store16(p + 12, uint16_t(kHeaderSize + 24));
  le::store16(p + 14, uint16_t(r.security_buffer.size()));
  le::store64(p + 16, r.previous_session_id);
  out->insert(out->end(), r.security_buffer.begin(), r.security_buffer.end());
  if (r.security_buffer.empty()) out->push_back(0);
}

ParseError parse_session_setup_request(std::span<const uint8_t> m, SessionSetupRequest* r) {
  if (m.size() < kHeaderSize + 24) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 25) return ParseError::kBadStructureSize;
  r->flags = p[2];
  r->security_mode = p[3];
  r->capabilities = le::load32(p + 4);
  r->channel = le::load32(p + 8);
  r->previous_session_id = le::load64(p + 16);
  return buffer_at(m, kHeaderSize + 24, le::load16(p + 12), le::load16(p + 14),
                   &r->security_buffer);
}

void append_session_setup_response(const SessionSetupResponse& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 8);
  uint8_t* p = out->data() + at;
  le::store16(p, 9);
  le::store16(p + 2, r.session_flags);
  // An empty buffer as ksmbd sends it to cifs: offset 72, no padding byte.
  le::store16(p + 4, uint16_t(kHeaderSize + 8));
  le::store16(p + 6, uint16_t(r.security_buffer.size()));
  out->insert(out->end(), r.security_buffer.begin(), r.security_buffer.end());
}

ParseError parse_session_setup_response(std::span<const uint8_t> m, SessionSetupResponse* r) {
  if (m.size() < kHeaderSize + 8) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 9) return ParseError::kBadStructureSize;
  r->session_flags = le::load16(p + 2);
  return buffer_at(m, kHeaderSize + 8, le::load16(p + 4), le::load16(p + 6), &r->security_buffer);
}

void append_logoff(std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 4);
  le::store16(out->data() + at, 4);
  le::store16(out->data() + at + 2, 0);
}

ParseError parse_logoff(std::span<const uint8_t> m) {
  if (m.size() < kHeaderSize + 4) return ParseError::kTooShort;
  if (le::load16(m.data() + kHeaderSize) != 4) return ParseError::kBadStructureSize;
  return ParseError::kNone;
}

}  // namespace smb::smb2
