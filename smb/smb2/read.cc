// SPDX-License-Identifier: Apache-2.0
#include "read.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

void append_read_request(const ReadRequest& r, std::vector<uint8_t>* out) {
  const size_t base = out->size() - kHeaderSize;
  uint8_t* p = grow(out, 48);
  le::store16(p, 49);
  p[2] = r.padding;
  p[3] = r.flags;
  le::store32(p + 4, r.length);
  le::store64(p + 8, r.offset);
  put_file_id(p + 16, r.file_id);
  le::store32(p + 32, r.minimum_count);
  le::store32(p + 36, r.channel);
  le::store32(p + 40, r.remaining_bytes);
  if (r.channel_info.empty()) {
    out->push_back(0);  // the one-byte Buffer of StructureSize 49
    return;
  }
  const uint16_t off = uint16_t(out->size() - base);
  out->insert(out->end(), r.channel_info.begin(), r.channel_info.end());
  p = out->data() + base + kHeaderSize;
  le::store16(p + 44, off);
  le::store16(p + 46, uint16_t(r.channel_info.size()));
}

ParseError parse_read_request(std::span<const uint8_t> msg, ReadRequest* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 49, 48, &b); e != ParseError::kNone) return e;
  const uint8_t* p = b.data();
  r->padding = p[2];
  r->flags = p[3];
  r->length = le::load32(p + 4);
  r->offset = le::load64(p + 8);
  r->file_id = get_file_id(p + 16);
  r->minimum_count = le::load32(p + 32);
  r->channel = le::load32(p + 36);
  r->remaining_bytes = le::load32(p + 40);
  std::span<const uint8_t> ci;
  if (auto e = field(msg, le::load16(p + 44), le::load16(p + 46), &ci); e != ParseError::kNone)
    return e;
  r->channel_info.assign(ci.begin(), ci.end());
  return ParseError::kNone;
}

void append_read_response(const ReadResponse& r, std::vector<uint8_t>* out) {
  store_read_response_head(r, uint32_t(r.data.size()), grow(out, kReadResponseHeadSize));
  out->insert(out->end(), r.data.begin(), r.data.end());
}

void store_read_response_head(const ReadResponse& r, uint32_t data_length, uint8_t* p) {
  le::store16(p, 17);
  p[2] = uint8_t(kHeaderSize + kReadResponseHeadSize);  // DataOffset: after the fixed part
  p[3] = 0;
  le::store32(p + 4, data_length);
  le::store32(p + 8, r.data_remaining);
  le::store32(p + 12, r.flags);
}

ParseError parse_read_response(std::span<const uint8_t> msg, ReadResponse* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 17, 16, &b); e != ParseError::kNone) return e;
  const uint8_t* p = b.data();
  r->data_remaining = le::load32(p + 8);
  r->flags = le::load32(p + 12);
  return field(msg, p[2], le::load32(p + 4), &r->data);
}

}  // namespace smb::smb2
