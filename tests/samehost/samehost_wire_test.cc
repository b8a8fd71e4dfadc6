// SPDX-License-Identifier: Apache-2.0
// samehost_wire_test.cc - the same-host codec (rdmap/samehost_wire.h) and
// the parser's acceptance of the same-host opcodes only when asked.
#include "transport/samehost/samehost_wire.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ddp/fpdu_builder.h"
#include "ddp/stream_parser.h"

namespace softndk::wire {
namespace {

TEST(SamehostWire, HelloRoundTrips) {
  SamehostMsg m;
  m.type = SamehostMsgType::kHello;
  m.flags = kSamehostCanPull;
  m.pid = 4242;
  m.probe_addr = 0x7fff12345678ull;
  for (size_t i = 0; i < kSamehostNonceSize; ++i) m.nonce[i] = static_cast<uint8_t>(i * 7);
  uint8_t buf[kSamehostMsgSize];
  ASSERT_EQ(encode_samehost_msg(m, buf), kSamehostMsgSize);
  auto p = parse_samehost_msg(buf);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->type, SamehostMsgType::kHello);
  EXPECT_EQ(p->flags, kSamehostCanPull);
  EXPECT_EQ(p->pid, 4242u);
  EXPECT_EQ(p->probe_addr, 0x7fff12345678ull);
  EXPECT_EQ(0, std::memcmp(p->nonce, m.nonce, kSamehostNonceSize));
}

TEST(SamehostWire, MalformedMessagesAreRefused) {
  SamehostMsg m;
  m.pid = 1;
  m.probe_addr = 8;
  uint8_t good[kSamehostMsgSize];
  encode_samehost_msg(m, good);
  ASSERT_TRUE(parse_samehost_msg(good));
  EXPECT_FALSE(parse_samehost_msg({good, kSamehostMsgSize - 1}));  // short
  std::vector<uint8_t> longer(good, good + kSamehostMsgSize);
  longer.push_back(0);
  EXPECT_FALSE(parse_samehost_msg(longer));  // long
  for (int field : {0, 4, 5, 6, 7}) {        // magic, version, type, flags, reserved
    uint8_t b[kSamehostMsgSize];
    std::memcpy(b, good, sizeof b);
    b[field] ^= 0x80;
    EXPECT_FALSE(parse_samehost_msg(b)) << "byte " << field;
  }
  // A hello must name a process and a probe address.
  SamehostMsg z;
  uint8_t b[kSamehostMsgSize];
  encode_samehost_msg(z, b);
  EXPECT_FALSE(parse_samehost_msg(b));
  z.type = SamehostMsgType::kAck;  // an ack need not
  encode_samehost_msg(z, b);
  EXPECT_TRUE(parse_samehost_msg(b));
  EXPECT_EQ(encode_samehost_msg(z, {b, 10}), 0u);
}

TEST(SamehostWire, DescriptorAndAck) {
  uint8_t b[kSamehostDescSize];
  ASSERT_EQ(encode_samehost_desc({0x1000, 65536, {}}, b), kSamehostDescSize);
  auto d = parse_samehost_desc(b);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->source, 0x1000u);
  EXPECT_EQ(d->length, 65536u);
  encode_samehost_desc({0x1000, 0, {}}, b);
  EXPECT_FALSE(parse_samehost_desc(b));  // empty
  encode_samehost_desc({0, 5, {}}, b);
  EXPECT_FALSE(parse_samehost_desc(b));  // null source
  encode_samehost_desc({~0ull - 3, 8, {}}, b);
  EXPECT_FALSE(parse_samehost_desc(b));  // wraps
  EXPECT_FALSE(parse_samehost_desc({b, 11}));
  uint8_t a[kSamehostAckSize];
  encode_samehost_ack(3, a);
  EXPECT_EQ(parse_samehost_ack(a), 3u);
  encode_samehost_ack(0, a);
  EXPECT_FALSE(parse_samehost_ack(a));
  EXPECT_FALSE(parse_samehost_ack({a, 3}));
}

TEST(SamehostWire, SegmentDescriptorGoldenBytesAndLimits) {
  uint8_t b[kSamehostSegDescSize];
  SamehostDesc d{0x00007f0000001000ull, 0x00100000u, SamehostSegment{5, 0x1a, 0x4242, 0x2000}};
  ASSERT_EQ(encode_samehost_desc(d, b), kSamehostSegDescSize);
  const uint8_t golden[kSamehostSegDescSize] = {
      0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,  // source
      0x00, 0x10, 0x00, 0x00,                          // length
      0x00, 0x00, 0x00, 0x05,                          // fd
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1a,  // dev
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x42, 0x42,  // ino
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00,  // offset
  };
  EXPECT_EQ(0, std::memcmp(b, golden, sizeof golden));
  auto p = parse_samehost_desc(b);
  ASSERT_TRUE(p && p->segment);
  EXPECT_EQ(p->source, d.source);
  EXPECT_EQ(p->length, d.length);
  EXPECT_EQ(p->segment->fd, 5u);
  EXPECT_EQ(p->segment->dev, 0x1au);
  EXPECT_EQ(p->segment->ino, 0x4242u);
  EXPECT_EQ(p->segment->offset, 0x2000u);
  // The 12-byte prefix alone is the plain form; any other size is refused.
  auto plain = parse_samehost_desc({b, kSamehostDescSize});
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->segment);
  for (size_t n : {size_t{13}, size_t{16}, size_t{39}}) EXPECT_FALSE(parse_samehost_desc({b, n}));
  EXPECT_EQ(encode_samehost_desc(d, {b, kSamehostDescSize}), 0u);  // short buffer
  d.segment->fd = 0x80000000u;                                     // not an fd
  encode_samehost_desc(d, b);
  EXPECT_FALSE(parse_samehost_desc(b));
  d.segment->fd = 3;
  d.segment->offset = ~0ull - 16;  // offset range wraps
  encode_samehost_desc(d, b);
  EXPECT_FALSE(parse_samehost_desc(b));
}

TEST(SamehostWire, CanMapFlagParsesOnlyAsAKnownFlag) {
  SamehostMsg m;
  m.pid = 7;
  m.probe_addr = 0x1000;
  m.flags = kSamehostCanPull | kSamehostCanMap;
  uint8_t b[kSamehostMsgSize];
  encode_samehost_msg(m, b);
  auto p = parse_samehost_msg(b);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->flags, kSamehostCanPull | kSamehostCanMap);
  b[6] = 0x08;  // not a flag of this version
  EXPECT_FALSE(parse_samehost_msg(b));
}

// A same-host descriptor FPDU as the transmitter builds it (body_len 12 or
// 40; any other length to test the parser's refusal).
std::vector<uint8_t> descriptor_fpdu(Opcode op, uint32_t stag,
                                     size_t body_len = kSamehostDescSize) {
  uint8_t body[64] = {};
  encode_samehost_desc({0x5000, 4096, std::nullopt}, body);
  if (body_len == kSamehostSegDescSize)
    encode_samehost_desc({0x5000, 4096, SamehostSegment{9, 1, 2, 0x1000}}, body);
  FpduScratch s;
  FpduWriter w;
  auto h = w.begin(DdpHeader::tagged_hdr(op, true, stag, 0x9000), {body, body_len}, 0, false, s);
  auto t = w.finish();
  std::vector<uint8_t> out(h.size() + t.size());
  std::memcpy(out.data(), h.data(), h.size());
  std::memcpy(out.data() + h.size(), t.data(), t.size());
  return out;
}

TEST(SamehostWire, ParserRefusesSamehostOpcodesUnlessAsked) {
  for (Opcode op : {Opcode::kSamehostWrite, Opcode::kSamehostReadResponse}) {
    auto f = descriptor_fpdu(op, 0x77);
    {
      StreamParser p;  // a standard peer's parser: a reserved opcode
      std::span<const uint8_t> in(f);
      Event ev = p.next(in);
      ASSERT_EQ(ev.kind, EventKind::kError);
      EXPECT_EQ(ev.error, WireError::kReservedOpcode);
    }
    ParserConfig c;
    c.accept_samehost = true;
    StreamParser p(c);
    std::span<const uint8_t> in(f);
    Event ev = p.next(in);
    ASSERT_EQ(ev.kind, EventKind::kPlacement);
    EXPECT_EQ(ev.segment->opcode(), op);
    EXPECT_EQ(ev.segment->payload_len, 0u);
    ASSERT_EQ(ev.segment->body.size(), kSamehostDescSize);
    EXPECT_EQ(parse_samehost_desc(ev.segment->body)->length, 4096u);
    EXPECT_EQ(p.next(in).kind, EventKind::kSegmentDone);
    EXPECT_TRUE(in.empty());
  }
  // STag 0 is refused even when accepted.
  ParserConfig c;
  c.accept_samehost = true;
  StreamParser p(c);
  auto f = descriptor_fpdu(Opcode::kSamehostWrite, 0);
  std::span<const uint8_t> in(f);
  EXPECT_EQ(p.next(in).kind, EventKind::kError);
}

TEST(SamehostWire, ParserTakesTheSegmentFormAndNoOtherLength) {
  ParserConfig c;
  c.accept_samehost = true;
  for (Opcode op : {Opcode::kSamehostWrite, Opcode::kSamehostReadResponse}) {
    auto f = descriptor_fpdu(op, 0x77, kSamehostSegDescSize);
    StreamParser p(c);
    std::span<const uint8_t> in(f);
    Event ev = p.next(in);
    ASSERT_EQ(ev.kind, EventKind::kPlacement);
    ASSERT_EQ(ev.segment->body.size(), kSamehostSegDescSize);
    auto d = parse_samehost_desc(ev.segment->body);
    ASSERT_TRUE(d && d->segment);
    EXPECT_EQ(d->segment->fd, 9u);
    EXPECT_EQ(d->segment->offset, 0x1000u);
    EXPECT_EQ(p.next(in).kind, EventKind::kSegmentDone);
    for (size_t n : {size_t{16}, size_t{24}, size_t{44}}) {
      auto g = descriptor_fpdu(op, 0x77, n);
      StreamParser q(c);
      std::span<const uint8_t> gin(g);
      Event e = q.next(gin);
      ASSERT_EQ(e.kind, EventKind::kError) << n;
      EXPECT_EQ(e.error, WireError::kReservedOpcode) << n;
    }
  }
}

}  // namespace
}  // namespace softndk::wire
