// SPDX-License-Identifier: Apache-2.0
#include "set_info.h"

#include <algorithm>

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;

void append_set_info_request(const SetInfoRequest& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 32);
  uint8_t* p = out->data() + at;
  le::store16(p, 33);
  p[2] = r.info_type;
  p[3] = r.info_class;
  le::store32(p + 4, uint32_t(r.buffer.size()));
  le::store16(p + 8, uint16_t(kHeaderSize + 32));
  le::store16(p + 10, 0);
  le::store32(p + 12, r.additional_information);
  detail::put_file_id(p + 16, r.file_id);
  out->insert(out->end(), r.buffer.begin(), r.buffer.end());
  if (r.buffer.empty()) out->push_back(0);
}

ParseError parse_set_info_request(std::span<const uint8_t> m, SetInfoRequest* r) {
  if (m.size() < kHeaderSize + 32) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 33) return ParseError::kBadStructureSize;
  r->info_type = p[2];
  r->info_class = p[3];
  const uint32_t len = le::load32(p + 4);
  const uint16_t off = le::load16(p + 8);
  r->additional_information = le::load32(p + 12);
  r->file_id = detail::get_file_id(p + 16);
  if (len && (off < kHeaderSize + 32 || !within(m.size(), off, len)))
    return ParseError::kOutOfBounds;
  r->buffer = len ? m.subspan(off, len) : std::span<const uint8_t>{};
  return ParseError::kNone;
}

void append_set_info_response(std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 2);
  le::store16(out->data() + at, 2);
}

ParseError parse_set_info_response(std::span<const uint8_t> m) {
  if (m.size() < kHeaderSize + 2) return ParseError::kTooShort;
  if (le::load16(m.data() + kHeaderSize) != 2) return ParseError::kBadStructureSize;
  return ParseError::kNone;
}

}  // namespace smb::smb2
