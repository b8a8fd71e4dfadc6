// SPDX-License-Identifier: Apache-2.0
// ddp/rdmap_control.h - the RDMAP control byte that rides in the DDP
// header's ULP field (RFC 5041 4.1): version, opcodes 0..7, the RFC 7306
// opcodes 8..11, the same-host opcodes, the per-opcode table (DDP model,
// queue number, single-segment rule, control body sizes) and the 28-byte
// Read Request body. Lives in ddp because the stream parser and the FPDU
// builder validate and emit these fields; rdmap builds on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace softndk::wire {

inline constexpr uint8_t kRdmapVersion = 1;
inline constexpr uint8_t kRdmapVersionMask = 0xC0;
inline constexpr uint8_t kRdmapOpcodeMask = 0x0F;

enum class Opcode : uint8_t {
  kWrite = 0x0,
  kReadRequest = 0x1,
  kReadResponse = 0x2,
  kSend = 0x3,
  kSendInvalidate = 0x4,
  kSendSolicited = 0x5,
  kSendSolicitedInvalidate = 0x6,
  kTerminate = 0x7,
  kImmediateData = 0x8,           // RFC 7306
  kImmediateDataSolicited = 0x9,  // RFC 7306
  kAtomicRequest = 0xA,           // RFC 7306
  kAtomicResponse = 0xB,          // RFC 7306
  // softndk's same-host fast path (docs/samehost.md): reserved opcodes that
  // go only to a softndk peer that completed the rendezvous, and that a
  // parser accepts only with ParserConfig::accept_samehost.
  kSamehostWrite = 0xC,         // tagged, 12- or 40-byte descriptor body
  kSamehostReadResponse = 0xD,  // tagged, 12- or 40-byte descriptor body
  kSamehostAck = 0xE,           // untagged, 4-byte count body
  kSamehostRing = 0xF,          // untagged, 4-byte ring size: the stream moves to the ring
};

// Queue numbers of the untagged model (RFC 5040 5.x; atomics per IWARP.md 5,
// UNCONFIRMED there, matching Wireshark).
inline constexpr uint32_t kQnSend = 0;
inline constexpr uint32_t kQnReadRequest = 1;
inline constexpr uint32_t kQnTerminate = 2;
inline constexpr uint32_t kQnAtomic = 3;
inline constexpr int kQnAny = -1;  // not checked (tagged, or RFC 7306 immediate data)

struct OpcodeInfo {
  const char* name;     // Wireshark-like display name ("Send", "Read Request", ...)
  bool tagged;          // DDP model the opcode requires
  int qn;               // required QN for untagged opcodes, kQnAny if unchecked
  bool single_segment;  // must be one segment with L=1 and MO=0
  bool rfc7306;         // extension opcode softndk does not implement
  bool has_invalidate;  // bytes 4-7 of the untagged header carry an STag
  uint8_t min_body;     // control body bytes after the DDP header (buffered by
  uint8_t max_body;     //   the parser instead of being placed); 0/0 = data
};
// The table behind opcode_info(), indexed by opcode (0x0..0xB).
extern const OpcodeInfo kOpcodeTable[12];
// nullptr for the reserved opcodes 0xC..0xF. Inline: the stream parser and
// the header validator consult it once or twice per FPDU.
inline const OpcodeInfo* opcode_info(uint8_t opcode) {
  return opcode < 12 ? &kOpcodeTable[opcode] : nullptr;
}
const char* opcode_name(uint8_t opcode);  // "Reserved" for 0xC..0xF
// The same-host opcodes 0xC..0xF (nullptr otherwise); valid on the wire only
// where a parser was told to accept them.
extern const OpcodeInfo kSamehostOpcodeTable[4];
inline const OpcodeInfo* samehost_opcode_info(uint8_t opcode) {
  return opcode >= 0xC && opcode <= 0xF ? &kSamehostOpcodeTable[opcode - 0xC] : nullptr;
}
// opcode_info(), or for 0xC..0xF samehost_opcode_info() when `samehost`.
inline const OpcodeInfo* opcode_info(uint8_t opcode, bool samehost) {
  const OpcodeInfo* i = opcode_info(opcode);
  return i != nullptr || !samehost ? i : samehost_opcode_info(opcode);
}

constexpr uint8_t rdmap_ctrl(Opcode op) {
  return static_cast<uint8_t>((kRdmapVersion << 6) | static_cast<uint8_t>(op));
}

// ---- RDMA Read Request body (RFC 5040 4.4) ----
inline constexpr size_t kReadRequestBodySize = 28;
struct ReadRequestBody {
  uint32_t sink_stag = 0;
  uint64_t sink_to = 0;
  uint32_t size = 0;
  uint32_t source_stag = 0;
  uint64_t source_to = 0;
  bool operator==(const ReadRequestBody&) const = default;
};
std::optional<ReadRequestBody> decode_read_request(std::span<const uint8_t> body);
void encode_read_request(const ReadRequestBody& b, uint8_t out[kReadRequestBodySize]);

// Fixed control body sizes the opcode table refers to (Terminate: RFC 5040
// 4.8; atomics: rdmap/rdmap_codec.h).
inline constexpr size_t kTerminateControlSize = 4;
inline constexpr size_t kTerminateMinPayload = kTerminateControlSize;
inline constexpr size_t kTerminateMaxPayload = 4 + 2 + 18 + 28;  // 52
inline constexpr size_t kAtomicRequestBodySize = 52;
inline constexpr size_t kAtomicResponseBodySize = 12;

}  // namespace softndk::wire
