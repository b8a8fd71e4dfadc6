// SPDX-License-Identifier: Apache-2.0
// negotiate.h - MS-SMB2 2.2.3 NEGOTIATE request and 2.2.4 response, with the
// 3.1.1 negotiate contexts (2.2.3.1): builders and pure parsers over byte
// spans, both directions.
//
// Offsets in the wire format count from the start of the SMB2 header. The
// builders append the body to `out`, which must already hold this message's
// 64-byte header and nothing after it; the parsers take the whole message.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "header.h"

namespace smb::smb2 {

inline constexpr uint16_t kDialect300 = 0x0300;
inline constexpr uint16_t kDialect302 = 0x0302;
inline constexpr uint16_t kDialect311 = 0x0311;
inline constexpr uint16_t kDialectWildcard = 0x02FF;

// 2.2.3 SecurityMode / 2.2.4 Capabilities.
inline constexpr uint16_t kSigningEnabled = 0x0001;
inline constexpr uint16_t kSigningRequired = 0x0002;
inline constexpr uint32_t kCapDfs = 0x00000001;
inline constexpr uint32_t kCapLeasing = 0x00000002;
inline constexpr uint32_t kCapLargeMtu = 0x00000004;
inline constexpr uint32_t kCapMultiChannel = 0x00000008;
inline constexpr uint32_t kCapPersistentHandles = 0x00000010;
inline constexpr uint32_t kCapDirectoryLeasing = 0x00000020;
inline constexpr uint32_t kCapEncryption = 0x00000040;

// 2.2.3.1 ContextType.
inline constexpr uint16_t kPreauthIntegrityCapabilities = 0x0001;
inline constexpr uint16_t kEncryptionCapabilities = 0x0002;
inline constexpr uint16_t kCompressionCapabilities = 0x0003;
inline constexpr uint16_t kNetnameNegotiateContextId = 0x0005;
inline constexpr uint16_t kTransportCapabilities = 0x0006;
inline constexpr uint16_t kRdmaTransformCapabilities = 0x0007;
inline constexpr uint16_t kSigningCapabilities = 0x0008;
inline constexpr uint16_t kHashSha512 = 0x0001;

struct NegotiateContext {
  uint16_t type = 0;
  std::vector<uint8_t> data;
};

struct NegotiateRequest {
  uint16_t security_mode = kSigningEnabled;
  uint32_t capabilities = 0;
  std::array<uint8_t, 16> client_guid{};
  std::vector<uint16_t> dialects;
  // Sent (and parsed) only when dialects include 3.1.1; otherwise the 8
  // bytes at body offset 28 are ClientStartTime (0).
  std::vector<NegotiateContext> contexts;
};
void append_negotiate_request(const NegotiateRequest& r, std::vector<uint8_t>* out);
ParseError parse_negotiate_request(std::span<const uint8_t> msg, NegotiateRequest* out);

struct NegotiateResponse {
  uint16_t security_mode = 0;
  uint16_t dialect = 0;
  uint16_t context_count = 0;
  std::array<uint8_t, 16> server_guid{};
  uint32_t capabilities = 0;
  uint32_t max_transact_size = 0, max_read_size = 0, max_write_size = 0;
  uint64_t system_time = 0, server_start_time = 0;
  std::span<const uint8_t> security_buffer;  // parse: within the message; build: the bytes to send
  uint32_t context_offset = 0;
  std::vector<NegotiateContext> contexts;  // dialect 3.1.1 only
};
// Builds with SecurityBufferOffset 128 and contexts 8-aligned after it.
void append_negotiate_response(const NegotiateResponse& r, std::vector<uint8_t>* out);
ParseError parse_negotiate_response(std::span<const uint8_t> msg, NegotiateResponse* out);

// 2.2.3.1.1 SMB2_PREAUTH_INTEGRITY_CAPABILITIES data.
struct PreauthIntegrity {
  std::vector<uint16_t> hash_algorithms;
  std::vector<uint8_t> salt;
};
std::vector<uint8_t> preauth_integrity_data(const PreauthIntegrity& p);
ParseError parse_preauth_integrity(std::span<const uint8_t> data, PreauthIntegrity* out);
// 2.2.3.1.2 / 2.2.3.1.7: a u16 count and u16 ids (ciphers, signing algorithms).
std::vector<uint8_t> id_list_data(std::span<const uint16_t> ids);
ParseError parse_id_list(std::span<const uint8_t> data, std::vector<uint16_t>* out);

// The first context of `type`, or null.
const NegotiateContext* find_context(const std::vector<NegotiateContext>& c, uint16_t type);

}  // namespace smb::smb2
