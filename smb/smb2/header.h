// SPDX-License-Identifier: Apache-2.0
// header.h - MS-SMB2 2.2.1 SMB2 packet header (sync form) and 2.2.1.2
// command codes: builder and pure parser over byte spans. The commands
// have their own files (negotiate.h, session_setup.h, ...).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace smb::smb2 {

inline constexpr size_t kHeaderSize = 64;
// MS-SMB2 2.2.1.2 Command codes.
inline constexpr uint16_t kNegotiate = 0x0000;
inline constexpr uint16_t kSessionSetup = 0x0001;
inline constexpr uint16_t kLogoff = 0x0002;
inline constexpr uint16_t kTreeConnect = 0x0003;
inline constexpr uint16_t kTreeDisconnect = 0x0004;
inline constexpr uint16_t kCreate = 0x0005;
inline constexpr uint16_t kClose = 0x0006;
inline constexpr uint16_t kFlush = 0x0007;
inline constexpr uint16_t kRead = 0x0008;
inline constexpr uint16_t kWrite = 0x0009;
inline constexpr uint16_t kLock = 0x000A;
inline constexpr uint16_t kIoctl = 0x000B;
inline constexpr uint16_t kCancel = 0x000C;
inline constexpr uint16_t kEcho = 0x000D;
inline constexpr uint16_t kQueryDirectory = 0x000E;
inline constexpr uint16_t kChangeNotify = 0x000F;
inline constexpr uint16_t kQueryInfo = 0x0010;
inline constexpr uint16_t kSetInfo = 0x0011;
inline constexpr uint16_t kOplockBreak = 0x0012;
inline constexpr uint32_t kFlagResponse = 0x00000001;
inline constexpr uint32_t kFlagAsync = 0x00000002;
inline constexpr uint32_t kFlagRelated = 0x00000004;
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
// The same 64 bytes at p (a message built in place, e.g. in a registered
// send buffer).
void store_header(const Header& h, uint8_t* p);
ParseError parse_header(std::span<const uint8_t> msg, Header* out);

// Whether [off, off + len) lies within a message of `size` bytes (64-bit sum).
inline bool within(size_t size, uint64_t off, uint64_t len) {
  return off <= size && len <= size - off;
}

}  // namespace smb::smb2
