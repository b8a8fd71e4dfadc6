// SPDX-License-Identifier: Apache-2.0
// keys.h - SMB 3.x key derivation and signing (MS-SMB2 3.1.4.1, 3.1.4.2,
// 3.2.5.3.1): the SP800-108 counter-mode KDF with HMAC-SHA256, AES-128-CMAC
// signatures and the 3.1.1 pre-authentication integrity hash (SHA-512), all
// from nettle.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace smb::smb2 {

using Key16 = std::array<uint8_t, 16>;
using Hash512 = std::array<uint8_t, 64>;

// KDF(Ki, Label, Context) with r = 32, L = 128: HMAC-SHA256(Ki, i(=1, BE32)
// || Label || 0x00 || Context || L(BE32)), first 16 bytes. Label and Context
// are passed with their terminating NUL where MS-SMB2 includes it
// ("SMB2AESCMAC\0", "SmbSign\0").
Key16 kdf(std::span<const uint8_t> ki, std::span<const uint8_t> label,
          std::span<const uint8_t> context);

// The signing key: 3.0/3.0.2 with the fixed context, 3.1.1 with the
// session's pre-authentication hash.
Key16 signing_key_30(const Key16& session_key);
Key16 signing_key_311(const Key16& session_key, const Hash512& preauth);

Key16 aes_cmac(const Key16& key, std::span<const uint8_t> message);

// SMB2 signature: AES-CMAC over the message with its 16-byte Signature
// field (offset 48) taken as zero. Writes it into the field.
void sign(const Key16& signing_key, std::span<uint8_t> message);
// True when the message's Signature field matches.
bool verify(const Key16& signing_key, std::span<const uint8_t> message);

// Preauth integrity: H = SHA-512(H || message).
void preauth_update(Hash512& h, std::span<const uint8_t> message);

}  // namespace smb::smb2
