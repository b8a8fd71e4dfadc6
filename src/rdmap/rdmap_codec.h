// SPDX-License-Identifier: Apache-2.0
// rdmap/rdmap_codec.h — RDMAP (RFC 5040/7306) message bodies above the
// control byte: the RFC 7306 Atomic Request (52 bytes) and Atomic Response
// (12) codecs. The control byte, opcode table and Read Request body live in
// ddp/rdmap_control.h (the DDP stream parser validates them), included here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "ddp/rdmap_control.h"

namespace softndk::wire {

// ---- RFC 7306 atomics (layout per IWARP.md 5.1/5.2) ----
inline constexpr uint8_t kAtomicFetchAdd = 0x0;
inline constexpr uint8_t kAtomicCompareSwap = 0x2;
struct AtomicRequestBody {
  uint32_t opcode_word = 0;  // low 4 bits = atomic operation code, rest reserved
  uint32_t request_id = 0;
  uint32_t remote_stag = 0;
  uint64_t remote_to = 0;
  uint64_t add_or_swap = 0;
  uint64_t add_or_swap_mask = 0;
  uint64_t compare = 0;
  uint64_t compare_mask = 0;
  uint8_t atomic_op() const { return opcode_word & 0x0F; }
  bool operator==(const AtomicRequestBody&) const = default;
};
struct AtomicResponseBody {
  uint32_t request_id = 0;
  uint64_t original_value = 0;
  bool operator==(const AtomicResponseBody&) const = default;
};
std::optional<AtomicRequestBody> decode_atomic_request(std::span<const uint8_t> body);
void encode_atomic_request(const AtomicRequestBody& b, uint8_t out[kAtomicRequestBodySize]);
std::optional<AtomicResponseBody> decode_atomic_response(std::span<const uint8_t> body);
void encode_atomic_response(const AtomicResponseBody& b, uint8_t out[kAtomicResponseBodySize]);

}  // namespace softndk::wire
