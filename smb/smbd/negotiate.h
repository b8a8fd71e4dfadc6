// SPDX-License-Identifier: Apache-2.0
// negotiate.h - MS-SMBD 2.2.1 Negotiate Request and 2.2.2 Negotiate Response:
// builders and pure parsers over byte spans, with the receive-side checks of
// 3.1.5.6 (request) and 3.1.5.7 (response).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "error.h"

namespace smbd {

inline constexpr uint16_t kVersion1 = 0x0100;
inline constexpr size_t kNegotiateRequestSize = 20;
inline constexpr size_t kNegotiateResponseSize = 32;
inline constexpr uint32_t kMinReceiveSize = 128;
inline constexpr uint32_t kMinFragmentedSize = 131072;
inline constexpr uint32_t kStatusSuccess = 0;
inline constexpr uint32_t kStatusNotSupported = 0xC00000BB;

struct NegotiateRequest {
  uint16_t min_version = kVersion1;
  uint16_t max_version = kVersion1;
  uint16_t credits_requested = 0;
  uint32_t preferred_send_size = 0;
  uint32_t max_receive_size = 0;
  uint32_t max_fragmented_size = 0;
};

struct NegotiateResponse {
  uint16_t min_version = kVersion1;
  uint16_t max_version = kVersion1;
  uint16_t negotiated_version = kVersion1;
  uint16_t credits_requested = 0;
  uint16_t credits_granted = 0;
  uint32_t status = kStatusSuccess;
  uint32_t max_read_write_size = 0;
  uint32_t preferred_send_size = 0;
  uint32_t max_receive_size = 0;
  uint32_t max_fragmented_size = 0;
};

std::array<uint8_t, kNegotiateRequestSize> build_negotiate_request(const NegotiateRequest& r);
std::array<uint8_t, kNegotiateResponseSize> build_negotiate_response(const NegotiateResponse& r);

// Decodes `msg` into *out (whenever it is long enough) and returns the first
// failed check of 3.1.5.6 in the specification's order. kNoCommonVersion
// asks the caller to answer with a STATUS_NOT_SUPPORTED response before it
// disconnects; every other error ends the connection at once.
Error parse_negotiate_request(std::span<const uint8_t> msg, NegotiateRequest* out);

// Same for a response (3.1.5.7); `local_max_receive_size` is the initiator's
// own MaxReceiveSize, which the peer's PreferredSendSize must not exceed.
Error parse_negotiate_response(std::span<const uint8_t> msg, uint32_t local_max_receive_size,
                               NegotiateResponse* out);

}  // namespace smbd
