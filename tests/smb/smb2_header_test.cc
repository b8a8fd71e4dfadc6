// SPDX-License-Identifier: Apache-2.0
// SMB2 header and NEGOTIATE: golden vectors are frames 11 (cifs' NEGOTIATE
// request, dialect 3.0.2) and 13 (ksmbd's response) of
// captures/smbdirect-rdma-io-same-guest-lo.pcap, the SMB2 bytes after the
// 24-byte SMB Direct data header.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "smb2/negotiate.h"

namespace {

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    v.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

const std::string kCifsNegotiate =
    "fe534d42400000000000000000000a0000000000000000000000000000000000440400000000000000000000000000"
    "00000000"
    "00000000000000000000000000240001000100000077000000964d9ccf517942368c7a8d58f2b35646000000000000"
    "00000203";
const std::string kKsmbdNegotiate =
    "fe534d4240000000000000000000010001000000000000000000000000000000440400000000000000000000000000"
    "00000000"
    "0000000000000000000000000041000100020300000000000000000000000000000000000044000000000010000000"
    "4000000040"
    "009ef7f56c077fdd01000000000000000080004a0000000000604806062b0601050502a03e303ca00e300c060a2b06"
    "010401823702"
    "020aa32a3028a0261b246e6f745f646566696e65645f696e5f5246433431373840706c656173655f69676e6f7265";

TEST(Smb2Header, CifsNegotiateRequestRoundTrip) {
  auto m = unhex(kCifsNegotiate);
  smb::smb2::Header h;
  ASSERT_EQ(smb::smb2::parse_header(m, &h), smb::smb2::ParseError::kNone);
  EXPECT_EQ(h.command, smb::smb2::kNegotiate);
  EXPECT_EQ(h.credits, 10);
  EXPECT_EQ(h.message_id, 0u);
  EXPECT_EQ(h.process_id, 0x444u);
  smb::smb2::NegotiateRequest r;
  r.security_mode = 1;
  r.capabilities = 0x77;
  auto guid = unhex("964d9ccf517942368c7a8d58f2b35646");
  std::copy(guid.begin(), guid.end(), r.client_guid.begin());
  r.dialects = {0x0302};
  std::vector<uint8_t> out;
  smb::smb2::append_header(h, &out);
  smb::smb2::append_negotiate_request(r, &out);
  EXPECT_EQ(out, m);
}

TEST(Smb2Header, KsmbdNegotiateResponse) {
  auto m = unhex(kKsmbdNegotiate);
  smb::smb2::Header h;
  ASSERT_EQ(smb::smb2::parse_header(m, &h), smb::smb2::ParseError::kNone);
  EXPECT_TRUE(h.flags & smb::smb2::kFlagResponse);
  EXPECT_EQ(h.status, 0u);
  smb::smb2::NegotiateResponse r;
  ASSERT_EQ(smb::smb2::parse_negotiate_response(m, &r), smb::smb2::ParseError::kNone);
  EXPECT_EQ(r.dialect, 0x0302);
  EXPECT_EQ(r.security_mode, 1);
  EXPECT_EQ(r.max_transact_size, 0x100000u);
  EXPECT_EQ(r.max_read_size, 0x400000u);
  EXPECT_EQ(r.max_write_size, 0x400000u);
  ASSERT_EQ(r.security_buffer.size(), 74u);
  EXPECT_EQ(r.security_buffer[0], 0x60);  // SPNEGO (GSS-API InitialContextToken)
}

TEST(Smb2Header, Rejects) {
  auto m = unhex(kKsmbdNegotiate);
  smb::smb2::Header h;
  smb::smb2::NegotiateResponse r;
  EXPECT_EQ(smb::smb2::parse_header(std::span(m).first(63), &h), smb::smb2::ParseError::kTooShort);
  auto bad = m;
  bad[0] = 0xFF;
  EXPECT_EQ(smb::smb2::parse_header(bad, &h), smb::smb2::ParseError::kBadProtocolId);
  auto cut = std::vector<uint8_t>(m.begin(), m.end() - 1);  // security buffer now overruns
  EXPECT_EQ(smb::smb2::parse_negotiate_response(cut, &r), smb::smb2::ParseError::kOutOfBounds);
  auto ss = m;
  ss[64] = 64;
  EXPECT_EQ(smb::smb2::parse_negotiate_response(ss, &r), smb::smb2::ParseError::kBadStructureSize);
}

}  // namespace
