// SPDX-License-Identifier: Apache-2.0
// perf_wire.cc - fixed-layout little-endian encoders for ndkperf's messages.
#include "ndkperf/perf_wire.h"

#include <algorithm>
#include <cstring>

namespace softndk::ndkperf {

namespace {

constexpr uint32_t kAcceptMagic = 0x41504b4eu;  // "NKPA"
constexpr uint32_t kRefuseMagic = 0x52504b4eu;  // "NKPR"
constexpr size_t kHelloSize = 56;
constexpr size_t kAcceptSize = 28;
constexpr size_t kMaxReason = 200;

void put(std::vector<uint8_t>& b, size_t off, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get(const uint8_t* b, size_t off, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(b[off + i]) << (8 * i);
  return v;
}

}  // namespace

std::vector<uint8_t> encode_hello(const Hello& h) {
  std::vector<uint8_t> b(kHelloSize, 0);
  put(b, 0, kHelloMagic, 4);
  b[4] = kWireVersion;
  b[5] = h.test;
  b[6] = h.flags;
  put(b, 8, h.qps, 2);
  put(b, 10, h.qp_index, 2);
  put(b, 12, h.tx_depth, 2);
  put(b, 14, h.rx_depth, 4);
  put(b, 18, h.size, 8);
  put(b, 26, h.max_size, 8);
  put(b, 34, h.buf_va, 8);
  put(b, 42, h.buf_token, 4);
  put(b, 46, h.buf_len, 8);
  return b;
}

std::optional<Hello> decode_hello(const std::vector<uint8_t>& b) {
  if (b.size() < kHelloSize || get(b.data(), 0, 4) != kHelloMagic || b[4] != kWireVersion)
    return std::nullopt;
  Hello h;
  h.test = b[5];
  h.flags = b[6];
  h.qps = static_cast<uint16_t>(get(b.data(), 8, 2));
  h.qp_index = static_cast<uint16_t>(get(b.data(), 10, 2));
  h.tx_depth = static_cast<uint16_t>(get(b.data(), 12, 2));
  h.rx_depth = static_cast<uint32_t>(get(b.data(), 14, 4));
  h.size = get(b.data(), 18, 8);
  h.max_size = get(b.data(), 26, 8);
  h.buf_va = get(b.data(), 34, 8);
  h.buf_token = static_cast<uint32_t>(get(b.data(), 42, 4));
  h.buf_len = get(b.data(), 46, 8);
  return h;
}

std::vector<uint8_t> encode_accept(const AcceptInfo& a) {
  std::vector<uint8_t> b(kAcceptSize, 0);
  put(b, 0, kAcceptMagic, 4);
  b[4] = kWireVersion;
  put(b, 8, a.buf_va, 8);
  put(b, 16, a.buf_token, 4);
  put(b, 20, a.buf_len, 8);
  return b;
}

std::optional<AcceptInfo> decode_accept(const std::vector<uint8_t>& b) {
  if (b.size() < kAcceptSize || get(b.data(), 0, 4) != kAcceptMagic || b[4] != kWireVersion)
    return std::nullopt;
  AcceptInfo a;
  a.buf_va = get(b.data(), 8, 8);
  a.buf_token = static_cast<uint32_t>(get(b.data(), 16, 4));
  a.buf_len = get(b.data(), 20, 8);
  return a;
}

std::vector<uint8_t> encode_refusal(const std::string& reason) {
  std::string r = reason.substr(0, kMaxReason);
  std::vector<uint8_t> b(8 + r.size(), 0);
  put(b, 0, kRefuseMagic, 4);
  b[4] = kWireVersion;
  put(b, 6, r.size(), 2);
  std::memcpy(b.data() + 8, r.data(), r.size());
  return b;
}

std::optional<std::string> decode_refusal(const std::vector<uint8_t>& b) {
  if (b.size() < 8 || get(b.data(), 0, 4) != kRefuseMagic) return std::nullopt;
  size_t n = std::min<size_t>(get(b.data(), 6, 2), b.size() - 8);
  return std::string(reinterpret_cast<const char*>(b.data() + 8), n);
}

void encode_ctrl(const CtrlMsg& m, uint8_t* out) {
  std::vector<uint8_t> b(kCtrlSize, 0);
  put(b, 0, kCtrlMagic, 4);
  b[4] = static_cast<uint8_t>(m.type);
  put(b, 8, m.seq, 4);
  put(b, 16, m.size, 8);
  put(b, 24, m.iters, 8);
  put(b, 32, m.bytes, 8);
  put(b, 40, m.credits, 8);
  put(b, 48, m.cpu_ns, 8);
  put(b, 56, m.elapsed_ns, 8);
  std::memcpy(out, b.data(), kCtrlSize);
}

std::optional<CtrlMsg> decode_ctrl(const uint8_t* in, size_t len) {
  if (len < kCtrlSize || get(in, 0, 4) != kCtrlMagic) return std::nullopt;
  uint8_t t = in[4];
  if (t < 1 || t > 5) return std::nullopt;
  CtrlMsg m;
  m.type = static_cast<CtrlType>(t);
  m.seq = static_cast<uint32_t>(get(in, 8, 4));
  m.size = get(in, 16, 8);
  m.iters = get(in, 24, 8);
  m.bytes = get(in, 32, 8);
  m.credits = get(in, 40, 8);
  m.cpu_ns = get(in, 48, 8);
  m.elapsed_ns = get(in, 56, 8);
  return m;
}

}  // namespace softndk::ndkperf
