// SPDX-License-Identifier: Apache-2.0
// mpa/fpdu.h — MPA FPDU framing arithmetic (RFC 5044 4): ULPDU_Length, pad,
// CRC field, and FPDU sizing from the TCP MSS for the sender.
// Owns: sizes only; the byte work is in ddp/fpdu_builder.h (send) and
// ddp/stream_parser.h (receive).
#pragma once

#include <cstddef>
#include <cstdint>

namespace softndk::wire {

inline constexpr size_t kMpaLengthSize = 2;  // ULPDU_Length field
inline constexpr size_t kMpaCrcSize = 4;     // always present, zero when CRC is off
inline constexpr size_t kMaxUlpduLength = 0xFFFF;

// Pad so that 2 + ULPDU + pad is a multiple of 4.
constexpr size_t mpa_pad(size_t ulpdu_len) { return (4 - ((ulpdu_len + 2) & 3)) & 3; }
// Whole FPDU on the wire without markers.
constexpr size_t fpdu_wire_size(size_t ulpdu_len) {
  return kMpaLengthSize + ulpdu_len + mpa_pad(ulpdu_len) + kMpaCrcSize;
}

// How the sender sizes FPDUs (IWARP.md 2.7, 9.4).
enum class FpduSizingMode : uint8_t {
  // Linux siw: every non-last FPDU is exactly MSS rounded down to 8 bytes.
  kSiw,
  // RFC 5044 MULPDU: one FPDU fits one TCP segment (MSS rounded down to 4),
  // what hardware peers expect.
  kOnePerSegment,
};

struct FpduSizing {
  uint32_t mss = 1448;
  FpduSizingMode mode = FpduSizingMode::kSiw;
  uint32_t max_fpdu = 0;  // optional cap on the FPDU wire size (0 = none)

  // Wire size of a full (non-last) FPDU: a multiple of 4 (of 8 in siw mode),
  // never above 2 + 65535 + 3 + 4, never below 24.
  uint32_t fpdu_size() const;
  // Max DDP payload per FPDU for a tagged (14-byte) or untagged (18-byte) header.
  uint32_t max_payload(bool tagged) const;
};

}  // namespace softndk::wire
