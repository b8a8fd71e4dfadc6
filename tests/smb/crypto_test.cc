// SPDX-License-Identifier: Apache-2.0
// NTLMv2 against the published vectors of MS-NLMP 4.2.4 (User "User",
// domain "Domain", password "Password", server "Server"); AES-128-CMAC
// against RFC 4493's; the SMB 3.x KDF, the preauth hash and the 3.1.1
// signature against Microsoft's published example (golden_smb311.h), and
// more KDF/hash values computed independently with Python's hmac/hashlib.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "golden_smb311.h"
#include "ntlm/ntlmv2.h"
#include "smb2/keys.h"

namespace {

template <typename C>
std::string hex(const C& c) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : c) s += d[b >> 4], s += d[b & 15];
  return s;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    v.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

// MS-NLMP 4.2.4: target info of the CHALLENGE (NetBIOS domain "Domain",
// NetBIOS computer "Server", MsvAvEOL).
std::vector<uint8_t> nlmp_target_info() {
  std::vector<uint8_t> t = {2, 0, 12, 0};
  auto d = smb::ntlm::utf16le("Domain");
  t.insert(t.end(), d.begin(), d.end());
  t.insert(t.end(), {1, 0, 12, 0});
  auto s = smb::ntlm::utf16le("Server");
  t.insert(t.end(), s.begin(), s.end());
  t.insert(t.end(), {0, 0, 0, 0});
  return t;
}

TEST(Ntlmv2, MsNlmpVectors) {
  auto owf = smb::ntlm::nt_owf_v2("User", "Domain", "Password");
  EXPECT_EQ(hex(owf), "0c868a403bfd7a93a3001ef22ef02e3f");
  smb::ntlm::Challenge sc = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
  smb::ntlm::Challenge cc;
  cc.fill(0xaa);
  auto r = smb::ntlm::ntlmv2_response(owf, sc, cc, 0, nlmp_target_info());
  EXPECT_EQ(hex(r.lm_response), "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa");
  EXPECT_EQ(hex(r.nt_proof), "68cd0ab851e51c96aabc927bebef6a1c");
  EXPECT_EQ(hex(r.session_base_key), "8de40ccadbc14a82f15cb0ad0de95ca3");
  EXPECT_EQ(r.nt_response.size(), 16u + 28u + nlmp_target_info().size() + 4u);
}

TEST(Ntlmv2, Utf16) {
  EXPECT_EQ(hex(smb::ntlm::utf16le("Ab")), "41006200");
  EXPECT_EQ(hex(smb::ntlm::utf16le("\xc3\xa9")), "e900");              // é
  EXPECT_EQ(hex(smb::ntlm::utf16le("\xf0\x9f\x98\x80")), "3dd800de");  // U+1F600
  EXPECT_EQ(hex(smb::ntlm::utf16le("\xff")), "fdff");                  // invalid byte
  EXPECT_EQ(hex(smb::ntlm::utf16le("\xe2\x82")), "fdfffdff");          // truncated sequence
}

TEST(Smb3Keys, AesCmacRfc4493) {
  smb::smb2::Key16 k;
  auto kb = unhex("2b7e151628aed2a6abf7158809cf4f3c");
  std::copy(kb.begin(), kb.end(), k.begin());
  EXPECT_EQ(hex(smb::smb2::aes_cmac(k, {})), "bb1d6929e95937287fa37d129b756746");
  auto m = unhex("6bc1bee22e409f96e93d7e117393172a");
  EXPECT_EQ(hex(smb::smb2::aes_cmac(k, m)), "070a16b46b4d4144f79bdd9dd04a287c");
}

TEST(Smb3Keys, KdfAndPreauth) {
  smb::smb2::Key16 sk;
  for (int i = 0; i < 16; ++i) sk[i] = uint8_t(i);
  EXPECT_EQ(hex(smb::smb2::signing_key_30(sk)), "6234814cbb8ea9227440ebfeb5eacbe1");
  smb::smb2::Hash512 h{};
  const uint8_t abc[] = {'a', 'b', 'c'};
  smb::smb2::preauth_update(h, abc);
  EXPECT_EQ(hex(h),
            "7682b6b84c6f692545a896ad210299bcc6f74e189d829e165739b11dd83b6f2c8cfacf27e812bf064df756"
            "d6235ac33c"
            "062b89ecb80f8215516dbbb844ce8480");
  EXPECT_EQ(hex(smb::smb2::signing_key_311(sk, h)), "e96f10b11459c34ed9d4c97642e66e27");
}

// Microsoft's SMB 3.1.1 example (golden_smb311.h): the preauth integrity
// hash after each of the five NEGOTIATE / SESSION_SETUP messages, the
// signing key derived from the last one, and the signature of the final
// SESSION_SETUP response made with it.
TEST(Smb311Golden, PreauthHashChainSigningKeyAndSignatureOfMicrosoftsExample) {
  const char* msgs[5] = {golden311::kNegotiateRequest, golden311::kNegotiateResponse,
                         golden311::kSessionSetupRequest1, golden311::kSessionSetupResponse1,
                         golden311::kSessionSetupRequest2};
  smb::smb2::Hash512 h{};
  for (int i = 0; i < 5; ++i) {
    smb::smb2::preauth_update(h, unhex(msgs[i]));
    EXPECT_EQ(hex(h), lower(golden311::kPreauthAfter[i])) << "after message " << i;
  }
  smb::smb2::Key16 sk;
  auto skb = unhex(golden311::kSessionKey);
  std::copy(skb.begin(), skb.end(), sk.begin());
  const smb::smb2::Key16 signing = smb::smb2::signing_key_311(sk, h);
  EXPECT_EQ(hex(signing), lower(golden311::kSigningKey));
  auto final_resp = unhex(golden311::kSessionSetupResponse2);
  EXPECT_TRUE(smb::smb2::verify(signing, final_resp));
  auto resigned = final_resp;
  std::fill(resigned.begin() + 48, resigned.begin() + 64, 0);
  smb::smb2::sign(signing, resigned);
  EXPECT_EQ(resigned, final_resp);
  EXPECT_EQ(hex(std::vector<uint8_t>(resigned.begin() + 48, resigned.begin() + 64)),
            lower(golden311::kFinalSignature));
  // The 3.0 derivation of the same key would not verify it.
  EXPECT_FALSE(smb::smb2::verify(smb::smb2::signing_key_30(sk), final_resp));
}

TEST(Smb311Golden, Smb30SigningKeyOfMicrosoftsExample) {
  smb::smb2::Key16 sk;
  auto skb = unhex(golden311::kSessionKey30);
  std::copy(skb.begin(), skb.end(), sk.begin());
  EXPECT_EQ(hex(smb::smb2::signing_key_30(sk)), lower(golden311::kSigningKey30));
}

TEST(Smb3Keys, SignAndVerify) {
  smb::smb2::Key16 key{};
  key[0] = 1;
  std::vector<uint8_t> msg(100, 0x42);
  smb::smb2::sign(key, msg);
  EXPECT_TRUE(smb::smb2::verify(key, msg));
  // The signature is over the message with the field zeroed.
  std::vector<uint8_t> zeroed = msg;
  std::fill(zeroed.begin() + 48, zeroed.begin() + 64, 0);
  auto direct = smb::smb2::aes_cmac(key, zeroed);
  EXPECT_TRUE(std::equal(direct.begin(), direct.end(), msg.begin() + 48));
  msg[70] ^= 1;
  EXPECT_FALSE(smb::smb2::verify(key, msg));
  std::vector<uint8_t> shrt(63);
  EXPECT_FALSE(smb::smb2::verify(key, shrt));
}

}  // namespace
