// SPDX-License-Identifier: Apache-2.0
#include "spnego.h"

#include <algorithm>

namespace smb::ntlm {

namespace {

// ---- DER writing: build inside out.
void put_len(std::vector<uint8_t>* out, size_t n) {
  if (n < 0x80) {
    out->push_back(uint8_t(n));
    return;
  }
  uint8_t b[4];
  int k = 0;
  for (size_t v = n; v; v >>= 8) b[k++] = uint8_t(v);
  out->push_back(uint8_t(0x80 | k));
  while (k) out->push_back(b[--k]);
}
std::vector<uint8_t> tlv(uint8_t tag, std::span<const uint8_t> content) {
  std::vector<uint8_t> out{tag};
  put_len(&out, content.size());
  out.insert(out.end(), content.begin(), content.end());
  return out;
}
void append(std::vector<uint8_t>* out, const std::vector<uint8_t>& v) {
  out->insert(out->end(), v.begin(), v.end());
}

// ---- DER reading.
struct Tlv {
  uint8_t tag = 0;
  std::span<const uint8_t> content;
};
// Reads one element at the front of `in`, advancing it.
SpnegoError next(std::span<const uint8_t>* in, Tlv* t) {
  if (in->size() < 2) return SpnegoError::kTruncated;
  t->tag = (*in)[0];
  if ((t->tag & 0x1f) == 0x1f) return SpnegoError::kBadTag;  // multi-byte tags: not in SPNEGO
  size_t len = (*in)[1], hdr = 2;
  if (len & 0x80) {
    const size_t k = len & 0x7f;
    if (k == 0 || k > 4) return SpnegoError::kBadLength;  // indefinite or absurd
    if (in->size() < 2 + k) return SpnegoError::kTruncated;
    len = 0;
    for (size_t i = 0; i < k; ++i) len = len << 8 | (*in)[2 + i];
    hdr = 2 + k;
  }
  if (len > in->size() - hdr) return SpnegoError::kTruncated;
  t->content = in->subspan(hdr, len);
  *in = in->subspan(hdr + len);
  return SpnegoError::kNone;
}
SpnegoError expect(std::span<const uint8_t>* in, uint8_t tag, std::span<const uint8_t>* content) {
  Tlv t;
  if (auto e = next(in, &t); e != SpnegoError::kNone) return e;
  if (t.tag != tag) return SpnegoError::kBadTag;
  *content = t.content;
  return SpnegoError::kNone;
}
// [n] EXPLICIT OCTET STRING
SpnegoError octets(std::span<const uint8_t> ctx, std::vector<uint8_t>* out) {
  std::span<const uint8_t> c;
  if (auto e = expect(&ctx, 0x04, &c); e != SpnegoError::kNone) return e;
  out->assign(c.begin(), c.end());
  return SpnegoError::kNone;
}

}  // namespace

const char* spnego_error_name(SpnegoError e) {
  switch (e) {
    case SpnegoError::kNone:
      return "none";
    case SpnegoError::kTruncated:
      return "SPNEGO element longer than its container";
    case SpnegoError::kBadTag:
      return "unexpected SPNEGO/DER tag";
    case SpnegoError::kBadLength:
      return "unsupported DER length form";
  }
  return "unknown";
}

std::vector<uint8_t> build_neg_token_init(const NegTokenInit& t) {
  std::vector<uint8_t> mechs;
  for (const auto& m : t.mech_types) append(&mechs, tlv(0x06, m));
  std::vector<uint8_t> seq;
  append(&seq, tlv(0xa0, tlv(0x30, mechs)));
  if (!t.mech_token.empty()) append(&seq, tlv(0xa2, tlv(0x04, t.mech_token)));
  if (!t.mech_list_mic.empty()) append(&seq, tlv(0xa3, tlv(0x04, t.mech_list_mic)));
  std::vector<uint8_t> body = tlv(0x06, kOidSpnego);
  append(&body, tlv(0xa0, tlv(0x30, seq)));
  return tlv(0x60, body);
}

SpnegoError parse_neg_token_init(std::span<const uint8_t> in, NegTokenInit* out) {
  out->mech_types.clear();
  out->mech_token.clear();
  out->mech_list_mic.clear();
  std::span<const uint8_t> app, oid, neg, seq;
  if (auto e = expect(&in, 0x60, &app); e != SpnegoError::kNone) return e;
  if (auto e = expect(&app, 0x06, &oid); e != SpnegoError::kNone) return e;
  if (!std::equal(oid.begin(), oid.end(), std::begin(kOidSpnego), std::end(kOidSpnego)))
    return SpnegoError::kBadTag;
  if (auto e = expect(&app, 0xa0, &neg); e != SpnegoError::kNone) return e;
  if (auto e = expect(&neg, 0x30, &seq); e != SpnegoError::kNone) return e;
  while (!seq.empty()) {
    Tlv f;
    if (auto e = next(&seq, &f); e != SpnegoError::kNone) return e;
    if (f.tag == 0xa0) {
      std::span<const uint8_t> list;
      if (auto e = expect(&f.content, 0x30, &list); e != SpnegoError::kNone) return e;
      while (!list.empty()) {
        std::span<const uint8_t> m;
        if (auto e = expect(&list, 0x06, &m); e != SpnegoError::kNone) return e;
        out->mech_types.emplace_back(m.begin(), m.end());
      }
    } else if (f.tag == 0xa2) {
      if (auto e = octets(f.content, &out->mech_token); e != SpnegoError::kNone) return e;
    } else if (f.tag == 0xa3) {
      // MS-SPNG: a server's [3] is negHints (a SEQUENCE), a client's is a MIC.
      if (!f.content.empty() && f.content[0] == 0x04)
        if (auto e = octets(f.content, &out->mech_list_mic); e != SpnegoError::kNone) return e;
    } else if (f.tag != 0xa1 && f.tag != 0xa4) {
      return SpnegoError::kBadTag;
    }
  }
  return SpnegoError::kNone;
}

std::vector<uint8_t> build_neg_token_resp(const NegTokenResp& t) {
  std::vector<uint8_t> seq;
  if (t.neg_state >= 0) {
    const uint8_t st[] = {uint8_t(t.neg_state)};
    append(&seq, tlv(0xa0, tlv(0x0a, st)));
  }
  if (!t.supported_mech.empty()) append(&seq, tlv(0xa1, tlv(0x06, t.supported_mech)));
  if (!t.response_token.empty()) append(&seq, tlv(0xa2, tlv(0x04, t.response_token)));
  if (!t.mech_list_mic.empty()) append(&seq, tlv(0xa3, tlv(0x04, t.mech_list_mic)));
  return tlv(0xa1, tlv(0x30, seq));
}

SpnegoError parse_neg_token_resp(std::span<const uint8_t> in, NegTokenResp* out) {
  *out = NegTokenResp{};
  std::span<const uint8_t> outer, seq;
  if (auto e = expect(&in, 0xa1, &outer); e != SpnegoError::kNone) return e;
  if (auto e = expect(&outer, 0x30, &seq); e != SpnegoError::kNone) return e;
  while (!seq.empty()) {
    Tlv f;
    if (auto e = next(&seq, &f); e != SpnegoError::kNone) return e;
    std::span<const uint8_t> c;
    switch (f.tag) {
      case 0xa0:
        if (auto e = expect(&f.content, 0x0a, &c); e != SpnegoError::kNone) return e;
        if (c.size() != 1) return SpnegoError::kBadLength;
        out->neg_state = c[0];
        break;
      case 0xa1:
        if (auto e = expect(&f.content, 0x06, &c); e != SpnegoError::kNone) return e;
        out->supported_mech.assign(c.begin(), c.end());
        break;
      case 0xa2:
        if (auto e = octets(f.content, &out->response_token); e != SpnegoError::kNone) return e;
        break;
      case 0xa3:
        if (auto e = octets(f.content, &out->mech_list_mic); e != SpnegoError::kNone) return e;
        break;
      default:
        return SpnegoError::kBadTag;
    }
  }
  return SpnegoError::kNone;
}

TokenKind token_kind(std::span<const uint8_t> in) {
  if (in.empty()) return TokenKind::kEmpty;
  if (in[0] == 0x60) return TokenKind::kNegTokenInit;
  if (in[0] == 0xa1) return TokenKind::kNegTokenResp;
  if (in.size() >= 8 && std::equal(in.begin(), in.begin() + 8, "NTLMSSP"))
    return TokenKind::kRawNtlmssp;
  return TokenKind::kUnknown;
}

}  // namespace smb::ntlm
