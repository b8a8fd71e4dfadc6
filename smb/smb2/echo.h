// SPDX-License-Identifier: Apache-2.0
// echo.h - MS-SMB2 2.2.28/2.2.29 ECHO request and response. Encoders
// append the body after the message's header (the last 64 bytes of `out`).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

// ECHO request and response have the same 4-byte body.
void append_echo(std::vector<uint8_t>* out);
ParseError parse_echo(std::span<const uint8_t> msg);

}  // namespace smb::smb2
