// SPDX-License-Identifier: Apache-2.0
// rping_msg.cc - rping's advertisement codec and payload pattern.
#include "ndkping/rping_msg.h"

#include <cstdio>

namespace softndk::ndkping {

void encode_rping_info(const RpingInfo& info, uint8_t out[kRpingInfoSize]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(info.buf >> (56 - 8 * i));
  for (int i = 0; i < 4; ++i) out[8 + i] = static_cast<uint8_t>(info.rkey >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) out[12 + i] = static_cast<uint8_t>(info.size >> (24 - 8 * i));
}

std::optional<RpingInfo> decode_rping_info(const uint8_t* in, size_t len) {
  if (len != kRpingInfoSize) return std::nullopt;
  RpingInfo r;
  for (int i = 0; i < 8; ++i) r.buf = r.buf << 8 | in[i];
  for (int i = 0; i < 4; ++i) r.rkey = r.rkey << 8 | in[8 + i];
  for (int i = 0; i < 4; ++i) r.size = r.size << 8 | in[12 + i];
  return r;
}

char format_ping(uint8_t* buf, size_t size, uint64_t ping, char start) {
  if (size == 0) return start;
  // rping: cc = snprintf(start_buf, size, RPING_MSG_FMT, ping) with an int
  // counter; the pattern starts at index cc.
  char head[40];
  int cc = std::snprintf(head, sizeof head, "rdma-ping-%d: ", static_cast<int>(ping));
  size_t i = 0;
  for (; i < static_cast<size_t>(cc) && i < size; ++i) buf[i] = static_cast<uint8_t>(head[i]);
  char c = start;
  for (; i < size; ++i) {
    buf[i] = static_cast<uint8_t>(c);
    if (++c > kLastChar) c = kFirstChar;
  }
  buf[size - 1] = 0;
  return static_cast<char>(start + 1 > kLastChar ? kFirstChar : start + 1);
}

}  // namespace softndk::ndkping
