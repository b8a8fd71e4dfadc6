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
  store_header(h, out->data() + at);
}

void store_header(const Header& h, uint8_t* p) {
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

}  // namespace smb::smb2
