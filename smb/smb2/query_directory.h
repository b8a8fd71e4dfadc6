// SPDX-License-Identifier: Apache-2.0
// query_directory.h - MS-SMB2 2.2.33 QUERY_DIRECTORY request (the response,
// 2.2.34, has QUERY_INFO's layout: query_info.h) and the directory entries
// of MS-FSCC 2.4 the output buffer carries (file_info.h). Encoders append
// the body after the message's header (the last 64 bytes of `out`).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"
#include "query_info.h"

namespace smb::smb2 {

inline constexpr uint8_t kRestartScans = 0x01, kReturnSingleEntry = 0x02, kIndexSpecified = 0x04,
                         kReopen = 0x10;

struct QueryDirectoryRequest {
  uint8_t file_information_class = 0;
  uint8_t flags = 0;
  uint32_t file_index = 0;
  FileId file_id;
  std::vector<uint8_t> pattern;  // UTF-16LE search pattern ("*")
  uint32_t output_buffer_length = 0;
};

void append_query_directory_request(const QueryDirectoryRequest& r, std::vector<uint8_t>* out);
ParseError parse_query_directory_request(std::span<const uint8_t> msg, QueryDirectoryRequest* out);
inline void append_query_directory_response(std::span<const uint8_t> o, std::vector<uint8_t>* out) {
  append_output_buffer_response(o, out);
}
inline ParseError parse_query_directory_response(std::span<const uint8_t> msg,
                                                 std::span<const uint8_t>* output) {
  return parse_output_buffer_response(msg, output);
}

}  // namespace smb::smb2
