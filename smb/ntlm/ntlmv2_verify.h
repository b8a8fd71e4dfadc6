// SPDX-License-Identifier: Apache-2.0
// ntlmv2_verify.h - the server side of MS-NLMP 3.3.2: checks a client's
// NTLMv2 response against the user's NTOWFv2 and recovers the session key
// (3.4.5.1 KXKEY for NTLMv2 is the session base key; with
// NEGOTIATE_KEY_EXCH the exported key is RC4 of the encrypted random
// session key). nettle's HMAC-MD5 and ARCFOUR.
#pragma once

#include <span>
#include <string>

#include "ntlmv2.h"

namespace smb::ntlm {

// `nt_response`: NTProofStr (16) + the client blob. True when NTProofStr
// matches; then `exported_session_key` is the key SMB signing derives from.
bool verify_ntlmv2(const Key16& ntowf, const Challenge& server_challenge,
                   std::span<const uint8_t> nt_response, uint32_t negotiate_flags,
                   std::span<const uint8_t> encrypted_random_session_key,
                   Key16* exported_session_key);

// UTF-16LE -> UTF-8 (unpaired surrogates become U+FFFD; an odd last byte is dropped).
std::string utf8_from_utf16le(std::span<const uint8_t> s);

}  // namespace smb::ntlm
