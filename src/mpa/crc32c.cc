// SPDX-License-Identifier: Apache-2.0
// mpa/crc32c.cc — ISA-L backend of the CRC32c wrapper.
#include "mpa/crc32c.h"

#include <isa-l/crc.h>

namespace softndk::wire {

uint32_t crc32c_update(uint32_t state, const uint8_t* data, size_t len) {
  if (len == 0) return state;
  // crc32_iscsi takes an int length; FPDUs are < 64 KiB but callers may hash
  // larger benchmark buffers, so split defensively.
  while (len > 0x40000000u) {
    state = crc32_iscsi(const_cast<uint8_t*>(data), 0x40000000, state);
    data += 0x40000000u;
    len -= 0x40000000u;
  }
  return crc32_iscsi(const_cast<uint8_t*>(data), static_cast<int>(len), state);
}

}  // namespace softndk::wire
