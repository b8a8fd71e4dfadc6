// SPDX-License-Identifier: Apache-2.0
// ddp/wire_error.cc - names of Terminate codes and the WireError -> Terminate
// table (ddp/wire_error.h).
#include "ddp/wire_error.h"

#include <cstddef>

namespace softndk::wire {

using namespace term;

bool terminate_code_known(const TerminateCode& c) {
  const uint8_t e = c.etype, k = c.code;
  switch (c.layer) {
    case TermLayer::kRdmap:
      if (e == kRdmapLocalCatastrophic) return k == 0x00 || k == 0xFF;
      if (e == kRdmapRemoteProtection) return k <= 0x04 || k == 0x09 || k == 0xFF;
      if (e == kRdmapRemoteOperation) return (k >= 0x05 && k <= 0x09) || k == 0xFF;
      return false;
    case TermLayer::kDdp:
      if (e == kDdpLocalCatastrophic) return k == 0x00;
      if (e == kDdpTagged) return k <= 0x04;
      if (e == kDdpUntagged) return k >= 0x01 && k <= 0x06;
      return false;
    case TermLayer::kLlp:
      return e == kLlpMpa && k >= 0x01 && k <= 0x07;
  }
  return false;
}

const char* terminate_code_name(const TerminateCode& c) {
  if (!terminate_code_known(c)) return "unknown";
  const uint8_t k = c.code;
  switch (c.layer) {
    case TermLayer::kRdmap: {
      static const char* const n[] = {"invalid STag",
                                      "base or bounds violation",
                                      "access rights violation",
                                      "STag not associated with stream",
                                      "TO wrap",
                                      "invalid RDMAP version",
                                      "unexpected opcode",
                                      "catastrophic error, localized to stream",
                                      "catastrophic error, global",
                                      "STag cannot be invalidated"};
      if (c.etype == kRdmapLocalCatastrophic && k == 0) return "local catastrophic error";
      return k <= 9 ? n[k] : "unspecified error";
    }
    case TermLayer::kDdp: {
      if (c.etype == kDdpLocalCatastrophic) return "DDP local catastrophic error";
      static const char* const t[] = {"invalid STag", "base or bounds violation",
                                      "STag not associated with stream", "TO wrap",
                                      "invalid DDP version"};
      static const char* const u[] = {"",
                                      "invalid QN",
                                      "invalid MSN - no buffer available",
                                      "invalid MSN - MSN range",
                                      "invalid MO",
                                      "DDP message too long",
                                      "invalid DDP version"};
      return c.etype == kDdpTagged ? t[k] : u[k];
    }
    case TermLayer::kLlp: {
      static const char* const l[] = {"",
                                      "TCP connection closed",
                                      "MPA CRC error",
                                      "marker and ULPDU length mismatch",
                                      "invalid MPA request or reply",
                                      "local catastrophic error",
                                      "insufficient IRD resources",
                                      "no matching RTR option"};
      return l[k];
    }
  }
  return "unknown";
}

namespace {
constexpr TerminateCode R(uint8_t e, uint8_t c) { return {TermLayer::kRdmap, e, c}; }
constexpr TerminateCode D(uint8_t e, uint8_t c) { return {TermLayer::kDdp, e, c}; }
constexpr TerminateCode L(uint8_t c) { return {TermLayer::kLlp, kLlpMpa, c}; }
constexpr uint8_t kDdpHdr = kTermAttachDdp;
constexpr uint8_t kAll = kTermAttachDdp | kTermAttachRdma;

// THE table. Rationale for the choices the RFCs leave open is in docs/wire.md.
constexpr ViolationInfo kTable[] = {
    {WireError::kNone, R(kRdmapRemoteOperation, kRdmapUnspecified), kTermAttachNone, "none"},
    {WireError::kUlpduTooShort, R(kRdmapRemoteOperation, kRdmapCatastrophicStream), kTermAttachNone,
     "ULPDU too short for its DDP header"},
    {WireError::kUlpduTooLong, R(kRdmapRemoteOperation, kRdmapCatastrophicStream), kDdpHdr,
     "ULPDU longer than allowed"},
    {WireError::kDdpVersionTagged, D(kDdpTagged, kDdpTagInvalidVersion), kDdpHdr,
     "invalid DDP version (tagged)"},
    {WireError::kDdpVersionUntagged, D(kDdpUntagged, kDdpUntagInvalidVersion), kDdpHdr,
     "invalid DDP version (untagged)"},
    {WireError::kRdmapVersion, R(kRdmapRemoteOperation, kRdmapInvalidVersion), kDdpHdr,
     "invalid RDMAP version"},
    {WireError::kReservedOpcode, R(kRdmapRemoteOperation, kRdmapUnexpectedOpcode), kDdpHdr,
     "reserved opcode"},
    {WireError::kUnsupportedOpcode, R(kRdmapRemoteOperation, kRdmapUnexpectedOpcode), kDdpHdr,
     "unsupported RFC 7306 opcode"},
    {WireError::kTaggedFlagMismatch, R(kRdmapRemoteOperation, kRdmapUnexpectedOpcode), kDdpHdr,
     "DDP tagged flag does not match opcode"},
    {WireError::kInvalidQn, D(kDdpUntagged, kDdpUntagInvalidQn), kDdpHdr, "invalid QN"},
    {WireError::kReadRequestLength, R(kRdmapRemoteOperation, kRdmapCatastrophicStream), kDdpHdr,
     "Read Request with wrong length"},
    {WireError::kTerminateLength, R(kRdmapRemoteOperation, kRdmapCatastrophicStream), kDdpHdr,
     "Terminate with wrong length"},
    {WireError::kAtomicLength, R(kRdmapRemoteOperation, kRdmapCatastrophicStream), kDdpHdr,
     "atomic message with wrong length"},
    {WireError::kNotLastSegment, R(kRdmapRemoteOperation, kRdmapCatastrophicStream), kDdpHdr,
     "single-segment message without L"},
    {WireError::kControlMoNonZero, D(kDdpUntagged, kDdpUntagInvalidMo), kDdpHdr,
     "single-segment message with MO != 0"},
    {WireError::kCrcMismatch, L(kLlpCrcError), kTermAttachNone, "MPA CRC mismatch"},
    {WireError::kZeroStagWrite, D(kDdpTagged, kDdpTagInvalidStag), kDdpHdr, "RDMA Write to STag 0"},
    {WireError::kZeroStagReadResponse, D(kDdpTagged, kDdpTagInvalidStag), kDdpHdr,
     "Read Response with data to STag 0"},
    {WireError::kZeroStagReadSource, R(kRdmapRemoteProtection, kRdmapInvalidStag), kAll,
     "Read Request from source STag 0"},
    {WireError::kZeroStagInvalidate, R(kRdmapRemoteOperation, kRdmapCannotInvalidate), kDdpHdr,
     "Send with Invalidate of STag 0"},
    {WireError::kMsnOutOfRange, D(kDdpUntagged, kDdpUntagMsnRange), kDdpHdr, "MSN out of range"},
    {WireError::kNoBuffer, D(kDdpUntagged, kDdpUntagNoBuffer), kDdpHdr, "no receive buffer"},
    {WireError::kMoMismatch, D(kDdpUntagged, kDdpUntagInvalidMo), kDdpHdr, "invalid MO"},
    {WireError::kMessageTooLong, D(kDdpUntagged, kDdpUntagTooLong), kDdpHdr,
     "message too long for receive buffer"},
    {WireError::kInvalidMpaFrame, L(kLlpInvalidMpaFrame), kTermAttachNone,
     "invalid MPA request/reply"},
};
static_assert(sizeof(kTable) / sizeof(kTable[0]) == static_cast<size_t>(WireError::kCount));
constexpr bool table_in_order() {
  for (size_t i = 0; i < sizeof(kTable) / sizeof(kTable[0]); ++i)
    if (static_cast<size_t>(kTable[i].error) != i) return false;
  return true;
}
static_assert(table_in_order(), "violation table must be indexed by WireError");
}  // namespace

const ViolationInfo& violation_info(WireError e) {
  const size_t i = static_cast<size_t>(e);
  return kTable[i < static_cast<size_t>(WireError::kCount) ? i : 0];
}
const char* to_string(WireError e) { return violation_info(e).name; }

}  // namespace softndk::wire
