// SPDX-License-Identifier: Apache-2.0
// util/bytes.h — big-/little-endian loads and stores over raw byte pointers.
// Owns: the only place the wire codec converts between host and wire order.
// iWARP headers are big-endian (RFC 5040/5041/5044); the MPA CRC field is the
// single little-endian field (IWARP.md 2.5), hence the le32 helpers.
#pragma once

#include <cstdint>
#include <cstring>

namespace softndk::wire {

inline uint16_t load_be16(const uint8_t* p) {
  return static_cast<uint16_t>((uint16_t{p[0]} << 8) | p[1]);
}
inline uint32_t load_be32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
inline uint32_t load_le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void store_be32(uint8_t* p, uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
inline void store_be64(uint8_t* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
inline void store_le32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "le32 helpers assume a little-endian host");

}  // namespace softndk::wire
