// SPDX-License-Identifier: Apache-2.0
// spnego.h - RFC 4178 SPNEGO tokens in DER (as MS-SPNG uses them around
// NTLMSSP): NegTokenInit inside the RFC 2743 InitialContextToken, and
// NegTokenResp. Builders and pure parsers over byte spans, both directions;
// the parser checks every length against its enclosing element, accepts only
// definite DER lengths of up to 4 bytes and skips fields it does not use
// (reqFlags, negHints).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace smb::ntlm {

// DER contents (no tag/length) of the OIDs used here.
inline constexpr uint8_t kOidSpnego[] = {0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};  // 1.3.6.1.5.5.2
inline constexpr uint8_t kOidNtlmssp[] = {0x2b, 0x06, 0x01, 0x04, 0x01,
                                          0x82, 0x37, 0x02, 0x02, 0x0a};  // 1.3.6.1.4.1.311.2.2.10

enum class SpnegoError : uint8_t { kNone, kTruncated, kBadTag, kBadLength };
const char* spnego_error_name(SpnegoError e);

struct NegTokenInit {
  std::vector<std::vector<uint8_t>> mech_types;  // OID contents
  std::vector<uint8_t> mech_token;               // empty when absent
  std::vector<uint8_t> mech_list_mic;
};
// With the InitialContextToken wrapper ([APPLICATION 0] + SPNEGO OID).
std::vector<uint8_t> build_neg_token_init(const NegTokenInit& t);
SpnegoError parse_neg_token_init(std::span<const uint8_t> in, NegTokenInit* out);

// 4.2.2 negState.
inline constexpr int kAcceptCompleted = 0;
inline constexpr int kAcceptIncomplete = 1;
inline constexpr int kReject = 2;

struct NegTokenResp {
  int neg_state = -1;                   // -1: absent
  std::vector<uint8_t> supported_mech;  // OID contents; empty when absent
  std::vector<uint8_t> response_token;
  std::vector<uint8_t> mech_list_mic;
};
std::vector<uint8_t> build_neg_token_resp(const NegTokenResp& t);
SpnegoError parse_neg_token_resp(std::span<const uint8_t> in, NegTokenResp* out);

// What a security buffer holds: 0x60 InitialContextToken (NegTokenInit),
// 0xa1 NegTokenResp, or raw NTLMSSP.
enum class TokenKind : uint8_t { kEmpty, kNegTokenInit, kNegTokenResp, kRawNtlmssp, kUnknown };
TokenKind token_kind(std::span<const uint8_t> in);

}  // namespace smb::ntlm
