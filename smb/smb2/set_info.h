// SPDX-License-Identifier: Apache-2.0
// set_info.h - MS-SMB2 2.2.39/2.2.40 SET_INFO request and response: builders
// and pure parsers, both directions. The info buffer is a span inside the
// parsed message; its layout (the FileInformationClass) is the caller's.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

struct SetInfoRequest {
  uint8_t info_type = kInfoFile;
  uint8_t info_class = 0;
  uint32_t additional_information = 0;
  FileId file_id;
  std::span<const uint8_t> buffer;
};
void append_set_info_request(const SetInfoRequest& r, std::vector<uint8_t>* out);
ParseError parse_set_info_request(std::span<const uint8_t> msg, SetInfoRequest* out);

// The response is StructureSize 2 alone.
void append_set_info_response(std::vector<uint8_t>* out);
ParseError parse_set_info_response(std::span<const uint8_t> msg);

}  // namespace smb::smb2
