// SPDX-License-Identifier: Apache-2.0
// pattern.cc - see pattern.h. The word is a splitmix64 step of a per-block
// base, so neighbouring blocks and words differ in every byte (a misplaced
// or shifted block never passes by accident).
#include "pattern.h"

#include <cstdio>
#include <cstring>

namespace nvmf::host {

namespace {

inline uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t block_base(uint64_t seed, uint64_t lba) { return mix(seed ^ mix(lba)); }

}  // namespace

void fill_pattern(uint8_t* buf, uint64_t lba, uint32_t nblocks, uint32_t block_size,
                  uint64_t seed) {
  const size_t words = block_size / 8;
  for (uint32_t b = 0; b < nblocks; ++b) {
    uint64_t base = block_base(seed, lba + b);
    uint8_t* p = buf + size_t(b) * block_size;
    for (size_t w = 0; w < words; ++w) {
      uint64_t v = mix(base + w);
      std::memcpy(p + w * 8, &v, 8);
    }
  }
}

bool check_pattern(const uint8_t* buf, uint64_t lba, uint32_t nblocks, uint32_t block_size,
                   uint64_t seed, std::string* why) {
  const size_t words = block_size / 8;
  for (uint32_t b = 0; b < nblocks; ++b) {
    uint64_t base = block_base(seed, lba + b);
    const uint8_t* p = buf + size_t(b) * block_size;
    for (size_t w = 0; w < words; ++w) {
      uint64_t want = mix(base + w), got;
      std::memcpy(&got, p + w * 8, 8);
      if (got != want) {
        if (why) {
          char t[160];
          std::snprintf(t, sizeof t, "LBA %llu byte %zu: read 0x%016llx, expected 0x%016llx",
                        static_cast<unsigned long long>(lba + b), w * 8,
                        static_cast<unsigned long long>(got),
                        static_cast<unsigned long long>(want));
          *why = t;
        }
        return false;
      }
    }
  }
  return true;
}

}  // namespace nvmf::host
