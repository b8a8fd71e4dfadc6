// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the streaming FPDU parser. Input = 1 config byte (bit 0
// CRC, bit 1 RFC 7306), 2 split-seed bytes, then the stream. The stream is
// parsed whole and in pieces chosen from the seed; the event sequences must be
// identical, also with coalesced events, and decode_fpdu must agree on every
// complete FPDU.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ddp/fpdu_builder.h"
#include "ddp/stream_parser.h"
#include "rdmap/terminate.h"

using namespace softndk::wire;

namespace {
struct Trace {
  std::vector<uint64_t> ev;
  std::vector<uint8_t> payload;
};

// Coalesced events (ParserConfig::coalesce) are recorded as the steps they
// stand for, so that both modes must yield the same trace.
void record(Trace& t, const Event& e, bool coalesce) {
  uint64_t v = static_cast<uint64_t>(e.kind) << 56;
  if (e.kind == EventKind::kPlacement) {
    const SegmentInfo& s = *e.segment;
    v |= uint64_t{s.hdr.ddp_ctrl} << 40 | uint64_t{s.hdr.rdmap_ctrl} << 32 | s.payload_len;
    t.ev.push_back(v);
    t.ev.push_back(s.hdr.tagged() ? s.hdr.to : (uint64_t{s.hdr.msn} << 32 | s.hdr.mo));
    t.ev.push_back(s.hdr.stag ^ s.hdr.qn ^ s.hdr.rsvd_ulp);
    if (!coalesce && !e.data.empty()) std::abort();
  } else if (e.kind == EventKind::kError) {
    t.ev.push_back(v | static_cast<uint8_t>(e.error));
  } else if (e.kind == EventKind::kSegmentDone) {
    t.ev.push_back(v | e.segment->crc_field);
  } else if (e.kind == EventKind::kPayload) {
    if (e.data.empty()) std::abort();
  }
  if (e.kind == EventKind::kPlacement || e.kind == EventKind::kPayload)
    t.payload.insert(t.payload.end(), e.data.begin(), e.data.end());
  if (e.segment_done) {
    if (!coalesce || (e.kind != EventKind::kPlacement && e.kind != EventKind::kPayload))
      std::abort();
    t.ev.push_back(static_cast<uint64_t>(EventKind::kSegmentDone) << 56 | e.segment->crc_field);
  }
}

Trace run(std::span<const uint8_t> s, const ParserConfig& cfg, uint16_t seed) {
  StreamParser p(cfg);
  Trace t;
  uint32_t x = seed | 1u;
  size_t off = 0;
  while (off < s.size()) {
    size_t n = s.size() - off;
    if (seed != 0) {
      x = x * 1103515245u + 12345u;
      n = std::min<size_t>(n, 1 + (x >> 16) % 97);
    }
    std::span<const uint8_t> in = s.subspan(off, n);
    off += n;
    for (;;) {
      Event e = p.next(in);
      if (e.kind == EventKind::kNeedMore) break;
      record(t, e, cfg.coalesce);
      if (e.kind == EventKind::kError) return t;
    }
    if (!in.empty()) std::abort();
  }
  return t;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  ParserConfig cfg;
  cfg.crc = data[0] & 1;
  cfg.accept_rfc7306 = data[0] & 2;
  const uint16_t seed = static_cast<uint16_t>(data[1] << 8 | data[2]);
  std::span<const uint8_t> s(data + 3, size - 3);
  const Trace whole = run(s, cfg, 0);
  const Trace split = run(s, cfg, seed ? seed : 1);
  if (whole.ev != split.ev || whole.payload != split.payload) std::abort();
  // The engine's coalesced mode: the same checks, in the same order.
  ParserConfig co = cfg;
  co.coalesce = true;
  const Trace cwhole = run(s, co, 0);
  const Trace csplit = run(s, co, seed ? seed : 1);
  if (cwhole.ev != whole.ev || cwhole.payload != whole.payload) std::abort();
  if (csplit.ev != whole.ev || csplit.payload != whole.payload) std::abort();

  // decode_fpdu agrees, and every accepted FPDU re-encodes to its bytes.
  size_t off = 0;
  std::vector<uint8_t> re(70000);
  while (off < s.size()) {
    FpduView v;
    auto r = decode_fpdu(s.subspan(off), v, cfg);
    if (r.need_more || r.error != WireError::kNone) break;
    const size_t n = encode_fpdu(v.hdr, v.body, v.payload, cfg.crc, re, v.pad_bytes);
    if (n != v.wire_size()) std::abort();
    // Without CRC the received field is ignored, so only compare up to it.
    const size_t cmp = cfg.crc ? n : n - 4;
    if (std::memcmp(re.data(), v.bytes.data(), cmp) != 0) std::abort();
    off += n;
  }
  return 0;
}
