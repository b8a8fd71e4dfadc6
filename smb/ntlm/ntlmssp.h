// SPDX-License-Identifier: Apache-2.0
// ntlmssp.h - MS-NLMP 2.2.1 NTLMSSP messages (NEGOTIATE, CHALLENGE,
// AUTHENTICATE) and 2.2.2.1 AV pairs: builders and pure parsers over byte
// spans, both directions. Payload fields are copied out; every (length,
// offset) is checked against the message.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace smb::ntlm {

// 2.2.2.5 NegotiateFlags (the ones the SMB peers here use).
inline constexpr uint32_t kNegotiateUnicode = 0x00000001;
inline constexpr uint32_t kNegotiateOem = 0x00000002;
inline constexpr uint32_t kRequestTarget = 0x00000004;
inline constexpr uint32_t kNegotiateSign = 0x00000010;
inline constexpr uint32_t kNegotiateSeal = 0x00000020;
inline constexpr uint32_t kNegotiateNtlm = 0x00000200;
inline constexpr uint32_t kNegotiateAnonymous = 0x00000800;
inline constexpr uint32_t kNegotiateAlwaysSign = 0x00008000;
inline constexpr uint32_t kTargetTypeDomain = 0x00010000;
inline constexpr uint32_t kTargetTypeServer = 0x00020000;
inline constexpr uint32_t kNegotiateExtendedSessionSecurity = 0x00080000;
inline constexpr uint32_t kNegotiateTargetInfo = 0x00800000;
inline constexpr uint32_t kNegotiateVersion = 0x02000000;
inline constexpr uint32_t kNegotiate128 = 0x20000000;
inline constexpr uint32_t kNegotiateKeyExch = 0x40000000;
inline constexpr uint32_t kNegotiate56 = 0x80000000;

// 2.2.2.1 AvId.
inline constexpr uint16_t kAvEol = 0;
inline constexpr uint16_t kAvNbComputerName = 1;
inline constexpr uint16_t kAvNbDomainName = 2;
inline constexpr uint16_t kAvDnsComputerName = 3;
inline constexpr uint16_t kAvDnsDomainName = 4;
inline constexpr uint16_t kAvFlags = 6;
inline constexpr uint16_t kAvTimestamp = 7;
inline constexpr uint32_t kAvFlagMicPresent = 0x00000002;

enum class NtlmError : uint8_t { kNone, kTooShort, kBadSignature, kBadType, kOutOfBounds, kNoEol };
const char* ntlm_error_name(NtlmError e);

using Version = std::array<uint8_t, 8>;

struct NegotiateMessage {
  uint32_t flags = 0;
  std::vector<uint8_t> domain, workstation;  // OEM bytes (usually empty)
  bool has_version = false;
  Version version{};
};
std::vector<uint8_t> build_negotiate(const NegotiateMessage& m);
NtlmError parse_negotiate(std::span<const uint8_t> in, NegotiateMessage* out);

struct ChallengeMessage {
  uint32_t flags = 0;
  std::vector<uint8_t> target_name;  // UTF-16LE with kNegotiateUnicode
  std::array<uint8_t, 8> server_challenge{};
  std::vector<uint8_t> target_info;  // AV pairs, ending with MsvAvEOL
  bool has_version = false;
  Version version{};
};
std::vector<uint8_t> build_challenge(const ChallengeMessage& m);
NtlmError parse_challenge(std::span<const uint8_t> in, ChallengeMessage* out);

struct AuthenticateMessage {
  std::vector<uint8_t> lm_response, nt_response;
  std::vector<uint8_t> domain, user, workstation;  // UTF-16LE with kNegotiateUnicode
  std::vector<uint8_t> encrypted_random_session_key;
  uint32_t flags = 0;
  bool has_version = false;
  Version version{};
  // MIC (2.2.1.3): present when the payload starts at or after byte 88.
  // Linux cifs sends neither Version nor MIC (payload at byte 64).
  bool has_mic = false;
  std::array<uint8_t, 16> mic{};
};
inline constexpr size_t kMicOffset = 72;
// With has_mic the header is 88 bytes and the MIC field is written as given
// (zeros while the caller computes it over the whole message).
std::vector<uint8_t> build_authenticate(const AuthenticateMessage& m);
NtlmError parse_authenticate(std::span<const uint8_t> in, AuthenticateMessage* out);

// The message type (1, 2, 3) after the signature, or 0 when `in` is not NTLMSSP.
uint32_t message_type(std::span<const uint8_t> in);

struct AvPair {
  uint16_t id = 0;
  std::vector<uint8_t> value;
};
// Appends MsvAvEOL.
std::vector<uint8_t> build_av_pairs(const std::vector<AvPair>& pairs);
// Stops at MsvAvEOL (not included); kNoEol when the list runs out first.
NtlmError parse_av_pairs(std::span<const uint8_t> in, std::vector<AvPair>* out);

}  // namespace smb::ntlm
