// SPDX-License-Identifier: Apache-2.0
// close.h - MS-SMB2 2.2.15/2.2.16 CLOSE request and response. Encoders
// append the body after the message's header (the last 64 bytes of `out`).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

inline constexpr uint16_t kClosePostqueryAttrib = 0x0001;

struct CloseRequest {
  uint16_t flags = 0;
  FileId file_id;
};
struct CloseResponse {
  uint16_t flags = 0;
  uint64_t creation_time = 0, last_access_time = 0, last_write_time = 0, change_time = 0;
  uint64_t allocation_size = 0, end_of_file = 0;
  uint32_t file_attributes = 0;
};
void append_close_request(const CloseRequest& r, std::vector<uint8_t>* out);
ParseError parse_close_request(std::span<const uint8_t> msg, CloseRequest* out);
void append_close_response(const CloseResponse& r, std::vector<uint8_t>* out);
ParseError parse_close_response(std::span<const uint8_t> msg, CloseResponse* out);

}  // namespace smb::smb2
