// SPDX-License-Identifier: Apache-2.0
// ird_ord.h - MS-SMBD 6.1 IRD/ORD negotiate header: the first 8 bytes of the
// connection's private data on port 5445 over iWARP, two 32-bit words
// (IRD, ORD), each > 0, sent in network (big-endian) byte order.
//
// Interop quirk (docs/smb-direct.md): Linux cifs up to at least 6.1 sends the
// words in host (little-endian) order. The parser accepts both: it takes the
// big-endian reading when both values fit the 16-bit range every provider
// uses for read depths, else the little-endian one when that fits, and says
// which it used.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "error.h"

namespace smbd {

inline constexpr size_t kIrdOrdSize = 8;

struct IrdOrd {
  uint32_t ird = 0;
  uint32_t ord = 0;
  bool little_endian = false;  // the peer used cifs' host-order encoding
};

std::array<uint8_t, kIrdOrdSize> build_ird_ord(uint32_t ird, uint32_t ord);

// Shorter than 8 bytes: kTooShort (a peer without the header: the caller
// falls back to the provider's RFC 6581 values). A zero word in the chosen
// reading: kZeroIrdOrd.
Error parse_ird_ord(std::span<const uint8_t> private_data, IrdOrd* out);

}  // namespace smbd
