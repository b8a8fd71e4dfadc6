// SPDX-License-Identifier: Apache-2.0
// create.h - MS-SMB2 2.2.13 CREATE request, 2.2.14 CREATE response and the
// 2.2.13.2 create context list. Encoders append a body right after the
// message's 64-byte header, which must be the last 64 bytes of `out`;
// parsers take the whole message (header + body).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "command.h"

namespace smb::smb2 {

// 2.2.13 values used by the client and server (not exhaustive).
inline constexpr uint32_t kFileReadData = 0x00000001;
inline constexpr uint32_t kFileWriteData = 0x00000002;
inline constexpr uint32_t kFileReadAttributes = 0x00000080;
inline constexpr uint32_t kSynchronize = 0x00100000;
inline constexpr uint32_t kGenericRead = 0x80000000;
inline constexpr uint32_t kGenericWrite = 0x40000000;
inline constexpr uint32_t kShareRead = 1, kShareWrite = 2, kShareDelete = 4;
inline constexpr uint32_t kFileSupersede = 0, kFileOpen = 1, kFileCreate = 2, kFileOpenIf = 3,
                          kFileOverwrite = 4, kFileOverwriteIf = 5;
inline constexpr uint32_t kFileDirectoryFile = 0x00000001;
inline constexpr uint32_t kFileNonDirectoryFile = 0x00000040;
inline constexpr uint32_t kFileAttributeDirectory = 0x00000010;
inline constexpr uint32_t kFileAttributeNormal = 0x00000080;
inline constexpr uint32_t kImpersonation = 2;

struct CreateRequest {
  uint8_t security_flags = 0;
  uint8_t oplock_level = 0;
  uint32_t impersonation_level = kImpersonation;
  uint32_t desired_access = 0;
  uint32_t file_attributes = 0;
  uint32_t share_access = 0;
  uint32_t create_disposition = kFileOpen;
  uint32_t create_options = 0;
  std::vector<uint8_t> name;      // UTF-16LE, no leading backslash, relative to the share
  std::vector<uint8_t> contexts;  // encoded create context list (append_create_context)
};

struct CreateResponse {
  uint8_t oplock_level = 0;
  uint8_t flags = 0;
  uint32_t create_action = 0;
  uint64_t creation_time = 0, last_access_time = 0, last_write_time = 0, change_time = 0;
  uint64_t allocation_size = 0, end_of_file = 0;
  uint32_t file_attributes = 0;
  FileId file_id;
  std::vector<uint8_t> contexts;
};

void append_create_request(const CreateRequest& r, std::vector<uint8_t>* out);
ParseError parse_create_request(std::span<const uint8_t> msg, CreateRequest* out);
void append_create_response(const CreateResponse& r, std::vector<uint8_t>* out);
ParseError parse_create_response(std::span<const uint8_t> msg, CreateResponse* out);

// 2.2.13.2 SMB2_CREATE_CONTEXT: one entry of the chained list.
struct CreateContext {
  std::string name;  // 4-byte tags such as "MxAc", "QFid" (bytes, not UTF-16)
  std::vector<uint8_t> data;
};
// Appends one entry to an encoded list, linking the previous entry's Next.
void append_create_context(const CreateContext& c, std::vector<uint8_t>* list);
// Splits an encoded list; entries must be 8-aligned, in bounds, at most `max_count`.
ParseError parse_create_contexts(std::span<const uint8_t> list, size_t max_count,
                                 std::vector<CreateContext>* out);

}  // namespace smb::smb2
