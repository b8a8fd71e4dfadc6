// SPDX-License-Identifier: Apache-2.0
// impair/packet.cc - IPv4/TCP parsing and checksum fix-up (RFC 791, 793,
// 1071).
#include "impair/packet.h"

namespace softndk::test::impair {

namespace {

uint16_t be16(std::span<const uint8_t> p, size_t at) {
  return static_cast<uint16_t>(p[at] << 8 | p[at + 1]);
}

constexpr size_t kIpv4MinHeader = 20;
constexpr size_t kTcpMinHeader = 20;
constexpr uint8_t kProtoTcp = 6;
constexpr size_t kTcpChecksumAt = 16;  // offset of the checksum in the TCP header

}  // namespace

std::optional<TcpView> parse_ipv4_tcp(std::span<const uint8_t> p) {
  if (p.size() < kIpv4MinHeader || (p[0] >> 4) != 4) return std::nullopt;
  TcpView v;
  v.ip_header_len = static_cast<size_t>(p[0] & 0x0f) * 4;
  const size_t total = be16(p, 2);
  if (v.ip_header_len < kIpv4MinHeader || total > p.size() || total < v.ip_header_len)
    return std::nullopt;
  if (p[9] != kProtoTcp) return std::nullopt;
  // More-fragments set or a fragment offset: not a whole segment.
  if ((be16(p, 6) & 0x3fff) != 0) return std::nullopt;
  v.tcp_offset = v.ip_header_len;
  if (total < v.tcp_offset + kTcpMinHeader) return std::nullopt;
  v.tcp_header_len = static_cast<size_t>(p[v.tcp_offset + 12] >> 4) * 4;
  if (v.tcp_header_len < kTcpMinHeader || v.tcp_offset + v.tcp_header_len > total)
    return std::nullopt;
  v.payload_offset = v.tcp_offset + v.tcp_header_len;
  v.payload_len = total - v.payload_offset;
  return v;
}

uint32_t ones_sum(std::span<const uint8_t> b, uint32_t sum) {
  size_t i = 0;
  for (; i + 1 < b.size(); i += 2) sum += static_cast<uint32_t>(b[i] << 8 | b[i + 1]);
  if (i < b.size()) sum += static_cast<uint32_t>(b[i] << 8);
  return sum;
}

uint16_t fold_checksum(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}

uint16_t tcp_checksum(std::span<const uint8_t> p, const TcpView& v) {
  const size_t tcp_len = v.tcp_header_len + v.payload_len;
  // Pseudo-header: source and destination address, zero, protocol, length.
  uint32_t sum = ones_sum(p.subspan(12, 8));
  sum += kProtoTcp;
  sum += static_cast<uint32_t>(tcp_len);
  auto tcp = p.subspan(v.tcp_offset, tcp_len);
  sum = ones_sum(tcp.first(kTcpChecksumAt), sum);
  // The checksum field itself counts as zero.
  sum = ones_sum(tcp.subspan(kTcpChecksumAt + 2), sum);
  return fold_checksum(sum);
}

bool tcp_checksum_ok(std::span<const uint8_t> p) {
  auto v = parse_ipv4_tcp(p);
  return v && be16(p, v->tcp_offset + kTcpChecksumAt) == tcp_checksum(p, *v);
}

bool fix_tcp_checksum(std::span<uint8_t> p) {
  auto v = parse_ipv4_tcp(p);
  if (!v) return false;
  const uint16_t c = tcp_checksum(p, *v);
  p[v->tcp_offset + kTcpChecksumAt] = static_cast<uint8_t>(c >> 8);
  p[v->tcp_offset + kTcpChecksumAt + 1] = static_cast<uint8_t>(c);
  return true;
}

bool corrupt_tcp_payload(std::span<uint8_t> p, size_t index, uint8_t mask) {
  auto v = parse_ipv4_tcp(p);
  if (!v || mask == 0 || index >= v->payload_len) return false;
  p[v->payload_offset + index] ^= mask;
  return fix_tcp_checksum(p);
}

std::optional<size_t> find_run(std::span<const uint8_t> payload, uint8_t value, size_t run) {
  if (run == 0) return std::nullopt;
  size_t start = 0, len = 0;
  for (size_t i = 0; i < payload.size(); ++i) {
    if (payload[i] != value) {
      len = 0;
      continue;
    }
    if (len++ == 0) start = i;
    if (len == run) return start + run / 2;
  }
  return std::nullopt;
}

}  // namespace softndk::test::impair
