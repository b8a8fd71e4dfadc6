// SPDX-License-Identifier: Apache-2.0
#include "ntlmv2.h"

#include <nettle/hmac.h>
#include <nettle/md4.h>

#include <string>

namespace smb::ntlm {

std::vector<uint8_t> utf16le(std::string_view s) {
  std::vector<uint8_t> out;
  auto put = [&](uint32_t u) {
    out.push_back(uint8_t(u));
    out.push_back(uint8_t(u >> 8));
  };
  for (size_t i = 0; i < s.size();) {
    const uint8_t c = uint8_t(s[i]);
    uint32_t cp = 0xFFFD;
    size_t n = 1;
    if (c < 0x80) {
      cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      n = 2;
    } else if ((c & 0xF0) == 0xE0) {
      n = 3;
    } else if ((c & 0xF8) == 0xF0) {
      n = 4;
    }
    if (n > 1) {
      if (i + n > s.size()) {
        n = 1;
      } else {
        cp = c & (0x7F >> n);
        for (size_t k = 1; k < n; ++k) {
          const uint8_t d = uint8_t(s[i + k]);
          if ((d & 0xC0) != 0x80) {
            cp = 0xFFFD, n = 1;
            break;
          }
          cp = cp << 6 | (d & 0x3F);
        }
      }
    }
    if (cp >= 0x10000 && cp <= 0x10FFFF) {
      cp -= 0x10000;
      put(0xD800 | (cp >> 10));
      put(0xDC00 | (cp & 0x3FF));
    } else {
      put(cp > 0x10FFFF ? 0xFFFD : cp);
    }
    i += n;
  }
  return out;
}

Key16 hmac_md5(std::span<const uint8_t> key, std::span<const uint8_t> a,
               std::span<const uint8_t> b) {
  hmac_md5_ctx ctx;
  hmac_md5_set_key(&ctx, key.size(), key.data());
  hmac_md5_update(&ctx, a.size(), a.data());
  if (!b.empty()) hmac_md5_update(&ctx, b.size(), b.data());
  Key16 out;
  hmac_md5_digest(&ctx, out.size(), out.data());
  return out;
}

Key16 nt_owf_v2(std::string_view user, std::string_view domain, std::string_view password) {
  auto pw = utf16le(password);
  md4_ctx md4;
  md4_init(&md4);
  md4_update(&md4, pw.size(), pw.data());
  Key16 nt_hash;
  md4_digest(&md4, nt_hash.size(), nt_hash.data());
  std::string upper(user);
  for (auto& ch : upper)
    if (ch >= 'a' && ch <= 'z') ch = char(ch - 'a' + 'A');
  auto ud = utf16le(upper);
  auto d = utf16le(domain);
  ud.insert(ud.end(), d.begin(), d.end());
  return hmac_md5(nt_hash, ud);
}

Ntlmv2Response ntlmv2_response(const Key16& ntowf, const Challenge& sc, const Challenge& cc,
                               uint64_t timestamp, std::span<const uint8_t> target_info) {
  // temp = RespType 1, HiRespType 1, Z(6), Time, ClientChallenge, Z(4),
  //        ServerName (the AV pairs), Z(4)   (MS-NLMP 3.3.2)
  std::vector<uint8_t> temp = {1, 1, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) temp.push_back(uint8_t(timestamp >> (8 * i)));
  temp.insert(temp.end(), cc.begin(), cc.end());
  temp.insert(temp.end(), 4, 0);
  temp.insert(temp.end(), target_info.begin(), target_info.end());
  temp.insert(temp.end(), 4, 0);
  Ntlmv2Response r;
  r.nt_proof = hmac_md5(ntowf, sc, temp);
  r.nt_response.assign(r.nt_proof.begin(), r.nt_proof.end());
  r.nt_response.insert(r.nt_response.end(), temp.begin(), temp.end());
  r.session_base_key = hmac_md5(ntowf, r.nt_proof);
  Key16 lm = hmac_md5(ntowf, sc, cc);
  std::copy(lm.begin(), lm.end(), r.lm_response.begin());
  std::copy(cc.begin(), cc.end(), r.lm_response.begin() + 16);
  return r;
}

}  // namespace smb::ntlm
