// SPDX-License-Identifier: Apache-2.0
#include "error_response.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;

void append_error_response(std::vector<uint8_t>* out, std::span<const uint8_t> data) {
  const size_t at = out->size();
  out->resize(at + 8);
  uint8_t* p = out->data() + at;
  le::store16(p, 9);
  p[2] = 0;  // ErrorContextCount
  p[3] = 0;
  le::store32(p + 4, uint32_t(data.size()));
  out->insert(out->end(), data.begin(), data.end());
  if (data.empty()) out->push_back(0);  // ErrorData is at least one byte (2.2.2)
}

ParseError parse_error_response(std::span<const uint8_t> m, std::span<const uint8_t>* data) {
  if (m.size() < kHeaderSize + 8) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 9) return ParseError::kBadStructureSize;
  const uint32_t n = le::load32(p + 4);
  if (!within(m.size(), kHeaderSize + 8, n)) return ParseError::kOutOfBounds;
  *data = m.subspan(kHeaderSize + 8, n);
  return ParseError::kNone;
}

}  // namespace smb::smb2
