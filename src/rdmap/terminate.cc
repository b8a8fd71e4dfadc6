// rdmap/terminate.cc — Terminate codes, violation table, build and parse.
#include "rdmap/terminate.h"

#include <cstring>

#include "util/bytes.h"

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
