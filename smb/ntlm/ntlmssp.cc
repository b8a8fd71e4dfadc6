// SPDX-License-Identifier: Apache-2.0
#include "ntlmssp.h"

#include <algorithm>

#include "smbd/le.h"

namespace smb::ntlm {

namespace le = smbd::le;

namespace {

constexpr uint8_t kSignature[8] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0};

// Message header: Signature + MessageType.
void start(std::vector<uint8_t>* out, uint32_t type, size_t header_size) {
  out->assign(header_size, 0);
  std::copy(kSignature, kSignature + 8, out->data());
  le::store32(out->data() + 8, type);
}

// Writes a (Len, MaxLen, Offset) field at `at` and appends the bytes.
void field(std::vector<uint8_t>* out, size_t at, std::span<const uint8_t> v) {
  le::store16(out->data() + at, uint16_t(v.size()));
  le::store16(out->data() + at + 2, uint16_t(v.size()));
  le::store32(out->data() + at + 4, uint32_t(out->size()));
  out->insert(out->end(), v.begin(), v.end());
}

NtlmError read_field(std::span<const uint8_t> in, size_t at, std::vector<uint8_t>* v,
                     uint32_t* min_offset) {
  const uint16_t len = le::load16(in.data() + at);
  const uint32_t off = le::load32(in.data() + at + 4);
  v->clear();
  if (!len) return NtlmError::kNone;
  if (off > in.size() || len > in.size() - off) return NtlmError::kOutOfBounds;
  v->assign(in.begin() + off, in.begin() + off + len);
  if (off < *min_offset) *min_offset = off;
  return NtlmError::kNone;
}

NtlmError check(std::span<const uint8_t> in, size_t fixed, uint32_t type) {
  if (in.size() < 12) return NtlmError::kTooShort;
  if (!std::equal(kSignature, kSignature + 8, in.data())) return NtlmError::kBadSignature;
  if (le::load32(in.data() + 8) != type) return NtlmError::kBadType;
  if (in.size() < fixed) return NtlmError::kTooShort;
  return NtlmError::kNone;
}

}  // namespace

const char* ntlm_error_name(NtlmError e) {
  switch (e) {
    case NtlmError::kNone:
      return "none";
    case NtlmError::kTooShort:
      return "NTLMSSP message too short";
    case NtlmError::kBadSignature:
      return "not an NTLMSSP message (signature)";
    case NtlmError::kBadType:
      return "unexpected NTLMSSP message type";
    case NtlmError::kOutOfBounds:
      return "NTLMSSP field beyond the message";
    case NtlmError::kNoEol:
      return "AV pair list without MsvAvEOL";
  }
  return "unknown";
}

uint32_t message_type(std::span<const uint8_t> in) {
  if (in.size() < 12 || !std::equal(kSignature, kSignature + 8, in.data())) return 0;
  return le::load32(in.data() + 8);
}

std::vector<uint8_t> build_negotiate(const NegotiateMessage& m) {
  std::vector<uint8_t> out;
  start(&out, 1, m.has_version ? 40 : 32);
  le::store32(out.data() + 12, m.flags);
  if (m.has_version) std::copy(m.version.begin(), m.version.end(), out.data() + 32);
  field(&out, 16, m.domain);
  field(&out, 24, m.workstation);
  return out;
}

NtlmError parse_negotiate(std::span<const uint8_t> in, NegotiateMessage* m) {
  if (auto e = check(in, 32, 1); e != NtlmError::kNone) return e;
  m->flags = le::load32(in.data() + 12);
  uint32_t min_off = uint32_t(in.size());
  if (auto e = read_field(in, 16, &m->domain, &min_off); e != NtlmError::kNone) return e;
  if (auto e = read_field(in, 24, &m->workstation, &min_off); e != NtlmError::kNone) return e;
  m->has_version = (m->flags & kNegotiateVersion) && in.size() >= 40 && min_off >= 40;
  if (m->has_version) std::copy(in.data() + 32, in.data() + 40, m->version.begin());
  return NtlmError::kNone;
}

std::vector<uint8_t> build_challenge(const ChallengeMessage& m) {
  std::vector<uint8_t> out;
  start(&out, 2, m.has_version ? 56 : 48);
  le::store32(out.data() + 20, m.flags);
  std::copy(m.server_challenge.begin(), m.server_challenge.end(), out.data() + 24);
  if (m.has_version) std::copy(m.version.begin(), m.version.end(), out.data() + 48);
  field(&out, 12, m.target_name);
  field(&out, 40, m.target_info);
  return out;
}

NtlmError parse_challenge(std::span<const uint8_t> in, ChallengeMessage* m) {
  if (auto e = check(in, 48, 2); e != NtlmError::kNone) return e;
  m->flags = le::load32(in.data() + 20);
  std::copy(in.data() + 24, in.data() + 32, m->server_challenge.begin());
  uint32_t min_off = uint32_t(in.size());
  if (auto e = read_field(in, 12, &m->target_name, &min_off); e != NtlmError::kNone) return e;
  if (auto e = read_field(in, 40, &m->target_info, &min_off); e != NtlmError::kNone) return e;
  m->has_version = (m->flags & kNegotiateVersion) && in.size() >= 56 && min_off >= 56;
  if (m->has_version) std::copy(in.data() + 48, in.data() + 56, m->version.begin());
  return NtlmError::kNone;
}

std::vector<uint8_t> build_authenticate(const AuthenticateMessage& m) {
  std::vector<uint8_t> out;
  start(&out, 3, m.has_mic ? 88 : (m.has_version ? 72 : 64));
  le::store32(out.data() + 60, m.flags);
  if (m.has_version) std::copy(m.version.begin(), m.version.end(), out.data() + 64);
  if (m.has_mic) std::copy(m.mic.begin(), m.mic.end(), out.data() + kMicOffset);
  field(&out, 12, m.lm_response);
  field(&out, 20, m.nt_response);
  field(&out, 28, m.domain);
  field(&out, 36, m.user);
  field(&out, 44, m.workstation);
  field(&out, 52, m.encrypted_random_session_key);
  return out;
}

NtlmError parse_authenticate(std::span<const uint8_t> in, AuthenticateMessage* m) {
  if (auto e = check(in, 64, 3); e != NtlmError::kNone) return e;
  uint32_t min_off = uint32_t(in.size());
  const std::pair<size_t, std::vector<uint8_t>*> fields[] = {
      {12, &m->lm_response}, {20, &m->nt_response}, {28, &m->domain},
      {36, &m->user},        {44, &m->workstation}, {52, &m->encrypted_random_session_key}};
  for (const auto& [at, v] : fields)
    if (auto e = read_field(in, at, v, &min_off); e != NtlmError::kNone) return e;
  m->flags = le::load32(in.data() + 60);
  m->has_version = (m->flags & kNegotiateVersion) && in.size() >= 72 && min_off >= 72;
  if (m->has_version) std::copy(in.data() + 64, in.data() + 72, m->version.begin());
  m->has_mic = in.size() >= 88 && min_off >= 88;
  if (m->has_mic) std::copy(in.data() + kMicOffset, in.data() + kMicOffset + 16, m->mic.begin());
  return NtlmError::kNone;
}

std::vector<uint8_t> build_av_pairs(const std::vector<AvPair>& pairs) {
  std::vector<uint8_t> out;
  for (const auto& p : pairs) {
    const size_t at = out.size();
    out.resize(at + 4);
    le::store16(out.data() + at, p.id);
    le::store16(out.data() + at + 2, uint16_t(p.value.size()));
    out.insert(out.end(), p.value.begin(), p.value.end());
  }
  out.resize(out.size() + 4, 0);  // MsvAvEOL
  return out;
}

NtlmError parse_av_pairs(std::span<const uint8_t> in, std::vector<AvPair>* out) {
  out->clear();
  size_t off = 0;
  while (off + 4 <= in.size()) {
    const uint16_t id = le::load16(in.data() + off), len = le::load16(in.data() + off + 2);
    if (id == kAvEol) return NtlmError::kNone;
    if (len > in.size() - off - 4) return NtlmError::kOutOfBounds;
    out->push_back({id, std::vector<uint8_t>(in.begin() + off + 4, in.begin() + off + 4 + len)});
    off += 4 + len;
  }
  return NtlmError::kNoEol;
}

}  // namespace smb::ntlm
