// SPDX-License-Identifier: Apache-2.0
// mpa/crc32c.h — CRC32c (Castagnoli) as MPA uses it for the FPDU CRC field.
// Owns: the thin wrapper over ISA-L's crc32_iscsi (init 0xFFFFFFFF, final
// xor 0xFFFFFFFF, see IWARP.md 2.5) with an incremental interface so the
// receive path can checksum bytes as they arrive from TCP.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace softndk::wire {

// Running state of a CRC32c computation. Start with kCrc32cInit, feed pieces
// through crc32c_update, and call crc32c_final once for the standard value.
inline constexpr uint32_t kCrc32cInit = 0xFFFFFFFFu;

uint32_t crc32c_update(uint32_t state, const uint8_t* data, size_t len);
inline uint32_t crc32c_update(uint32_t state, std::span<const uint8_t> data) {
  return crc32c_update(state, data.data(), data.size());
}
constexpr uint32_t crc32c_final(uint32_t state) { return state ^ 0xFFFFFFFFu; }

// One-shot standard CRC32c: crc32c("123456789") == 0xE3069283.
inline uint32_t crc32c(std::span<const uint8_t> data) {
  return crc32c_final(crc32c_update(kCrc32cInit, data));
}

// Incremental helper object.
class Crc32c {
 public:
  void update(std::span<const uint8_t> data) { state_ = crc32c_update(state_, data); }
  void update(const uint8_t* p, size_t n) { state_ = crc32c_update(state_, p, n); }
  uint32_t state() const { return state_; }
  void set_state(uint32_t s) { state_ = s; }
  uint32_t value() const { return crc32c_final(state_); }
  void reset() { state_ = kCrc32cInit; }

 private:
  uint32_t state_ = kCrc32cInit;
};

}  // namespace softndk::wire
