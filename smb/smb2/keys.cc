// SPDX-License-Identifier: Apache-2.0
#include "keys.h"

#include <nettle/cmac.h>
#include <nettle/hmac.h>
#include <nettle/sha2.h>

#include <vector>

namespace smb::smb2 {

namespace {
std::span<const uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
constexpr size_t kSignatureOffset = 48;
constexpr size_t kHeaderSize = 64;
}  // namespace

Key16 kdf(std::span<const uint8_t> ki, std::span<const uint8_t> label,
          std::span<const uint8_t> context) {
  hmac_sha256_ctx ctx;
  hmac_sha256_set_key(&ctx, ki.size(), ki.data());
  const uint8_t counter[4] = {0, 0, 0, 1};
  const uint8_t zero = 0;
  const uint8_t length[4] = {0, 0, 0, 128};
  hmac_sha256_update(&ctx, 4, counter);
  hmac_sha256_update(&ctx, label.size(), label.data());
  hmac_sha256_update(&ctx, 1, &zero);
  hmac_sha256_update(&ctx, context.size(), context.data());
  hmac_sha256_update(&ctx, 4, length);
  uint8_t full[SHA256_DIGEST_SIZE];
  hmac_sha256_digest(&ctx, sizeof full, full);
  Key16 k;
  std::copy(full, full + 16, k.begin());
  return k;
}

Key16 signing_key_30(const Key16& sk) {
  using namespace std::literals;
  return kdf(sk, bytes("SMB2AESCMAC\0"sv), bytes("SmbSign\0"sv));
}

Key16 signing_key_311(const Key16& sk, const Hash512& preauth) {
  using namespace std::literals;
  return kdf(sk, bytes("SMBSigningKey\0"sv), preauth);
}

Key16 aes_cmac(const Key16& key, std::span<const uint8_t> m) {
  cmac_aes128_ctx ctx;
  cmac_aes128_set_key(&ctx, key.data());
  cmac_aes128_update(&ctx, m.size(), m.data());
  Key16 out;
  cmac_aes128_digest(&ctx, out.size(), out.data());
  return out;
}

namespace {
Key16 signature_of(const Key16& key, std::span<const uint8_t> m) {
  cmac_aes128_ctx ctx;
  cmac_aes128_set_key(&ctx, key.data());
  const uint8_t zeros[16] = {};
  cmac_aes128_update(&ctx, kSignatureOffset, m.data());
  cmac_aes128_update(&ctx, 16, zeros);
  cmac_aes128_update(&ctx, m.size() - kSignatureOffset - 16, m.data() + kSignatureOffset + 16);
  Key16 out;
  cmac_aes128_digest(&ctx, out.size(), out.data());
  return out;
}
}  // namespace

void sign(const Key16& key, std::span<uint8_t> m) {
  if (m.size() < kHeaderSize) return;
  Key16 s = signature_of(key, m);
  std::copy(s.begin(), s.end(), m.begin() + kSignatureOffset);
}

bool verify(const Key16& key, std::span<const uint8_t> m) {
  if (m.size() < kHeaderSize) return false;
  Key16 s = signature_of(key, m);
  uint8_t diff = 0;
  for (size_t i = 0; i < 16; ++i) diff |= uint8_t(s[i] ^ m[kSignatureOffset + i]);
  return diff == 0;
}

void preauth_update(Hash512& h, std::span<const uint8_t> m) {
  sha512_ctx ctx;
  sha512_init(&ctx);
  sha512_update(&ctx, h.size(), h.data());
  sha512_update(&ctx, m.size(), m.data());
  sha512_digest(&ctx, h.size(), h.data());
}

}  // namespace smb::smb2
