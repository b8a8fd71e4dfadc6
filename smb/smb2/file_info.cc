// SPDX-License-Identifier: Apache-2.0
#include "file_info.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;

namespace {

// Where the FileName starts in each directory class (MS-FSCC 2.4).
size_t name_offset(uint8_t c) {
  switch (c) {
    case kFileDirectoryInformation:
      return 64;
    case kFileFullDirectoryInformation:
      return 68;
    case kFileIdFullDirectoryInformation:
      return 80;
    case kFileIdBothDirectoryInformation:
      return 104;
  }
  return 0;
}

void put_times(uint8_t* p, const FileTimes& t) {
  le::store64(p, t.creation_time);
  le::store64(p + 8, t.last_access_time);
  le::store64(p + 16, t.last_write_time);
  le::store64(p + 24, t.change_time);
}

FileTimes get_times(const uint8_t* p) {
  return FileTimes{le::load64(p), le::load64(p + 8), le::load64(p + 16), le::load64(p + 24)};
}

}  // namespace

bool directory_class_supported(uint8_t c) { return name_offset(c) != 0; }

void append_directory_entry(uint8_t c, const DirectoryEntry& e, std::vector<uint8_t>* out,
                            size_t list_start, size_t* last) {
  const size_t fixed = name_offset(c);
  if (*last != SIZE_MAX) {
    while ((out->size() - list_start) % 8) out->push_back(0);
    le::store32(out->data() + *last, uint32_t(out->size() - *last));
  }
  const size_t at = out->size();
  *last = at;
  out->resize(at + fixed + e.name.size(), 0);
  uint8_t* p = out->data() + at;
  le::store32(p + 4, e.file_index);
  put_times(p + 8, e.times);
  le::store64(p + 40, e.end_of_file);
  le::store64(p + 48, e.allocation_size);
  le::store32(p + 56, e.file_attributes);
  le::store32(p + 60, uint32_t(e.name.size()));
  if (c != kFileDirectoryInformation) le::store32(p + 64, e.ea_size);
  if (c == kFileIdFullDirectoryInformation) le::store64(p + 72, e.file_id);
  if (c == kFileIdBothDirectoryInformation) {
    const size_t n = std::min<size_t>(e.short_name.size(), 24);
    p[68] = uint8_t(n);
    std::copy(e.short_name.begin(), e.short_name.begin() + ptrdiff_t(n), p + 70);
    le::store64(p + 96, e.file_id);
  }
  std::copy(e.name.begin(), e.name.end(), p + fixed);
}

ParseError parse_directory_entries(uint8_t c, std::span<const uint8_t> buf, size_t max_count,
                                   std::vector<DirectoryEntry>* out) {
  out->clear();
  const size_t fixed = name_offset(c);
  if (!fixed) return ParseError::kBadStructureSize;
  size_t at = 0;
  while (at < buf.size()) {
    if (out->size() == max_count) return ParseError::kOutOfBounds;
    if (buf.size() - at < fixed) return ParseError::kTooShort;
    const uint8_t* p = buf.data() + at;
    const uint32_t next = le::load32(p);
    const size_t end = next ? size_t(next) : buf.size() - at;
    if (next && (next > buf.size() - at || next < fixed)) return ParseError::kOutOfBounds;
    const uint32_t name_len = le::load32(p + 60);
    if (name_len > end - fixed) return ParseError::kOutOfBounds;
    DirectoryEntry e;
    e.file_index = le::load32(p + 4);
    e.times = get_times(p + 8);
    e.end_of_file = le::load64(p + 40);
    e.allocation_size = le::load64(p + 48);
    e.file_attributes = le::load32(p + 56);
    if (c != kFileDirectoryInformation) e.ea_size = le::load32(p + 64);
    if (c == kFileIdFullDirectoryInformation) e.file_id = le::load64(p + 72);
    if (c == kFileIdBothDirectoryInformation) {
      const size_t n = std::min<size_t>(p[68], 24);
      e.short_name.assign(p + 70, p + 70 + n);
      e.file_id = le::load64(p + 96);
    }
    e.name.assign(p + fixed, p + fixed + name_len);
    out->push_back(std::move(e));
    if (!next) break;
    at += next;
  }
  return ParseError::kNone;
}

void append_network_open_information(const NetworkOpenInformation& i, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + kNetworkOpenInformationSize, 0);
  uint8_t* p = out->data() + at;
  put_times(p, i.times);
  le::store64(p + 32, i.allocation_size);
  le::store64(p + 40, i.end_of_file);
  le::store32(p + 48, i.file_attributes);
}

ParseError parse_network_open_information(std::span<const uint8_t> b, NetworkOpenInformation* i) {
  if (b.size() < kNetworkOpenInformationSize) return ParseError::kTooShort;
  i->times = get_times(b.data());
  i->allocation_size = le::load64(b.data() + 32);
  i->end_of_file = le::load64(b.data() + 40);
  i->file_attributes = le::load32(b.data() + 48);
  return ParseError::kNone;
}

void append_basic_information(const BasicInformation& i, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + kBasicInformationSize, 0);
  put_times(out->data() + at, i.times);
  le::store32(out->data() + at + 32, i.file_attributes);
}

ParseError parse_basic_information(std::span<const uint8_t> b, BasicInformation* i) {
  if (b.size() < kBasicInformationSize) return ParseError::kTooShort;
  i->times = get_times(b.data());
  i->file_attributes = le::load32(b.data() + 32);
  return ParseError::kNone;
}

void append_standard_information(const StandardInformation& i, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + kStandardInformationSize, 0);
  uint8_t* p = out->data() + at;
  le::store64(p, i.allocation_size);
  le::store64(p + 8, i.end_of_file);
  le::store32(p + 16, i.number_of_links);
  p[20] = i.delete_pending;
  p[21] = i.directory;
}

ParseError parse_standard_information(std::span<const uint8_t> b, StandardInformation* i) {
  if (b.size() < 22) return ParseError::kTooShort;
  i->allocation_size = le::load64(b.data());
  i->end_of_file = le::load64(b.data() + 8);
  i->number_of_links = le::load32(b.data() + 16);
  i->delete_pending = b[20] != 0;
  i->directory = b[21] != 0;
  return ParseError::kNone;
}

}  // namespace smb::smb2
