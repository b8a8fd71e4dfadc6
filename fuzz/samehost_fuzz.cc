// libFuzzer harness: the same-host bytes (rdmap/samehost_wire.h) - the
// rendezvous message, the descriptor and ack bodies - and the stream parser
// with the same-host opcodes accepted. Whatever parses must re-encode to
// the same bytes; the parser must never report a payload for them.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ddp/stream_parser.h"
#include "rdmap/samehost_wire.h"

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
      if (op >= 0xC && op <= 0xE && ev.segment->payload_len != 0) std::abort();
      if (op >= 0xC && op <= 0xD && ev.segment->body.size() != kSamehostDescSize &&
          ev.segment->body.size() != kSamehostSegDescSize)
        std::abort();
      if (op == 0xE && ev.segment->body.size() != kSamehostAckSize) std::abort();
      if (op == 0xF) std::abort();  // still reserved
    }
  }
  return 0;
}
