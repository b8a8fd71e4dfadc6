// SPDX-License-Identifier: Apache-2.0
// ddp/fpdu_builder.cc — the out-of-line rest of the builder: iovecs and
// contiguous encoding (the per-FPDU writer is inline in the header).
#include "ddp/fpdu_builder.h"

#include <cstring>

namespace softndk::wire {

int FpduPieces::to_iovec(struct iovec out[3]) const {
  int n = 0;
  out[n++] = {const_cast<uint8_t*>(header.data()), header.size()};
  if (!payload.empty()) out[n++] = {const_cast<uint8_t*>(payload.data()), payload.size()};
  out[n++] = {const_cast<uint8_t*>(trailer.data()), trailer.size()};
  return n;
}

size_t encode_fpdu(const DdpHeader& h, std::span<const uint8_t> body,
                   std::span<const uint8_t> payload, bool crc, std::span<uint8_t> out,
                   std::span<const uint8_t> pad_bytes) {
  FpduScratch s;
  FpduPieces p;
  FpduWriter w;
  p.header = w.begin(h, body, payload.size(), crc, s);
  if (p.header.empty()) return 0;
  w.add_payload(payload);
  p.payload = payload;
  p.trailer = w.finish(pad_bytes);
  if (out.size() < p.size()) return 0;
  uint8_t* o = out.data();
  std::memcpy(o, p.header.data(), p.header.size());
  o += p.header.size();
  if (!p.payload.empty()) std::memcpy(o, p.payload.data(), p.payload.size());
  o += p.payload.size();
  std::memcpy(o, p.trailer.data(), p.trailer.size());
  return p.size();
}

}  // namespace softndk::wire
