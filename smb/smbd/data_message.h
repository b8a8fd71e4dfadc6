// SPDX-License-Identifier: Apache-2.0
// data_message.h - MS-SMBD 2.2.3 Data Transfer message: the header builder,
// the pure parser with the checks of 3.1.5.8, and the segment size rule of
// 3.1.4.1 (DataOffset 24, DataOffset + DataLength <= MaxSendSize).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "error.h"

namespace smbd {

inline constexpr size_t kDataHeaderSize = 20;  // up to and including DataLength
inline constexpr uint32_t kDataOffset = 24;    // header + 4 bytes Padding: 8-byte aligned payload
inline constexpr uint16_t kFlagResponseRequested = 0x0001;

struct DataHeader {
  uint16_t credits_requested = 0;
  uint16_t credits_granted = 0;
  uint16_t flags = 0;
  uint32_t remaining_data_length = 0;
  uint32_t data_offset = 0;
  uint32_t data_length = 0;
};

struct DataMessage {
  DataHeader header;
  std::span<const uint8_t> payload;  // within the parsed span: DataOffset, DataLength
  bool response_requested() const { return header.flags & kFlagResponseRequested; }
};

// Writes the header for a message carrying `payload_length` bytes of upper
// layer data (or none) into out[0..n), n = 20 without data and 24 with it
// (Padding zeroed); DataOffset/DataLength are filled here, the caller's
// values for them are ignored. Returns n, or 0 when `out` is too small.
size_t build_data_header(const DataHeader& h, uint32_t payload_length, std::span<uint8_t> out);

// Parses a received message (its exact byte count). `max_fragmented_size` is
// our Connection.MaxFragmentedSize (what we told the peer we reassemble).
// Flags bits other than RESPONSE_REQUESTED are ignored, as 2.2.3 reserves
// them without a receive-side check.
Error parse_data_message(std::span<const uint8_t> msg, uint32_t max_fragmented_size,
                         DataMessage* out);

// Upper-layer bytes one Send can carry when the peer receives at most
// `max_send_size` bytes per message (0 when it cannot carry any).
uint32_t segment_capacity(uint32_t max_send_size);

}  // namespace smbd
