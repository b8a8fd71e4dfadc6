// SPDX-License-Identifier: Apache-2.0
// ntlmv2.h - the NTLMv2 computations of MS-NLMP 3.3.2 (NTOWFv2, the NTLMv2
// and LMv2 responses, the session base key), with nettle's MD4 and
// HMAC-MD5. User and domain names are converted to UTF-16LE from UTF-8; the
// user name is upper-cased for ASCII letters only (a documented limit).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace smb::ntlm {

using Key16 = std::array<uint8_t, 16>;
using Challenge = std::array<uint8_t, 8>;

// UTF-8 -> UTF-16LE (code points above U+FFFF as surrogate pairs; invalid
// bytes become U+FFFD).
std::vector<uint8_t> utf16le(std::string_view utf8);

Key16 nt_owf_v2(std::string_view user, std::string_view domain, std::string_view password);

struct Ntlmv2Response {
  std::vector<uint8_t> nt_response;  // NTProofStr (16) + the client blob ("temp")
  std::array<uint8_t, 24> lm_response{};
  Key16 nt_proof{};
  Key16 session_base_key{};
};

// `target_info`: the AV pairs of the server's CHALLENGE, ending with MsvAvEOL,
// as they go into the blob. `timestamp`: FILETIME (100 ns since 1601).
Ntlmv2Response ntlmv2_response(const Key16& ntowf, const Challenge& server_challenge,
                               const Challenge& client_challenge, uint64_t timestamp,
                               std::span<const uint8_t> target_info);

Key16 hmac_md5(std::span<const uint8_t> key, std::span<const uint8_t> a,
               std::span<const uint8_t> b = {});

}  // namespace smb::ntlm
