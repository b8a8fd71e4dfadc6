// SPDX-License-Identifier: Apache-2.0
// Streaming receive parser: events, arbitrary splits, direct placement, CRC.
#include "ddp/stream_parser.h"

#include <gtest/gtest.h>

#include <string>

#include "ddp/fpdu_builder.h"
#include "mpa/crc32c.h"
#include "rdmap/rdmap_codec.h"
#include "rdmap/rtr.h"
#include "rdmap/terminate_fpdu.h"
#include "test_util.h"

namespace softndk::wire {
namespace {
using test::hex;
using test::to_hex;

// Renders the event sequence so that different feeding patterns compare equal.
struct Recorder {
  std::string log;
  std::vector<uint8_t> payload;
  WireError error = WireError::kNone;
  void on(const Event& ev) {
    switch (ev.kind) {
      case EventKind::kNeedMore:
        break;
      case EventKind::kPlacement: {
        const SegmentInfo& s = *ev.segment;
        log += "P(" + std::to_string(int(s.hdr.opcode_value())) + (s.tagged() ? ",T" : ",U") +
               (s.last() ? ",L" : "") + ",stag=" + std::to_string(s.hdr.stag) +
               ",to=" + std::to_string(s.hdr.to) + ",qn=" + std::to_string(s.hdr.qn) +
               ",msn=" + std::to_string(s.hdr.msn) + ",mo=" + std::to_string(s.hdr.mo) +
               ",len=" + std::to_string(s.payload_len) + ",body=" + to_hex(s.body) + ")";
        // Coalesced mode: the placement's payload starts the segment's.
        if (!ev.data.empty()) {
          EXPECT_EQ(ev.offset, 0u);
        }
        payload.insert(payload.end(), ev.data.begin(), ev.data.end());
        break;
      }
      case EventKind::kPayload:
        payload.insert(payload.end(), ev.data.begin(), ev.data.end());
        break;
      case EventKind::kSegmentDone:
        log += "D(" + std::to_string(ev.segment->crc_field) + ")";
        break;
      case EventKind::kError:
        log += "E(" + std::string(to_string(ev.error)) + ")";
        error = ev.error;
        break;
    }
    // Coalesced mode: logged as the kSegmentDone it stands for.
    if (ev.segment_done) {
      ++coalesced;
      log += "D(" + std::to_string(ev.segment->crc_field) + ")";
    }
  }
  int coalesced = 0;  // events that also ended their segment
};

// Feeds `data` in pieces of `chunk` bytes (0 = whole), returns the recording.
Recorder run(std::span<const uint8_t> data, size_t chunk, ParserConfig cfg = {}) {
  StreamParser p(cfg);
  Recorder r;
  size_t off = 0;
  while (off < data.size()) {
    size_t n = chunk ? std::min(chunk, data.size() - off) : data.size() - off;
    std::span<const uint8_t> in = data.subspan(off, n);
    for (;;) {
      Event ev = p.next(in);
      if (ev.kind == EventKind::kNeedMore) break;
      r.on(ev);
      if (ev.kind == EventKind::kError) return r;
    }
    off += n;
  }
  return r;
}

std::vector<uint8_t> conversation(bool crc) {
  std::vector<uint8_t> s;
  uint8_t buf[70000];
  auto add = [&](size_t n) { s.insert(s.end(), buf, buf + n); };
  add(encode_rtr_write(buf, crc));
  std::vector<uint8_t> pay(3000);
  for (size_t i = 0; i < pay.size(); ++i) pay[i] = static_cast<uint8_t>(i * 13);
  // A 3000-byte Send in 1424-byte segments, a 5-byte Send (pad 3), a Write.
  MessageSegmenter seg(DdpHeader::untagged_hdr(Opcode::kSend, false, 0, 1, 0), pay.size(), 1424);
  while (!seg.done()) {
    FpduScratch sc;
    FpduPieces pc;
    EXPECT_TRUE(seg.next_fpdu(pay, crc, sc, pc));
    s.insert(s.end(), pc.header.begin(), pc.header.end());
    s.insert(s.end(), pc.payload.begin(), pc.payload.end());
    s.insert(s.end(), pc.trailer.begin(), pc.trailer.end());
  }
  add(encode_fpdu(DdpHeader::untagged_hdr(Opcode::kSendSolicited, true, 0, 2, 0), {},
                  std::span(pay).first(5), crc, buf));
  add(encode_fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 0x100, 0x4000), {},
                  std::span(pay).first(64), crc, buf));
  add(encode_rtr_read(buf, 1, crc));
  add(encode_zero_read_response(buf, 0, 0, crc));
  TerminateMessage t;
  t.code = {TermLayer::kRdmap, 2, 6};
  add(encode_terminate_fpdu(t, 1, crc, buf));
  return s;
}

// ParserConfig::coalesce (the engine's mode) must report exactly what the
// event-per-step protocol reports, for every split, with and without CRC,
// and put a CRC error after the payload it covers.
TEST(StreamParser, CoalescedEventsMatchSteps) {
  for (bool crc : {false, true}) {
    const auto s = conversation(crc);
    ParserConfig steps{crc};
    ParserConfig co = steps;
    co.coalesce = true;
    const Recorder want = run(s, 0, steps);
    EXPECT_EQ(want.coalesced, 0);
    const Recorder whole = run(s, 0, co);
    EXPECT_EQ(whole.log, want.log);
    EXPECT_EQ(whole.payload, want.payload);
    // Whole buffer: every FPDU is one event (9 FPDUs in the conversation).
    EXPECT_EQ(whole.coalesced, 9) << whole.log;
    for (size_t chunk : {1, 2, 3, 5, 7, 16, 19, 64, 1000}) {
      const Recorder r = run(s, chunk, co);
      EXPECT_EQ(r.log, want.log) << chunk;
      EXPECT_EQ(r.payload, want.payload) << chunk;
    }
  }
  // A corrupted CRC: payload first, then the error, as without coalescing.
  auto s = conversation(true);
  s[s.size() - 1] ^= 0x40;  // the Terminate's CRC
  ParserConfig co{true};
  co.coalesce = true;
  const Recorder want = run(s, 0, ParserConfig{true});
  const Recorder got = run(s, 0, co);
  EXPECT_EQ(got.error, WireError::kCrcMismatch);
  EXPECT_EQ(got.log, want.log);
  auto w = conversation(true);
  // The RTR Write is 20 bytes; the first Send segment's payload starts at
  // 20 + 2 + 18: corrupt a byte of it.
  w[20 + 2 + 18 + 100] ^= 1;
  const Recorder want2 = run(w, 0, ParserConfig{true});
  const Recorder got2 = run(w, 0, co);
  EXPECT_EQ(got2.error, WireError::kCrcMismatch);
  EXPECT_EQ(got2.payload.size(), 1424u);
  EXPECT_EQ(got2.log, want2.log);
  EXPECT_EQ(got2.payload, want2.payload);
}

TEST(StreamParser, WholeBufferEvents) {
  const auto s = conversation(true);
  ParserConfig cfg{true};
  Recorder r = run(s, 0, cfg);
  EXPECT_EQ(r.error, WireError::kNone) << r.log;
  EXPECT_NE(r.log.find("P(0,T,L,stag=1,to=0,qn=0,msn=0,mo=0,len=0,body=)"), std::string::npos);
  EXPECT_NE(r.log.find("P(3,U,stag=0,to=0,qn=0,msn=1,mo=1424,len=1424,body=)"), std::string::npos);
  EXPECT_NE(r.log.find("P(3,U,L,stag=0,to=0,qn=0,msn=1,mo=2848,len=152,body=)"), std::string::npos);
  EXPECT_NE(r.log.find("P(5,U,L,stag=0,to=0,qn=0,msn=2,mo=0,len=5,body=)"), std::string::npos);
  EXPECT_NE(r.log.find("P(7,U,L,stag=0,to=0,qn=2,msn=1,mo=0,len=0,body=02060000)"),
            std::string::npos);
  EXPECT_EQ(r.payload.size(), 3000u + 5 + 64);
}

TEST(StreamParser, EverySplitGivesIdenticalEvents) {
  for (bool crc : {false, true}) {
    const auto s = conversation(crc);
    ParserConfig cfg{crc};
    const Recorder whole = run(s, 0, cfg);
    for (size_t chunk : {1, 2, 3, 5, 7, 16, 19, 64, 1000}) {
      const Recorder r = run(s, chunk, cfg);
      EXPECT_EQ(r.log, whole.log) << chunk;
      EXPECT_EQ(r.payload, whole.payload) << chunk;
    }
    // Two pieces split at every position of the first 200 bytes.
    for (size_t cut = 0; cut < 200; ++cut) {
      StreamParser p(cfg);
      Recorder r;
      for (auto part : {std::span(s).first(cut), std::span(s).subspan(cut)}) {
        for (;;) {
          Event ev = p.next(part);
          if (ev.kind == EventKind::kNeedMore) break;
          r.on(ev);
        }
      }
      EXPECT_EQ(r.log, whole.log) << cut;
    }
  }
}

// Direct placement: the "transport" reads exactly bytes_wanted() for headers
// and trailers and copies payloads straight to a target buffer.
void direct_placement(bool crc, bool caller_crc) {
  const auto s = conversation(crc);
  ParserConfig cfg{crc};
  StreamParser p(cfg);
  std::vector<uint8_t> target;
  size_t pos = 0;
  int segments = 0;
  const size_t small_read = 3;  // header reads may also be shorter than wanted
  while (pos < s.size()) {
    if (p.state() == StreamParser::State::kPayload) {
      const size_t n = std::min<size_t>(p.bytes_wanted(), 1000);
      const size_t at = target.size();
      target.insert(target.end(), s.begin() + pos, s.begin() + pos + n);
      if (caller_crc) {
        ASSERT_TRUE(p.consume_payload(n, crc32c_update(p.crc_state(), &target[at], n)));
      } else {
        ASSERT_TRUE(p.consume_payload({&target[at], n}));
      }
      pos += n;
      continue;
    }
    const size_t want = p.bytes_wanted();
    ASSERT_GT(want, 0u);
    const size_t n = std::min(want, small_read);
    std::span<const uint8_t> in(&s[pos], n);
    pos += n;
    for (;;) {
      Event ev = p.next(in);
      ASSERT_NE(ev.kind, EventKind::kError) << to_string(ev.error);
      ASSERT_NE(ev.kind, EventKind::kPayload);  // never over-read into payload
      if (ev.kind == EventKind::kSegmentDone) ++segments;
      if (ev.kind == EventKind::kNeedMore) break;
    }
    EXPECT_TRUE(in.empty());
  }
  EXPECT_EQ(segments, 1 + 3 + 1 + 1 + 1 + 1 + 1);
  EXPECT_EQ(target.size(), 3000u + 5 + 64);
  EXPECT_EQ(p.bytes_consumed(), s.size());
  EXPECT_EQ(p.state(), StreamParser::State::kHeader);
}

TEST(StreamParser, DirectPlacementParserCrc) { direct_placement(true, false); }
TEST(StreamParser, DirectPlacementCallerCrc) { direct_placement(true, true); }
TEST(StreamParser, DirectPlacementNoCrc) { direct_placement(false, false); }

TEST(StreamParser, ConsumePayloadMisuse) {
  StreamParser p;
  const uint8_t x[4] = {};
  EXPECT_FALSE(p.consume_payload(x));
  uint8_t buf[64];
  size_t n = encode_fpdu(DdpHeader::tagged_hdr(Opcode::kWrite, true, 5, 0), {}, {x, 4}, false, buf);
  std::span<const uint8_t> in(buf, 16);
  ASSERT_EQ(p.next(in).kind, EventKind::kPlacement);
  EXPECT_EQ(p.payload_remaining(), 4u);
  EXPECT_FALSE(p.consume_payload(5, 0));
  EXPECT_TRUE(p.consume_payload(x));
  EXPECT_EQ(p.state(), StreamParser::State::kTrailer);
  EXPECT_EQ(p.bytes_wanted(), 4u);
  std::span<const uint8_t> tr(buf + 20, n - 20);
  EXPECT_EQ(p.next(tr).kind, EventKind::kSegmentDone);
}

TEST(StreamParser, ReadRequestBodyDecoded) {
  uint8_t buf[64];
  encode_rtr_read(buf, 7, false);
  StreamParser p;
  std::span<const uint8_t> in(buf, 52);
  Event ev = p.next(in);
  ASSERT_EQ(ev.kind, EventKind::kPlacement);
  EXPECT_EQ(ev.segment->opcode(), Opcode::kReadRequest);
  EXPECT_EQ(ev.segment->hdr.msn, 7u);
  EXPECT_EQ(ev.segment->read.source_stag, 1u);
  EXPECT_EQ(ev.segment->read.size, 0u);
  EXPECT_EQ(ev.segment->payload_len, 0u);
  EXPECT_EQ(ev.segment->header_bytes.size(), 18u);
  EXPECT_EQ(p.next(in).kind, EventKind::kSegmentDone);
  EXPECT_TRUE(in.empty());
}

TEST(StreamParser, Rfc7306WhenAccepted) {
  uint8_t body[kAtomicRequestBodySize] = {};
  AtomicRequestBody a;
  a.request_id = 3;
  a.remote_stag = 0x200;
  encode_atomic_request(a, body);
  uint8_t buf[128];
  const size_t n = encode_fpdu(DdpHeader::untagged_hdr(Opcode::kAtomicRequest, true, 3, 1, 0), body,
                               {}, true, buf);
  ASSERT_EQ(n, 76u);
  ParserConfig cfg{true, true};
  StreamParser p(cfg);
  std::span<const uint8_t> in(buf, n);
  Event ev = p.next(in);
  ASSERT_EQ(ev.kind, EventKind::kPlacement);
  EXPECT_EQ(*decode_atomic_request(ev.segment->body), a);
  EXPECT_EQ(p.next(in).kind, EventKind::kSegmentDone);
  // Default config: unsupported -> RDMAP remote operation / unexpected opcode.
  StreamParser q;
  std::span<const uint8_t> in2(buf, n);
  ev = q.next(in2);
  ASSERT_EQ(ev.kind, EventKind::kError);
  EXPECT_EQ(ev.error, WireError::kUnsupportedOpcode);
  EXPECT_EQ(ev.terminate(), (TerminateCode{TermLayer::kRdmap, 2, 6}));
  ASSERT_NE(ev.segment, nullptr);
  EXPECT_EQ(ev.segment->header_bytes.size(), 18u);
}

TEST(StreamParser, ResetAndStickyError) {
  const auto bad = hex("000e c2 40 00000001 0000000000000000 00000000");  // DV=2
  StreamParser p;
  std::span<const uint8_t> in(bad);
  EXPECT_EQ(p.next(in).kind, EventKind::kError);
  std::span<const uint8_t> in2(bad);
  EXPECT_EQ(p.next(in2).kind, EventKind::kError);
  EXPECT_EQ(in2.size(), bad.size());  // consumes nothing once broken
  EXPECT_EQ(p.error(), WireError::kDdpVersionTagged);
  p.reset();
  EXPECT_EQ(p.state(), StreamParser::State::kHeader);
  EXPECT_EQ(p.error(), WireError::kNone);
}

TEST(StreamParser, DecodeFpduView) {
  uint8_t buf[128];
  const uint8_t pay[5] = {'h', 'e', 'l', 'l', 'o'};
  const size_t n =
      encode_fpdu(DdpHeader::untagged_hdr(Opcode::kSend, true, 0, 1, 0), {}, pay, true, buf);
  EXPECT_EQ(to_hex({buf, n}),
            "0017414300000000000000000000000100000000"
            "68656c6c6f000000"
            "b990b10c");
  FpduView v;
  auto r = decode_fpdu({buf, n}, v, {true});
  ASSERT_EQ(r.error, WireError::kNone);
  EXPECT_EQ(v.pad, 3);
  EXPECT_EQ(v.crc_field, 0x0CB190B9u);
  EXPECT_EQ(v.crc_computed, 0x0CB190B9u);
  EXPECT_EQ(to_hex(v.payload), "68656c6c6f");
  r = decode_fpdu({buf, n - 1}, v);
  EXPECT_TRUE(r.need_more);
  EXPECT_EQ(r.needed, n);
  r = decode_fpdu({buf, 3}, v);
  EXPECT_TRUE(r.need_more);
}

}  // namespace
}  // namespace softndk::wire
