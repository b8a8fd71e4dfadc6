// SPDX-License-Identifier: Apache-2.0
// ddp/wire_error.h - every wire violation the DDP/RDMAP codec can detect
// (WireError), and the Terminate layer/etype/code (RFC 5040 4.8) each one
// maps to. Lives in ddp because the stream parser and the sequence checks
// report these; rdmap/terminate.h builds and parses the Terminate message
// on top of it.
#pragma once

#include <cstdint>

namespace softndk::wire {

// ---- codes ----
enum class TermLayer : uint8_t { kRdmap = 0, kDdp = 1, kLlp = 2 };

struct TerminateCode {
  TermLayer layer = TermLayer::kRdmap;
  uint8_t etype = 0;  // 4 bits
  uint8_t code = 0;
  bool operator==(const TerminateCode&) const = default;
};

namespace term {
// RDMAP (layer 0): etype 0 local catastrophic, 1 remote protection, 2 remote operation.
inline constexpr uint8_t kRdmapLocalCatastrophic = 0, kRdmapRemoteProtection = 1,
                         kRdmapRemoteOperation = 2;
inline constexpr uint8_t kRdmapInvalidStag = 0x00, kRdmapBaseBounds = 0x01,
                         kRdmapAccessRights = 0x02, kRdmapStagNotAssociated = 0x03,
                         kRdmapToWrap = 0x04, kRdmapInvalidVersion = 0x05,
                         kRdmapUnexpectedOpcode = 0x06, kRdmapCatastrophicStream = 0x07,
                         kRdmapCatastrophicGlobal = 0x08, kRdmapCannotInvalidate = 0x09,
                         kRdmapUnspecified = 0xFF;
// DDP (layer 1): etype 0 local catastrophic, 1 tagged buffer, 2 untagged buffer.
inline constexpr uint8_t kDdpLocalCatastrophic = 0, kDdpTagged = 1, kDdpUntagged = 2;
inline constexpr uint8_t kDdpTagInvalidStag = 0x00, kDdpTagBaseBounds = 0x01,
                         kDdpTagStagNotAssociated = 0x02, kDdpTagToWrap = 0x03,
                         kDdpTagInvalidVersion = 0x04;
inline constexpr uint8_t kDdpUntagInvalidQn = 0x01, kDdpUntagNoBuffer = 0x02,
                         kDdpUntagMsnRange = 0x03, kDdpUntagInvalidMo = 0x04,
                         kDdpUntagTooLong = 0x05, kDdpUntagInvalidVersion = 0x06;
// LLP (layer 2), etype 0 = MPA.
inline constexpr uint8_t kLlpMpa = 0;
inline constexpr uint8_t kLlpConnectionLost = 0x01, kLlpCrcError = 0x02, kLlpMarkerMismatch = 0x03,
                         kLlpInvalidMpaFrame = 0x04, kLlpLocalCatastrophic = 0x05,
                         kLlpInsufficientIrd = 0x06, kLlpNoMatchingRtr = 0x07;
}  // namespace term

// True if (layer, etype, code) is a combination the RFC tables define
// (strict pairing, used by the layout heuristic and by tests).
bool terminate_code_known(const TerminateCode& c);
const char* terminate_code_name(const TerminateCode& c);

// ---- the violation table ----
// Every protocol violation the wire codec can detect (stream parser) or that
// the consumer detects with the codec's helpers (ddp/sequence.h).
enum class WireError : uint8_t {
  kNone = 0,
  kUlpduTooShort,         // ULPDU_Length smaller than the DDP header its T bit implies
  kUlpduTooLong,          // above ParserConfig::max_ulpdu
  kDdpVersionTagged,      // DV != 1 on a tagged segment
  kDdpVersionUntagged,    // DV != 1 on an untagged segment
  kRdmapVersion,          // RV != 1
  kReservedOpcode,        // opcode 0xC..0xF
  kUnsupportedOpcode,     // RFC 7306 opcode 0x8..0xB (not accepted by config)
  kTaggedFlagMismatch,    // T bit does not match the opcode's DDP model
  kInvalidQn,             // QN not the opcode's queue
  kReadRequestLength,     // Read Request ULPDU != 18 + 28
  kTerminateLength,       // Terminate body < 4 or > 52 bytes
  kAtomicLength,          // atomic body length wrong (only with RFC 7306 on)
  kNotLastSegment,        // Read Request/Terminate/atomic/immediate with L=0
  kControlMoNonZero,      // single-segment message with MO != 0
  kCrcMismatch,           // MPA CRC check failed
  kZeroStagWrite,         // RDMA Write with STag 0 (siw's RTR uses STag 1)
  kZeroStagReadResponse,  // Read Response with STag 0 carrying payload
  kZeroStagReadSource,    // Read Request with source STag 0 and size > 0
  kZeroStagInvalidate,    // Send with Invalidate naming STag 0
  // Detected by the consumer with ddp/sequence.h helpers:
  kMsnOutOfRange,    // untagged MSN not the expected one
  kNoBuffer,         // no posted receive for the MSN
  kMoMismatch,       // MO does not continue the message
  kMessageTooLong,   // untagged message exceeds the receive buffer
  kInvalidMpaFrame,  // bad Request/Reply (only if FPDU mode could be assumed)
  kCount
};

// Terminate header-control bits to attach.
inline constexpr uint8_t kTermAttachNone = 0;
inline constexpr uint8_t kTermAttachDdp = 1;   // M + D: DDP segment length + DDP header
inline constexpr uint8_t kTermAttachRdma = 2;  // R: the Read Request header as well

struct ViolationInfo {
  WireError error;
  TerminateCode term;
  uint8_t attach;  // kTermAttach* bits
  const char* name;
};
const ViolationInfo& violation_info(WireError e);
inline TerminateCode terminate_code_for(WireError e) { return violation_info(e).term; }
const char* to_string(WireError e);

}  // namespace softndk::wire
