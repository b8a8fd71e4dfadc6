// SPDX-License-Identifier: Apache-2.0
// header.h - MS-SMB2 2.2.1 SMB2 packet header (sync form) and 2.2.3/2.2.4
// NEGOTIATE request/response: builders and pure parsers over byte spans.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace smb::smb2 {

inline constexpr size_t kHeaderSize = 64;
inline constexpr uint16_t kNegotiate = 0x0000;
inline constexpr uint32_t kFlagResponse = 0x00000001;
inline constexpr uint32_t kFlagSigned = 0x00000008;

struct Header {
  uint16_t credit_charge = 0;
  uint32_t status = 0;
  uint16_t command = 0;
  uint16_t credits = 0;  // CreditRequest / CreditResponse
  uint32_t flags = 0;
  uint32_t next_command = 0;
  uint64_t message_id = 0;
  uint32_t process_id = 0;  // sync header: Reserved
  uint32_t tree_id = 0;
  uint64_t session_id = 0;
  std::array<uint8_t, 16> signature{};
};

enum class ParseError : uint8_t {
  kNone,
  kTooShort,
  kBadProtocolId,
  kBadStructureSize,
  kOutOfBounds
};
const char* parse_error_name(ParseError e);

void append_header(const Header& h, std::vector<uint8_t>* out);
ParseError parse_header(std::span<const uint8_t> msg, Header* out);

struct NegotiateRequest {
  uint16_t security_mode = 1;  // SIGNING_ENABLED
  uint32_t capabilities = 0;
  std::array<uint8_t, 16> client_guid{};
  std::vector<uint16_t> dialects;
};
// The NEGOTIATE request body (after the header), without negotiate contexts.
void append_negotiate_request(const NegotiateRequest& r, std::vector<uint8_t>* out);

struct NegotiateResponse {
  uint16_t security_mode = 0;
  uint16_t dialect = 0;
  uint16_t context_count = 0;
  std::array<uint8_t, 16> server_guid{};
  uint32_t capabilities = 0;
  uint32_t max_transact_size = 0, max_read_size = 0, max_write_size = 0;
  uint64_t system_time = 0, server_start_time = 0;
  std::span<const uint8_t> security_buffer;  // within the parsed message
  uint32_t context_offset = 0;
};
// `msg` is the whole SMB2 message (header + body): offsets are from its start.
ParseError parse_negotiate_response(std::span<const uint8_t> msg, NegotiateResponse* out);

}  // namespace smb::smb2
