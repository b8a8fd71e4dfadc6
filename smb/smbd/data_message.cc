// SPDX-License-Identifier: Apache-2.0
#include "data_message.h"

#include "le.h"

namespace smbd {

size_t build_data_header(const DataHeader& h, uint32_t payload_length, std::span<uint8_t> out) {
  const size_t n = payload_length ? kDataOffset : kDataHeaderSize;
  if (out.size() < n) return 0;
  uint8_t* p = out.data();
  le::store16(p, h.credits_requested);
  le::store16(p + 2, h.credits_granted);
  le::store16(p + 4, h.flags);
  le::store16(p + 6, 0);
  // 3.1.4.1: an empty message has RemainingDataLength, DataOffset and
  // DataLength all zero.
  le::store32(p + 8, payload_length ? h.remaining_data_length : 0);
  le::store32(p + 12, payload_length ? kDataOffset : 0);
  le::store32(p + 16, payload_length);
  if (payload_length) le::store32(p + 20, 0);
  return n;
}

Error parse_data_message(std::span<const uint8_t> msg, uint32_t max_fragmented_size,
                         DataMessage* out) {
  if (msg.size() < kDataHeaderSize) return Error::kTooShort;
  const uint8_t* p = msg.data();
  DataHeader h;
  h.credits_requested = le::load16(p);
  h.credits_granted = le::load16(p + 2);
  h.flags = le::load16(p + 4);
  h.remaining_data_length = le::load32(p + 8);
  h.data_offset = le::load32(p + 12);
  h.data_length = le::load32(p + 16);
  out->header = h;
  out->payload = {};
  if (h.credits_requested == 0) return Error::kZeroCreditsRequested;
  if (h.data_offset % 8 != 0) return Error::kDataOffsetUnaligned;
  // 64-bit sums: both fields are peer-controlled 32-bit values.
  if (uint64_t(h.data_offset) + h.data_length > msg.size()) return Error::kDataOutOfBounds;
  if (uint64_t(h.data_length) + h.remaining_data_length > max_fragmented_size)
    return Error::kFragmentTooLarge;
  // Not in 3.1.5.8's list, but data inside the header would alias the
  // fields just read: no conforming sender produces it.
  if (h.data_length > 0 && h.data_offset < kDataHeaderSize) return Error::kDataOverlapsHeader;
  out->payload = msg.subspan(h.data_offset, h.data_length);
  return Error::kNone;
}

uint32_t segment_capacity(uint32_t max_send_size) {
  return max_send_size > kDataOffset ? max_send_size - kDataOffset : 0;
}

}  // namespace smbd
