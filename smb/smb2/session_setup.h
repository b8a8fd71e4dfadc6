// SPDX-License-Identifier: Apache-2.0
// session_setup.h - MS-SMB2 2.2.5 SESSION_SETUP request, 2.2.6 response and
// 2.2.7/2.2.8 LOGOFF: builders and pure parsers, both directions. The
// security buffer (NTLMSSP raw or in SPNEGO) is returned as a span inside
// the parsed message. Builders append the body after this message's header.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "header.h"

namespace smb::smb2 {

inline constexpr uint8_t kSessionFlagBinding = 0x01;
inline constexpr uint16_t kSessionFlagIsGuest = 0x0001;
inline constexpr uint16_t kSessionFlagIsNull = 0x0002;
inline constexpr uint16_t kSessionFlagEncryptData = 0x0004;

struct SessionSetupRequest {
  uint8_t flags = 0;
  uint8_t security_mode = 1;
  uint32_t capabilities = 0;
  uint32_t channel = 0;
  uint64_t previous_session_id = 0;
  std::span<const uint8_t> security_buffer;
};
void append_session_setup_request(const SessionSetupRequest& r, std::vector<uint8_t>* out);
ParseError parse_session_setup_request(std::span<const uint8_t> msg, SessionSetupRequest* out);

struct SessionSetupResponse {
  uint16_t session_flags = 0;
  std::span<const uint8_t> security_buffer;
};
void append_session_setup_response(const SessionSetupResponse& r, std::vector<uint8_t>* out);
ParseError parse_session_setup_response(std::span<const uint8_t> msg, SessionSetupResponse* out);

// LOGOFF request and response: StructureSize 4 and a reserved u16.
void append_logoff(std::vector<uint8_t>* out);
ParseError parse_logoff(std::span<const uint8_t> msg);

}  // namespace smb::smb2
