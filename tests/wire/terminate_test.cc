// SPDX-License-Identifier: Apache-2.0
// Terminate build/parse, siw's nibble-swapped layout, the violation table.
#include "rdmap/terminate.h"

#include <gtest/gtest.h>

#include "ddp/ddp_header.h"
#include "ddp/stream_parser.h"
#include "rdmap/terminate_fpdu.h"
#include "test_util.h"

namespace softndk::wire {
namespace {
using test::hex;
using test::to_hex;

TEST(Terminate, RfcVectorsFromIwarpMd) {
  uint8_t out[128];
  TerminateMessage t;
  t.code = {TermLayer::kRdmap, term::kRdmapRemoteProtection, term::kRdmapInvalidStag};
  size_t n = encode_terminate_fpdu(t, 1, true, out);
  ASSERT_EQ(n, 28u);
  EXPECT_EQ(to_hex({out, n}),
            "0016414700000000000000020000000100000000"
            "01000000"
            "41082ac0");
  t.code = {TermLayer::kLlp, term::kLlpMpa, term::kLlpCrcError};
  n = encode_terminate_fpdu(t, 1, true, out);
  EXPECT_EQ(to_hex({out + 20, 8}),
            "20020000"
            "7fe42585");
  n = encode_terminate_fpdu(t, 1, true, out, TerminateLayout::kSiwSwapped);
  EXPECT_EQ(to_hex({out + 20, 8}),
            "02020000"
            "75d367ed");
}

TEST(Terminate, ParseRfcAndSiwLlpCrc) {
  auto r = parse_terminate_payload(hex("20020000"));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.layout, TerminateLayout::kRfc);
  EXPECT_EQ(r.msg.code, (TerminateCode{TermLayer::kLlp, 0, 2}));
  // siw: both readings are structurally valid; RFC reading (RDMAP / remote
  // operation / code 2) is not a defined pair, siw's (LLP/MPA/CRC) is.
  r = parse_terminate_payload(hex("02020000"));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.layout, TerminateLayout::kSiwSwapped);
  EXPECT_TRUE(r.ambiguous);
  EXPECT_EQ(r.msg.code, (TerminateCode{TermLayer::kLlp, 0, 2}));
}

// The three Terminates observed from Linux 6.1 siw on x86 (IWARP.md 9.6).
TEST(Terminate, ParseObservedSiwForms) {
  // Read Request with invalid source STag: RDMAP/remote protection/invalid
  // STag, M D R, DDP header of the Read Request + its 28-byte body.
  const auto rrhdr = hex("4141 00000000 00000001 00000001 00000000");
  const auto rrbody = hex("48afd600 00005616f77d3f40 00000040 12345600 0000564f76029570");
  auto p = test::concat(hex("10 00 07 00 0000"), rrhdr);
  p = test::concat(p, rrbody);
  auto r = parse_terminate_payload(p);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.layout, TerminateLayout::kSiwSwapped);
  EXPECT_EQ(r.msg.code, (TerminateCode{TermLayer::kRdmap, 1, 0}));
  EXPECT_TRUE(r.msg.m && r.msg.d && r.msg.r);
  EXPECT_EQ(to_hex(r.msg.ddp_header), to_hex(rrhdr));
  EXPECT_EQ(to_hex(r.msg.rdma_header), to_hex(rrbody));

  // Over-long Send: DDP/untagged/0x02 with M D and the Send header.
  const auto sh = hex("4143 00000000 00000000 00000001 00000000");
  r = parse_terminate_payload(test::concat(hex("21 02 03 00 0010"), sh));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.layout, TerminateLayout::kSiwSwapped);
  EXPECT_EQ(r.msg.code, (TerminateCode{TermLayer::kDdp, 2, 2}));
  EXPECT_EQ(r.msg.ddp_segment_length, 0x10);
  EXPECT_FALSE(r.msg.r);

  // Unknown opcode: RDMAP/remote operation/0x06 with M D (tagged header).
  const auto th = hex("c14c 00000100 0000000000000000");
  r = parse_terminate_payload(test::concat(hex("20 06 03 00 0000"), th));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.layout, TerminateLayout::kSiwSwapped);
  EXPECT_EQ(r.msg.code, (TerminateCode{TermLayer::kRdmap, 2, 6}));
  EXPECT_EQ(r.msg.ddp_header.size(), 14u);
}

TEST(Terminate, RfcWithHeadersRoundTripAndSizes) {
  const auto th = hex("c140 00000000 0000000000001000");
  TerminateMessage t = terminate_for(WireError::kZeroStagWrite, th, 64);
  EXPECT_TRUE(t.m && t.d && !t.r);
  EXPECT_EQ(t.code, (TerminateCode{TermLayer::kDdp, 1, 0}));
  uint8_t out[128];
  ASSERT_EQ(encode_terminate_fpdu(t, 1, false, out), 44u);  // ULPDU 38
  EXPECT_EQ(out[1], 38);
  FpduView v;
  ASSERT_EQ(decode_fpdu({out, 44}, v).error, WireError::kNone);
  auto r = parse_terminate_payload(v.body);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.layout, TerminateLayout::kRfc);
  EXPECT_FALSE(r.ambiguous);
  EXPECT_EQ(r.msg.code, t.code);
  EXPECT_EQ(r.msg.ddp_segment_length, 64);
  EXPECT_EQ(to_hex(r.msg.ddp_header), to_hex(th));

  const auto uh = hex("4141 00000000 00000001 00000001 00000000");
  const auto body = hex("00000000 0000000000000000 00000040 00000000 0000000000000000");
  t = terminate_for(WireError::kZeroStagReadSource, uh, 28, body);
  EXPECT_TRUE(t.m && t.d && t.r);
  EXPECT_EQ(encode_terminate_fpdu(t, 1, true, out), 76u);  // ULPDU 70
  t = terminate_for(WireError::kInvalidQn, uh, 0);
  EXPECT_EQ(encode_terminate_fpdu(t, 1, true, out), 48u);  // ULPDU 42
  t = terminate_for(WireError::kCrcMismatch, uh, 0);
  EXPECT_FALSE(t.d || t.m || t.r);  // CRC errors attach nothing
  EXPECT_EQ(encode_terminate_fpdu(t, 1, true, out), 28u);
  // Inconsistent messages are refused.
  t.d = true;
  t.ddp_header = std::span(uh).first(10);
  EXPECT_EQ(encode_terminate_fpdu(t, 1, true, out), 0u);
  t.d = false;
  t.r = true;
  EXPECT_EQ(encode_terminate_fpdu(t, 1, true, out), 0u);
}

TEST(Terminate, HeuristicTieBreaks) {
  // Symmetric byte 0 and no header bits: both readings agree -> RFC, not ambiguous.
  auto r = parse_terminate_payload(hex("11000000"));
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.ambiguous);
  EXPECT_EQ(r.layout, TerminateLayout::kRfc);
  // 0x10 with no headers: RFC = DDP local catastrophic (defined), siw = RDMAP
  // remote protection invalid STag (defined too) -> siw would have attached
  // headers, so RFC wins.
  r = parse_terminate_payload(hex("10000000"));
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.ambiguous);
  EXPECT_EQ(r.layout, TerminateLayout::kRfc);
  EXPECT_EQ(r.msg.code.layer, TermLayer::kDdp);
  // Layer nibble > 2 in both readings: invalid.
  EXPECT_FALSE(parse_terminate_payload(hex("33000000")).ok);
  // Reserved bits set in both readings.
  EXPECT_FALSE(parse_terminate_payload(hex("00001800")).ok);
  EXPECT_FALSE(parse_terminate_payload(hex("00000001")).ok);
  // D claimed but header missing -> both invalid.
  EXPECT_FALSE(parse_terminate_payload(hex("01004200 0010 c1")).ok);
  EXPECT_FALSE(parse_terminate_payload(hex("010000")).ok);
  // R claimed (RFC) without 28 bytes: RFC invalid, siw reading has reserved bits -> fail.
  EXPECT_FALSE(parse_terminate_payload(hex("01002000")).ok);
}

TEST(Terminate, TableCoversEveryViolation) {
  for (size_t i = 1; i < static_cast<size_t>(WireError::kCount); ++i) {
    const auto e = static_cast<WireError>(i);
    const ViolationInfo& v = violation_info(e);
    EXPECT_EQ(v.error, e);
    EXPECT_TRUE(terminate_code_known(v.term)) << v.name;
    EXPECT_STRNE(terminate_code_name(v.term), "unknown") << v.name;
  }
  EXPECT_EQ(terminate_code_for(WireError::kCrcMismatch), (TerminateCode{TermLayer::kLlp, 0, 2}));
  EXPECT_EQ(terminate_code_for(WireError::kDdpVersionTagged),
            (TerminateCode{TermLayer::kDdp, 1, 4}));
  EXPECT_EQ(terminate_code_for(WireError::kDdpVersionUntagged),
            (TerminateCode{TermLayer::kDdp, 2, 6}));
  EXPECT_EQ(terminate_code_for(WireError::kRdmapVersion), (TerminateCode{TermLayer::kRdmap, 2, 5}));
  EXPECT_EQ(terminate_code_for(WireError::kUnsupportedOpcode),
            (TerminateCode{TermLayer::kRdmap, 2, 6}));
  EXPECT_EQ(terminate_code_for(WireError::kInvalidQn), (TerminateCode{TermLayer::kDdp, 2, 1}));
  EXPECT_STREQ(terminate_code_name({TermLayer::kLlp, 0, 7}), "no matching RTR option");
  EXPECT_FALSE(terminate_code_known({TermLayer::kLlp, 1, 2}));
  EXPECT_FALSE(terminate_code_known({TermLayer::kDdp, 3, 0}));
}

}  // namespace
}  // namespace softndk::wire
