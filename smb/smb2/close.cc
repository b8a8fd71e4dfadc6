// SPDX-License-Identifier: Apache-2.0
#include "close.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

void append_close_request(const CloseRequest& r, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 24);
  le::store16(p, 24);
  le::store16(p + 2, r.flags);
  put_file_id(p + 8, r.file_id);
}

ParseError parse_close_request(std::span<const uint8_t> msg, CloseRequest* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 24, 24, &b); e != ParseError::kNone) return e;
  r->flags = le::load16(b.data() + 2);
  r->file_id = get_file_id(b.data() + 8);
  return ParseError::kNone;
}

void append_close_response(const CloseResponse& r, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 60);
  le::store16(p, 60);
  le::store16(p + 2, r.flags);
  le::store64(p + 8, r.creation_time);
  le::store64(p + 16, r.last_access_time);
  le::store64(p + 24, r.last_write_time);
  le::store64(p + 32, r.change_time);
  le::store64(p + 40, r.allocation_size);
  le::store64(p + 48, r.end_of_file);
  le::store32(p + 56, r.file_attributes);
}

ParseError parse_close_response(std::span<const uint8_t> msg, CloseResponse* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 60, 60, &b); e != ParseError::kNone) return e;
  const uint8_t* p = b.data();
  r->flags = le::load16(p + 2);
  r->creation_time = le::load64(p + 8);
  r->last_access_time = le::load64(p + 16);
  r->last_write_time = le::load64(p + 24);
  r->change_time = le::load64(p + 32);
  r->allocation_size = le::load64(p + 40);
  r->end_of_file = le::load64(p + 48);
  r->file_attributes = le::load32(p + 56);
  return ParseError::kNone;
}

}  // namespace smb::smb2
