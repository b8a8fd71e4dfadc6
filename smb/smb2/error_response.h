// SPDX-License-Identifier: Apache-2.0
// error_response.h - MS-SMB2 2.2.2 ERROR response (the body every failed
// command gets): builder and pure parser. 3.x without error contexts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "header.h"

namespace smb::smb2 {

void append_error_response(std::vector<uint8_t>* out, std::span<const uint8_t> data = {});
// `data`: the ErrorData bytes (ByteCount of them) inside the message.
ParseError parse_error_response(std::span<const uint8_t> msg, std::span<const uint8_t>* data);

}  // namespace smb::smb2
