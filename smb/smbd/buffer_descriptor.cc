// SPDX-License-Identifier: Apache-2.0
#include "buffer_descriptor.h"

#include "le.h"

namespace smbd {

std::array<uint8_t, kBufferDescriptorSize> build_buffer_descriptor(const BufferDescriptor& d) {
  std::array<uint8_t, kBufferDescriptorSize> b{};
  le::store64(&b[0], d.offset);
  le::store32(&b[8], d.token);
  le::store32(&b[12], d.length);
  return b;
}

void append_buffer_descriptors(std::span<const BufferDescriptor> list, std::vector<uint8_t>* out) {
  for (const auto& d : list) {
    auto b = build_buffer_descriptor(d);
    out->insert(out->end(), b.begin(), b.end());
  }
}

Error parse_buffer_descriptors(std::span<const uint8_t> blob, size_t max_count,
                               std::vector<BufferDescriptor>* out, uint64_t* total) {
  out->clear();
  if (total) *total = 0;
  if (blob.empty() || blob.size() % kBufferDescriptorSize != 0) return Error::kDescriptorListLength;
  const size_t n = blob.size() / kBufferDescriptorSize;
  if (n > max_count) return Error::kDescriptorListLength;
  out->reserve(n);
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = blob.data() + i * kBufferDescriptorSize;
    BufferDescriptor d{le::load64(p), le::load32(p + 8), le::load32(p + 12)};
    sum += d.length;
    out->push_back(d);
  }
  if (total) *total = sum;
  return Error::kNone;
}

}  // namespace smbd
