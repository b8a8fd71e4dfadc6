// SPDX-License-Identifier: Apache-2.0
// flush.h - MS-SMB2 2.2.17/2.2.18 FLUSH request and response. Encoders
// append the body after the message's header (the last 64 bytes of `out`).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

struct FlushRequest {
  FileId file_id;
};
void append_flush_request(const FlushRequest& r, std::vector<uint8_t>* out);
ParseError parse_flush_request(std::span<const uint8_t> msg, FlushRequest* out);
void append_flush_response(std::vector<uint8_t>* out);
ParseError parse_flush_response(std::span<const uint8_t> msg);

}  // namespace smb::smb2
