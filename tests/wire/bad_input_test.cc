// SPDX-License-Identifier: Apache-2.0
// Bad input: every violation the parser detects gives its own error and
// Terminate code; truncated input never reads out of bounds.
#include <gtest/gtest.h>

#include "ddp/fpdu_builder.h"
#include "ddp/stream_parser.h"
#include "mpa/crc32c.h"
#include "mpa/fpdu.h"
#include "test_util.h"
#include "util/bytes.h"

namespace softndk::wire {
namespace {
using test::hex;

struct Outcome {
  WireError error = WireError::kNone;
  bool had_header = false;
  int done = 0;
};

Outcome feed(std::span<const uint8_t> bytes, ParserConfig cfg = {}) {
  Outcome o;
  for (size_t chunk : {size_t{0}, size_t{1}}) {  // whole, then byte by byte: same verdict
    StreamParser p(cfg);
    Outcome cur;
    size_t off = 0;
    while (off < bytes.size()) {
      const size_t n = chunk ? 1 : bytes.size();
      std::span<const uint8_t> in = bytes.subspan(off, n);
      off += n;
      bool stop = false;
      for (;;) {
        Event ev = p.next(in);
        if (ev.kind == EventKind::kNeedMore) break;
        if (ev.kind == EventKind::kSegmentDone) ++cur.done;
        if (ev.kind == EventKind::kError) {
          cur.error = ev.error;
          cur.had_header = ev.segment != nullptr;
          stop = true;
          break;
        }
      }
      if (stop) break;
    }
    if (chunk == 0) {
      o = cur;
    } else {
      EXPECT_EQ(cur.error, o.error);
      EXPECT_EQ(cur.done, o.done);
    }
  }
  return o;
}

std::vector<uint8_t> fpdu(const DdpHeader& h, std::span<const uint8_t> body,
                          std::span<const uint8_t> payload, bool crc = false) {
  std::vector<uint8_t> out(200);
  out.resize(encode_fpdu(h, body, payload, crc, out));
  return out;
}

// Fixes up ULPDU_Length and trailer after hand-editing (keeps CRC correct).
std::vector<uint8_t> raw(std::vector<uint8_t> ulpdu, bool crc = false) {
  const size_t n = ulpdu.size();
  std::vector<uint8_t> f(2 + n + mpa_pad(n) + 4, 0);
  store_be16(f.data(), static_cast<uint16_t>(n));
  std::copy(ulpdu.begin(), ulpdu.end(), f.begin() + 2);
  if (crc) store_le32(&f[f.size() - 4], crc32c(std::span(f).first(f.size() - 4)));
  return f;
}

struct Case {
  const char* name;
  std::vector<uint8_t> bytes;
  WireError error;
  TerminateCode term;
  ParserConfig cfg = {};
};

TEST(BadInput, EachViolationHasItsCode) {
  const uint8_t pay[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint8_t rr[28];
  encode_read_request({0x10, 0, 64, 0, 0}, rr);  // source STag 0, size 64
  uint8_t rr_ok[28];
  encode_read_request({0x10, 0, 64, 0x20, 0}, rr_ok);
  auto good_crc = fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 5, 0), {}, pay, true);
  auto bad_crc = good_crc;
  bad_crc[18] ^= 1;  // payload bit flip
  auto bad_crc_field = good_crc;
  bad_crc_field.back() ^= 0x80;
  auto dv0 = fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 5, 0), {}, pay);
  dv0[2] = 0xC0;
  auto dv2u = fpdu(DdpHeader::untagged_hdr(Opcode::kSend, true, 0, 1, 0), {}, pay);
  dv2u[2] = 0x42;
  auto rv0 = fpdu(DdpHeader::untagged_hdr(Opcode::kSend, true, 0, 1, 0), {}, pay);
  rv0[3] = 0x03;
  auto rv2 = rv0;
  rv2[3] = 0x83;
  auto opc = fpdu(DdpHeader::untagged_hdr(Opcode::kSend, true, 0, 1, 0), {}, pay);
  opc[3] = 0x4C;
  auto imm = fpdu(DdpHeader::untagged_hdr(Opcode::kImmediateData, true, 0, 1, 0), {}, pay);
  auto send_tagged = fpdu(DdpHeader::tagged_hdr(Opcode::kSend, true, 5, 0), {}, pay);
  auto write_untagged = fpdu(DdpHeader::untagged_hdr(Opcode::kWrite, true, 0, 1, 0), {}, pay);
  auto qn = fpdu(DdpHeader::untagged_hdr(Opcode::kSend, true, 1, 1, 0), {}, pay);
  auto qn_rr = fpdu(DdpHeader::untagged_hdr(Opcode::kReadRequest, true, 0, 1, 0), rr_ok, {});
  auto qn_term =
      fpdu(DdpHeader::untagged_hdr(Opcode::kTerminate, true, 0, 1, 0), hex("00000000"), {});
  auto rr_short = fpdu(DdpHeader::untagged_hdr(Opcode::kReadRequest, true, 1, 1, 0),
                       std::span(rr_ok).first(27), {});
  auto rr_long = fpdu(DdpHeader::untagged_hdr(Opcode::kReadRequest, true, 1, 1, 0), rr_ok, pay);
  auto rr_notlast = fpdu(DdpHeader::untagged_hdr(Opcode::kReadRequest, false, 1, 1, 0), rr_ok, {});
  auto rr_mo = fpdu(DdpHeader::untagged_hdr(Opcode::kReadRequest, true, 1, 1, 4), rr_ok, {});
  auto term_notlast =
      fpdu(DdpHeader::untagged_hdr(Opcode::kTerminate, false, 2, 1, 0), hex("00000000"), {});
  auto term_short =
      fpdu(DdpHeader::untagged_hdr(Opcode::kTerminate, true, 2, 1, 0), hex("000000"), {});
  std::vector<uint8_t> big(53);
  auto term_long = fpdu(DdpHeader::untagged_hdr(Opcode::kTerminate, true, 2, 1, 0), {}, big);
  auto w0 = fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 0, 0), {}, pay);
  auto w0z = fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 0, 0), {}, {});
  auto rresp0 = fpdu(DdpHeader::tagged_hdr(Opcode::kReadResponse, true, 0, 0), {}, pay);
  auto rr0 = fpdu(DdpHeader::untagged_hdr(Opcode::kReadRequest, true, 1, 1, 0), rr, {});
  auto inv0 = fpdu(DdpHeader::untagged_hdr(Opcode::kSendInvalidate, true, 0, 1, 0, 0), {}, pay);
  auto inv0se =
      fpdu(DdpHeader::untagged_hdr(Opcode::kSendSolicitedInvalidate, true, 0, 1, 0, 0), {}, pay);
  auto atom_len =
      raw(test::concat(hex("414a 00000000 00000003 00000001 00000000"), std::vector<uint8_t>(51)));
  ParserConfig crc_on{true};
  ParserConfig rfc7306{false, true};
  ParserConfig max_small{false, false, 100};
  auto long_send = fpdu(DdpHeader::untagged_hdr(Opcode::kSend, true, 0, 1, 0), {}, big);
  long_send.resize(200);
  store_be16(long_send.data(), 101);

  const TerminateCode kUnexpected{TermLayer::kRdmap, 2, 6};
  const TerminateCode kStream{TermLayer::kRdmap, 2, 7};
  std::vector<Case> cases = {
      {"ulpdu 0", hex("0000 c140 0000 0000"), WireError::kUlpduTooShort, kStream},
      {"tagged ulpdu 13", hex("000d c140 00000001 00000000000000 00 00000000"),
       WireError::kUlpduTooShort, kStream},
      {"untagged ulpdu 17", raw(hex("4143 00000000 00000000 00000001 000000")),
       WireError::kUlpduTooShort, kStream},
      {"ulpdu > max", long_send, WireError::kUlpduTooLong, kStream, max_small},
      {"DDP version 0 tagged", dv0, WireError::kDdpVersionTagged, {TermLayer::kDdp, 1, 4}},
      {"DDP version 2 untagged", dv2u, WireError::kDdpVersionUntagged, {TermLayer::kDdp, 2, 6}},
      {"RDMAP version 0", rv0, WireError::kRdmapVersion, {TermLayer::kRdmap, 2, 5}},
      {"RDMAP version 2", rv2, WireError::kRdmapVersion, {TermLayer::kRdmap, 2, 5}},
      {"reserved opcode 0xC", opc, WireError::kReservedOpcode, kUnexpected},
      {"immediate data (RFC 7306)", imm, WireError::kUnsupportedOpcode, kUnexpected},
      {"Send tagged", send_tagged, WireError::kTaggedFlagMismatch, kUnexpected},
      {"Write untagged", write_untagged, WireError::kTaggedFlagMismatch, kUnexpected},
      {"Send on QN 1", qn, WireError::kInvalidQn, {TermLayer::kDdp, 2, 1}},
      {"Read Request on QN 0", qn_rr, WireError::kInvalidQn, {TermLayer::kDdp, 2, 1}},
      {"Terminate on QN 0", qn_term, WireError::kInvalidQn, {TermLayer::kDdp, 2, 1}},
      {"Read Request 27", rr_short, WireError::kReadRequestLength, kStream},
      {"Read Request 36", rr_long, WireError::kReadRequestLength, kStream},
      {"Read Request L=0", rr_notlast, WireError::kNotLastSegment, kStream},
      {"Read Request MO 4", rr_mo, WireError::kControlMoNonZero, {TermLayer::kDdp, 2, 4}},
      {"Terminate L=0", term_notlast, WireError::kNotLastSegment, kStream},
      {"Terminate 3", term_short, WireError::kTerminateLength, kStream},
      {"Terminate 53", term_long, WireError::kTerminateLength, kStream},
      {"atomic 51", atom_len, WireError::kAtomicLength, kStream, rfc7306},
      {"CRC payload flip", bad_crc, WireError::kCrcMismatch, {TermLayer::kLlp, 0, 2}, crc_on},
      {"CRC field flip", bad_crc_field, WireError::kCrcMismatch, {TermLayer::kLlp, 0, 2}, crc_on},
      {"Write STag 0", w0, WireError::kZeroStagWrite, {TermLayer::kDdp, 1, 0}},
      {"zero-length Write STag 0", w0z, WireError::kZeroStagWrite, {TermLayer::kDdp, 1, 0}},
      {"Read Response STag 0 with data",
       rresp0,
       WireError::kZeroStagReadResponse,
       {TermLayer::kDdp, 1, 0}},
      {"Read Request source STag 0",
       rr0,
       WireError::kZeroStagReadSource,
       {TermLayer::kRdmap, 1, 0}},
      {"Send with Invalidate STag 0",
       inv0,
       WireError::kZeroStagInvalidate,
       {TermLayer::kRdmap, 2, 9}},
      {"Send SE with Invalidate STag 0",
       inv0se,
       WireError::kZeroStagInvalidate,
       {TermLayer::kRdmap, 2, 9}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Outcome o = feed(c.bytes, c.cfg);
    EXPECT_EQ(o.error, c.error) << to_string(o.error);
    EXPECT_EQ(terminate_code_for(o.error), c.term);
    // decode_fpdu agrees with the stream parser.
    FpduView v;
    auto r = decode_fpdu(c.bytes, v, c.cfg);
    EXPECT_EQ(r.error, c.error) << to_string(r.error);
  }
  // Without CRC negotiated the field is ignored, as siw does.
  EXPECT_EQ(feed(bad_crc_field).error, WireError::kNone);
  EXPECT_EQ(feed(bad_crc_field).done, 1);
  EXPECT_EQ(feed(good_crc, crc_on).error, WireError::kNone);
}

TEST(BadInput, AllowedZeroStags) {
  // Zero-length Read Response echoing sink STag 0 (siw's answer to a Read RTR).
  auto zr = hex("000e c142 00000000 0000000000000000 00000000");
  EXPECT_EQ(feed(zr).error, WireError::kNone);
  EXPECT_EQ(feed(zr).done, 1);
  // Zero-size Read Request from source STag 0 is tolerated (nothing is read),
  // and sink STag 0 is the requester's business.
  uint8_t rr[28];
  encode_read_request({0, 0, 0, 0, 0}, rr);
  EXPECT_EQ(feed(fpdu(DdpHeader::untagged_hdr(Opcode::kReadRequest, true, 1, 1, 0), rr, {})).error,
            WireError::kNone);
  // Pad bytes are not checked (RFC 5044: ignored on receipt).
  auto s = fpdu(DdpHeader::untagged_hdr(Opcode::kSend, true, 0, 1, 0), {}, hex("61"));
  s[s.size() - 5] = 0xFF;
  EXPECT_EQ(feed(s).error, WireError::kNone);
}

TEST(BadInput, TruncatedNeverCompletes) {
  auto f = fpdu(DdpHeader::untagged_hdr(Opcode::kSend, true, 0, 1, 0), {}, hex("0102030405"), true);
  for (size_t n = 0; n < f.size(); ++n) {
    Outcome o = feed(std::span(f).first(n), {true});
    EXPECT_EQ(o.error, WireError::kNone) << n;
    EXPECT_EQ(o.done, 0) << n;
    FpduView v;
    auto r = decode_fpdu(std::span(f).first(n), v, {true});
    EXPECT_TRUE(r.need_more || r.error != WireError::kNone) << n;
  }
  EXPECT_EQ(feed(f, {true}).done, 1);
}

TEST(BadInput, LengthBeyondBuffer) {
  // ULPDU_Length says 65535 but only 40 bytes follow: need more, no OOB read.
  auto f = hex("ffff 4143 00000000 00000000 00000001 00000000 0102030405060708");
  FpduView v;
  auto r = decode_fpdu(f, v);
  EXPECT_TRUE(r.need_more);
  EXPECT_EQ(r.needed, 2u + 65535 + 3 + 4);
  StreamParser p;
  std::span<const uint8_t> in(f);
  Event ev = p.next(in);
  ASSERT_EQ(ev.kind, EventKind::kPlacement);
  EXPECT_EQ(ev.segment->payload_len, 65535u - 18);
  ev = p.next(in);
  ASSERT_EQ(ev.kind, EventKind::kPayload);
  EXPECT_EQ(ev.data.size(), 8u);
  EXPECT_EQ(p.next(in).kind, EventKind::kNeedMore);
  EXPECT_EQ(p.payload_remaining(), 65535u - 18 - 8);
}

}  // namespace
}  // namespace softndk::wire
