// SPDX-License-Identifier: Apache-2.0
#include "flush.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

void append_flush_request(const FlushRequest& r, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 24);
  le::store16(p, 24);
  put_file_id(p + 8, r.file_id);
}

ParseError parse_flush_request(std::span<const uint8_t> msg, FlushRequest* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 24, 24, &b); e != ParseError::kNone) return e;
  r->file_id = get_file_id(b.data() + 8);
  return ParseError::kNone;
}

void append_flush_response(std::vector<uint8_t>* out) { le::store16(grow(out, 4), 4); }

ParseError parse_flush_response(std::span<const uint8_t> msg) {
  std::span<const uint8_t> b;
  return body(msg, 4, 4, &b);
}

}  // namespace smb::smb2
