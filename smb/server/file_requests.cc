// SPDX-License-Identifier: Apache-2.0
#include "file_requests.h"

#include <algorithm>

#include "smbd/le.h"

namespace smb::server {

namespace le = smbd::le;
using smb2::kHeaderSize;
using smb2::within;

namespace {

const uint8_t* body(std::span<const uint8_t> m, size_t fixed, uint16_t structure_size,
                    ParseError* e) {
  if (m.size() < kHeaderSize + fixed) {
    *e = ParseError::kTooShort;
    return nullptr;
  }
  const uint8_t* p = m.data() + kHeaderSize;
  if (le::load16(p) != structure_size) {
    *e = ParseError::kBadStructureSize;
    return nullptr;
  }
  *e = ParseError::kNone;
  return p;
}

ParseError span_at(std::span<const uint8_t> m, uint64_t off, uint64_t len,
                   std::span<const uint8_t>* out) {
  if (!len) {
    *out = {};
    return ParseError::kNone;
  }
  if (off < kHeaderSize || !within(m.size(), off, len)) return ParseError::kOutOfBounds;
  *out = m.subspan(off, len);
  return ParseError::kNone;
}

void put_times(uint8_t* p, const FileTimes& t) {
  le::store64(p, t.creation);
  le::store64(p + 8, t.access);
  le::store64(p + 16, t.write);
  le::store64(p + 24, t.change);
  le::store64(p + 32, t.allocation);
  le::store64(p + 40, t.eof);
  le::store32(p + 48, t.attributes);
  le::store32(p + 52, 0);
}

uint8_t* grow(std::vector<uint8_t>* out, size_t n) {
  const size_t at = out->size();
  out->resize(at + n, 0);
  return out->data() + at;
}

}  // namespace

ParseError parse_create(std::span<const uint8_t> m, CreateReq* r) {
  ParseError e;
  const uint8_t* p = body(m, 56, 57, &e);
  if (!p) return e;
  r->oplock = p[3];
  r->desired_access = le::load32(p + 24);
  r->file_attributes = le::load32(p + 28);
  r->share_access = le::load32(p + 32);
  r->disposition = le::load32(p + 36);
  r->options = le::load32(p + 40);
  return span_at(m, le::load16(p + 44), le::load16(p + 46), &r->name);
}

void append_create_response(uint32_t action, const FileTimes& t, const FileId& id,
                            std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 89);
  le::store16(p, 89);
  p[2] = 0;  // OplockLevel: none
  le::store32(p + 4, action);
  put_times(p + 8, t);
  std::copy(id.begin(), id.end(), p + 64);
  // No create contexts in the answer (offset/length 0).
}

ParseError parse_close(std::span<const uint8_t> m, FileReq* r) {
  ParseError e;
  const uint8_t* p = body(m, 24, 24, &e);
  if (!p) return e;
  r->flags = le::load16(p + 2);
  std::copy(p + 8, p + 24, r->id.begin());
  return ParseError::kNone;
}

ParseError parse_flush(std::span<const uint8_t> m, FileReq* r) {
  ParseError e;
  const uint8_t* p = body(m, 24, 24, &e);
  if (!p) return e;
  std::copy(p + 8, p + 24, r->id.begin());
  return ParseError::kNone;
}

void append_close_response(uint16_t flags, const FileTimes& t, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 60);
  le::store16(p, 60);
  le::store16(p + 2, flags);
  if (flags & 1) put_times(p + 8, t);  // SMB2_CLOSE_FLAG_POSTQUERY_ATTRIB
}

void append_flush_response(std::vector<uint8_t>* out) { le::store16(grow(out, 4), 4); }

ParseError parse_echo(std::span<const uint8_t> m) {
  ParseError e;
  return body(m, 4, 4, &e) ? ParseError::kNone : e;
}

ParseError parse_read(std::span<const uint8_t> m, ReadReq* r) {
  ParseError e;
  const uint8_t* p = body(m, 48, 49, &e);
  if (!p) return e;
  r->length = le::load32(p + 4);
  r->offset = le::load64(p + 8);
  std::copy(p + 16, p + 32, r->id.begin());
  r->minimum = le::load32(p + 32);
  r->channel = le::load32(p + 36);
  return span_at(m, le::load16(p + 44), le::load16(p + 46), &r->channel_info);
}

void append_read_response(std::span<const uint8_t> data, uint32_t rdma_bytes,
                          std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 16);
  le::store16(p, 17);
  p[2] = uint8_t(kHeaderSize + 16);  // DataOffset (also with an RDMA channel, as ksmbd)
  le::store32(p + 4, uint32_t(data.size()));
  le::store32(p + 8, rdma_bytes);  // DataRemaining
  // No padding byte when the data went by RDMA: Linux cifs takes the
  // response as 80 bytes plus DataRemaining and would read a 81st byte as
  // the start of the next message (ksmbd sends 80 bytes too).
  out->insert(out->end(), data.begin(), data.end());
}

ParseError parse_write(std::span<const uint8_t> m, WriteReq* r) {
  ParseError e;
  const uint8_t* p = body(m, 48, 49, &e);
  if (!p) return e;
  const uint16_t data_off = le::load16(p + 2);
  r->length = le::load32(p + 4);
  r->offset = le::load64(p + 8);
  std::copy(p + 16, p + 32, r->id.begin());
  r->channel = le::load32(p + 32);
  r->remaining = le::load32(p + 36);
  if (auto x = span_at(m, data_off, r->length, &r->data); x != ParseError::kNone) return x;
  return span_at(m, le::load16(p + 40), le::load16(p + 42), &r->channel_info);
}

void append_write_response(uint32_t count, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 17);
  le::store16(p, 17);
  le::store32(p + 4, count);
}

ParseError parse_query_info(std::span<const uint8_t> m, QueryInfoReq* r) {
  ParseError e;
  const uint8_t* p = body(m, 40, 41, &e);
  if (!p) return e;
  r->info_type = p[2];
  r->info_class = p[3];
  r->output_length = le::load32(p + 4);
  r->additional = le::load32(p + 16);
  std::copy(p + 24, p + 40, r->id.begin());
  return ParseError::kNone;
}

void append_query_info_response(std::span<const uint8_t> d, std::vector<uint8_t>* out) {
  uint8_t* p = grow(out, 8);
  le::store16(p, 9);
  le::store16(p + 2, uint16_t(kHeaderSize + 8));
  le::store32(p + 4, uint32_t(d.size()));
  out->insert(out->end(), d.begin(), d.end());
  if (d.empty()) out->push_back(0);
}

ParseError parse_query_directory(std::span<const uint8_t> m, QueryDirReq* r) {
  ParseError e;
  const uint8_t* p = body(m, 32, 33, &e);
  if (!p) return e;
  r->info_class = p[2];
  r->flags = p[3];
  std::copy(p + 8, p + 24, r->id.begin());
  r->output_length = le::load32(p + 28);
  return span_at(m, le::load16(p + 24), le::load16(p + 26), &r->pattern);
}

}  // namespace smb::server
