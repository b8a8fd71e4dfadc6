// SPDX-License-Identifier: Apache-2.0
// ddp/ddp_header.h — DDP tagged (14 bytes) and untagged (18 bytes) segment
// headers (RFC 5041 4), including the RDMAP control byte and the RsvdULP
// field they embed (RFC 5040 4.1).
// Owns: one header struct for both models, its encode/decode, and the
// per-header validity rules shared by the stream parser and tests. All inline:
// the receive path runs them once per FPDU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ddp/rdmap_control.h"
#include "ddp/wire_error.h"
#include "util/bytes.h"

namespace softndk::wire {

inline constexpr uint8_t kDdpFlagTagged = 0x80;
inline constexpr uint8_t kDdpFlagLast = 0x40;
inline constexpr uint8_t kDdpReservedMask = 0x3C;
inline constexpr uint8_t kDdpVersionMask = 0x03;
inline constexpr uint8_t kDdpVersion = 1;
inline constexpr size_t kTaggedHeaderSize = 14;
inline constexpr size_t kUntaggedHeaderSize = 18;
inline constexpr size_t kMaxDdpHeaderSize = kUntaggedHeaderSize;

// Control bytes are kept raw so reserved bits survive a round trip; the
// accessors give the fields.
struct DdpHeader {
  uint8_t ddp_ctrl = kDdpVersion;
  uint8_t rdmap_ctrl = kRdmapVersion << 6;
  // tagged
  uint32_t stag = 0;
  uint64_t to = 0;
  // untagged
  uint32_t rsvd_ulp = 0;  // bytes 4-7: Invalidate STag for Send with Invalidate
  uint32_t qn = 0;
  uint32_t msn = 0;
  uint32_t mo = 0;

  bool tagged() const { return ddp_ctrl & kDdpFlagTagged; }
  bool last() const { return ddp_ctrl & kDdpFlagLast; }
  uint8_t ddp_version() const { return ddp_ctrl & kDdpVersionMask; }
  uint8_t rdmap_version() const { return rdmap_ctrl >> 6; }
  uint8_t opcode_value() const { return rdmap_ctrl & kRdmapOpcodeMask; }
  Opcode opcode() const { return static_cast<Opcode>(opcode_value()); }
  uint32_t invalidate_stag() const { return rsvd_ulp; }
  size_t size() const { return tagged() ? kTaggedHeaderSize : kUntaggedHeaderSize; }
  void set_last(bool l) {
    ddp_ctrl = static_cast<uint8_t>(l ? (ddp_ctrl | kDdpFlagLast) : (ddp_ctrl & ~kDdpFlagLast));
  }

  // Well-formed headers for `op` (version 1, reserved bits 0). Inline, as
  // the codecs below: the sender builds one per FPDU, and a header written
  // field by field in another translation unit and then copied whole costs a
  // store-forwarding stall per copy (docs/wire.md "Performance").
  static DdpHeader tagged_hdr(Opcode op, bool last, uint32_t stag, uint64_t to) {
    DdpHeader h;
    h.ddp_ctrl = static_cast<uint8_t>(kDdpFlagTagged | (last ? kDdpFlagLast : 0) | kDdpVersion);
    h.rdmap_ctrl = ::softndk::wire::rdmap_ctrl(op);
    h.stag = stag;
    h.to = to;
    return h;
  }
  static DdpHeader untagged_hdr(Opcode op, bool last, uint32_t qn, uint32_t msn, uint32_t mo,
                                uint32_t inval_stag = 0) {
    DdpHeader h;
    h.ddp_ctrl = static_cast<uint8_t>((last ? kDdpFlagLast : 0) | kDdpVersion);
    h.rdmap_ctrl = ::softndk::wire::rdmap_ctrl(op);
    h.rsvd_ulp = inval_stag;
    h.qn = qn;
    h.msn = msn;
    h.mo = mo;
    return h;
  }
};

// Decodes the header at the start of a ULPDU (after the MPA length). Returns
// the header size, or 0 if `ulpdu` is shorter than the header its T bit needs.
inline size_t decode_ddp_header(std::span<const uint8_t> u, DdpHeader& h) {
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

// Writes the header (14/18 bytes) to `out`; returns its size.
inline size_t encode_ddp_header(const DdpHeader& h, uint8_t* o) {
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

// Checks the header-only rules of the violation table: versions, opcode,
// tagged flag, QN, single-segment rules, zero STags, control body length.
// `ulpdu_len` is the FPDU's ULPDU_Length. RFC 7306 opcodes fail with
// kUnsupportedOpcode unless `accept_rfc7306`. Inline: run once per FPDU on
// fields the parser has just decoded into registers.
__attribute__((always_inline)) inline WireError validate_ddp_header(const DdpHeader& h,
                                                                    size_t ulpdu_len,
                                                                    bool accept_rfc7306 = false,
                                                                    bool accept_samehost = false) {
  const size_t hs = h.size();
  if (ulpdu_len < hs) return WireError::kUlpduTooShort;
  // Order matters: a segment from a future DDP/RDMAP version cannot be
  // interpreted further, so versions come first (siw checks the same order).
  if (h.ddp_version() != kDdpVersion)
    return h.tagged() ? WireError::kDdpVersionTagged : WireError::kDdpVersionUntagged;
  if (h.rdmap_version() != kRdmapVersion) return WireError::kRdmapVersion;
  const OpcodeInfo* info = opcode_info(h.opcode_value(), accept_samehost);
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
    case Opcode::kSamehostWrite:
    case Opcode::kSamehostReadResponse:
    case Opcode::kSamehostAck:
    case Opcode::kSamehostRing:
      // Fixed bodies (docs/samehost.md: a descriptor is 12 bytes, or 40
      // naming a segment; an ack and the ring marker 4); a descriptor names
      // a real STag.
      if (body != info->min_body && body != info->max_body) return WireError::kReservedOpcode;
      if (h.tagged() && h.stag == 0) return WireError::kZeroStagWrite;
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
