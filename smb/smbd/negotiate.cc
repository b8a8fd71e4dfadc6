// SPDX-License-Identifier: Apache-2.0
#include "negotiate.h"

#include "le.h"

namespace smbd {

std::array<uint8_t, kNegotiateRequestSize> build_negotiate_request(const NegotiateRequest& r) {
  std::array<uint8_t, kNegotiateRequestSize> b{};
  le::store16(&b[0], r.min_version);
  le::store16(&b[2], r.max_version);
  // b[4..5]: Reserved, 0
  le::store16(&b[6], r.credits_requested);
  le::store32(&b[8], r.preferred_send_size);
  le::store32(&b[12], r.max_receive_size);
  le::store32(&b[16], r.max_fragmented_size);
  return b;
}

std::array<uint8_t, kNegotiateResponseSize> build_negotiate_response(const NegotiateResponse& r) {
  std::array<uint8_t, kNegotiateResponseSize> b{};
  le::store16(&b[0], r.min_version);
  le::store16(&b[2], r.max_version);
  le::store16(&b[4], r.negotiated_version);
  // b[6..7]: Reserved, 0
  le::store16(&b[8], r.credits_requested);
  le::store16(&b[10], r.credits_granted);
  le::store32(&b[12], r.status);
  le::store32(&b[16], r.max_read_write_size);
  le::store32(&b[20], r.preferred_send_size);
  le::store32(&b[24], r.max_receive_size);
  le::store32(&b[28], r.max_fragmented_size);
  return b;
}

Error parse_negotiate_request(std::span<const uint8_t> msg, NegotiateRequest* out) {
  if (msg.size() < kNegotiateRequestSize) return Error::kTooShort;
  const uint8_t* p = msg.data();
  NegotiateRequest r;
  r.min_version = le::load16(p);
  r.max_version = le::load16(p + 2);
  r.credits_requested = le::load16(p + 6);
  r.preferred_send_size = le::load32(p + 8);
  r.max_receive_size = le::load32(p + 12);
  r.max_fragmented_size = le::load32(p + 16);
  *out = r;
  if (r.min_version > kVersion1 || r.max_version < kVersion1) return Error::kNoCommonVersion;
  if (r.credits_requested == 0) return Error::kZeroCreditsRequested;
  if (r.max_receive_size < kMinReceiveSize) return Error::kReceiveSizeTooSmall;
  if (r.max_fragmented_size < kMinFragmentedSize) return Error::kFragmentedSizeTooSmall;
  return Error::kNone;
}

Error parse_negotiate_response(std::span<const uint8_t> msg, uint32_t local_max_receive_size,
                               NegotiateResponse* out) {
  if (msg.size() < kNegotiateResponseSize) return Error::kTooShort;
  const uint8_t* p = msg.data();
  NegotiateResponse r;
  r.min_version = le::load16(p);
  r.max_version = le::load16(p + 2);
  r.negotiated_version = le::load16(p + 4);
  r.credits_requested = le::load16(p + 8);
  r.credits_granted = le::load16(p + 10);
  r.status = le::load32(p + 12);
  r.max_read_write_size = le::load32(p + 16);
  r.preferred_send_size = le::load32(p + 20);
  r.max_receive_size = le::load32(p + 24);
  r.max_fragmented_size = le::load32(p + 28);
  *out = r;
  // A failure response (STATUS_NOT_SUPPORTED) is reported as such first: it
  // says why the responder refused, the other fields need not be valid.
  if (r.status != kStatusSuccess) return Error::kPeerStatus;
  if (r.negotiated_version != kVersion1) return Error::kBadNegotiatedVersion;
  if (r.max_receive_size < kMinReceiveSize) return Error::kReceiveSizeTooSmall;
  if (r.max_fragmented_size < kMinFragmentedSize) return Error::kFragmentedSizeTooSmall;
  if (r.credits_granted == 0) return Error::kZeroCreditsGranted;
  if (r.credits_requested == 0) return Error::kZeroCreditsRequested;
  if (r.preferred_send_size > local_max_receive_size) return Error::kPreferredSendTooLarge;
  return Error::kNone;
}

}  // namespace smbd
