// SPDX-License-Identifier: Apache-2.0
#include "interim_codecs.h"

#include <algorithm>
#include <cstring>

#include "ntlm/ntlmv2.h"
#include "smb2/command.h"
#include "smbd/le.h"

namespace smb::client::interim {

namespace le = smbd::le;

void append_negotiate(const smb2::NegotiateRequest& r, const std::array<uint8_t, 32>& salt,
                      std::vector<uint8_t>* out) {
  const size_t base = out->size() - smb2::kHeaderSize;
  smb2::append_negotiate_request(r, out);
  if (std::find(r.dialects.begin(), r.dialects.end(), 0x0311) == r.dialects.end()) return;
  smb2::detail::pad8(out, base);
  const uint32_t ctx_off = uint32_t(out->size() - base);
  // ContextType 1 (PREAUTH_INTEGRITY), DataLength 38, Reserved; then
  // HashAlgorithmCount 1, SaltLength 32, SHA-512 (1), the salt.
  uint8_t* p = smb2::detail::grow(out, 8 + 38);
  le::store16(p, 1);
  le::store16(p + 2, 38);
  le::store16(p + 8, 1);
  le::store16(p + 10, 32);
  le::store16(p + 12, 1);
  std::copy(salt.begin(), salt.end(), p + 14);
  uint8_t* b = out->data() + base + smb2::kHeaderSize;
  le::store32(b + 28, ctx_off);
  le::store16(b + 32, 1);
}

void append_session_setup(const SessionSetupRequest& r, std::vector<uint8_t>* out) {
  uint8_t* p = smb2::detail::grow(out, 24);
  le::store16(p, 25);
  p[3] = r.security_mode;
  le::store16(p + 12, uint16_t(smb2::kHeaderSize + 24));
  le::store16(p + 14, uint16_t(r.token.size()));
  out->insert(out->end(), r.token.begin(), r.token.end());
}

ParseError parse_session_setup_response(std::span<const uint8_t> msg, SessionSetupResponse* r) {
  std::span<const uint8_t> b;
  if (auto e = smb2::detail::body(msg, 9, 8, &b); e != ParseError::kNone) return e;
  r->session_flags = le::load16(b.data() + 2);
  return smb2::detail::field(msg, le::load16(b.data() + 4), le::load16(b.data() + 6), &r->token);
}

void append_tree_connect(std::span<const uint8_t> path, std::vector<uint8_t>* out) {
  uint8_t* p = smb2::detail::grow(out, 8);
  le::store16(p, 9);
  le::store16(p + 4, uint16_t(smb2::kHeaderSize + 8));
  le::store16(p + 6, uint16_t(path.size()));
  out->insert(out->end(), path.begin(), path.end());
}

ParseError parse_tree_connect_response(std::span<const uint8_t> msg, TreeConnectResponse* r) {
  std::span<const uint8_t> b;
  if (auto e = smb2::detail::body(msg, 16, 16, &b); e != ParseError::kNone) return e;
  r->share_type = b[2];
  r->share_flags = le::load32(b.data() + 4);
  r->capabilities = le::load32(b.data() + 8);
  r->maximal_access = le::load32(b.data() + 12);
  return ParseError::kNone;
}

void append_reserved4(std::vector<uint8_t>* out) { le::store16(smb2::detail::grow(out, 4), 4); }

namespace {
constexpr uint8_t kSig[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};
// UNICODE | REQUEST_TARGET | SIGN | NTLM | ALWAYS_SIGN | EXTENDED_SESSIONSECURITY |
// TARGET_INFO | 128 | 56. No KEY_EXCH: the exported session key is the
// session base key (MS-NLMP 3.4.5.1 with NTLMv2).
constexpr uint32_t kFlags = 0x00000001 | 0x00000004 | 0x00000010 | 0x00000200 | 0x00008000 |
                            0x00080000 | 0x00800000 | 0x20000000 | 0x80000000;
}  // namespace

std::vector<uint8_t> ntlmssp_negotiate() {
  std::vector<uint8_t> m(32, 0);
  std::copy(kSig, kSig + 8, m.begin());
  le::store32(m.data() + 8, 1);
  le::store32(m.data() + 12, kFlags);
  return m;
}

ParseError parse_challenge(std::span<const uint8_t> blob, Challenge* c) {
  auto it = std::search(blob.begin(), blob.end(), kSig, kSig + 8);
  if (it == blob.end()) return ParseError::kBadProtocolId;
  auto m = blob.subspan(size_t(it - blob.begin()));
  if (m.size() < 48) return ParseError::kTooShort;
  if (le::load32(m.data() + 8) != 2) return ParseError::kBadStructureSize;
  c->flags = le::load32(m.data() + 20);
  std::copy(m.data() + 24, m.data() + 32, c->server_challenge.begin());
  const uint16_t ti_len = le::load16(m.data() + 40);
  const uint32_t ti_off = le::load32(m.data() + 44);
  if (uint64_t(ti_off) + ti_len > m.size()) return ParseError::kOutOfBounds;
  c->target_info.assign(m.data() + ti_off, m.data() + ti_off + ti_len);
  // Walk the AV pairs for MsvAvTimestamp (7); stop at MsvAvEOL (0).
  c->timestamp = 0;
  for (size_t at = 0; at + 4 <= c->target_info.size();) {
    const uint16_t id = le::load16(&c->target_info[at]), len = le::load16(&c->target_info[at + 2]);
    if (id == 0 || at + 4 + len > c->target_info.size()) break;
    if (id == 7 && len == 8) c->timestamp = le::load64(&c->target_info[at + 4]);
    at += 4 + size_t(len);
  }
  return ParseError::kNone;
}

std::vector<uint8_t> ntlmssp_authenticate(uint32_t flags, std::span<const uint8_t> lm,
                                          std::span<const uint8_t> nt, const std::string& domain,
                                          const std::string& user, const std::string& workstation) {
  std::vector<uint8_t> m(64, 0);
  std::copy(kSig, kSig + 8, m.begin());
  le::store32(m.data() + 8, 3);
  auto field = [&m](size_t at, std::span<const uint8_t> v) {
    le::store16(m.data() + at, uint16_t(v.size()));
    le::store16(m.data() + at + 2, uint16_t(v.size()));
    le::store32(m.data() + at + 4, uint32_t(m.size()));
    m.insert(m.end(), v.begin(), v.end());
  };
  const auto d = ntlm::utf16le(domain), u = ntlm::utf16le(user), w = ntlm::utf16le(workstation);
  field(12, lm);
  field(20, nt);
  field(28, d);
  field(36, u);
  field(44, w);
  field(52, {});
  le::store32(m.data() + 60, flags & kFlags);
  return m;
}

}  // namespace smb::client::interim
