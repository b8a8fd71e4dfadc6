// SPDX-License-Identifier: Apache-2.0
// mpa/fpdu.cc — FPDU sizing from the MSS.
#include "mpa/fpdu.h"

namespace softndk::wire {

uint32_t FpduSizing::fpdu_size() const {
  uint32_t s = mss;
  if (max_fpdu != 0 && max_fpdu < s) s = max_fpdu;
  // Largest legal FPDU: ULPDU 65535 -> 2 + 65535 + 3 + 4 = 65544.
  if (s > 65544) s = 65544;
  const uint32_t align = mode == FpduSizingMode::kSiw ? 8 : 4;
  s &= ~(align - 1);
  // An untagged header plus a few payload bytes must fit; tiny MSS values
  // (misconfiguration) are clamped rather than producing empty segments.
  if (s < 24) s = 24;
  return s;
}

uint32_t FpduSizing::max_payload(bool tagged) const {
  // 2 (length) + header (14/18) + payload + 4 (CRC); fpdu_size is 4-aligned
  // and headers are 2 mod 4, so full FPDUs need no pad (siw relies on this).
  const uint32_t overhead = 2 + (tagged ? 14 : 18) + 4;
  uint32_t p = fpdu_size() - overhead;
  // Keep ULPDU_Length within 16 bits.
  const uint32_t max_ulpdu_payload = 65535 - (tagged ? 14 : 18);
  if (p > max_ulpdu_payload) p = max_ulpdu_payload & ~3u;
  return p;
}

}  // namespace softndk::wire
