// SPDX-License-Identifier: Apache-2.0
#include "lock.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

namespace {
constexpr size_t kFixed = 24, kElement = 24;  // the fixed part, one SMB2_LOCK_ELEMENT
}

void append_lock_request(const LockRequest& r, std::vector<uint8_t>* out) {
  const size_t n = r.locks.empty() ? 1 : r.locks.size();
  uint8_t* p = grow(out, kFixed + n * kElement);
  le::store16(p, 48);  // StructureSize: the fixed part and one element
  le::store16(p + 2, uint16_t(r.locks.size()));
  le::store32(p + 4, r.lock_sequence);
  put_file_id(p + 8, r.file_id);
  for (size_t i = 0; i < r.locks.size(); ++i) {
    uint8_t* e = p + kFixed + i * kElement;
    le::store64(e, r.locks[i].offset);
    le::store64(e + 8, r.locks[i].length);
    le::store32(e + 16, r.locks[i].flags);
  }
}

ParseError parse_lock_request(std::span<const uint8_t> msg, LockRequest* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 48, kFixed + kElement, &b); e != ParseError::kNone) return e;
  const uint16_t count = le::load16(b.data() + 2);
  if (count == 0 || count > kMaxLockElements) return ParseError::kOutOfBounds;
  if (b.size() < kFixed + size_t(count) * kElement) return ParseError::kTooShort;
  r->lock_sequence = le::load32(b.data() + 4);
  r->file_id = get_file_id(b.data() + 8);
  r->locks.clear();
  r->locks.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* e = b.data() + kFixed + i * kElement;
    r->locks.push_back({le::load64(e), le::load64(e + 8), le::load32(e + 16)});
  }
  return ParseError::kNone;
}

void append_lock_response(std::vector<uint8_t>* out) { le::store16(grow(out, 4), 4); }

ParseError parse_lock_response(std::span<const uint8_t> msg) {
  std::span<const uint8_t> b;
  return body(msg, 4, 4, &b);
}

}  // namespace smb::smb2
