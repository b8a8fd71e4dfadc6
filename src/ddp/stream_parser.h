// SPDX-License-Identifier: Apache-2.0
// ddp/stream_parser.h — the streaming FPDU receive parser (MPA framing + DDP +
// RDMAP headers) that the data path is built on.
// Owns: turning the TCP byte stream after the MPA Reply into placement events
// before payload bytes are read, so the transport can recv() payloads straight
// into registered memory; CRC32c over the wire bytes as they pass; detection
// of every header-level violation (see rdmap/terminate.h WireError).
// Allocation-free, no sockets, no markers (softndk refuses them).
//
// Two ways to drive it:
//
//  (a) Buffer mode — the caller holds a buffer with any number of bytes
//      (one byte, a partial header, many FPDUs):
//        std::span<const uint8_t> in = buf;
//        for (;;) {
//          Event ev = p.next(in);          // consumes from `in`
//          if (ev.kind == EventKind::kNeedMore) break;   // `in` is empty
//          ...kPlacement / kPayload (ev.data aliases `in`) / kSegmentDone / kError
//        }
//
//  (b) Direct placement — the transport reads exactly what the parser wants:
//        if (p.state() == State::kPayload) {
//          n = recv(fd, target + p.segment().placement_offset(...), p.bytes_wanted());
//          p.consume_payload({target_ptr, n});      // parser CRCs the placed bytes
//          // or: crc = crc32c_update(p.crc_state(), ...); p.consume_payload(n, crc);
//        } else {
//          n = recv(fd, small, p.bytes_wanted());   // header/trailer: never over-reads
//          std::span<const uint8_t> in{small, n};
//          while (!in.empty()) handle(p.next(in));
//        }
//      kPlacement is announced before any payload byte is consumed; in mode
//      (b) the caller must not call next() with payload bytes it has already
//      placed itself (use consume_payload for them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ddp/ddp_header.h"
#include "ddp/rdmap_control.h"
#include "ddp/wire_error.h"

namespace softndk::wire {

struct ParserConfig {
  bool crc = false;  // MPA CRC negotiated: verify it (otherwise the field is ignored, as siw does)
  bool accept_rfc7306 = false;  // deliver opcodes 0x8..0xB instead of kUnsupportedOpcode
  uint32_t max_ulpdu = 0xFFFF;  // larger ULPDU_Length -> kUlpduTooLong
  // Buffer mode, fewer events: a kPlacement also carries the payload bytes
  // already in the buffer (`data`, offset 0), and the event whose payload
  // ends the segment also consumes and verifies a trailer that is wholly in
  // the buffer (`segment_done`), instead of a separate kPayload and
  // kSegmentDone. Same checks, same order: a CRC mismatch still arrives as
  // its own kError after the payload. Off by default (the event-per-step
  // protocol the tests spell out); the engine turns it on.
  bool coalesce = false;
  // Accept softndk's same-host opcodes 0xC..0xE (docs/samehost.md) instead
  // of refusing them as reserved. Off unless the same-host path is enabled.
  bool accept_samehost = false;
};

// One FPDU's decoded header, valid from kPlacement until the next call that
// consumes header bytes of the following FPDU (spans alias parser storage).
struct SegmentInfo {
  DdpHeader hdr;
  uint16_t ulpdu_len = 0;
  uint8_t pad = 0;
  uint32_t payload_len =
      0;  // bytes to place; 0 for control messages (Read Request, Terminate, atomics)
  std::span<const uint8_t> header_bytes;  // the raw 14/18-byte DDP header (for Terminate's copy)
  std::span<const uint8_t> body;          // control body (Read Request 28 B, Terminate, atomics)
  ReadRequestBody read;                   // decoded when hdr.opcode() == kReadRequest
  uint32_t crc_field = 0;  // CRC field as received, little-endian decoded (valid at kSegmentDone)
  uint64_t stream_offset = 0;  // stream position of the FPDU's first byte

  Opcode opcode() const { return hdr.opcode(); }
  bool tagged() const { return hdr.tagged(); }
  bool last() const { return hdr.last(); }
  size_t wire_size() const { return 2u + ulpdu_len + pad + 4u; }
};

enum class EventKind : uint8_t {
  kNeedMore,   // input exhausted; feed more bytes
  kPlacement,  // header decoded and valid; payload not yet consumed
  kPayload,    // `data` = next payload chunk (buffer mode), at `offset` within the segment payload
  kSegmentDone,  // pad + CRC consumed and (if negotiated) verified
  kError,        // violation; sticky. `error`/`terminate`; `segment` set if the header was decoded
};

struct Event {
  EventKind kind = EventKind::kNeedMore;
  const SegmentInfo* segment = nullptr;
  std::span<const uint8_t> data;  // kPayload; with `coalesce` also kPlacement
  uint32_t offset = 0;
  WireError error = WireError::kNone;
  // `coalesce` only: this kPlacement/kPayload also ended the segment (what a
  // kSegmentDone would have said); `segment->crc_field` is valid.
  bool segment_done = false;
  TerminateCode terminate() const { return terminate_code_for(error); }
};

class StreamParser {
 public:
  enum class State : uint8_t { kHeader, kPayload, kTrailer, kError };

  explicit StreamParser(const ParserConfig& cfg = {}) : cfg_(cfg) {}

  // Buffer mode: consumes bytes from the front of `in`, returns one event.
  Event next(std::span<const uint8_t>& in);

  State state() const { return state_; }
  // Exact number of bytes the parser can take before its next decision:
  // header/trailer bytes still missing (never crosses into payload), or the
  // payload bytes left in kPayload.
  size_t bytes_wanted() const;
  size_t payload_remaining() const { return pay_rem_; }
  // Waiting for the first byte of a new FPDU (wire traces start there).
  bool at_fpdu_boundary() const { return state_ == State::kHeader && stage_ == 0 && have_ == 0; }
  uint32_t payload_offset() const { return pay_off_; }
  const SegmentInfo& segment() const { return seg_; }

  // Direct placement: the caller consumed payload bytes itself. The first
  // form CRCs `placed` (the bytes as they now sit in target memory); the
  // second takes the running CRC state the caller computed from crc_state()
  // (ignored when CRC is off). Both return false (and change nothing) if
  // not in kPayload or if more than payload_remaining() is claimed.
  bool consume_payload(std::span<const uint8_t> placed);
  bool consume_payload(size_t n, uint32_t crc_state_after);
  uint32_t crc_state() const { return crc_; }

  WireError error() const { return err_; }
  uint64_t bytes_consumed() const { return consumed_; }
  const ParserConfig& config() const { return cfg_; }
  void reset();

 private:
  // Outcome of a header stage; next() turns it into the Event in place (a
  // returned Event copied on costs a store-forwarding stall per FPDU).
  enum class Step : uint8_t { kNeedMore, kPlacement, kError };
  Step fail(WireError e, bool have_header);  // sticky kError state
  Step header_complete(const uint8_t* src);
  // Pad + CRC at `t` (input or tbuf_): records the CRC field and checks it
  // when CRC is negotiated; changes no state besides seg_.crc_field.
  bool trailer_ok(const uint8_t* t);
  void end_segment();  // back to kHeader for the next FPDU
  // `coalesce`: adds to `ev` the payload in `in` and, if the segment's
  // payload is complete, a trailer wholly in `in` that verifies.
  void coalesce(std::span<const uint8_t>& in, Event& ev);

  ParserConfig cfg_;
  State state_ = State::kHeader;
  uint8_t stage_ = 0;    // 0: length + control bytes, 1: DDP header, 2: control body
  uint8_t have_ = 0;     // bytes in hbuf_
  uint8_t need_ = 4;     // bytes hbuf_ must hold for the current stage
  uint8_t tr_have_ = 0;  // trailer bytes received
  uint8_t tr_need_ = 0;  // pad + 4
  uint32_t pay_rem_ = 0;
  uint32_t pay_off_ = 0;
  uint32_t crc_ = 0;
  WireError err_ = WireError::kNone;
  bool err_has_header_ = false;
  uint64_t consumed_ = 0;
  SegmentInfo seg_;
  alignas(8) uint8_t hbuf_[2 + kUntaggedHeaderSize + kTerminateMaxPayload + 2] = {};
  uint8_t tbuf_[8] = {};
};

// ---- one-shot view of a complete FPDU in a contiguous buffer (zero copy) ----
struct FpduView {
  DdpHeader hdr;
  uint16_t ulpdu_len = 0;
  uint8_t pad = 0;
  std::span<const uint8_t> bytes;       // the whole FPDU
  std::span<const uint8_t> ddp_header;  // 14/18 bytes
  std::span<const uint8_t> body;        // control body (empty for data opcodes)
  std::span<const uint8_t> payload;     // placed payload (empty for control opcodes)
  std::span<const uint8_t> pad_bytes;   // as received (siw leaves stale bytes there)
  uint32_t crc_field = 0;               // as received (little-endian decoded)
  uint32_t crc_computed = 0;            // CRC32c over length..pad (always computed)
  size_t wire_size() const { return bytes.size(); }
};
struct FpduDecodeResult {
  WireError error = WireError::kNone;
  bool need_more = false;  // `in` holds less than one FPDU (needed = bytes required)
  size_t needed = 0;
};
// Decodes the FPDU at the start of `in`; validates like StreamParser (CRC only
// if cfg.crc).
FpduDecodeResult decode_fpdu(std::span<const uint8_t> in, FpduView& out,
                             const ParserConfig& cfg = {});

}  // namespace softndk::wire
