// SPDX-License-Identifier: Apache-2.0
#include "ntlmv2_verify.h"

#include <nettle/arcfour.h>
#include <nettle/memops.h>

#include "ntlmssp.h"

namespace smb::ntlm {

bool verify_ntlmv2(const Key16& ntowf, const Challenge& server_challenge,
                   std::span<const uint8_t> nt_response, uint32_t flags,
                   std::span<const uint8_t> encrypted_key, Key16* exported) {
  // An NTLMv1 response is 24 bytes; NTLMv2's blob has at least its 28-byte
  // fixed part after NTProofStr.
  if (nt_response.size() < 16 + 28) return false;
  const auto blob = nt_response.subspan(16);
  const Key16 proof = hmac_md5(ntowf, server_challenge, blob);
  if (!nettle_memeql_sec(proof.data(), nt_response.data(), 16)) return false;
  const Key16 base = hmac_md5(ntowf, std::span<const uint8_t>(proof));
  *exported = base;
  if ((flags & kNegotiateKeyExch) && encrypted_key.size() == 16) {
    arcfour_ctx rc4;
    arcfour_set_key(&rc4, base.size(), base.data());
    arcfour_crypt(&rc4, 16, exported->data(), encrypted_key.data());
  }
  return true;
}

std::string utf8_from_utf16le(std::span<const uint8_t> s) {
  std::string out;
  auto put = [&](uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  };
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    uint32_t u = s[i] | (s[i + 1] << 8);
    if (u >= 0xD800 && u < 0xDC00 && i + 3 < s.size()) {
      const uint32_t lo = s[i + 2] | (s[i + 3] << 8);
      if (lo >= 0xDC00 && lo < 0xE000) {
        put(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
        i += 2;
        continue;
      }
    }
    put(u >= 0xD800 && u < 0xE000 ? 0xFFFD : u);
  }
  return out;
}

}  // namespace smb::ntlm
