// SPDX-License-Identifier: Apache-2.0
#include "tree_connect.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;

void append_tree_connect_request(const TreeConnectRequest& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 8);
  uint8_t* p = out->data() + at;
  le::store16(p, 9);
  le::store16(p + 2, r.flags);
  le::store16(p + 4, uint16_t(kHeaderSize + 8));
  le::store16(p + 6, uint16_t(r.path.size()));
  out->insert(out->end(), r.path.begin(), r.path.end());
  if (r.path.empty()) out->push_back(0);
}

ParseError parse_tree_connect_request(std::span<const uint8_t> m, TreeConnectRequest* r) {
  if (m.size() < kHeaderSize + 8) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 9) return ParseError::kBadStructureSize;
  r->flags = le::load16(p + 2);
  if (r->flags & kTreeConnectFlagExtensionPresent) return ParseError::kBadStructureSize;
  const uint16_t off = le::load16(p + 4), len = le::load16(p + 6);
  if (len && (off < kHeaderSize + 8 || !within(m.size(), off, len)))
    return ParseError::kOutOfBounds;
  r->path = len ? m.subspan(off, len) : std::span<const uint8_t>{};
  return ParseError::kNone;
}

void append_tree_connect_response(const TreeConnectResponse& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 16);
  uint8_t* p = out->data() + at;
  le::store16(p, 16);
  p[2] = r.share_type;
  p[3] = 0;
  le::store32(p + 4, r.share_flags);
  le::store32(p + 8, r.capabilities);
  le::store32(p + 12, r.maximal_access);
}

ParseError parse_tree_connect_response(std::span<const uint8_t> m, TreeConnectResponse* r) {
  if (m.size() < kHeaderSize + 16) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 16) return ParseError::kBadStructureSize;
  r->share_type = p[2];
  r->share_flags = le::load32(p + 4);
  r->capabilities = le::load32(p + 8);
  r->maximal_access = le::load32(p + 12);
  return ParseError::kNone;
}

void append_tree_disconnect(std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 4);
  le::store16(out->data() + at, 4);
  le::store16(out->data() + at + 2, 0);
}

ParseError parse_tree_disconnect(std::span<const uint8_t> m) {
  if (m.size() < kHeaderSize + 4) return ParseError::kTooShort;
  if (le::load16(m.data() + kHeaderSize) != 4) return ParseError::kBadStructureSize;
  return ParseError::kNone;
}

}  // namespace smb::smb2
