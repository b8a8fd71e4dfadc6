// SPDX-License-Identifier: Apache-2.0
#include "query_directory.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

void append_query_directory_request(const QueryDirectoryRequest& r, std::vector<uint8_t>* out) {
  const size_t base = out->size() - kHeaderSize;
  uint8_t* p = grow(out, 32);
  le::store16(p, 33);
  p[2] = r.file_information_class;
  p[3] = r.flags;
  le::store32(p + 4, r.file_index);
  put_file_id(p + 8, r.file_id);
  le::store16(p + 24, r.pattern.empty() ? 0 : uint16_t(out->size() - base));
  le::store16(p + 26, uint16_t(r.pattern.size()));
  le::store32(p + 28, r.output_buffer_length);
  out->insert(out->end(), r.pattern.begin(), r.pattern.end());
  if (r.pattern.empty()) out->push_back(0);
}

ParseError parse_query_directory_request(std::span<const uint8_t> msg, QueryDirectoryRequest* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 33, 32, &b); e != ParseError::kNone) return e;
  const uint8_t* p = b.data();
  r->file_information_class = p[2];
  r->flags = p[3];
  r->file_index = le::load32(p + 4);
  r->file_id = get_file_id(p + 8);
  r->output_buffer_length = le::load32(p + 28);
  std::span<const uint8_t> pat;
  if (auto e = field(msg, le::load16(p + 24), le::load16(p + 26), &pat); e != ParseError::kNone)
    return e;
  r->pattern.assign(pat.begin(), pat.end());
  return ParseError::kNone;
}

}  // namespace smb::smb2
