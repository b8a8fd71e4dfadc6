// SPDX-License-Identifier: Apache-2.0
// packet_test.cc - the impaired link's packet rewriting against a packet the
// kernel built: a TCP segment carrying "softndk impair golden vector!",
// read from a TUN device (no offloads, so its checksum 0x4986 is the
// kernel's own).
#include "impair/packet.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace softndk::test::impair {
namespace {

std::vector<uint8_t> from_hex(const std::string& h) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

const std::vector<uint8_t> kGolden = from_hex(
    "45000051b0f94000400675110a4d00010a4d0002e8141389288fc5710335bffb8018003f4986000001010"
    "80adaac91d4db19607c736f66746e646b20696d7061697220676f6c64656e20766563746f7221");
constexpr uint16_t kGoldenChecksum = 0x4986;
constexpr size_t kChecksumAt = 20 + 16;

uint16_t field(const std::vector<uint8_t>& p) {
  return static_cast<uint16_t>(p[kChecksumAt] << 8 | p[kChecksumAt + 1]);
}

TEST(ImpairPacket, ParsesTheKernelsSegment) {
  auto v = parse_ipv4_tcp(kGolden);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->ip_header_len, 20u);
  EXPECT_EQ(v->tcp_offset, 20u);
  EXPECT_EQ(v->tcp_header_len, 32u);  // with the timestamp option
  EXPECT_EQ(v->payload_offset, 52u);
  ASSERT_EQ(v->payload_len, 29u);
  EXPECT_EQ(std::string(kGolden.begin() + 52, kGolden.end()), "softndk impair golden vector!");
}

TEST(ImpairPacket, ChecksumMatchesTheKernels) {
  auto v = parse_ipv4_tcp(kGolden);
  ASSERT_TRUE(v);
  EXPECT_EQ(tcp_checksum(kGolden, *v), kGoldenChecksum);
  EXPECT_TRUE(tcp_checksum_ok(kGolden));
  // RFC 1071: a header summed with its own checksum folds to zero.
  EXPECT_EQ(fold_checksum(ones_sum(std::span(kGolden).first(20))), 0);
  // An odd length counts the last byte as the high half of a word.
  const uint8_t one[] = {0x01};
  EXPECT_EQ(ones_sum(one), 0x0100u);
}

TEST(ImpairPacket, CorruptionPassesTcpWithTheIncrementalChecksum) {
  for (size_t index : {0u, 3u, 28u}) {  // even and odd positions, the last byte
    auto p = kGolden;
    ASSERT_TRUE(corrupt_tcp_payload(p, index, 0x01));
    EXPECT_EQ(p[52 + index], kGolden[52 + index] ^ 0x01);
    EXPECT_TRUE(tcp_checksum_ok(p));
    // RFC 1624 eqn. 3, computed independently: HC' = ~(~HC + ~m + m'),
    // m/m' the 16-bit word holding the byte before and after.
    const size_t word = (20 + 32 + index) & ~size_t{1};
    const size_t tcp_len = kGolden.size() - 20;
    uint32_t m = 0, m2 = 0;
    auto word_at = [&](const std::vector<uint8_t>& b) {
      uint32_t hi = b[word], lo = word + 1 < 20 + tcp_len ? b[word + 1] : 0;
      return hi << 8 | lo;
    };
    m = word_at(kGolden);
    m2 = word_at(p);
    uint32_t sum = (~kGoldenChecksum & 0xffff) + (~m & 0xffff) + m2;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    EXPECT_EQ(field(p), static_cast<uint16_t>(~sum & 0xffff)) << "index " << index;
    // Without the fix-up the same flip fails TCP's check.
    auto raw = kGolden;
    raw[52 + index] ^= 0x01;
    EXPECT_FALSE(tcp_checksum_ok(raw));
  }
}

TEST(ImpairPacket, FixRestoresAZeroedChecksum) {
  auto p = kGolden;
  p[kChecksumAt] = p[kChecksumAt + 1] = 0;
  EXPECT_FALSE(tcp_checksum_ok(p));
  ASSERT_TRUE(fix_tcp_checksum(p));
  EXPECT_EQ(p, kGolden);
}

TEST(ImpairPacket, LeavesWhatItCannotRewriteAlone) {
  // An IPv6 router solicitation (read from the same TUN).
  auto v6 = from_hex(
      "6000000000083afffe800000000000006769f137fd587c45ff02000000000000000000000000000285"
      "00aaf700000000");
  EXPECT_FALSE(parse_ipv4_tcp(v6));
  EXPECT_FALSE(corrupt_tcp_payload(v6, 0, 1));
  auto p = kGolden;
  EXPECT_FALSE(corrupt_tcp_payload(p, 29, 1));  // past the payload
  EXPECT_FALSE(corrupt_tcp_payload(p, 0, 0));   // no change asked
  EXPECT_EQ(p, kGolden);
  // Truncated below the IPv4 total length.
  EXPECT_FALSE(parse_ipv4_tcp(std::span(kGolden).first(70)));
  EXPECT_FALSE(parse_ipv4_tcp(std::span(kGolden).first(10)));
  // A fragment (MF set), UDP, a TCP data offset past the end.
  auto frag = kGolden;
  frag[6] |= 0x20;
  EXPECT_FALSE(parse_ipv4_tcp(frag));
  auto udp = kGolden;
  udp[9] = 17;
  EXPECT_FALSE(parse_ipv4_tcp(udp));
  auto bad_off = kGolden;
  bad_off[20 + 12] = 0xf0;  // 60-byte header in a 61-byte segment: fits
  EXPECT_TRUE(parse_ipv4_tcp(bad_off));
  bad_off[2] = 0;
  bad_off[3] = 60;  // total length 60: the header no longer fits
  EXPECT_FALSE(parse_ipv4_tcp(bad_off));
}

TEST(ImpairPacket, FindRunAimsInsideData) {
  const std::vector<uint8_t> b = {1, 0xa5, 0xa5, 2, 0xa5, 0xa5, 0xa5, 0xa5, 3};
  EXPECT_EQ(find_run(b, 0xa5, 4), 6u);  // the run at 4..7, its middle
  EXPECT_EQ(find_run(b, 0xa5, 2), 2u);
  EXPECT_FALSE(find_run(b, 0xa5, 5));
  EXPECT_FALSE(find_run(b, 0xa5, 0));
  EXPECT_FALSE(find_run({}, 0xa5, 1));
}

}  // namespace
}  // namespace softndk::test::impair
