// SPDX-License-Identifier: Apache-2.0
// rping_msg.h - what rping (librdmacm's example) puts in its buffers, so that
// ndkping interoperates with it byte for byte:
//  - struct rping_rdma_info { be64 buf; be32 rkey; be32 size; } (16 bytes),
//    the advertisement the client Sends twice per ping (its source buffer,
//    then its sink); rkey is the NDK remote token (the MR's STag) and buf the
//    buffer's virtual address (NDK has no zero-based VAs, like rping);
//  - the ping payload: "rdma-ping-%d: " then a rotating run of the ASCII
//    characters 'A'..'z' starting one later every ping, NUL-terminated at the
//    last byte of the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace softndk::ndkping {

inline constexpr size_t kRpingInfoSize = 16;
inline constexpr size_t kRpingMinSize = 26;  // rping's RPING_MIN_BUFSIZE
inline constexpr size_t kRpingMaxSize = 16u << 20;
inline constexpr char kFirstChar = 65;  // 'A'
inline constexpr char kLastChar = 122;  // 'z'

struct RpingInfo {
  uint64_t buf = 0;
  uint32_t rkey = 0;
  uint32_t size = 0;
};

void encode_rping_info(const RpingInfo& info, uint8_t out[kRpingInfoSize]);
// nullopt unless exactly 16 bytes (rping: "Received bogus data").
std::optional<RpingInfo> decode_rping_info(const uint8_t* in, size_t len);

// Fills buf[0, size) as rping's client does for ping number `ping`, whose
// pattern starts at character `start`; returns the start for the next ping.
char format_ping(uint8_t* buf, size_t size, uint64_t ping, char start);

}  // namespace softndk::ndkping
