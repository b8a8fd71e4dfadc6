// SPDX-License-Identifier: Apache-2.0
// rdmap/rtr.h — the RFC 6581 ready-to-receive FPDUs exactly as Linux siw
// sends them (IWARP.md 2.2, 7.1) and the zero-length Read Response a
// responder returns to a Read RTR.
// Owns: these three fixed FPDUs; everything else goes through the builder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace softndk::wire {

inline constexpr size_t kRtrWriteSize = 20;
inline constexpr size_t kRtrReadSize = 52;
inline constexpr size_t kZeroReadResponseSize = 20;
// siw's RTR Write names STag 1 (never 0, which is not a valid sink) and its
// RTR Read names source STag 1 with sink 0/0 and size 0.
inline constexpr uint32_t kRtrStag = 1;

// Zero-length RDMA Write, STag 1, TO 0, L=1. Returns 20 (0 if out too small).
size_t encode_rtr_write(std::span<uint8_t> out, bool crc);
// Zero-length Read Request (QN 1, `msn`, sink 0/0, size 0, source 1/0).
size_t encode_rtr_read(std::span<uint8_t> out, uint32_t msn, bool crc);
// Zero-length Read Response echoing the request's sink STag/TO.
size_t encode_zero_read_response(std::span<uint8_t> out, uint32_t sink_stag, uint64_t sink_to,
                                 bool crc);

}  // namespace softndk::wire
