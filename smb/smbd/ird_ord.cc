// SPDX-License-Identifier: Apache-2.0
#include "ird_ord.h"

#include "le.h"

namespace smbd {

std::array<uint8_t, kIrdOrdSize> build_ird_ord(uint32_t ird, uint32_t ord) {
  std::array<uint8_t, kIrdOrdSize> b{};
  le::store32be(&b[0], ird);
  le::store32be(&b[4], ord);
  return b;
}

Error parse_ird_ord(std::span<const uint8_t> pd, IrdOrd* out) {
  if (pd.size() < kIrdOrdSize) return Error::kTooShort;
  const uint32_t be_ird = le::load32be(pd.data()), be_ord = le::load32be(pd.data() + 4);
  const uint32_t le_ird = le::load32(pd.data()), le_ord = le::load32(pd.data() + 4);
  auto plausible = [](uint32_t a, uint32_t b) { return a <= 0xFFFF && b <= 0xFFFF; };
  IrdOrd r;
  if (!plausible(be_ird, be_ord) && plausible(le_ird, le_ord)) {
    r = {le_ird, le_ord, true};
  } else {
    r = {be_ird, be_ord, false};
  }
  *out = r;
  if (r.ird == 0 || r.ord == 0) return Error::kZeroIrdOrd;
  return Error::kNone;
}

}  // namespace smbd
