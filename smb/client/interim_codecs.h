// SPDX-License-Identifier: Apache-2.0
// interim_codecs.h - the client's side of the messages whose shared codecs
// belong to the SMB server's branch (smb/smb2/negotiate.*, session_setup.*,
// tree_connect.*, smb/ntlm/ntlmssp.*): the 3.1.1 preauth negotiate context,
// SESSION_SETUP, TREE_CONNECT, LOGOFF/TREE_DISCONNECT and the three NTLMSSP
// messages, only as far as the client needs them. Replaced by the shared
// codecs once they are merged (docs/smb-direct.md, "Client").
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "smb2/header.h"

namespace smb::client::interim {

using smb2::ParseError;

// NEGOTIATE request body with the dialects and, when 0x0311 is among them,
// an SMB2_PREAUTH_INTEGRITY_CAPABILITIES context (SHA-512, `salt`).
void append_negotiate(const smb2::NegotiateRequest& r, const std::array<uint8_t, 32>& salt,
                      std::vector<uint8_t>* out);

struct SessionSetupRequest {
  uint8_t security_mode = 1;
  std::vector<uint8_t> token;
};
void append_session_setup(const SessionSetupRequest& r, std::vector<uint8_t>* out);
struct SessionSetupResponse {
  uint16_t session_flags = 0;  // 0x0001 IS_GUEST, 0x0002 IS_NULL, 0x0004 ENCRYPT_DATA
  std::span<const uint8_t> token;
};
ParseError parse_session_setup_response(std::span<const uint8_t> msg, SessionSetupResponse* out);

// TREE_CONNECT with the UNC path ("\\server\share", UTF-16LE).
void append_tree_connect(std::span<const uint8_t> path, std::vector<uint8_t>* out);
struct TreeConnectResponse {
  uint8_t share_type = 0;  // 1 disk, 2 pipe, 3 print
  uint32_t share_flags = 0, capabilities = 0, maximal_access = 0;
};
ParseError parse_tree_connect_response(std::span<const uint8_t> msg, TreeConnectResponse* out);

// LOGOFF and TREE_DISCONNECT share a 4-byte body.
void append_reserved4(std::vector<uint8_t>* out);

// NTLMSSP (MS-NLMP 2.2.1) messages, unwrapped.
std::vector<uint8_t> ntlmssp_negotiate();
struct Challenge {
  uint32_t flags = 0;
  std::array<uint8_t, 8> server_challenge{};
  std::vector<uint8_t> target_info;  // AV pairs, ending with MsvAvEOL
  uint64_t timestamp = 0;            // MsvAvTimestamp when present, else 0
};
// Finds the CHALLENGE in a security buffer: bare, or inside a SPNEGO
// negTokenResp (its NTLMSSP signature marks the start). Bounds are checked
// against the buffer.
ParseError parse_challenge(std::span<const uint8_t> blob, Challenge* out);
std::vector<uint8_t> ntlmssp_authenticate(uint32_t flags, std::span<const uint8_t> lm,
                                          std::span<const uint8_t> nt, const std::string& domain,
                                          const std::string& user, const std::string& workstation);

}  // namespace smb::client::interim
