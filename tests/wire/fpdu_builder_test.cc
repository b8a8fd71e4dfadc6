// SPDX-License-Identifier: Apache-2.0
// Sender side: FPDU pieces, scatter-gather CRC, segmentation by MSS.
#include "ddp/fpdu_builder.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ddp/stream_parser.h"
#include "mpa/crc32c.h"
#include "test_util.h"

namespace softndk::wire {
namespace {
using test::hex;
using test::to_hex;

std::vector<uint8_t> flatten(const FpduPieces& p) {
  std::vector<uint8_t> v(p.header.begin(), p.header.end());
  v.insert(v.end(), p.payload.begin(), p.payload.end());
  v.insert(v.end(), p.trailer.begin(), p.trailer.end());
  return v;
}

TEST(FpduBuilder, PiecesAndIovec) {
  const uint8_t abc[3] = {'a', 'b', 'c'};
  FpduScratch s;
  FpduPieces p;
  ASSERT_TRUE(
      build_fpdu(DdpHeader::untagged_hdr(Opcode::kSendInvalidate, true, 0, 1, 0, 0xABCDEF01), {},
                 abc, true, s, p));
  EXPECT_EQ(p.payload.data(), abc);  // not copied
  EXPECT_EQ(p.header.size(), 20u);
  EXPECT_EQ(p.trailer.size(), 5u);  // pad 1 + CRC
  EXPECT_EQ(to_hex(flatten(p)), to_hex(hex("00 15 41 44 ab cd ef 01 00 00 00 00 00 00 00 01 00 00 "
                                           "00 00 61 62 63 00 e0 be 8a 14")));
  struct iovec iov[3];
  EXPECT_EQ(p.to_iovec(iov), 3);
  EXPECT_EQ(iov[1].iov_base, abc);
  FpduPieces z;
  ASSERT_TRUE(build_fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 1, 0), {}, {}, false, s, z));
  EXPECT_EQ(z.to_iovec(iov), 2);
  EXPECT_EQ(z.size(), 20u);
}

TEST(FpduBuilder, ScatterGatherCrcMatchesContiguous) {
  std::vector<uint8_t> a(1000, 0x11), b(428, 0x22);
  std::vector<uint8_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  const auto h = DdpHeader::tagged_hdr(Opcode::kWrite, false, 0x4400, 0x1000);
  FpduScratch s;
  FpduWriter w;
  auto hdr = w.begin(h, {}, all.size(), true, s);
  ASSERT_EQ(hdr.size(), 16u);
  w.add_payload(a);
  w.add_payload(b);
  auto tr = w.finish();
  // Sized once and filled by copy: growing a vector that starts at the
  // 16-byte header made GCC 12 -O3 warn (-Warray-bounds) about the
  // reallocation's copy of it, a false positive.
  std::vector<uint8_t> sg(hdr.size() + all.size() + tr.size());
  auto at = std::copy(hdr.begin(), hdr.end(), sg.begin());
  at = std::copy(all.begin(), all.end(), at);
  std::copy(tr.begin(), tr.end(), at);
  std::vector<uint8_t> c(2000);
  const size_t n = encode_fpdu(h, {}, all, true, c);
  c.resize(n);
  EXPECT_EQ(sg, c);
  EXPECT_EQ(n, 1448u);
}

// finish() without a successful begin() has no scratch: it returns nothing
// instead of writing through a null pointer.
TEST(FpduBuilder, FinishWithoutBeginIsEmpty) {
  FpduWriter fresh;
  EXPECT_TRUE(fresh.finish().empty());
  FpduScratch s;
  FpduWriter failed;
  std::vector<uint8_t> body(60);  // more than the scratch holds
  EXPECT_TRUE(
      failed.begin(DdpHeader::untagged_hdr(Opcode::kTerminate, true, 2, 1, 0), body, 0, false, s)
          .empty());
  EXPECT_TRUE(failed.finish().empty());
}

TEST(FpduBuilder, TooLong) {
  std::vector<uint8_t> big(65536 - 14);
  FpduScratch s;
  FpduPieces p;
  EXPECT_FALSE(build_fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 1, 0), {}, big, false, s, p));
  EXPECT_TRUE(build_fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 1, 0), {},
                         std::span(big).first(65535 - 14), false, s, p));
  EXPECT_EQ(p.trailer.size(), 4u + 3);  // 2 + 65535 -> pad 3
  uint8_t small[10];
  EXPECT_EQ(encode_fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 1, 0), {}, {}, false, small),
            0u);
  std::vector<uint8_t> body(60);
  EXPECT_FALSE(build_fpdu(DdpHeader::untagged_hdr(Opcode::kTerminate, true, 2, 1, 0), body, {},
                          false, s, p));
}

// siw's 8192-byte Write at MSS 1448: 5 x 1448 (1428 data) + 1 x 1072 (1052).
TEST(Segmenter, SiwWrite8192) {
  std::vector<uint8_t> msg(8192);
  for (size_t i = 0; i < msg.size(); ++i) msg[i] = static_cast<uint8_t>(i);
  FpduSizing sz{1448, FpduSizingMode::kSiw};
  MessageSegmenter seg(DdpHeader::tagged_hdr(Opcode::kWrite, false, 0x345d4600, 0x558d25eaa000),
                       msg.size(), sz.max_payload(true));
  std::vector<size_t> sizes;
  std::vector<uint8_t> stream;
  while (!seg.done()) {
    FpduScratch s;
    FpduPieces p;
    ASSERT_TRUE(seg.next_fpdu(msg, true, s, p));
    sizes.push_back(p.size());
    auto f = flatten(p);
    stream.insert(stream.end(), f.begin(), f.end());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{1448, 1448, 1448, 1448, 1448, 1072}));
  // Parse it back: TOs advance, L only on the last, payload intact.
  StreamParser parser({true});
  std::span<const uint8_t> in(stream);
  std::vector<uint8_t> got;
  std::vector<uint64_t> tos;
  int lasts = 0;
  for (;;) {
    Event ev = parser.next(in);
    if (ev.kind == EventKind::kNeedMore) break;
    ASSERT_NE(ev.kind, EventKind::kError);
    if (ev.kind == EventKind::kPlacement) {
      tos.push_back(ev.segment->hdr.to);
      lasts += ev.segment->last();
    }
    if (ev.kind == EventKind::kPayload) got.insert(got.end(), ev.data.begin(), ev.data.end());
  }
  EXPECT_EQ(got, msg);
  EXPECT_EQ(lasts, 1);
  ASSERT_EQ(tos.size(), 6u);
  EXPECT_EQ(tos[1] - tos[0], 1428u);
  EXPECT_EQ(tos[5], 0x558d25eaa000u + 5 * 1428);
}

TEST(Segmenter, UntaggedMoAndZeroLength) {
  MessageSegmenter seg(DdpHeader::untagged_hdr(Opcode::kSend, false, 0, 4, 0), 3000, 1424);
  auto a = seg.next();
  auto b = seg.next();
  auto c = seg.next();
  EXPECT_TRUE(seg.done());
  EXPECT_EQ(a.hdr.mo, 0u);
  EXPECT_EQ(b.hdr.mo, 1424u);
  EXPECT_EQ(c.hdr.mo, 2848u);
  EXPECT_EQ(c.length, 152u);
  EXPECT_FALSE(a.hdr.last() || b.hdr.last());
  EXPECT_TRUE(c.hdr.last());
  EXPECT_EQ(c.hdr.msn, 4u);
  MessageSegmenter z(DdpHeader::untagged_hdr(Opcode::kSend, false, 0, 1, 0), 0, 1424);
  EXPECT_FALSE(z.done());
  auto s = z.next();
  EXPECT_TRUE(z.done());
  EXPECT_EQ(s.length, 0u);
  EXPECT_TRUE(s.hdr.last());
  FpduScratch sc;
  FpduPieces p;
  EXPECT_FALSE(z.next_fpdu({}, false, sc, p));  // already done
}

TEST(Segmenter, OnePerSegmentMode) {
  FpduSizing sz{1460, FpduSizingMode::kOnePerSegment};
  MessageSegmenter seg(DdpHeader::tagged_hdr(Opcode::kReadResponse, false, 9, 0), 4096,
                       sz.max_payload(true));
  std::vector<uint8_t> msg(4096);
  while (!seg.done()) {
    FpduScratch s;
    FpduPieces p;
    ASSERT_TRUE(seg.next_fpdu(msg, false, s, p));
    EXPECT_LE(p.size(), 1460u);
  }
}

}  // namespace
}  // namespace softndk::wire
