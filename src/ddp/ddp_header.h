// ddp/ddp_header.h — DDP tagged (14 bytes) and untagged (18 bytes) segment
// headers (RFC 5041 4), including the RDMAP control byte and the RsvdULP
// field they embed (RFC 5040 4.1).
// Owns: one header struct for both models, its encode/decode, and the
// per-header validity rules shared by the stream parser and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "rdmap/rdmap_codec.h"
#include "rdmap/terminate.h"

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

  // Well-formed headers for `op` (version 1, reserved bits 0).
  static DdpHeader tagged_hdr(Opcode op, bool last, uint32_t stag, uint64_t to);
  static DdpHeader untagged_hdr(Opcode op, bool last, uint32_t qn, uint32_t msn, uint32_t mo,
                                uint32_t inval_stag = 0);
};

// Decodes the header at the start of a ULPDU (after the MPA length). Returns
// the header size, or 0 if `ulpdu` is shorter than the header its T bit needs.
size_t decode_ddp_header(std::span<const uint8_t> ulpdu, DdpHeader& out);
// Writes the header (14/18 bytes) to `out`; returns its size.
size_t encode_ddp_header(const DdpHeader& h, uint8_t* out);

// Checks the header-only rules of the violation table: versions, opcode,
// tagged flag, QN, single-segment rules, zero STags, control body length.
// `ulpdu_len` is the FPDU's ULPDU_Length. RFC 7306 opcodes fail with
// kUnsupportedOpcode unless `accept_rfc7306`.
WireError validate_ddp_header(const DdpHeader& h, size_t ulpdu_len, bool accept_rfc7306 = false);

}  // namespace softndk::wire
