// SPDX-License-Identifier: Apache-2.0
#include "header.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;

const char* parse_error_name(ParseError e) {
  switch (e) {
    case ParseError::kNone:
      return "none";
    case ParseError::kTooShort:
      return "message too short";
    case ParseError::kBadProtocolId:
      return "not an SMB2 message (ProtocolId)";
    case ParseError::kBadStructureSize:
      return "bad StructureSize";
    case ParseError::kOutOfBounds:
      return "offset/length beyond the message";
  }
  return "unknown";
}

void append_header(const Header& h, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + kHeaderSize);
  uint8_t* p = out->data() + at;
  p[0] = 0xFE, p[1] = 'S', p[2] = 'M', p[3] = 'B';
  le::store16(p + 4, 64);
  le::store16(p + 6, h.credit_charge);
  le::store32(p + 8, h.status);
  le::store16(p + 12, h.command);
  le::store16(p + 14, h.credits);
  le::store32(p + 16, h.flags);
  le::store32(p + 20, h.next_command);
  le::store64(p + 24, h.message_id);
  le::store32(p + 32, h.process_id);
  le::store32(p + 36, h.tree_id);
  le::store64(p + 40, h.session_id);
  std::copy(h.signature.begin(), h.signature.end(), p + 48);
}

ParseError parse_header(std::span<const uint8_t> m, Header* h) {
  if (m.size() < kHeaderSize) return ParseError::kTooShort;
  const uint8_t* p = m.data();
  if (p[0] != 0xFE || p[1] != 'S' || p[2] != 'M' || p[3] != 'B') return ParseError::kBadProtocolId;
  if (le::load16(p + 4) != 64) return ParseError::kBadStructureSize;
  h->credit_charge = le::load16(p + 6);
  h->status = le::load32(p + 8);
  h->command = le::load16(p + 12);
  h->credits = le::load16(p + 14);
  h->flags = le::load32(p + 16);
  h->next_command = le::load32(p + 20);
  h->message_id = le::load64(p + 24);
  h->process_id = le::load32(p + 32);
  h->tree_id = le::load32(p + 36);
  h->session_id = le::load64(p + 40);
  std::copy(p + 48, p + 64, h->signature.begin());
  return ParseError::kNone;
}

void append_negotiate_request(const NegotiateRequest& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 36 + 2 * r.dialects.size());
  uint8_t* p = out->data() + at;
  le::store16(p, 36);
  le::store16(p + 2, uint16_t(r.dialects.size()));
  le::store16(p + 4, r.security_mode);
  le::store16(p + 6, 0);
  le::store32(p + 8, r.capabilities);
  std::copy(r.client_guid.begin(), r.client_guid.end(), p + 12);
  le::store64(p + 28, 0);  // no negotiate contexts (ClientStartTime for 2.x/3.0.x)
  for (size_t i = 0; i < r.dialects.size(); ++i) le::store16(p + 36 + 2 * i, r.dialects[i]);
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
  if (sb_len && (sb_off < kHeaderSize + 64 || size_t(sb_off) + sb_len > m.size()))
    return ParseError::kOutOfBounds;
  r->security_buffer = sb_len ? m.subspan(sb_off, sb_len) : std::span<const uint8_t>{};
  if (r->context_count && (r->context_offset < kHeaderSize + 64 || r->context_offset > m.size()))
    return ParseError::kOutOfBounds;
  return ParseError::kNone;
}

}  // namespace smb::smb2
