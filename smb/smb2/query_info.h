// SPDX-License-Identifier: Apache-2.0
// query_info.h - MS-SMB2 2.2.37 QUERY_INFO request and 2.2.38 response (the
// output buffer is left to file_info.h's class parsers). Encoders append the
// body after the message's header (the last 64 bytes of `out`).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

struct QueryInfoRequest {
  uint8_t info_type = kInfoFile;
  uint8_t file_info_class = 0;
  uint32_t output_buffer_length = 0;
  uint32_t additional_information = 0;
  uint32_t flags = 0;
  FileId file_id;
  std::vector<uint8_t> input;  // quota/EA input buffer (usually empty)
};

void append_query_info_request(const QueryInfoRequest& r, std::vector<uint8_t>* out);
ParseError parse_query_info_request(std::span<const uint8_t> msg, QueryInfoRequest* out);
// QUERY_INFO and QUERY_DIRECTORY responses share one layout (StructureSize
// 9, OutputBufferOffset, OutputBufferLength, Buffer).
void append_output_buffer_response(std::span<const uint8_t> output, std::vector<uint8_t>* out);
ParseError parse_output_buffer_response(std::span<const uint8_t> msg,
                                        std::span<const uint8_t>* output);
inline void append_query_info_response(std::span<const uint8_t> o, std::vector<uint8_t>* out) {
  append_output_buffer_response(o, out);
}
inline ParseError parse_query_info_response(std::span<const uint8_t> msg,
                                            std::span<const uint8_t>* output) {
  return parse_output_buffer_response(msg, output);
}

}  // namespace smb::smb2
