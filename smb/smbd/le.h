// SPDX-License-Identifier: Apache-2.0
// le.h - little-endian (and the one big-endian) field access over byte spans
// for the SMB Direct wire formats. Callers check the span's size first; these
// never read or write outside [p, p + N).
#pragma once

#include <cstdint>

namespace smbd::le {

inline uint16_t load16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t load32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t load64(const uint8_t* p) {
  return uint64_t(load32(p)) | uint64_t(load32(p + 4)) << 32;
}
inline void store16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
inline void store32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline void store64(uint8_t* p, uint64_t v) {
  store32(p, uint32_t(v));
  store32(p + 4, uint32_t(v >> 32));
}
// MS-SMBD 6.1's IRD/ORD words are the only big-endian fields.
inline uint32_t load32be(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}
inline void store32be(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (24 - 8 * i));
}

}  // namespace smbd::le
