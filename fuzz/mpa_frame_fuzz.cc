// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: MPA Request/Reply decoding, IRD/ORD blocks, re-encoding.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "mpa/mpa_frame.h"

using namespace softndk::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  MpaFrame f;
  const auto r = decode_mpa_frame(in, f);
  if (r.error == MpaError::kNeedMore && r.needed <= size) std::abort();
  if (r.error != MpaError::kOk) return 0;
  if (r.consumed > size || r.consumed != f.wire_size()) std::abort();
  uint8_t out[kMpaMaxFrameSize];
  const auto e = encode_mpa_frame(f, out);
  if (e.error != MpaError::kOk || e.size != r.consumed || std::memcmp(out, data, e.size) != 0)
    std::abort();
  MpaError err;
  if (auto v = enhanced_view(f, &err)) {
    MpaFrameSpec s;
    s.type = f.type;
    s.flags = f.flags;
    s.rev = f.rev;
    s.ird_ord = v->block;
    s.ulp_private_data = v->ulp_private_data;
    const auto e2 = encode_mpa_frame(s, out, kMpaMaxPrivateDataRfc);
    if (e2.error != MpaError::kOk || std::memcmp(out, data, e2.size) != 0) std::abort();
  }
  if (auto l = decode_legacy_ird_ord(f.private_data)) {
    uint8_t b[kLegacyIrdOrdBlockSize];
    encode_legacy_ird_ord(*l, b);
    if (std::memcmp(b, f.private_data.data(), sizeof b) != 0) std::abort();
  }
  return 0;
}
