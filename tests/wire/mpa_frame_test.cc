// SPDX-License-Identifier: Apache-2.0
// MPA Request/Reply/Reject frames and the IRD/ORD blocks (IWARP.md 2.1-2.3, 7.1).
#include "mpa/mpa_frame.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace softndk::wire {
namespace {
using test::hex;
using test::to_hex;

TEST(MpaFrame, SiwDefaultRequestBytes) {
  const auto want = hex("4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65 10 02 00 04 00 10 00 10");
  MpaFrameSpec s;
  s.type = MpaFrameType::kRequest;
  s.rev = kMpaRev2;
  s.ird_ord = IrdOrdBlock{16, 16};
  uint8_t out[64];
  auto r = encode_mpa_frame(s, out);
  ASSERT_EQ(r.error, MpaError::kOk);
  EXPECT_EQ(to_hex({out, r.size}), to_hex(want));

  MpaFrame f;
  auto d = decode_mpa_frame(want, f);
  ASSERT_EQ(d.error, MpaError::kOk);
  EXPECT_EQ(d.consumed, 24u);
  EXPECT_EQ(f.type, MpaFrameType::kRequest);
  EXPECT_TRUE(f.enhanced());
  EXPECT_FALSE(f.crc() || f.markers() || f.reject());
  auto v = enhanced_view(f);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->block, (IrdOrdBlock{16, 16}));
  EXPECT_TRUE(v->ulp_private_data.empty());
}

TEST(MpaFrame, P2pRequestAndSiwReply) {
  const auto want = hex("4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65 10 02 00 04 80 10 c0 10");
  IrdOrdBlock b{16, 16, true, false, true, true};
  MpaFrameSpec s;
  s.ird_ord = b;
  uint8_t out[64];
  auto r = encode_mpa_frame(s, out);
  ASSERT_EQ(r.error, MpaError::kOk);
  EXPECT_EQ(to_hex({out, r.size}), to_hex(want));
  EXPECT_EQ(b.ird_word(), 0x8010);
  EXPECT_EQ(b.ord_word(), 0xc010);

  // siw's reply picks Write: IRD 0x8000|ird, ORD 0x8000|ord.
  const auto rep = hex("4d 50 41 20 49 44 20 52 65 70 20 46 72 61 6d 65 10 02 00 04 80 10 80 10");
  MpaFrame f;
  ASSERT_EQ(decode_mpa_frame(rep, f, MpaFrameType::kReply).error, MpaError::kOk);
  auto v = enhanced_view(f);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->block.peer_to_peer);
  EXPECT_TRUE(v->block.rtr_write);
  EXPECT_FALSE(v->block.rtr_read);
  EXPECT_FALSE(v->block.rtr_send);
  // A reply is not a request.
  EXPECT_EQ(decode_mpa_frame(rep, f, MpaFrameType::kRequest).error, MpaError::kBadKey);
}

TEST(MpaFrame, RtrSendBitAndValues) {
  auto b = IrdOrdBlock::from_words(0xC005, 0x3FFF);
  EXPECT_TRUE(b.peer_to_peer);
  EXPECT_TRUE(b.rtr_send);
  EXPECT_EQ(b.ird, 5);
  EXPECT_EQ(b.ord, 0x3FFF);
  EXPECT_FALSE(b.rtr_write || b.rtr_read);
  EXPECT_EQ(b.ird_word(), 0xC005);
  MpaFrameSpec s;
  s.ird_ord = IrdOrdBlock{0x4000, 1};
  uint8_t out[64];
  EXPECT_EQ(encode_mpa_frame(s, out).error, MpaError::kBadArgument);
}

TEST(MpaFrame, RejectReplyWithPrivateData) {
  const uint8_t ulp[] = {1, 2, 3};
  MpaFrameSpec s;
  s.type = MpaFrameType::kReply;
  s.flags = kMpaFlagReject;
  s.ird_ord = IrdOrdBlock{};
  s.ulp_private_data = ulp;
  uint8_t out[64];
  auto r = encode_mpa_frame(s, out);
  ASSERT_EQ(r.error, MpaError::kOk);
  EXPECT_EQ(to_hex({out + 16, r.size - 16}),
            "30020007"
            "00000000"
            "010203");
  MpaFrame f;
  ASSERT_EQ(decode_mpa_frame({out, r.size}, f).error, MpaError::kOk);
  EXPECT_TRUE(f.reject());
  EXPECT_EQ(to_hex(enhanced_view(f)->ulp_private_data), "010203");
}

TEST(MpaFrame, ReservedBitsAndRev0Preserved) {
  auto b = hex("4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65 4f 00 00 02 ab cd");
  MpaFrame f;
  ASSERT_EQ(decode_mpa_frame(b, f).error, MpaError::kOk);
  EXPECT_EQ(f.rev, 0);
  EXPECT_EQ(f.reserved_bits(), 0x0F);
  EXPECT_TRUE(f.crc());
  EXPECT_FALSE(f.has_ird_ord_block());  // enhanced bit only counts with rev 2
  EXPECT_FALSE(enhanced_view(f));
  uint8_t out[64];
  auto r = encode_mpa_frame(f, out);
  ASSERT_EQ(r.error, MpaError::kOk);
  EXPECT_EQ(to_hex({out, r.size}), to_hex(b));
}

TEST(MpaFrame, Rev1WithLegacyBlock) {
  MpaFrameSpec s;
  s.rev = kMpaRev1;
  s.flags = kMpaFlagCrc;
  s.legacy_ird_ord = LegacyIrdOrdBlock{16, 8};
  uint8_t out[64];
  auto r = encode_mpa_frame(s, out);
  ASSERT_EQ(r.error, MpaError::kOk);
  EXPECT_EQ(to_hex({out + 16, r.size - 16}),
            "40010008"
            "00000010"
            "00000008");
  MpaFrame f;
  ASSERT_EQ(decode_mpa_frame({out, r.size}, f).error, MpaError::kOk);
  EXPECT_EQ(f.rev, 1);
  EXPECT_FALSE(f.has_ird_ord_block());
  EXPECT_EQ(*decode_legacy_ird_ord(f.private_data), (LegacyIrdOrdBlock{16, 8}));
  EXPECT_FALSE(decode_legacy_ird_ord(f.private_data.first(7)));
}

TEST(MpaFrame, PrivateDataLimits) {
  std::vector<uint8_t> pd(253, 0xAA);
  MpaFrameSpec s;
  s.ird_ord = IrdOrdBlock{1, 1};
  s.ulp_private_data = pd;
  std::vector<uint8_t> out(1024);
  // 4 + 253 > 256: siw's limit.
  EXPECT_EQ(encode_mpa_frame(s, out).error, MpaError::kPrivateDataTooLong);
  s.ulp_private_data = std::span(pd).first(252);
  auto r = encode_mpa_frame(s, out);
  ASSERT_EQ(r.error, MpaError::kOk);
  EXPECT_EQ(r.size, 20u + 256u);
  // Caller may raise the limit up to the RFC's 512 but not beyond.
  std::vector<uint8_t> big(600, 1);
  s.ulp_private_data = std::span(big).first(508);
  EXPECT_EQ(encode_mpa_frame(s, out, 512).error, MpaError::kOk);
  s.ulp_private_data = std::span(big).first(509);
  EXPECT_EQ(encode_mpa_frame(s, out, 1000).error, MpaError::kPrivateDataTooLong);
  EXPECT_EQ(encode_mpa_frame(s, std::span(out).first(30), 1000).error,
            MpaError::kPrivateDataTooLong);
  s.ulp_private_data = {};
  EXPECT_EQ(encode_mpa_frame(s, std::span(out).first(23)).error, MpaError::kBufferTooSmall);

  // Decode accepts 512 (RFC) but not 513; a caller may impose siw's 256.
  std::vector<uint8_t> fr(20 + 513, 0);
  MpaFrameSpec h;
  ASSERT_EQ(encode_mpa_frame(h, fr).error, MpaError::kOk);
  fr[18] = 0x02;
  fr[19] = 0x00;  // 512
  MpaFrame f;
  EXPECT_EQ(decode_mpa_frame(fr, f).error, MpaError::kOk);
  EXPECT_EQ(decode_mpa_frame(fr, f, std::nullopt, 256).error, MpaError::kPrivateDataTooLong);
  fr[19] = 0x01;  // 513
  EXPECT_EQ(decode_mpa_frame(fr, f).error, MpaError::kPrivateDataTooLong);
}

TEST(MpaFrame, TruncatedAndGarbage) {
  auto b = hex("4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65 10 02 00 04 00 10 00 10");
  MpaFrame f;
  for (size_t n = 0; n < b.size(); ++n) {
    auto r = decode_mpa_frame(std::span(b).first(n), f);
    EXPECT_EQ(r.error, MpaError::kNeedMore) << n;
    EXPECT_EQ(r.needed, n < 20 ? 20u : 24u);
  }
  // Garbage is rejected as soon as the first byte disagrees with the key.
  auto g = hex("5a5b58595e5f5c5d52535051565754554a4b4849");
  EXPECT_EQ(decode_mpa_frame(std::span(g).first(1), f).error, MpaError::kBadKey);
  EXPECT_EQ(decode_mpa_frame(g, f).error, MpaError::kBadKey);
  b[17] = 3;
  EXPECT_EQ(decode_mpa_frame(b, f).error, MpaError::kBadRevision);
  // Enhanced but PD < 4.
  auto e = hex("4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65 10 02 00 02 00 10");
  ASSERT_EQ(decode_mpa_frame(e, f).error, MpaError::kOk);
  MpaError err;
  EXPECT_FALSE(enhanced_view(f, &err));
  EXPECT_EQ(err, MpaError::kEnhancedBlockMissing);
  EXPECT_STREQ(to_string(MpaError::kBadKey), "bad MPA key");
}

TEST(MpaFrame, BytesBehindFrameLeftAlone) {
  auto b =
      hex("4d 50 41 20 49 44 20 52 65 70 20 46 72 61 6d 65 10 02 00 04 00 01 00 01 00 0e c1 40");
  MpaFrame f;
  auto r = decode_mpa_frame(b, f);
  ASSERT_EQ(r.error, MpaError::kOk);
  EXPECT_EQ(r.consumed, 24u);
  EXPECT_EQ(f.type, MpaFrameType::kReply);
}

}  // namespace
}  // namespace softndk::wire
