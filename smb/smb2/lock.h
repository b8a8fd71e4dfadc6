// SPDX-License-Identifier: Apache-2.0
// lock.h - MS-SMB2 2.2.26/2.2.27 LOCK request and response: byte-range
// locks (SMB2_LOCK_ELEMENT, 2.2.26.1). Encoders append the body after the
// message's header (the last 64 bytes of `out`); parsers are pure.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "command.h"

namespace smb::smb2 {

// 2.2.26.1 SMB2_LOCK_ELEMENT Flags.
inline constexpr uint32_t kLockShared = 0x1, kLockExclusive = 0x2, kLockUnlock = 0x4,
                          kLockFailImmediately = 0x10;

struct LockElement {
  uint64_t offset = 0, length = 0;
  uint32_t flags = 0;
  bool operator==(const LockElement&) const = default;
};

struct LockRequest {
  uint32_t lock_sequence = 0;  // LockSequenceNumber (4 bits) | LockSequenceIndex (28)
  FileId file_id;
  std::vector<LockElement> locks;  // LockCount of them, at least one
};
// At most kMaxLockElements elements are parsed (a larger LockCount is
// kOutOfBounds: no SMB2 client sends more in one request than fit a
// MaxTransactSize of 64 KiB, 2730).
inline constexpr uint16_t kMaxLockElements = 2730;
void append_lock_request(const LockRequest& r, std::vector<uint8_t>* out);
ParseError parse_lock_request(std::span<const uint8_t> msg, LockRequest* out);
void append_lock_response(std::vector<uint8_t>* out);
ParseError parse_lock_response(std::span<const uint8_t> msg);

}  // namespace smb::smb2
