// SPDX-License-Identifier: Apache-2.0
// file_requests.h - the server's own minimal request parsers and response
// builders for CREATE, CLOSE, FLUSH, READ, WRITE, QUERY_INFO,
// QUERY_DIRECTORY and ECHO (MS-SMB2 2.2.13-2.2.38). These commands' shared
// codecs are the client engineer's (smb/smb2/, branch smb-client); this
// file holds only what ndk-smbd needs until they are merged, then goes.
// Pure functions over byte spans; offsets count from the SMB2 header.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "smb2/header.h"

namespace smb::server {

using smb2::ParseError;
using FileId = std::array<uint8_t, 16>;

struct CreateReq {
  uint8_t oplock = 0;
  uint32_t desired_access = 0, file_attributes = 0, share_access = 0;
  uint32_t disposition = 0, options = 0;
  std::span<const uint8_t> name;  // UTF-16LE
};
ParseError parse_create(std::span<const uint8_t> m, CreateReq* r);

struct FileTimes {
  uint64_t creation = 0, access = 0, write = 0, change = 0;
  uint64_t allocation = 0, eof = 0;
  uint32_t attributes = 0;
};
void append_create_response(uint32_t create_action, const FileTimes& t, const FileId& id,
                            std::vector<uint8_t>* out);

struct FileReq {  // CLOSE and FLUSH: flags and a FileId
  uint16_t flags = 0;
  FileId id{};
};
ParseError parse_close(std::span<const uint8_t> m, FileReq* r);
ParseError parse_flush(std::span<const uint8_t> m, FileReq* r);
void append_close_response(uint16_t flags, const FileTimes& t, std::vector<uint8_t>* out);
void append_flush_response(std::vector<uint8_t>* out);  // also ECHO's
ParseError parse_echo(std::span<const uint8_t> m);

inline constexpr uint32_t kChannelNone = 0, kChannelRdmaV1 = 1, kChannelRdmaV1Invalidate = 2;

struct ReadReq {
  uint32_t length = 0, minimum = 0, channel = 0;
  uint64_t offset = 0;
  FileId id{};
  std::span<const uint8_t> channel_info;  // buffer descriptors
};
ParseError parse_read(std::span<const uint8_t> m, ReadReq* r);
// Inline data follows at offset 80; for an RDMA channel `data` is empty and
// DataRemaining carries the bytes written into the client's buffers.
void append_read_response(std::span<const uint8_t> data, uint32_t rdma_bytes,
                          std::vector<uint8_t>* out);

struct WriteReq {
  uint32_t length = 0, channel = 0, remaining = 0;
  uint64_t offset = 0;
  FileId id{};
  std::span<const uint8_t> data;          // inline
  std::span<const uint8_t> channel_info;  // buffer descriptors
};
ParseError parse_write(std::span<const uint8_t> m, WriteReq* r);
void append_write_response(uint32_t count, std::vector<uint8_t>* out);

struct QueryInfoReq {
  uint8_t info_type = 0, info_class = 0;
  uint32_t output_length = 0, additional = 0;
  FileId id{};
};
ParseError parse_query_info(std::span<const uint8_t> m, QueryInfoReq* r);
void append_query_info_response(std::span<const uint8_t> data, std::vector<uint8_t>* out);

inline constexpr uint8_t kRestartScans = 0x01, kReturnSingleEntry = 0x02, kReopen = 0x10;
struct QueryDirReq {
  uint8_t info_class = 0, flags = 0;
  FileId id{};
  std::span<const uint8_t> pattern;  // UTF-16LE
  uint32_t output_length = 0;
};
ParseError parse_query_directory(std::span<const uint8_t> m, QueryDirReq* r);
// Same body layout as QUERY_INFO's response (StructureSize 9).
inline void append_query_directory_response(std::span<const uint8_t> d, std::vector<uint8_t>* out) {
  append_query_info_response(d, out);
}

}  // namespace smb::server
