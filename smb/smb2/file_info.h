// SPDX-License-Identifier: Apache-2.0
// file_info.h - the MS-FSCC information classes the client and server
// exchange in QUERY_INFO / QUERY_DIRECTORY output buffers: directory entries
// (2.4.10 FileDirectoryInformation, 2.4.14 FileFullDirectoryInformation,
// 2.4.17 FileIdBothDirectoryInformation, 2.4.18 FileIdFullDirectoryInformation)
// and 2.4.29 FileNetworkOpenInformation, 2.4.7 FileBasicInformation,
// 2.4.41 FileStandardInformation. Pure functions over byte spans.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "header.h"

namespace smb::smb2 {

inline constexpr uint8_t kFileDirectoryInformation = 0x01;
inline constexpr uint8_t kFileFullDirectoryInformation = 0x02;
inline constexpr uint8_t kFileBothDirectoryInformation = 0x03;
inline constexpr uint8_t kFileBasicInformation = 0x04;
inline constexpr uint8_t kFileStandardInformation = 0x05;
inline constexpr uint8_t kFileNetworkOpenInformation = 0x22;
inline constexpr uint8_t kFileIdBothDirectoryInformation = 0x25;
inline constexpr uint8_t kFileIdFullDirectoryInformation = 0x26;

struct FileTimes {
  uint64_t creation_time = 0, last_access_time = 0, last_write_time = 0, change_time = 0;
  bool operator==(const FileTimes&) const = default;
};

struct DirectoryEntry {
  uint32_t file_index = 0;
  FileTimes times;
  uint64_t end_of_file = 0, allocation_size = 0;
  uint32_t file_attributes = 0;
  uint32_t ea_size = 0;
  uint64_t file_id = 0;             // the Id classes only
  std::vector<uint8_t> name;        // UTF-16LE
  std::vector<uint8_t> short_name;  // FileIdBothDirectoryInformation only (UTF-16LE, <= 24 B)
  bool operator==(const DirectoryEntry&) const = default;
};

// True for the four directory classes above.
bool directory_class_supported(uint8_t info_class);
// Appends one entry, 8-aligned, linking the previous entry's NextEntryOffset;
// `list_start` is where the list begins in `out`, `last` the previous
// entry's offset (or SIZE_MAX for the first; updated).
void append_directory_entry(uint8_t info_class, const DirectoryEntry& e, std::vector<uint8_t>* out,
                            size_t list_start, size_t* last);
// Splits an output buffer of `info_class` entries (at most `max_count`).
ParseError parse_directory_entries(uint8_t info_class, std::span<const uint8_t> buf,
                                   size_t max_count, std::vector<DirectoryEntry>* out);

struct NetworkOpenInformation {
  FileTimes times;
  uint64_t allocation_size = 0, end_of_file = 0;
  uint32_t file_attributes = 0;
};
inline constexpr size_t kNetworkOpenInformationSize = 56;
void append_network_open_information(const NetworkOpenInformation& i, std::vector<uint8_t>* out);
ParseError parse_network_open_information(std::span<const uint8_t> buf,
                                          NetworkOpenInformation* out);

struct BasicInformation {
  FileTimes times;
  uint32_t file_attributes = 0;
};
inline constexpr size_t kBasicInformationSize = 40;
void append_basic_information(const BasicInformation& i, std::vector<uint8_t>* out);
ParseError parse_basic_information(std::span<const uint8_t> buf, BasicInformation* out);

struct StandardInformation {
  uint64_t allocation_size = 0, end_of_file = 0;
  uint32_t number_of_links = 0;
  bool delete_pending = false, directory = false;
};
inline constexpr size_t kStandardInformationSize = 24;
void append_standard_information(const StandardInformation& i, std::vector<uint8_t>* out);
ParseError parse_standard_information(std::span<const uint8_t> buf, StandardInformation* out);

}  // namespace smb::smb2
