// SPDX-License-Identifier: Apache-2.0
#include "query_info.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

void append_query_info_request(const QueryInfoRequest& r, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 40);
  le::store16(p, 41);
  p[2] = r.info_type;
  p[3] = r.file_info_class;
  le::store32(p + 4, r.output_buffer_length);
  // InputBufferOffset points past the fixed part even when the buffer is
  // empty (as cifs and Windows send it).
  le::store16(p + 8, uint16_t(kHeaderSize + 40));
  le::store32(p + 12, uint32_t(r.input.size()));
  le::store32(p + 16, r.additional_information);
  le::store32(p + 20, r.flags);
  put_file_id(p + 24, r.file_id);
  out->insert(out->end(), r.input.begin(), r.input.end());
  if (r.input.empty()) out->push_back(0);
}

ParseError parse_query_info_request(std::span<const uint8_t> msg, QueryInfoRequest* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 41, 40, &b); e != ParseError::kNone) return e;
  const uint8_t* p = b.data();
  r->info_type = p[2];
  r->file_info_class = p[3];
  r->output_buffer_length = le::load32(p + 4);
  r->additional_information = le::load32(p + 16);
  r->flags = le::load32(p + 20);
  r->file_id = get_file_id(p + 24);
  std::span<const uint8_t> in;
  if (auto e = field(msg, le::load16(p + 8), le::load32(p + 12), &in); e != ParseError::kNone)
    return e;
  r->input.assign(in.begin(), in.end());
  return ParseError::kNone;
}

void append_output_buffer_response(std::span<const uint8_t> o, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 8);
  le::store16(p, 9);
  le::store16(p + 2, uint16_t(kHeaderSize + 8));
  le::store32(p + 4, uint32_t(o.size()));
  out->insert(out->end(), o.begin(), o.end());
  if (o.empty()) out->push_back(0);
}

ParseError parse_output_buffer_response(std::span<const uint8_t> msg,
                                        std::span<const uint8_t>* output) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 9, 8, &b); e != ParseError::kNone) return e;
  return field(msg, le::load16(b.data() + 2), le::load32(b.data() + 4), output);
}

}  // namespace smb::smb2
