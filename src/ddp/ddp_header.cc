// ddp/ddp_header.cc — DDP header codec and header validity rules.
#include "ddp/ddp_header.h"

#include "util/bytes.h"

namespace softndk::wire {

DdpHeader DdpHeader::tagged_hdr(Opcode op, bool last, uint32_t stag, uint64_t to) {
  DdpHeader h;
  h.ddp_ctrl = static_cast<uint8_t>(kDdpFlagTagged | (last ? kDdpFlagLast : 0) | kDdpVersion);
  h.rdmap_ctrl = ::softndk::wire::rdmap_ctrl(op);
  h.stag = stag;
  h.to = to;
  return h;
}

DdpHeader DdpHeader::untagged_hdr(Opcode op, bool last, uint32_t qn, uint32_t msn, uint32_t mo,
                                  uint32_t inval_stag) {
  DdpHeader h;
  h.ddp_ctrl = static_cast<uint8_t>((last ? kDdpFlagLast : 0) | kDdpVersion);
  h.rdmap_ctrl = ::softndk::wire::rdmap_ctrl(op);
  h.rsvd_ulp = inval_stag;
  h.qn = qn;
  h.msn = msn;
  h.mo = mo;
  return h;
}

size_t decode_ddp_header(std::span<const uint8_t> u, DdpHeader& h) {
  if (u.size() < 2) return 0;
  h.ddp_ctrl = u[0];
  h.rdmap_ctrl = u[1];
  if (h.tagged()) {
    if (u.size() < kTaggedHeaderSize) return 0;
    h.stag = load_be32(&u[2]);
    h.to = load_be64(&u[6]);
    h.rsvd_ulp = h.qn = h.msn = h.mo = 0;
    return kTaggedHeaderSize;
  }
  if (u.size() < kUntaggedHeaderSize) return 0;
  h.rsvd_ulp = load_be32(&u[2]);
  h.qn = load_be32(&u[6]);
  h.msn = load_be32(&u[10]);
  h.mo = load_be32(&u[14]);
  h.stag = 0;
  h.to = 0;
  return kUntaggedHeaderSize;
}

size_t encode_ddp_header(const DdpHeader& h, uint8_t* o) {
  o[0] = h.ddp_ctrl;
  o[1] = h.rdmap_ctrl;
  if (h.tagged()) {
    store_be32(o + 2, h.stag);
    store_be64(o + 6, h.to);
    return kTaggedHeaderSize;
  }
  store_be32(o + 2, h.rsvd_ulp);
  store_be32(o + 6, h.qn);
  store_be32(o + 10, h.msn);
  store_be32(o + 14, h.mo);
  return kUntaggedHeaderSize;
}

WireError validate_ddp_header(const DdpHeader& h, size_t ulpdu_len, bool accept_rfc7306) {
  const size_t hs = h.size();
  if (ulpdu_len < hs) return WireError::kUlpduTooShort;
  // Order matters: a segment from a future DDP/RDMAP version cannot be
  // interpreted further, so versions come first (siw checks the same order).
  if (h.ddp_version() != kDdpVersion)
    return h.tagged() ? WireError::kDdpVersionTagged : WireError::kDdpVersionUntagged;
  if (h.rdmap_version() != kRdmapVersion) return WireError::kRdmapVersion;
  const OpcodeInfo* info = opcode_info(h.opcode_value());
  if (!info) return WireError::kReservedOpcode;
  if (info->rfc7306 && !accept_rfc7306) return WireError::kUnsupportedOpcode;
  if (info->tagged != h.tagged()) return WireError::kTaggedFlagMismatch;
  if (!h.tagged() && info->qn != kQnAny && h.qn != static_cast<uint32_t>(info->qn))
    return WireError::kInvalidQn;
  if (info->single_segment) {
    if (!h.last()) return WireError::kNotLastSegment;
    if (h.mo != 0) return WireError::kControlMoNonZero;
  }
  const size_t body = ulpdu_len - hs;
  switch (h.opcode()) {
    case Opcode::kWrite:
      // STag 0 is never a valid data sink: siw's own RTR Write uses STag 1
      // precisely so that it never names 0 (IWARP.md 2.2, 9.2).
      if (h.stag == 0) return WireError::kZeroStagWrite;
      break;
    case Opcode::kReadResponse:
      // A zero-size Read echoes the requester's sink STag, which may be 0
      // (siw's Read RTR uses sink 0/0, captures show the echo), so only a
      // response that carries data must name a real STag.
      if (h.stag == 0 && body > 0) return WireError::kZeroStagReadResponse;
      break;
    case Opcode::kSendInvalidate:
    case Opcode::kSendSolicitedInvalidate:
      if (h.rsvd_ulp == 0) return WireError::kZeroStagInvalidate;
      break;
    case Opcode::kReadRequest:
      if (body != kReadRequestBodySize) return WireError::kReadRequestLength;
      break;
    case Opcode::kTerminate:
      if (body < info->min_body || body > info->max_body) return WireError::kTerminateLength;
      break;
    case Opcode::kAtomicRequest:
    case Opcode::kAtomicResponse:
      if (body != info->min_body) return WireError::kAtomicLength;
      break;
    default:
      break;
  }
  return WireError::kNone;
}

}  // namespace softndk::wire
