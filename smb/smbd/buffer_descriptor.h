// SPDX-License-Identifier: Apache-2.0
// buffer_descriptor.h - MS-SMBD 2.2.3.1 SMB_DIRECT_BUFFER_DESCRIPTOR_V1:
// (Offset 8, Token 4, Length 4) little-endian, 16 bytes, in the channel info
// of SMB2 READ/WRITE requests (SMB2_CHANNEL_RDMA_V1[_INVALIDATE]).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "error.h"

namespace smbd {

inline constexpr size_t kBufferDescriptorSize = 16;

struct BufferDescriptor {
  uint64_t offset = 0;  // the peer's remote address (NDK: the MR's virtual address + offset)
  uint32_t token = 0;   // the peer's remote token (NDK: the MR's remote token / STag)
  uint32_t length = 0;
  bool operator==(const BufferDescriptor&) const = default;
};

std::array<uint8_t, kBufferDescriptorSize> build_buffer_descriptor(const BufferDescriptor& d);
// Appends the list's encoding to `out`.
void append_buffer_descriptors(std::span<const BufferDescriptor> list, std::vector<uint8_t>* out);

// Parses a channel-info blob holding one or more descriptors. Empty or not a
// multiple of 16 bytes: kDescriptorListLength. `max_count` bounds the list
// (a server takes no more segments than it can post work requests for);
// more is kDescriptorListLength as well. `*total` (optional) is the sum of
// the lengths, in 64 bits.
Error parse_buffer_descriptors(std::span<const uint8_t> blob, size_t max_count,
                               std::vector<BufferDescriptor>* out, uint64_t* total = nullptr);

}  // namespace smbd
