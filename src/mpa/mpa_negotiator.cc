// SPDX-License-Identifier: Apache-2.0
// mpa/mpa_negotiator.cc - MPA negotiation policy (siw rules, IWARP.md 9.2/9.3).
#include "mpa/mpa_negotiator.h"

#include <algorithm>

#include "mpa/mpa_frame.h"

namespace softndk::mpa {

namespace {

// ---------------------------------------------------------------------------
// Codec glue: the only place that calls the wire codec (mpa/mpa_frame.h).
// ---------------------------------------------------------------------------

struct Block {
  uint16_t ird = 0, ord = 0;
  bool p2p = false;
  uint8_t rtr = 0;  // kRtr* bits
};

Block decode_block(const std::vector<uint8_t>& pd) {
  Block b;
  auto w = wire::decode_ird_ord(pd);
  if (!w) return b;
  b.ird = w->ird;
  b.ord = w->ord;
  b.p2p = w->peer_to_peer;
  b.rtr = static_cast<uint8_t>((w->rtr_write ? kRtrWrite : 0) | (w->rtr_read ? kRtrRead : 0) |
                               (w->rtr_send ? kRtrSend : 0));
  return b;
}

Status encode(FrameType type, uint8_t flags, uint8_t rev, const Block* block,
              std::span<const uint8_t> ulp_pd, size_t pd_limit, std::vector<uint8_t>& out) {
  wire::MpaFrameSpec spec;
  spec.type =
      type == FrameType::kRequest ? wire::MpaFrameType::kRequest : wire::MpaFrameType::kReply;
  spec.flags = flags;
  spec.rev = rev;
  if (block) {
    wire::IrdOrdBlock b;
    b.ird = block->ird;
    b.ord = block->ord;
    b.peer_to_peer = block->p2p;
    b.rtr_write = block->rtr & kRtrWrite;
    b.rtr_read = block->rtr & kRtrRead;
    b.rtr_send = block->rtr & kRtrSend;
    spec.ird_ord = b;
  }
  spec.ulp_private_data = ulp_pd;
  const size_t at = out.size();
  out.resize(at + kHeaderSize + kMaxPrivateDataRfc);
  auto r = wire::encode_mpa_frame(spec, std::span<uint8_t>(out).subspan(at), pd_limit);
  if (r.error != wire::MpaError::kOk) {
    out.resize(at);
    return Status::kBadArgument;
  }
  out.resize(at + r.size);
  return Status::kOk;
}

// ---------------------------------------------------------------------------

constexpr uint8_t kFlagM = 0x80, kFlagC = 0x40, kFlagR = 0x20, kFlagE = 0x10;

bool enhanced_frame(const Frame& f) { return f.rev >= 2 && (f.flags & kFlagE); }

std::vector<uint8_t> ulp_part(const Frame& f) {
  if (enhanced_frame(f) && f.private_data.size() >= kIrdOrdBlock)
    return {f.private_data.begin() + kIrdOrdBlock, f.private_data.end()};
  return f.private_data;
}

// The IRD/ORD block an initiator sends (siw: ORD forced to >= 1 with P2P).
Block request_block(const Settings& s, const RequestArgs& a) {
  Block b;
  b.ird = std::min(a.ird, s.max_ird);
  b.ord = std::min(a.ord, s.max_ord);
  if (s.peer_to_peer) {
    b.p2p = true;
    b.rtr = s.rtr_types & (kRtrWrite | kRtrRead | kRtrSend);
    b.ord = std::max<uint16_t>(b.ord, 1);
  }
  return b;
}

// Responder RTR choice. siw: Write if offered, else Read if offered, else
// Write. We also honour our accepted set; never Send (it would need a
// pre-posted receive).
uint8_t choose_rtr(const Settings& s, const PeerRequest& r) {
  const uint8_t ok = s.rtr_types & (kRtrWrite | kRtrRead);
  const uint8_t common = ok & r.rtr_offered;
  if (common & kRtrWrite) return kRtrWrite;
  if (common & kRtrRead) return kRtrRead;
  if (ok & kRtrWrite) return kRtrWrite;  // siw's fallback
  return 0;
}

}  // namespace

const char* to_string(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kNeedMore:
      return "need more bytes";
    case Status::kRejected:
      return "peer rejected";
    case Status::kBadKey:
      return "invalid MPA key";
    case Status::kBadRevision:
      return "unsupported MPA revision";
    case Status::kPrivateDataTooLong:
      return "private data too long";
    case Status::kEnhancedBlockMissing:
      return "RFC 6581 IRD/ORD block missing";
    case Status::kNotEnhanced:
      return "reply not in enhanced (rev 2) mode";
    case Status::kMarkers:
      return "markers requested";
    case Status::kCrcRequired:
      return "peer does not use CRC";
    case Status::kCrcRefused:
      return "peer requires CRC";
    case Status::kInsufficientIrd:
      return "insufficient IRD";
    case Status::kNoMatchingRtr:
      return "no matching RTR option";
    case Status::kTrailingData:
      return "data before the MPA exchange ended";
    case Status::kBadArgument:
      return "bad argument";
  }
  return "?";
}

uint8_t terminate_llp_code(Status s) {
  switch (s) {
    case Status::kBadKey:
      return 0x04;  // invalid MPA Request or Reply frame
    case Status::kInsufficientIrd:
      return 0x06;
    case Status::kNoMatchingRtr:
      return 0x07;
    default:
      return 0;
  }
}

ParseResult parse_frame(std::span<const uint8_t> in, FrameType expect, Frame& out,
                        size_t max_private_data) {
  wire::MpaFrame f;
  auto r = wire::decode_mpa_frame(
      in, f,
      expect == FrameType::kRequest ? wire::MpaFrameType::kRequest : wire::MpaFrameType::kReply,
      max_private_data);
  switch (r.error) {
    case wire::MpaError::kOk:
      break;
    case wire::MpaError::kNeedMore:
      return {Status::kNeedMore, 0, r.needed};
    case wire::MpaError::kBadKey:
      return {Status::kBadKey, 0, 0};
    case wire::MpaError::kBadRevision:
      return {Status::kBadRevision, 0, 0};
    case wire::MpaError::kPrivateDataTooLong:
      return {Status::kPrivateDataTooLong, 0, 0};
    default:
      return {Status::kBadKey, 0, 0};
  }
  out.type = expect;
  out.flags = f.flags;
  out.rev = f.rev;
  out.private_data.assign(f.private_data.begin(), f.private_data.end());
  return {Status::kOk, r.consumed, 0};
}

size_t max_ulp_private_data(const Settings& s, bool enhanced) {
  size_t lim = std::min(s.send_pd_limit, kMaxPrivateDataRfc);
  return enhanced ? lim - kIrdOrdBlock : lim;
}

// ---------------------------------------------------------------------------
// Initiator (IWARP.md 9.2)
// ---------------------------------------------------------------------------

Status build_request(const Settings& s, const RequestArgs& a, std::vector<uint8_t>& out) {
  if (s.revision != 1 && s.revision != 2) return Status::kBadArgument;
  const bool enhanced = s.revision == 2;
  if (a.private_data.size() > max_ulp_private_data(s, enhanced)) return Status::kBadArgument;
  // C only when we require or request CRC; never M (siw).
  const uint8_t flags = s.crc_required || s.crc_request ? kFlagC : 0;
  if (!enhanced)
    return encode(FrameType::kRequest, flags, 1, nullptr, a.private_data, s.send_pd_limit, out);
  Block b = request_block(s, a);
  return encode(FrameType::kRequest, flags | kFlagE, 2, &b, a.private_data, s.send_pd_limit, out);
}

ReplyOutcome evaluate_reply(const Settings& s, const RequestArgs& sent, const Frame& reply) {
  ReplyOutcome o;
  NegotiatedParams& p = o.params;
  const bool sent_enhanced = s.revision == 2;
  // 1. Revision: above 2 (parse), or above what we asked, is not an answer
  //    to our Request.
  if (reply.type != FrameType::kReply) return {Status::kBadKey, {}};
  if (reply.rev > s.revision) return {Status::kBadRevision, {}};
  // 3. R=1: refused; the ULP gets the reject's private data.
  if (reply.flags & kFlagR) {
    o.status = Status::kRejected;
    p.peer_private_data = ulp_part(reply);
    return o;
  }
  // 4. Markers are never used; CRC policy.
  if (reply.flags & kFlagM) return {Status::kMarkers, {}};
  const bool peer_c = reply.flags & kFlagC;
  if (s.crc_required && !peer_c) return {Status::kCrcRequired, {}};
  if (s.crc_strict_off && !s.crc_required && peer_c) return {Status::kCrcRefused, {}};
  // A request (not a requirement) follows the Reply: a responder that
  // answers C=0 will not send CRCs, so insisting would fail every FPDU.
  p.crc = peer_c || s.crc_required;
  p.revision = reply.rev;
  const Block mine = request_block(s, sent);
  if (!sent_enhanced) {
    // Rev 1: no IRD/ORD exchange; the consumer's values stand (siw would
    // end up with 0/0 here and fail every Read, interop README).
    p.ird = mine.ird;
    p.ord = mine.ord;
    p.peer_private_data = reply.private_data;
    return o;
  }
  // 5. An enhanced Request needs an enhanced Reply (siw: no v1 fallback).
  if (!enhanced_frame(reply)) return {Status::kNotEnhanced, {}};
  if (reply.private_data.size() < kIrdOrdBlock) return {Status::kEnhancedBlockMissing, {}};
  p.enhanced = true;
  const Block theirs = decode_block(reply.private_data);
  // 6. Read limits are negotiated, never raised (NDKPI NdkConnect/NdkAccept:
  //    a peer's lower limit becomes ours): ORD = min(ours, peer IRD), IRD =
  //    min(ours, peer ORD). A responder whose ORD exceeds our IRD would
  //    overrun it (RFC 6581 forbids that Reply): LLP 0x06, insufficient IRD.
  if (theirs.ord > mine.ird) return {Status::kInsufficientIrd, {}};
  p.ird = std::min(mine.ird, theirs.ord);
  p.ord = std::min(mine.ord, theirs.ird);
  // 7. P2P: the Reply's RTR bits must overlap what we offered (the A bit is
  //    not checked, like siw). Preference Write, Read, Send.
  if (mine.p2p) {
    const uint8_t common = theirs.rtr & mine.rtr;
    if (common & kRtrWrite) {
      p.rtr = kRtrWrite;
    } else if (common & kRtrRead) {
      p.rtr = kRtrRead;
    } else if (common & kRtrSend) {
      p.rtr = kRtrSend;
    } else {
      return {Status::kNoMatchingRtr, {}};
    }
    p.p2p = true;
    // A Read RTR occupies one outbound read slot until its response.
    if (p.rtr == kRtrRead) p.ord = std::max<uint16_t>(p.ord, 1);
  }
  p.peer_private_data = ulp_part(reply);
  return o;
}

// ---------------------------------------------------------------------------
// Responder (IWARP.md 9.3)
// ---------------------------------------------------------------------------

Status evaluate_request(const Settings& s, const Frame& req, PeerRequest& r) {
  r = PeerRequest{};
  if (req.type != FrameType::kRequest) return Status::kBadKey;
  if (req.rev > 2) return Status::kBadRevision;
  if (req.private_data.size() > s.recv_pd_limit) return Status::kPrivateDataTooLong;
  r.rev = req.rev;
  r.flags = req.flags;
  r.enhanced = enhanced_frame(req);
  r.crc = req.flags & kFlagC;
  r.markers = req.flags & kFlagM;
  if (r.enhanced && req.private_data.size() < kIrdOrdBlock) {
    r.must_reject = Status::kEnhancedBlockMissing;
    return Status::kOk;
  }
  if (r.markers) {
    r.must_reject = Status::kMarkers;
    return Status::kOk;
  }
  // RFC 5044: CRC MUST be used if the peer asks, unless we are strictly off.
  if (r.crc && s.crc_strict_off && !s.crc_required) {
    r.must_reject = Status::kCrcRefused;
    return Status::kOk;
  }
  if (r.enhanced) {
    const Block b = decode_block(req.private_data);
    r.ird = b.ird;
    r.ord = b.ord;
    r.p2p = b.p2p;
    r.rtr_offered = b.rtr;
    r.proposed_ord = std::min(b.ird, s.max_ord);
    r.proposed_ird = std::min(b.ord, s.max_ird);
    if (r.p2p) {
      if (choose_rtr(s, r) == 0) r.must_reject = Status::kNoMatchingRtr;
    }
  }
  r.private_data = ulp_part(req);
  return Status::kOk;
}

Status build_reply(const Settings& s, const PeerRequest& r, uint16_t ulp_ird, uint16_t ulp_ord,
                   std::span<const uint8_t> pd, std::vector<uint8_t>& out, NegotiatedParams& p) {
  if (r.must_reject != Status::kOk) return r.must_reject;
  if (pd.size() > max_ulp_private_data(s, r.enhanced)) return Status::kBadArgument;
  p = NegotiatedParams{};
  p.revision = r.rev;
  p.enhanced = r.enhanced;
  // CRC on iff the Request had C; CRC required or requested adds C to our
  // Reply, which turns it on both ways (RFC 5044: either side's C).
  p.crc = r.crc || s.crc_required || s.crc_request;
  ulp_ird = std::min(ulp_ird, s.max_ird);
  ulp_ord = std::min(ulp_ord, s.max_ord);
  uint8_t flags = p.crc ? kFlagC : 0;
  if (!r.enhanced) {
    p.ird = ulp_ird;
    p.ord = ulp_ord;
    p.peer_private_data = r.private_data;
    return encode(FrameType::kReply, flags, r.rev, nullptr, pd, s.send_pd_limit, out);
  }
  // Never raised: our ORD is at most the initiator's IRD and our IRD at most
  // its ORD (NDKPI: the peer's lower limit is the effective one). An
  // initiator reads our Reply's IRD as its ORD (RFC 6581), so a lower IRD
  // here is honoured, not overrun.
  Block b;
  b.ord = std::min(ulp_ord, r.proposed_ord);
  b.ird = std::min(ulp_ird, r.proposed_ird);
  if (r.p2p) {
    b.p2p = true;
    b.rtr = choose_rtr(s, r);
    if (b.rtr == 0) return Status::kNoMatchingRtr;
    if (b.rtr == kRtrRead) b.ird = std::max<uint16_t>(b.ird, 1);  // we serve the Read RTR
    p.p2p = true;
    p.rtr = b.rtr;
  }
  p.ird = b.ird;
  p.ord = b.ord;
  p.peer_private_data = r.private_data;
  flags |= kFlagE;
  return encode(FrameType::kReply, flags, r.rev, &b, pd, s.send_pd_limit, out);
}

Status build_reject(const Settings& s, const PeerRequest& r, std::span<const uint8_t> pd,
                    std::vector<uint8_t>& out) {
  if (r.rev == 0) return Status::kOk;  // siw just closes
  // Internal rejects (markers, CRC, ...) carry no ULP data (siw).
  if (r.must_reject != Status::kOk) pd = {};
  const bool block = r.enhanced;
  if (pd.size() > max_ulp_private_data(s, block)) return Status::kBadArgument;
  const uint8_t flags = kFlagR | (block ? kFlagE : 0);
  Block zero;
  return encode(FrameType::kReply, flags, r.rev, block ? &zero : nullptr, pd, s.send_pd_limit, out);
}

}  // namespace softndk::mpa
