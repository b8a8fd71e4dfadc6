// SPDX-License-Identifier: Apache-2.0
// DDP headers, RDMAP opcodes and bodies, RTR FPDUs, FPDU sizing, markers.
#include <gtest/gtest.h>

#include "ddp/ddp_header.h"
#include "ddp/fpdu_builder.h"
#include "ddp/sequence.h"
#include "mpa/fpdu.h"
#include "mpa/markers.h"
#include "rdmap/rdmap_codec.h"
#include "rdmap/rtr.h"
#include "test_util.h"

namespace softndk::wire {
namespace {
using test::hex;
using test::to_hex;

TEST(DdpHeader, TaggedRoundTrip) {
  auto h = DdpHeader::tagged_hdr(Opcode::kReadResponse, true, 0x12345600, 0x1000);
  EXPECT_EQ(h.ddp_ctrl, 0xC1);
  EXPECT_EQ(h.rdmap_ctrl, 0x42);
  uint8_t b[18];
  ASSERT_EQ(encode_ddp_header(h, b), 14u);
  EXPECT_EQ(to_hex({b, 14}),
            "c14212345600"
            "0000000000001000");
  DdpHeader d;
  ASSERT_EQ(decode_ddp_header({b, 14}, d), 14u);
  EXPECT_TRUE(d.tagged());
  EXPECT_TRUE(d.last());
  EXPECT_EQ(d.stag, 0x12345600u);
  EXPECT_EQ(d.to, 0x1000u);
  EXPECT_EQ(d.opcode(), Opcode::kReadResponse);
  EXPECT_EQ(decode_ddp_header({b, 13}, d), 0u);
}

TEST(DdpHeader, UntaggedRoundTripAndReservedBits) {
  auto h = DdpHeader::untagged_hdr(Opcode::kSendInvalidate, false, 0, 7, 1424, 0xABCDEF01);
  EXPECT_EQ(h.ddp_ctrl, 0x01);
  uint8_t b[18];
  ASSERT_EQ(encode_ddp_header(h, b), 18u);
  EXPECT_EQ(to_hex({b, 18}),
            "0144abcdef01"
            "00000000"
            "00000007"
            "00000590");
  b[0] |= 0x3C;  // reserved DDP bits: ignored, preserved
  b[1] |= 0x30;  // reserved RDMAP bits
  DdpHeader d;
  ASSERT_EQ(decode_ddp_header({b, 18}, d), 18u);
  EXPECT_EQ(d.invalidate_stag(), 0xABCDEF01u);
  EXPECT_EQ(d.msn, 7u);
  EXPECT_EQ(d.mo, 1424u);
  EXPECT_FALSE(d.last());
  EXPECT_EQ(d.opcode(), Opcode::kSendInvalidate);
  EXPECT_EQ(validate_ddp_header(d, 18 + 10), WireError::kNone);
  uint8_t c[18];
  encode_ddp_header(d, c);
  EXPECT_EQ(to_hex({c, 18}), to_hex({b, 18}));
  EXPECT_EQ(decode_ddp_header({b, 17}, d), 0u);
}

TEST(Rdmap, OpcodeTable) {
  const Opcode tagged[] = {Opcode::kWrite, Opcode::kReadResponse};
  for (auto op : tagged) EXPECT_TRUE(opcode_info(static_cast<uint8_t>(op))->tagged);
  EXPECT_EQ(opcode_info(1)->qn, 1);
  EXPECT_EQ(opcode_info(3)->qn, 0);
  EXPECT_EQ(opcode_info(7)->qn, 2);
  EXPECT_EQ(opcode_info(10)->qn, 3);
  for (uint8_t op = 0; op < 8; ++op) EXPECT_FALSE(opcode_info(op)->rfc7306) << int(op);
  for (uint8_t op = 8; op < 12; ++op) EXPECT_TRUE(opcode_info(op)->rfc7306) << int(op);
  for (uint8_t op = 12; op < 16; ++op) EXPECT_EQ(opcode_info(op), nullptr);
  EXPECT_STREQ(opcode_name(3), "Send");
  EXPECT_STREQ(opcode_name(0xF), "Reserved");
  EXPECT_EQ(rdmap_ctrl(Opcode::kTerminate), 0x47);
}

TEST(Rdmap, ReadRequestBody) {
  ReadRequestBody r{0x48afd600, 0x5616f77d3f40, 64, 0x97e7ed00, 0x564f76029570};
  uint8_t b[28];
  encode_read_request(r, b);
  EXPECT_EQ(to_hex(b),
            "48afd600"
            "00005616f77d3f40"
            "00000040"
            "97e7ed00"
            "0000564f76029570");
  EXPECT_EQ(*decode_read_request(b), r);
  EXPECT_FALSE(decode_read_request({b, 27}));
}

TEST(Rdmap, AtomicBodies) {
  AtomicRequestBody a;
  a.opcode_word = kAtomicCompareSwap;
  a.request_id = 9;
  a.remote_stag = 0x100;
  a.remote_to = 0x2000;
  a.add_or_swap = 1;
  a.add_or_swap_mask = ~0ull;
  a.compare = 3;
  a.compare_mask = ~0ull;
  uint8_t b[52];
  encode_atomic_request(a, b);
  EXPECT_EQ(*decode_atomic_request(b), a);
  EXPECT_EQ(decode_atomic_request(b)->atomic_op(), kAtomicCompareSwap);
  EXPECT_FALSE(decode_atomic_request({b, 51}));
  AtomicResponseBody r{9, 0x1122334455667788};
  uint8_t c[12];
  encode_atomic_response(r, c);
  EXPECT_EQ(to_hex(c),
            "00000009"
            "1122334455667788");
  EXPECT_EQ(*decode_atomic_response(c), r);
  EXPECT_FALSE(decode_atomic_response({c, 11}));
}

TEST(Rtr, WriteReadAndZeroReadResponseBytes) {
  uint8_t out[64];
  ASSERT_EQ(encode_rtr_write(out, true), kRtrWriteSize);
  EXPECT_EQ(to_hex({out, 20}), "000ec140000000010000000000000000ebd34c5f");
  ASSERT_EQ(encode_rtr_write(out, false), kRtrWriteSize);
  EXPECT_EQ(to_hex({out, 20}), "000ec14000000001000000000000000000000000");
  ASSERT_EQ(encode_rtr_read(out, 1, true), kRtrReadSize);
  EXPECT_EQ(to_hex({out, 52}),
            to_hex(hex("00 2e 41 41 00 00 00 00 00 00 00 01 00 00 00 01"
                       "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
                       "00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 00 ba 10 e3 c9")));
  ASSERT_EQ(encode_zero_read_response(out, 0, 0, true), kZeroReadResponseSize);
  EXPECT_EQ(to_hex({out, 20}),
            "000ec142000000000000000000000000"
            "6975d6ca");
  EXPECT_EQ(encode_rtr_write({out, 19}, true), 0u);
}

TEST(Fpdu, PadAndSizes) {
  EXPECT_EQ(mpa_pad(14), 0u);
  EXPECT_EQ(mpa_pad(18 + 5), 3u);
  EXPECT_EQ(mpa_pad(18 + 2), 2u);
  EXPECT_EQ(mpa_pad(18 + 3), 1u);
  EXPECT_EQ(fpdu_wire_size(14), 20u);
  EXPECT_EQ(fpdu_wire_size(46), 52u);
  EXPECT_EQ(fpdu_wire_size(20), 28u);
  for (size_t l = 0; l < 100; ++l) EXPECT_EQ(fpdu_wire_size(l) % 4, 0u);
}

TEST(Fpdu, SizingFromMss) {
  FpduSizing s{1448, FpduSizingMode::kSiw};
  EXPECT_EQ(s.fpdu_size(), 1448u);
  EXPECT_EQ(s.max_payload(true), 1428u);  // as captured from siw
  EXPECT_EQ(s.max_payload(false), 1424u);
  s.mss = 1460;
  EXPECT_EQ(s.fpdu_size(), 1456u);
  s.mode = FpduSizingMode::kOnePerSegment;
  EXPECT_EQ(s.fpdu_size(), 1460u);
  s.mss = 1462;
  EXPECT_EQ(s.fpdu_size(), 1460u);  // MULPDU = EMSS - (6 + EMSS mod 4) -> FPDU 1460
  EXPECT_EQ(s.max_payload(true), 1440u);
  s.max_fpdu = 1000;
  EXPECT_EQ(s.fpdu_size(), 1000u);
  s = FpduSizing{65483, FpduSizingMode::kSiw};  // loopback MSS
  EXPECT_EQ(s.fpdu_size(), 65480u);
  s.mss = 1u << 20;
  EXPECT_LE(s.max_payload(true) + 14, 65535u);
  EXPECT_LE(s.max_payload(false) + 18, 65535u);
  s.mss = 3;
  EXPECT_EQ(s.fpdu_size(), 24u);
  EXPECT_GT(s.max_payload(true), 0u);
}

TEST(Markers, StripEvery512) {
  // Build a stream with markers at positions 0, 512, 1024 of 1100 bytes.
  std::vector<uint8_t> stream(1100);
  std::vector<uint8_t> expect;
  for (size_t i = 0; i < stream.size(); ++i) {
    if (i % 512 < 4) {
      stream[i] = 0xEE;
    } else {
      stream[i] = static_cast<uint8_t>(i);
      expect.push_back(static_cast<uint8_t>(i));
    }
  }
  std::vector<uint8_t> out(2000);
  auto r = strip_markers(stream, 0, out);
  EXPECT_EQ(r.consumed, stream.size());
  EXPECT_EQ(r.markers, 3u);
  ASSERT_EQ(r.written, expect.size());
  EXPECT_TRUE(std::equal(expect.begin(), expect.end(), out.begin()));
  // Byte-at-a-time gives the same result.
  std::vector<uint8_t> out2;
  for (size_t i = 0; i < stream.size(); ++i) {
    uint8_t o;
    auto q = strip_markers({&stream[i], 1}, i, {&o, 1});
    EXPECT_EQ(q.consumed, 1u);
    if (q.written) out2.push_back(o);
  }
  EXPECT_EQ(out2, expect);
  // Output full: stops without consuming everything.
  auto s = strip_markers(stream, 0, std::span(out).first(10));
  EXPECT_EQ(s.written, 10u);
  EXPECT_EQ(s.consumed, 14u);
  const uint8_t mk[4] = {0, 0, 0x01, 0x20};
  EXPECT_EQ(marker_fpdu_ptr(mk), 0x120);
}

TEST(Sequence, UntaggedMsnMo) {
  UntaggedSequence q;
  EXPECT_EQ(q.on_segment(1, 0, 1424, false), WireError::kNone);
  EXPECT_EQ(q.on_segment(1, 1424, 100, true), WireError::kNone);
  EXPECT_EQ(q.expected_msn(), 2u);
  EXPECT_EQ(q.on_segment(3, 0, 1, true), WireError::kMsnOutOfRange);
  EXPECT_EQ(q.on_segment(2, 5, 1, true), WireError::kMoMismatch);
  MsnCounter c;
  EXPECT_EQ(c.next(), 1u);
  EXPECT_EQ(c.next(), 2u);
}

}  // namespace
}  // namespace softndk::wire
