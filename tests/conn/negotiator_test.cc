// SPDX-License-Identifier: Apache-2.0
// negotiator_test.cc - mpa::negotiator rules, one test per siw rule
// (IWARP.md 7.1, 9.2, 9.3; interop README section b probe scenarios).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpa/mpa_negotiator.h"

namespace softndk::mpa {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes hex(const std::string& h) {
  Bytes out;
  for (size_t i = 0; i + 1 < h.size();) {
    if (h[i] == ' ') {
      ++i;
      continue;
    }
    out.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
    i += 2;
  }
  return out;
}

const std::string kReqKey = "4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65 ";
const std::string kRepKey = "4d 50 41 20 49 44 20 52 65 70 20 46 72 61 6d 65 ";

Frame parse(const Bytes& b, FrameType t) {
  Frame f;
  auto r = parse_frame(b, t, f);
  EXPECT_EQ(r.status, Status::kOk);
  EXPECT_EQ(r.consumed, b.size());
  return f;
}

// Builds a peer's frame from raw fields.
Bytes frame(const std::string& key, uint8_t flags, uint8_t rev, const Bytes& pd) {
  Bytes b = hex(key);
  b.push_back(flags);
  b.push_back(rev);
  b.push_back(static_cast<uint8_t>(pd.size() >> 8));
  b.push_back(static_cast<uint8_t>(pd.size()));
  b.insert(b.end(), pd.begin(), pd.end());
  return b;
}

// ---- initiator: Request ----

TEST(NegotiatorRequest, SiwDefaultBytes) {  // IWARP.md 7.1
  Settings s;
  Bytes out;
  ASSERT_EQ(build_request(s, {16, 16, {}}, out), Status::kOk);
  EXPECT_EQ(out, hex(kReqKey + "10 02 00 04 00 10 00 10"));
}

TEST(NegotiatorRequest, PeerToPeerOffersWriteAndRead) {  // IWARP.md 7.1
  Settings s;
  s.peer_to_peer = true;
  Bytes out;
  ASSERT_EQ(build_request(s, {16, 16, {}}, out), Status::kOk);
  EXPECT_EQ(out, hex(kReqKey + "10 02 00 04 80 10 c0 10"));
}

TEST(NegotiatorRequest, PeerToPeerForcesOrdAtLeastOne) {  // siw 9.2
  Settings s;
  s.peer_to_peer = true;
  s.rtr_types = kRtrRead;
  Bytes out;
  ASSERT_EQ(build_request(s, {0, 0, {}}, out), Status::kOk);
  EXPECT_EQ(out, hex(kReqKey + "10 02 00 04 80 00 40 01"));
}

TEST(NegotiatorRequest, CrcRequiredSetsC) {
  Settings s;
  s.crc_required = true;
  Bytes out;
  ASSERT_EQ(build_request(s, {4, 4, {}}, out), Status::kOk);
  EXPECT_EQ(out[16], 0x50);
}

TEST(NegotiatorRequest, CrcRequestSetsC) {
  Settings s;
  s.crc_request = true;
  Bytes out;
  ASSERT_EQ(build_request(s, {4, 4, {}}, out), Status::kOk);
  EXPECT_EQ(out[16], 0x50);
}

TEST(NegotiatorRequest, Rev1HasNoBlock) {
  Settings s;
  s.revision = 1;
  Bytes pd = {1, 2, 3};
  Bytes out;
  ASSERT_EQ(build_request(s, {4, 4, pd}, out), Status::kOk);
  EXPECT_EQ(out, hex(kReqKey + "00 01 00 03 01 02 03"));
}

TEST(NegotiatorRequest, CapsIrdOrdAtAdapterMax) {
  Settings s;
  Bytes out;
  ASSERT_EQ(build_request(s, {1000, 200, {}}, out), Status::kOk);
  EXPECT_EQ(out, hex(kReqKey + "10 02 00 04 00 80 00 80"));
}

TEST(NegotiatorRequest, PrivateDataLimit252WithBlock) {
  Settings s;
  Bytes pd(252, 0xab), out;
  EXPECT_EQ(build_request(s, {1, 1, pd}, out), Status::kOk);
  EXPECT_EQ(out.size(), 20u + 256u);
  pd.push_back(0);
  out.clear();
  EXPECT_EQ(build_request(s, {1, 1, pd}, out), Status::kBadArgument);
  s.revision = 1;  // 256 without the block
  EXPECT_EQ(build_request(s, {1, 1, pd}, out), Status::kOk);
}

TEST(NegotiatorRequest, BadRevisionSetting) {
  Settings s;
  s.revision = 3;
  Bytes out;
  EXPECT_EQ(build_request(s, {}, out), Status::kBadArgument);
}

// ---- initiator: Reply evaluation (IWARP.md 9.2) ----

TEST(NegotiatorReply, AcceptAdoptsReversedLimits) {
  Settings s;
  RequestArgs sent{8, 2, {}};
  // Probe scenario: request IRD 8 / ORD 2 -> siw reply IRD 2 / ORD 8.
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("00 02 00 08 aa")), FrameType::kReply);
  auto o = evaluate_reply(s, sent, rep);
  ASSERT_EQ(o.status, Status::kOk);
  EXPECT_EQ(o.params.revision, 2);
  EXPECT_TRUE(o.params.enhanced);
  EXPECT_FALSE(o.params.crc);
  EXPECT_FALSE(o.params.markers);
  EXPECT_FALSE(o.params.p2p);
  EXPECT_EQ(o.params.ird, 8);  // = peer ORD
  EXPECT_EQ(o.params.ord, 2);  // min(our 2, peer IRD 2)
  EXPECT_EQ(o.params.peer_private_data, Bytes{0xaa});
}

TEST(NegotiatorReply, OrdNeverAbovePeerIrd) {
  Settings s;
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("00 01 00 04")), FrameType::kReply);
  auto o = evaluate_reply(s, {4, 16, {}}, rep);
  ASSERT_EQ(o.status, Status::kOk);
  EXPECT_EQ(o.params.ord, 1);
  EXPECT_EQ(o.params.ird, 4);
}

// NDKPI: limits are negotiated, never raised. A Reply whose ORD exceeds our
// IRD would overrun it: insufficient IRD (it used to raise our IRD).
TEST(NegotiatorReply, PeerOrdAboveOurIrdIsInsufficientIrd) {
  Settings s;
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("00 04 00 05")), FrameType::kReply);
  auto o = evaluate_reply(s, {4, 4, {}}, rep);
  EXPECT_EQ(o.status, Status::kInsufficientIrd);
  EXPECT_EQ(terminate_llp_code(o.status), 0x06);
}

// Lower peer limits become ours, both ways; ours are never raised.
TEST(NegotiatorReply, LimitsAreTheMinimaBothWays) {
  Settings s;
  struct Case {
    uint16_t my_ird, my_ord, peer_ird, peer_ord, ird, ord;
  };
  for (Case c : {Case{128, 128, 3, 5, 5, 3}, Case{4, 4, 128, 1, 1, 4}, Case{8, 2, 2, 8, 8, 2},
                 Case{0, 0, 0, 0, 0, 0}, Case{16, 1, 0, 16, 16, 0}, Case{1, 128, 64, 1, 1, 64}}) {
    Bytes block = {static_cast<uint8_t>(c.peer_ird >> 8), static_cast<uint8_t>(c.peer_ird),
                   static_cast<uint8_t>(c.peer_ord >> 8), static_cast<uint8_t>(c.peer_ord)};
    auto rep = parse(frame(kRepKey, 0x10, 2, block), FrameType::kReply);
    auto o = evaluate_reply(s, {c.my_ird, c.my_ord, {}}, rep);
    ASSERT_EQ(o.status, Status::kOk) << c.my_ird << "/" << c.my_ord;
    EXPECT_EQ(o.params.ird, c.ird) << c.my_ird << "/" << c.my_ord;
    EXPECT_EQ(o.params.ord, c.ord) << c.my_ird << "/" << c.my_ord;
  }
}

TEST(NegotiatorReply, PeerOrdAboveIrdAndMaxIsInsufficientIrd) {
  Settings s;
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("00 04 00 81")), FrameType::kReply);
  auto o = evaluate_reply(s, {4, 4, {}}, rep);
  EXPECT_EQ(o.status, Status::kInsufficientIrd);
  EXPECT_EQ(terminate_llp_code(o.status), 0x06);
}

TEST(NegotiatorReply, RejectCarriesPrivateDataWithoutBlock) {
  Settings s;
  auto rep = parse(frame(kRepKey, 0x30, 2, hex("00 00 00 00 de ad")), FrameType::kReply);
  auto o = evaluate_reply(s, {1, 1, {}}, rep);
  EXPECT_EQ(o.status, Status::kRejected);
  EXPECT_EQ(o.params.peer_private_data, hex("de ad"));
}

TEST(NegotiatorReply, MarkersRefused) {
  Settings s;
  auto rep = parse(frame(kRepKey, 0x90, 2, hex("00 01 00 01")), FrameType::kReply);
  EXPECT_EQ(evaluate_reply(s, {1, 1, {}}, rep).status, Status::kMarkers);
}

TEST(NegotiatorReply, CrcFromReplyTurnsCrcOn) {
  Settings s;
  auto rep = parse(frame(kRepKey, 0x50, 2, hex("00 01 00 01")), FrameType::kReply);
  auto o = evaluate_reply(s, {1, 1, {}}, rep);
  ASSERT_EQ(o.status, Status::kOk);
  EXPECT_TRUE(o.params.crc);
}

TEST(NegotiatorReply, CrcRequiredRefusesReplyWithoutC) {
  Settings s;
  s.crc_required = true;
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("00 01 00 01")), FrameType::kReply);
  EXPECT_EQ(evaluate_reply(s, {1, 1, {}}, rep).status, Status::kCrcRequired);
}

// Requested, not required: the Reply decides (C=1 on, C=0 off, no refusal).
TEST(NegotiatorReply, CrcRequestFollowsTheReply) {
  Settings s;
  s.crc_request = true;
  auto with_c = parse(frame(kRepKey, 0x50, 2, hex("00 01 00 01")), FrameType::kReply);
  auto o = evaluate_reply(s, {1, 1, {}}, with_c);
  ASSERT_EQ(o.status, Status::kOk);
  EXPECT_TRUE(o.params.crc);
  auto without = parse(frame(kRepKey, 0x10, 2, hex("00 01 00 01")), FrameType::kReply);
  o = evaluate_reply(s, {1, 1, {}}, without);
  ASSERT_EQ(o.status, Status::kOk);
  EXPECT_FALSE(o.params.crc);
}

TEST(NegotiatorReply, CrcStrictOffRefusesReplyWithC) {
  Settings s;
  s.crc_strict_off = true;
  auto rep = parse(frame(kRepKey, 0x50, 2, hex("00 01 00 01")), FrameType::kReply);
  EXPECT_EQ(evaluate_reply(s, {1, 1, {}}, rep).status, Status::kCrcRefused);
}

TEST(NegotiatorReply, EnhancedRequestNeedsEnhancedReply) {  // siw: no v1 fallback
  Settings s;
  auto v1 = parse(frame(kRepKey, 0x00, 1, {}), FrameType::kReply);
  EXPECT_EQ(evaluate_reply(s, {1, 1, {}}, v1).status, Status::kNotEnhanced);
  auto noflag = parse(frame(kRepKey, 0x00, 2, hex("00 01 00 01")), FrameType::kReply);
  EXPECT_EQ(evaluate_reply(s, {1, 1, {}}, noflag).status, Status::kNotEnhanced);
  auto shortpd = parse(frame(kRepKey, 0x10, 2, hex("00 01")), FrameType::kReply);
  EXPECT_EQ(evaluate_reply(s, {1, 1, {}}, shortpd).status, Status::kEnhancedBlockMissing);
}

TEST(NegotiatorReply, ReplyRevisionAboveOursIsBad) {
  Settings s;
  s.revision = 1;
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("00 01 00 01")), FrameType::kReply);
  EXPECT_EQ(evaluate_reply(s, {1, 1, {}}, rep).status, Status::kBadRevision);
}

TEST(NegotiatorReply, Rev1KeepsOwnLimits) {
  Settings s;
  s.revision = 1;
  auto rep = parse(frame(kRepKey, 0x00, 1, hex("01 02")), FrameType::kReply);
  auto o = evaluate_reply(s, {3, 5, {}}, rep);
  ASSERT_EQ(o.status, Status::kOk);
  EXPECT_EQ(o.params.revision, 1);
  EXPECT_FALSE(o.params.enhanced);
  EXPECT_EQ(o.params.ird, 3);
  EXPECT_EQ(o.params.ord, 5);
  EXPECT_EQ(o.params.peer_private_data, hex("01 02"));
}

TEST(NegotiatorReply, P2pWriteChosen) {  // siw's reply to 80 10 c0 10
  Settings s;
  s.peer_to_peer = true;
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("80 10 80 10")), FrameType::kReply);
  auto o = evaluate_reply(s, {16, 16, {}}, rep);
  ASSERT_EQ(o.status, Status::kOk);
  EXPECT_TRUE(o.params.p2p);
  EXPECT_EQ(o.params.rtr, kRtrWrite);
}

TEST(NegotiatorReply, P2pReadChosenAndABitNotChecked) {
  Settings s;
  s.peer_to_peer = true;
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("00 10 40 10")), FrameType::kReply);
  auto o = evaluate_reply(s, {16, 16, {}}, rep);
  ASSERT_EQ(o.status, Status::kOk);
  EXPECT_EQ(o.params.rtr, kRtrRead);
}

TEST(NegotiatorReply, P2pNoMatchingRtr) {
  Settings s;
  s.peer_to_peer = true;
  s.rtr_types = kRtrRead;
  auto rep = parse(frame(kRepKey, 0x10, 2, hex("80 10 80 10")), FrameType::kReply);
  auto o = evaluate_reply(s, {16, 16, {}}, rep);
  EXPECT_EQ(o.status, Status::kNoMatchingRtr);
  EXPECT_EQ(terminate_llp_code(o.status), 0x07);
}

// ---- parse_frame: bad input ----

TEST(NegotiatorParse, GarbageFailsOnFirstByte) {
  Frame f;
  Bytes g = hex("5a 5b 58");  // the mpa-probe garbage prefix
  EXPECT_EQ(parse_frame(g, FrameType::kRequest, f).status, Status::kBadKey);
  EXPECT_EQ(terminate_llp_code(Status::kBadKey), 0x04);
}

TEST(NegotiatorParse, ReplyWhereRequestExpectedIsBadKey) {
  Frame f;
  auto b = frame(kRepKey, 0x10, 2, hex("00 01 00 01"));
  EXPECT_EQ(parse_frame(b, FrameType::kRequest, f).status, Status::kBadKey);
}

TEST(NegotiatorParse, NeedMoreThenOk) {
  Frame f;
  auto b = frame(kReqKey, 0x10, 2, hex("00 01 00 01"));
  for (size_t n = 1; n < b.size(); ++n) {
    auto r = parse_frame(std::span<const uint8_t>(b).first(n), FrameType::kRequest, f);
    ASSERT_EQ(r.status, Status::kNeedMore) << n;
  }
  EXPECT_EQ(parse_frame(b, FrameType::kRequest, f).status, Status::kOk);
}

TEST(NegotiatorParse, OversizedPrivateDataLength) {
  Frame f;
  Bytes b = hex(kReqKey + "10 02 02 01");  // PD_Length 513
  EXPECT_EQ(parse_frame(b, FrameType::kRequest, f).status, Status::kPrivateDataTooLong);
  Bytes ok = frame(kReqKey, 0x10, 2, Bytes(512, 0));
  EXPECT_EQ(parse_frame(ok, FrameType::kRequest, f).status, Status::kOk);
}

TEST(NegotiatorParse, RevisionAbove2) {
  Frame f;
  auto b = frame(kReqKey, 0x10, 3, hex("00 01 00 01"));
  EXPECT_EQ(parse_frame(b, FrameType::kRequest, f).status, Status::kBadRevision);
}

// ---- responder (IWARP.md 9.3) ----

TEST(NegotiatorResponder, ProbeRequestIrdOrd4) {  // interop README b: ird 4 ord 4, 8 bytes PD
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("00 04 00 04 00 11 22 33 44 55 66 77")),
                   FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_EQ(r.must_reject, Status::kOk);
  EXPECT_TRUE(r.enhanced);
  EXPECT_EQ(r.ird, 4);
  EXPECT_EQ(r.ord, 4);
  EXPECT_EQ(r.private_data, hex("00 11 22 33 44 55 66 77"));
  Bytes out;
  NegotiatedParams p;
  ASSERT_EQ(build_reply(s, r, 4, 4, {}, out, p), Status::kOk);
  EXPECT_EQ(out, hex(kRepKey + "10 02 00 04 00 04 00 04"));
  EXPECT_EQ(p.ird, 4);
  EXPECT_EQ(p.ord, 4);
  // Smaller ULP limits stay as they are (never raised to the peer's).
  out.clear();
  ASSERT_EQ(build_reply(s, r, 1, 1, {}, out, p), Status::kOk);
  EXPECT_EQ(out, hex(kRepKey + "10 02 00 04 00 01 00 01"));
  EXPECT_EQ(p.ird, 1);
  EXPECT_EQ(p.ord, 1);
}

TEST(NegotiatorResponder, LimitsAreTheMinima) {  // request 8/2 -> reply 1/8
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("00 08 00 02")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_EQ(r.proposed_ird, 2);
  EXPECT_EQ(r.proposed_ord, 8);
  Bytes out;
  NegotiatedParams p;
  // ULP asks IRD 1 (kept: the peer's ORD 2 is lowered to it by our Reply),
  // ORD 16 (lowered to the peer's IRD 8).
  ASSERT_EQ(build_reply(s, r, 1, 16, {}, out, p), Status::kOk);
  EXPECT_EQ(out, hex(kRepKey + "10 02 00 04 00 01 00 08"));
  EXPECT_EQ(p.ird, 1);
  EXPECT_EQ(p.ord, 8);
}

TEST(NegotiatorResponder, ProposalCappedAt128) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("01 00 01 00")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_EQ(r.proposed_ird, 128);
  EXPECT_EQ(r.proposed_ord, 128);
}

TEST(NegotiatorResponder, CrcEchoed) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x50, 2, hex("00 08 00 02")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  Bytes out;
  NegotiatedParams p;
  ASSERT_EQ(build_reply(s, r, 0, 0, {}, out, p), Status::kOk);
  EXPECT_EQ(out[16], 0x50);
  EXPECT_TRUE(p.crc);
}

TEST(NegotiatorResponder, CrcRequiredAddsC) {
  Settings s;
  s.crc_required = true;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("00 01 00 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  Bytes out;
  NegotiatedParams p;
  ASSERT_EQ(build_reply(s, r, 1, 1, {}, out, p), Status::kOk);
  EXPECT_EQ(out[16], 0x50);
  EXPECT_TRUE(p.crc);
}

// A responder that requests CRC sets C in its Reply to a C=0 Request: CRC
// both ways (RFC 5044: either side's C), which siw as initiator accepts.
TEST(NegotiatorResponder, CrcRequestAddsC) {
  Settings s;
  s.crc_request = true;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("00 01 00 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_EQ(r.must_reject, Status::kOk);
  Bytes out;
  NegotiatedParams p;
  ASSERT_EQ(build_reply(s, r, 1, 1, {}, out, p), Status::kOk);
  EXPECT_EQ(out[16], 0x50);
  EXPECT_TRUE(p.crc);
}

TEST(NegotiatorResponder, CrcStrictOffRejects) {
  Settings s;
  s.crc_strict_off = true;
  auto req = parse(frame(kReqKey, 0x50, 2, hex("00 01 00 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_EQ(r.must_reject, Status::kCrcRefused);
}

TEST(NegotiatorResponder, MarkersGetRejectReplyWithZeroBlock) {  // probe: R=1, pd 00000000
  Settings s;
  auto req = parse(frame(kReqKey, 0x90, 2, hex("00 01 00 01 ff")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_EQ(r.must_reject, Status::kMarkers);
  Bytes out;
  NegotiatedParams p;
  EXPECT_EQ(build_reply(s, r, 1, 1, {}, out, p), Status::kMarkers);
  Bytes ulp = {1, 2, 3};
  ASSERT_EQ(build_reject(s, r, ulp, out), Status::kOk);  // ULP data dropped
  EXPECT_EQ(out, hex(kRepKey + "30 02 00 04 00 00 00 00"));
}

TEST(NegotiatorResponder, EnhancedWithShortPdRejected) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("00 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_EQ(r.must_reject, Status::kEnhancedBlockMissing);
}

TEST(NegotiatorResponder, Rev1RequestAnsweredRev1) {  // probe: reply rev 1, no PD
  Settings s;
  auto req = parse(frame(kReqKey, 0x00, 1, {}), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_FALSE(r.enhanced);
  Bytes out;
  NegotiatedParams p;
  ASSERT_EQ(build_reply(s, r, 2, 3, {}, out, p), Status::kOk);
  EXPECT_EQ(out, hex(kRepKey + "00 01 00 00"));
  EXPECT_EQ(p.revision, 1);
  EXPECT_EQ(p.ird, 2);
  EXPECT_EQ(p.ord, 3);
}

TEST(NegotiatorResponder, Rev2WithoutEnhancedFlagIsNotEnhanced) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x00, 2, hex("00 01 00 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_FALSE(r.enhanced);
  EXPECT_EQ(r.private_data, hex("00 01 00 01"));
}

TEST(NegotiatorResponder, Rev0AcceptedAndRejectIsClose) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x00, 0, {}), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  Bytes out;
  ASSERT_EQ(build_reject(s, r, {}, out), Status::kOk);
  EXPECT_TRUE(out.empty());
}

TEST(NegotiatorResponder, P2pPicksWriteIfOffered) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("80 10 c0 10")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  Bytes out;
  NegotiatedParams p;
  ASSERT_EQ(build_reply(s, r, 16, 16, {}, out, p), Status::kOk);
  EXPECT_EQ(out, hex(kRepKey + "10 02 00 04 80 10 80 10"));  // IRD 0x8000|ird, ORD 0x8000|ord
  EXPECT_TRUE(p.p2p);
  EXPECT_EQ(p.rtr, kRtrWrite);
}

TEST(NegotiatorResponder, P2pReadOnlyPicksReadAndIrdAtLeastOne) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("80 00 40 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  Bytes out;
  NegotiatedParams p;
  ASSERT_EQ(build_reply(s, r, 0, 0, {}, out, p), Status::kOk);
  EXPECT_EQ(p.rtr, kRtrRead);
  EXPECT_EQ(p.ird, 1);
  EXPECT_EQ(out, hex(kRepKey + "10 02 00 04 80 01 40 00"));
}

TEST(NegotiatorResponder, P2pNothingOfferedFallsBackToWrite) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("c0 01 00 01")), FrameType::kRequest);  // Send only
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  Bytes out;
  NegotiatedParams p;
  ASSERT_EQ(build_reply(s, r, 1, 1, {}, out, p), Status::kOk);
  EXPECT_EQ(p.rtr, kRtrWrite);  // siw never selects Send
}

TEST(NegotiatorResponder, P2pNoAcceptableRtrRejects) {
  Settings s;
  s.rtr_types = kRtrRead;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("80 01 80 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  EXPECT_EQ(r.must_reject, Status::kNoMatchingRtr);
}

TEST(NegotiatorResponder, ReplyPrivateDataLimits) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("00 01 00 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  Bytes out;
  NegotiatedParams p;
  EXPECT_EQ(build_reply(s, r, 1, 1, Bytes(252, 1), out, p), Status::kOk);
  out.clear();
  EXPECT_EQ(build_reply(s, r, 1, 1, Bytes(253, 1), out, p), Status::kBadArgument);
  EXPECT_EQ(build_reject(s, r, Bytes(253, 1), out), Status::kBadArgument);
  EXPECT_EQ(max_ulp_private_data(s, true), 252u);
  EXPECT_EQ(max_ulp_private_data(s, false), 256u);
}

TEST(NegotiatorResponder, UlpRejectKeepsBlockAndData) {
  Settings s;
  auto req = parse(frame(kReqKey, 0x10, 2, hex("00 01 00 01")), FrameType::kRequest);
  PeerRequest r;
  ASSERT_EQ(evaluate_request(s, req, r), Status::kOk);
  Bytes out;
  ASSERT_EQ(build_reject(s, r, hex("be ef"), out), Status::kOk);
  EXPECT_EQ(out, hex(kRepKey + "30 02 00 06 00 00 00 00 be ef"));
}

TEST(NegotiatorRoundTrip, InitiatorAndResponderAgree) {
  for (bool p2p : {false, true}) {
    for (uint8_t rtr : {kRtrWrite, kRtrRead, uint8_t(kRtrWrite | kRtrRead)}) {
      Settings a;
      a.peer_to_peer = p2p;
      a.rtr_types = rtr;
      Settings b;
      Bytes pd = {9, 8, 7};
      Bytes req;
      ASSERT_EQ(build_request(a, {3, 5, pd}, req), Status::kOk);
      PeerRequest r;
      ASSERT_EQ(evaluate_request(b, parse(req, FrameType::kRequest), r), Status::kOk);
      EXPECT_EQ(r.private_data, pd);
      Bytes rep;
      NegotiatedParams pb;
      ASSERT_EQ(build_reply(b, r, 7, 2, hex("01"), rep, pb), Status::kOk);
      auto o = evaluate_reply(a, {3, 5, pd}, parse(rep, FrameType::kReply));
      ASSERT_EQ(o.status, Status::kOk);
      EXPECT_EQ(o.params.p2p, p2p);
      EXPECT_EQ(pb.p2p, p2p);
      EXPECT_EQ(o.params.rtr, pb.rtr);
      // Each side's ORD never exceeds the other's IRD.
      EXPECT_LE(o.params.ord, pb.ird);
      EXPECT_LE(pb.ord, o.params.ird);
      EXPECT_EQ(o.params.peer_private_data, hex("01"));
    }
  }
}

}  // namespace
}  // namespace softndk::mpa
