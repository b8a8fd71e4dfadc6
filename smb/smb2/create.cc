// SPDX-License-Identifier: Apache-2.0
#include "create.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

void append_create_request(const CreateRequest& r, std::vector<uint8_t>* out) {
  const size_t base = out->size() - kHeaderSize;
  uint8_t* p = grow(out, 56);
  le::store16(p, 57);
  p[2] = r.security_flags;
  p[3] = r.oplock_level;
  le::store32(p + 4, r.impersonation_level);
  // SmbCreateFlags and Reserved (8 + 8) stay zero.
  le::store32(p + 24, r.desired_access);
  le::store32(p + 28, r.file_attributes);
  le::store32(p + 32, r.share_access);
  le::store32(p + 36, r.create_disposition);
  le::store32(p + 40, r.create_options);
  const size_t name_off = out->size() - base;
  out->insert(out->end(), r.name.begin(), r.name.end());
  if (r.name.empty()) out->push_back(0);  // the Buffer is at least one byte
  uint32_t ctx_off = 0;
  if (!r.contexts.empty()) {
    pad8(out, base);
    ctx_off = uint32_t(out->size() - base);
    out->insert(out->end(), r.contexts.begin(), r.contexts.end());
  }
  p = out->data() + base + kHeaderSize;
  le::store16(p + 44, uint16_t(name_off));
  le::store16(p + 46, uint16_t(r.name.size()));
  le::store32(p + 48, ctx_off);
  le::store32(p + 52, uint32_t(r.contexts.size()));
}

ParseError parse_create_request(std::span<const uint8_t> msg, CreateRequest* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 57, 56, &b); e != ParseError::kNone) return e;
  const uint8_t* p = b.data();
  r->security_flags = p[2];
  r->oplock_level = p[3];
  r->impersonation_level = le::load32(p + 4);
  r->desired_access = le::load32(p + 24);
  r->file_attributes = le::load32(p + 28);
  r->share_access = le::load32(p + 32);
  r->create_disposition = le::load32(p + 36);
  r->create_options = le::load32(p + 40);
  std::span<const uint8_t> name, ctx;
  if (auto e = field(msg, le::load16(p + 44), le::load16(p + 46), &name); e != ParseError::kNone)
    return e;
  if (auto e = field(msg, le::load32(p + 48), le::load32(p + 52), &ctx); e != ParseError::kNone)
    return e;
  r->name.assign(name.begin(), name.end());
  r->contexts.assign(ctx.begin(), ctx.end());
  return ParseError::kNone;
}

void append_create_response(const CreateResponse& r, std::vector<uint8_t>* out) {
  const size_t base = out->size() - kHeaderSize;
  uint8_t* p = grow(out, 88);
  le::store16(p, 89);
  p[2] = r.oplock_level;
  p[3] = r.flags;
  le::store32(p + 4, r.create_action);
  le::store64(p + 8, r.creation_time);
  le::store64(p + 16, r.last_access_time);
  le::store64(p + 24, r.last_write_time);
  le::store64(p + 32, r.change_time);
  le::store64(p + 40, r.allocation_size);
  le::store64(p + 48, r.end_of_file);
  le::store32(p + 56, r.file_attributes);
  put_file_id(p + 64, r.file_id);
  if (r.contexts.empty()) {
    out->push_back(0);  // the one-byte Buffer of StructureSize 89
    return;
  }
  const uint32_t ctx_off = uint32_t(out->size() - base);
  out->insert(out->end(), r.contexts.begin(), r.contexts.end());
  p = out->data() + base + kHeaderSize;
  le::store32(p + 80, ctx_off);
  le::store32(p + 84, uint32_t(r.contexts.size()));
}

ParseError parse_create_response(std::span<const uint8_t> msg, CreateResponse* r) {
  std::span<const uint8_t> b;
  if (auto e = body(msg, 89, 88, &b); e != ParseError::kNone) return e;
  const uint8_t* p = b.data();
  r->oplock_level = p[2];
  r->flags = p[3];
  r->create_action = le::load32(p + 4);
  r->creation_time = le::load64(p + 8);
  r->last_access_time = le::load64(p + 16);
  r->last_write_time = le::load64(p + 24);
  r->change_time = le::load64(p + 32);
  r->allocation_size = le::load64(p + 40);
  r->end_of_file = le::load64(p + 48);
  r->file_attributes = le::load32(p + 56);
  r->file_id = get_file_id(p + 64);
  std::span<const uint8_t> ctx;
  if (auto e = field(msg, le::load32(p + 80), le::load32(p + 84), &ctx); e != ParseError::kNone)
    return e;
  r->contexts.assign(ctx.begin(), ctx.end());
  return ParseError::kNone;
}

void append_create_context(const CreateContext& c, std::vector<uint8_t>* list) {
  // Link the previous entry: walk the chain to its last element.
  if (!list->empty()) {
    size_t at = 0;
    while (uint32_t next = le::load32(list->data() + at)) at += next;
    while (list->size() % 8) list->push_back(0);
    le::store32(list->data() + at, uint32_t(list->size() - at));
  }
  const size_t at = list->size();
  const size_t name_off = 16, data_off = (name_off + c.name.size() + 7) & ~size_t(7);
  list->resize(at + data_off + c.data.size(), 0);
  uint8_t* p = list->data() + at;
  le::store16(p + 4, uint16_t(name_off));
  le::store16(p + 6, uint16_t(c.name.size()));
  le::store16(p + 10, c.data.empty() ? 0 : uint16_t(data_off));
  le::store32(p + 12, uint32_t(c.data.size()));
  std::copy(c.name.begin(), c.name.end(), p + name_off);
  std::copy(c.data.begin(), c.data.end(), p + data_off);
}

ParseError parse_create_contexts(std::span<const uint8_t> list, size_t max_count,
                                 std::vector<CreateContext>* out) {
  out->clear();
  size_t at = 0;
  while (at < list.size()) {
    if (out->size() == max_count) return ParseError::kOutOfBounds;
    if (list.size() - at < 16) return ParseError::kTooShort;
    const uint8_t* p = list.data() + at;
    const uint32_t next = le::load32(p);
    const uint16_t name_off = le::load16(p + 4), name_len = le::load16(p + 6);
    const uint16_t data_off = le::load16(p + 10);
    const uint32_t data_len = le::load32(p + 12);
    const size_t end = next ? size_t(next) : list.size() - at;
    if (next && (next % 8 || next > list.size() - at)) return ParseError::kOutOfBounds;
    if (name_off < 16 || size_t(name_off) + name_len > end) return ParseError::kOutOfBounds;
    if (data_len && (data_off < 16 || uint64_t(data_off) + data_len > end))
      return ParseError::kOutOfBounds;
    CreateContext c;
    c.name.assign(p + name_off, p + name_off + name_len);
    if (data_len) c.data.assign(p + data_off, p + data_off + data_len);
    out->push_back(std::move(c));
    if (!next) break;
    at += next;
  }
  return ParseError::kNone;
}

}  // namespace smb::smb2
