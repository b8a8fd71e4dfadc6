// SPDX-License-Identifier: Apache-2.0
// rdmap/terminate.cc — Terminate codes, violation table, build and parse.
#include "rdmap/terminate.h"

#include <cstring>

#include "util/bytes.h"

namespace softndk::wire {

using namespace term;

size_t terminate_payload_size(const TerminateMessage& t) {
  return kTerminateControlSize + (t.d ? 2 + t.ddp_header.size() : 0) +
         (t.r ? t.rdma_header.size() : 0);
}

size_t encode_terminate_payload(const TerminateMessage& t, std::span<uint8_t> out,
                                TerminateLayout layout) {
  if (t.d && t.ddp_header.size() != 14 && t.ddp_header.size() != 18) return 0;
  if (t.r && t.rdma_header.size() != 28) return 0;
  if (t.code.etype > 0xF || static_cast<uint8_t>(t.code.layer) > 0xF) return 0;
  const size_t n = terminate_payload_size(t);
  if (out.size() < n) return 0;
  const uint8_t layer = static_cast<uint8_t>(t.code.layer);
  uint8_t* p = out.data();
  if (layout == TerminateLayout::kRfc) {
    p[0] = static_cast<uint8_t>(layer << 4 | t.code.etype);
    p[2] = static_cast<uint8_t>((t.m ? 0x80 : 0) | (t.d ? 0x40 : 0) | (t.r ? 0x20 : 0));
  } else {
    p[0] = static_cast<uint8_t>(t.code.etype << 4 | layer);
    p[2] = static_cast<uint8_t>((t.m ? 0x01 : 0) | (t.d ? 0x02 : 0) | (t.r ? 0x04 : 0));
  }
  p[1] = t.code.code;
  p[3] = 0;
  p += 4;
  if (t.d) {
    store_be16(p, t.ddp_segment_length);
    std::memcpy(p + 2, t.ddp_header.data(), t.ddp_header.size());
    p += 2 + t.ddp_header.size();
  }
  if (t.r) std::memcpy(p, t.rdma_header.data(), t.rdma_header.size());
  return n;
}

namespace {
struct Reading {
  bool valid = false;
  TerminateMessage msg;
};

Reading read_as(std::span<const uint8_t> pl, TerminateLayout layout) {
  Reading rd;
  const uint8_t b0 = pl[0], b2 = pl[2], b3 = pl[3];
  uint8_t layer, etype;
  bool m, d, r, reserved_ok;
  if (layout == TerminateLayout::kRfc) {
    layer = b0 >> 4;
    etype = b0 & 0xF;
    m = b2 & 0x80;
    d = b2 & 0x40;
    r = b2 & 0x20;
    reserved_ok = (b2 & 0x1F) == 0 && b3 == 0;
  } else {
    layer = b0 & 0xF;
    etype = b0 >> 4;
    m = b2 & 0x01;
    d = b2 & 0x02;
    r = b2 & 0x04;
    reserved_ok = (b2 & 0xF8) == 0 && b3 == 0;
  }
  if (layer > 2 || !reserved_ok) return rd;
  TerminateMessage& t = rd.msg;
  t.code = {static_cast<TermLayer>(layer), etype, pl[1]};
  t.m = m;
  t.d = d;
  t.r = r;
  size_t off = kTerminateControlSize;
  if (d) {
    // DDP Segment Length, then the offending header; its T bit gives its size.
    if (pl.size() < off + 3) return rd;
    t.ddp_segment_length = load_be16(&pl[off]);
    const size_t hl = (pl[off + 2] & 0x80) ? 14 : 18;
    if (pl.size() < off + 2 + hl) return rd;
    t.ddp_header = pl.subspan(off + 2, hl);
    off += 2 + hl;
  }
  if (r) {
    if (pl.size() < off + 28) return rd;
    t.rdma_header = pl.subspan(off, 28);
  }
  rd.valid = true;
  return rd;
}

bool same(const TerminateMessage& a, const TerminateMessage& b) {
  return a.code == b.code && a.m == b.m && a.d == b.d && a.r == b.r;
}
}  // namespace

TerminateParseResult parse_terminate_payload(std::span<const uint8_t> payload) {
  TerminateParseResult res;
  if (payload.size() < kTerminateControlSize) return res;
  const Reading rfc = read_as(payload, TerminateLayout::kRfc);
  const Reading siw = read_as(payload, TerminateLayout::kSiwSwapped);
  auto pick = [&](const Reading& rd, TerminateLayout l) {
    res.ok = true;
    res.msg = rd.msg;
    res.layout = l;
  };
  if (rfc.valid && !siw.valid) {
    pick(rfc, TerminateLayout::kRfc);
  } else if (siw.valid && !rfc.valid) {
    pick(siw, TerminateLayout::kSiwSwapped);
  } else if (rfc.valid && siw.valid) {
    if (same(rfc.msg, siw.msg)) {  // symmetric byte 0 and no header bits
      pick(rfc, TerminateLayout::kRfc);
    } else {
      res.ambiguous = true;
      const bool rk = terminate_code_known(rfc.msg.code);
      const bool sk = terminate_code_known(siw.msg.code);
      if (rk != sk) {
        pick(rk ? rfc : siw, rk ? TerminateLayout::kRfc : TerminateLayout::kSiwSwapped);
      } else if (siw.msg.code.layer == TermLayer::kLlp && !siw.msg.d &&
                 rfc.msg.code.layer != TermLayer::kLlp) {
        // siw attaches no headers only to LLP errors (IWARP.md 9.6).
        pick(siw, TerminateLayout::kSiwSwapped);
      } else {
        pick(rfc, TerminateLayout::kRfc);  // the standard wins a tie
      }
    }
  }
  return res;
}

TerminateMessage terminate_for(WireError e, std::span<const uint8_t> ddp_header,
                               uint16_t segment_payload_len,
                               std::span<const uint8_t> read_request_body) {
  const ViolationInfo& v = violation_info(e);
  TerminateMessage t;
  t.code = v.term;
  if ((v.attach & kTermAttachDdp) && (ddp_header.size() == 14 || ddp_header.size() == 18)) {
    t.m = true;
    t.d = true;
    t.ddp_segment_length = segment_payload_len;
    t.ddp_header = ddp_header;
  }
  if ((v.attach & kTermAttachRdma) && read_request_body.size() == 28) {
    t.r = true;
    t.rdma_header = read_request_body;
  }
  return t;
}

}  // namespace softndk::wire
