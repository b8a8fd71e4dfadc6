// SPDX-License-Identifier: Apache-2.0
// rdmap/rdmap_codec.cc — opcode table and fixed RDMAP bodies.
#include "rdmap/rdmap_codec.h"

#include "rdmap/terminate.h"
#include "util/bytes.h"

namespace softndk::wire {

std::optional<AtomicRequestBody> decode_atomic_request(std::span<const uint8_t> b) {
  if (b.size() < kAtomicRequestBodySize) return std::nullopt;
  AtomicRequestBody r;
  r.opcode_word = load_be32(&b[0]);
  r.request_id = load_be32(&b[4]);
  r.remote_stag = load_be32(&b[8]);
  r.remote_to = load_be64(&b[12]);
  r.add_or_swap = load_be64(&b[20]);
  r.add_or_swap_mask = load_be64(&b[28]);
  r.compare = load_be64(&b[36]);
  r.compare_mask = load_be64(&b[44]);
  return r;
}
void encode_atomic_request(const AtomicRequestBody& r, uint8_t out[kAtomicRequestBodySize]) {
  store_be32(out + 0, r.opcode_word);
  store_be32(out + 4, r.request_id);
  store_be32(out + 8, r.remote_stag);
  store_be64(out + 12, r.remote_to);
  store_be64(out + 20, r.add_or_swap);
  store_be64(out + 28, r.add_or_swap_mask);
  store_be64(out + 36, r.compare);
  store_be64(out + 44, r.compare_mask);
}
std::optional<AtomicResponseBody> decode_atomic_response(std::span<const uint8_t> b) {
  if (b.size() < kAtomicResponseBodySize) return std::nullopt;
  return AtomicResponseBody{load_be32(&b[0]), load_be64(&b[4])};
}
void encode_atomic_response(const AtomicResponseBody& r, uint8_t out[kAtomicResponseBodySize]) {
  store_be32(out, r.request_id);
  store_be64(out + 4, r.original_value);
}

}  // namespace softndk::wire
