// SPDX-License-Identifier: Apache-2.0
#include "ioctl.h"

#include <algorithm>

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;

namespace {
ParseError buffer_at(std::span<const uint8_t> m, size_t fixed_end, uint32_t off, uint32_t len,
                     std::span<const uint8_t>* out) {
  if (!len) {
    *out = {};
    return ParseError::kNone;
  }
  if (off < fixed_end || !within(m.size(), off, len)) return ParseError::kOutOfBounds;
  *out = m.subspan(off, len);
  return ParseError::kNone;
}
}  // namespace

void append_ioctl_request(const IoctlRequest& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 56);
  uint8_t* p = out->data() + at;
  const uint32_t in_off = r.input.empty() ? 0 : uint32_t(kHeaderSize + 56);
  le::store16(p, 57);
  le::store16(p + 2, 0);
  le::store32(p + 4, r.ctl_code);
  detail::put_file_id(p + 8, r.file_id);
  le::store32(p + 24, in_off);
  le::store32(p + 28, uint32_t(r.input.size()));
  le::store32(p + 32, r.max_input_response);
  le::store32(p + 36, 0);  // OutputOffset
  le::store32(p + 40, 0);  // OutputCount
  le::store32(p + 44, r.max_output_response);
  le::store32(p + 48, r.flags);
  le::store32(p + 52, 0);
  out->insert(out->end(), r.input.begin(), r.input.end());
  if (r.input.empty()) out->push_back(0);
}

ParseError parse_ioctl_request(std::span<const uint8_t> m, IoctlRequest* r) {
  if (m.size() < kHeaderSize + 56) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 57) return ParseError::kBadStructureSize;
  r->ctl_code = le::load32(p + 4);
  r->file_id = detail::get_file_id(p + 8);
  r->max_input_response = le::load32(p + 32);
  r->max_output_response = le::load32(p + 44);
  r->flags = le::load32(p + 48);
  return buffer_at(m, kHeaderSize + 56, le::load32(p + 24), le::load32(p + 28), &r->input);
}

void append_ioctl_response(const IoctlResponse& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 48);
  uint8_t* p = out->data() + at;
  const uint32_t off = uint32_t(kHeaderSize + 48);
  le::store16(p, 49);
  le::store16(p + 2, 0);
  le::store32(p + 4, r.ctl_code);
  detail::put_file_id(p + 8, r.file_id);
  le::store32(p + 24, off);  // InputOffset (no input echoed)
  le::store32(p + 28, 0);
  le::store32(p + 32, off);  // OutputOffset
  le::store32(p + 36, uint32_t(r.output.size()));
  le::store32(p + 40, r.flags);
  le::store32(p + 44, 0);
  out->insert(out->end(), r.output.begin(), r.output.end());
}

ParseError parse_ioctl_response(std::span<const uint8_t> m, IoctlResponse* r) {
  if (m.size() < kHeaderSize + 48) return ParseError::kTooShort;
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != 49) return ParseError::kBadStructureSize;
  r->ctl_code = le::load32(p + 4);
  r->file_id = detail::get_file_id(p + 8);
  r->flags = le::load32(p + 40);
  return buffer_at(m, kHeaderSize + 48, le::load32(p + 32), le::load32(p + 36), &r->output);
}

std::vector<uint8_t> validate_negotiate_request_data(const ValidateNegotiateRequest& r) {
  std::vector<uint8_t> d(24 + 2 * r.dialects.size());
  le::store32(d.data(), r.capabilities);
  std::copy(r.guid.begin(), r.guid.end(), d.data() + 4);
  le::store16(d.data() + 20, r.security_mode);
  le::store16(d.data() + 22, uint16_t(r.dialects.size()));
  for (size_t i = 0; i < r.dialects.size(); ++i) le::store16(d.data() + 24 + 2 * i, r.dialects[i]);
  return d;
}

ParseError parse_validate_negotiate_request(std::span<const uint8_t> d,
                                            ValidateNegotiateRequest* r) {
  if (d.size() < 24) return ParseError::kTooShort;
  r->capabilities = le::load32(d.data());
  std::copy(d.data() + 4, d.data() + 20, r->guid.begin());
  r->security_mode = le::load16(d.data() + 20);
  const uint16_t n = le::load16(d.data() + 22);
  if (!within(d.size(), 24, 2 * uint64_t(n))) return ParseError::kOutOfBounds;
  r->dialects.resize(n);
  for (uint16_t i = 0; i < n; ++i) r->dialects[i] = le::load16(d.data() + 24 + 2 * i);
  return ParseError::kNone;
}

std::vector<uint8_t> validate_negotiate_response_data(const ValidateNegotiateResponse& r) {
  std::vector<uint8_t> d(24);
  le::store32(d.data(), r.capabilities);
  std::copy(r.guid.begin(), r.guid.end(), d.data() + 4);
  le::store16(d.data() + 20, r.security_mode);
  le::store16(d.data() + 22, r.dialect);
  return d;
}

ParseError parse_validate_negotiate_response(std::span<const uint8_t> d,
                                             ValidateNegotiateResponse* r) {
  if (d.size() < 24) return ParseError::kTooShort;
  r->capabilities = le::load32(d.data());
  std::copy(d.data() + 4, d.data() + 20, r->guid.begin());
  r->security_mode = le::load16(d.data() + 20);
  r->dialect = le::load16(d.data() + 22);
  return ParseError::kNone;
}

}  // namespace smb::smb2
