// SPDX-License-Identifier: Apache-2.0
#include "command.h"

#include "smbd/le.h"

namespace smb::smb2::detail {

namespace le = smbd::le;

ParseError body(std::span<const uint8_t> msg, uint16_t structure_size, size_t fixed,
                std::span<const uint8_t>* out) {
  if (msg.size() < kHeaderSize + 2) return ParseError::kTooShort;
  if (le::load16(msg.data() + kHeaderSize) != structure_size) return ParseError::kBadStructureSize;
  if (msg.size() < kHeaderSize + fixed) return ParseError::kTooShort;
  *out = msg.subspan(kHeaderSize);
  return ParseError::kNone;
}

ParseError field(std::span<const uint8_t> msg, uint32_t offset, uint32_t length,
                 std::span<const uint8_t>* out) {
  if (length == 0) {
    *out = {};
    return ParseError::kNone;
  }
  if (offset < kHeaderSize || uint64_t(offset) + length > msg.size())
    return ParseError::kOutOfBounds;
  *out = msg.subspan(offset, length);
  return ParseError::kNone;
}

void put_file_id(uint8_t* p, const FileId& f) {
  le::store64(p, f.persistent);
  le::store64(p + 8, f.volatile_);
}

FileId get_file_id(const uint8_t* p) { return FileId{le::load64(p), le::load64(p + 8)}; }

uint8_t* grow(std::vector<uint8_t>* out, size_t n) {
  const size_t at = out->size();
  out->resize(at + n, 0);
  return out->data() + at;
}

void pad8(std::vector<uint8_t>* out, size_t base) {
  while ((out->size() - base) % 8) out->push_back(0);
}

}  // namespace smb::smb2::detail
