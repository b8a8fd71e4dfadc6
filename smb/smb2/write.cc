// SPDX-License-Identifier: Apache-2.0
#include "write.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

void append_write_request(const WriteRequest& r, std::vector<uint8_t>* out) {
  const size_t base = out->size() - kHeaderSize;
  uint8_t* p = grow(out, 48);
  le::store16(p, 49);
  le::store32(p + 4, uint32_t(r.data.size()));
  le::store64(p + 8, r.offset);
  put_file_id(p + 16, r.file_id);
  le::store32(p + 32, r.channel);
  le::store32(p + 36, r.remaining_bytes);
  le::store32(p + 44, r.flags);
  uint16_t data_off = 0, ci_off = 0;
  // Channel info first: both offsets stay 16-bit whatever the data's size.
  if (!r.channel_info.empty()) {
    ci_off = uint16_t(out->size() - base);
    out->insert(out->end(), r.channel_info.begin(), r.channel_info.end());
  }
  if (!r.data.empty()) {
    data_off = uint16_t(out->size() - base);
    out->insert(out->end(), r.data.begin(), r.data.end());
  }
  if (r.data.empty() && r.channel_info.empty()) out->push_back(0);  // one-byte Buffer
  p = out->data() + base + kHeaderSize;
  le::store16(p + 2, data_off);
  le::store16(p + 40, ci_off);
  le::store16(p + 42, uint16_t(r.channel_info.size()));
}

ParseError parse_write_request(std::span<const uint8_t> msg, WriteRequest* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 49, 48, &b); e != ParseError::kNone) return e;
  const uint8_t* p = b.data();
  r->offset = le::load64(p + 8);
  r->file_id = get_file_id(p + 16);
  r->channel = le::load32(p + 32);
  r->remaining_bytes = le::load32(p + 36);
  r->flags = le::load32(p + 44);
  if (auto e = field(msg, le::load16(p + 2), le::load32(p + 4), &r->data); e != ParseError::kNone)
    return e;
  std::span<const uint8_t> ci;
  if (auto e = field(msg, le::load16(p + 40), le::load16(p + 42), &ci); e != ParseError::kNone)
    return e;
  r->channel_info.assign(ci.begin(), ci.end());
  return ParseError::kNone;
}

void append_write_response(const WriteResponse& r, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 16);
  le::store16(p, 17);
  le::store32(p + 4, r.count);
  le::store32(p + 8, r.remaining);
}

ParseError parse_write_response(std::span<const uint8_t> msg, WriteResponse* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 17, 16, &b); e != ParseError::kNone) return e;
  r->count = le::load32(b.data() + 4);
  r->remaining = le::load32(b.data() + 8);
  return ParseError::kNone;
}

}  // namespace smb::smb2
