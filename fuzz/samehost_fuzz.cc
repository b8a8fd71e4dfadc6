// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the same-host bytes (rdmap/samehost_wire.h) - the
// rendezvous message, the descriptor and ack bodies -, the validation of
// the ring indices a peer writes (rdmap/ring_index.h), and the stream parser
// with the same-host opcodes accepted (the ring marker 0xF among them). Whatever parses must
// re-encode to the same bytes; the parser must never report a payload for them.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ddp/stream_parser.h"
#include "transport/samehost/ring_index.h"
#include "transport/samehost/samehost_wire.h"

using namespace softndk::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  if (auto m = parse_samehost_msg(in)) {
    uint8_t out[kSamehostMsgSize];
    if (encode_samehost_msg(*m, out) != size || std::memcmp(out, data, size) != 0) std::abort();
  }
  if (auto d = parse_samehost_desc(in)) {
    uint8_t out[kSamehostSegDescSize];
    if (d->length == 0 || d->source + d->length < d->source) std::abort();
    if (d->segment &&
        (d->segment->fd > 0x7FFFFFFFu || d->segment->offset + d->length < d->segment->offset))
      std::abort();
    if (encode_samehost_desc(*d, out) != size || std::memcmp(out, data, size) != 0) std::abort();
  }
  if (auto n = parse_samehost_ack(in)) {
    uint8_t out[kSamehostAckSize];
    if (*n == 0 || encode_samehost_ack(*n, out) != size || std::memcmp(out, data, size) != 0)
      std::abort();
  }
  // Ring indices: whatever the peer wrote, an accepted one never lets a
  // side read or write more than the ring holds, or beyond the other side.
  if (size >= 25) {
    uint64_t prod, cons, seen;
    std::memcpy(&prod, data, 8);
    std::memcpy(&cons, data + 8, 8);
    std::memcpy(&seen, data + 16, 8);
    const uint64_t ring = uint64_t{1} << (data[24] % 40);
    const int64_t r = softndk::samehost::ring_readable(prod, cons, ring);
    if (r >= 0 && (static_cast<uint64_t>(r) > ring || cons + static_cast<uint64_t>(r) != prod))
      std::abort();
    if (r < 0 && prod - cons <= ring) std::abort();
    const int64_t w = softndk::samehost::ring_writable(prod, cons, seen, ring);
    if (w >= 0 && (static_cast<uint64_t>(w) > ring || prod - cons > ring ||
                   cons - seen > prod - seen || prod - cons + static_cast<uint64_t>(w) != ring))
      std::abort();
  }
  // The receive parser of a stream with the fast path enabled.
  ParserConfig c;
  c.accept_samehost = true;
  c.coalesce = (size & 1) != 0;
  StreamParser p(c);
  std::span<const uint8_t> s = in;
  for (int i = 0; i < 4096; ++i) {
    Event ev = p.next(s);
    if (ev.kind == EventKind::kNeedMore || ev.kind == EventKind::kError) break;
    if (ev.kind == EventKind::kPlacement) {
      const uint8_t op = static_cast<uint8_t>(ev.segment->opcode());
      if (op >= 0xC && ev.segment->payload_len != 0) std::abort();
      if (op >= 0xC && op <= 0xD && ev.segment->body.size() != kSamehostDescSize &&
          ev.segment->body.size() != kSamehostSegDescSize)
        std::abort();
      if (op == 0xE && ev.segment->body.size() != kSamehostAckSize) std::abort();
      if (op == 0xF && (ev.segment->payload_len != 0 || ev.segment->body.size() != 4)) std::abort();
    }
  }
  return 0;
}
