// SPDX-License-Identifier: Apache-2.0
// rdmap/terminate.h — Terminate messages (RFC 5040 4.8).
// Owns: building the Terminate payload (RFC layout), parsing a peer's
// Terminate in either the RFC layout or Linux siw's nibble-swapped layout
// (IWARP.md 9.6), and the Terminate to send for a WireError. The codes and
// the WireError -> TerminateCode table live in ddp/wire_error.h (the DDP
// parser reports them), included here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ddp/rdmap_control.h"
#include "ddp/wire_error.h"

namespace softndk::wire {

// ---- Terminate message ----

enum class TerminateLayout : uint8_t {
  kRfc,         // layer in the high nibble of byte 0, M/D/R = 0x80/0x40/0x20 of byte 2
  kSiwSwapped,  // Linux siw on little-endian: etype high nibble, M/D/R = 0x01/0x02/0x04
};

struct TerminateMessage {
  TerminateCode code;
  bool m = false;  // DDP segment length meaningful
  bool d = false;  // DDP segment length + DDP header attached
  bool r = false;  // RDMA (Read Request) header attached
  uint16_t ddp_segment_length = 0;
  std::span<const uint8_t> ddp_header;   // 14 or 18 bytes when d
  std::span<const uint8_t> rdma_header;  // 28 bytes when r
};

size_t terminate_payload_size(const TerminateMessage& t);
// Writes the Terminate payload (what follows the 18-byte untagged header).
// Returns bytes written, 0 if `out` is too small or the message inconsistent
// (d with a header that is not 14/18 bytes, r without 28 bytes).
size_t encode_terminate_payload(const TerminateMessage& t, std::span<uint8_t> out,
                                TerminateLayout layout = TerminateLayout::kRfc);

struct TerminateParseResult {
  bool ok = false;
  TerminateMessage msg;  // spans alias the input
  TerminateLayout layout = TerminateLayout::kRfc;
  // Both layouts read as valid *and* disagree; `layout` is the heuristic's pick.
  bool ambiguous = false;
};
// Parses a Terminate payload in either layout (heuristic in terminate.cc and
// docs/wire.md).
TerminateParseResult parse_terminate_payload(std::span<const uint8_t> payload);

// Builds the Terminate a receiver should send for `e`, attaching the offending
// DDP header (`ddp_header`, 14/18 bytes, may be empty when unknown) and, for
// Read Request errors, the 28-byte Read Request body, per the table's attach
// bits. `segment_payload_len` goes into the DDP Segment Length field (siw puts
// the offending segment's payload length there).
TerminateMessage terminate_for(WireError e, std::span<const uint8_t> ddp_header,
                               uint16_t segment_payload_len,
                               std::span<const uint8_t> read_request_body = {});

}  // namespace softndk::wire
