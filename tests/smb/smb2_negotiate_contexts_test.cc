// SPDX-License-Identifier: Apache-2.0
// ndk-smbd's answer to 3.1.1 negotiate contexts (MS-SMB2 3.3.5.4,
// smb2/negotiate_contexts.h): the NEGOTIATE requests of a Windows 10 client
// (Microsoft's published example, golden_smb311.h) and of Linux cifs 6.1
// (golden_smb2.h) are answered with one SHA-512 preauth context and nothing
// for encryption; contexts missing, repeated or without SHA-512 are refused
// with the status the specification names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "golden_smb2.h"
#include "golden_smb311.h"
#include "smb2/negotiate.h"
#include "smb2/negotiate_contexts.h"

namespace {

using namespace smb::smb2;

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    v.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

const std::vector<uint8_t> kSalt(32, 0x5a);

// The answer is exactly one context: SHA-512 and the server's salt.
void expect_sha512_answer(const std::vector<NegotiateContext>& answer) {
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_EQ(answer[0].type, kPreauthIntegrityCapabilities);
  PreauthIntegrity pi;
  ASSERT_EQ(parse_preauth_integrity(answer[0].data, &pi), ParseError::kNone);
  EXPECT_EQ(pi.hash_algorithms, std::vector<uint16_t>{kHashSha512});
  EXPECT_EQ(pi.salt, kSalt);
}

TEST(NegotiateContexts, WindowsClientRequestIsAnsweredLikeTheWindowsServer) {
  auto m = unhex(golden311::kNegotiateRequest);
  NegotiateRequest rq;
  ASSERT_EQ(parse_negotiate_request(m, &rq), ParseError::kNone);
  EXPECT_EQ(rq.dialects, (std::vector<uint16_t>{0x0202, 0x0210, 0x0300, 0x0302, 0x0311}));
  ASSERT_EQ(rq.contexts.size(), 2u);
  std::vector<NegotiateContext> answer;
  ASSERT_EQ(answer_negotiate_contexts(rq.contexts, kSalt, &answer), ContextAnswer::kOk);
  expect_sha512_answer(answer);
  // The Windows server's own preauth answer has the same shape (one
  // algorithm, SHA-512, a 32-byte salt); it also answers encryption, which
  // ndk-smbd does not do.
  auto r = unhex(golden311::kNegotiateResponse);
  NegotiateResponse rs;
  ASSERT_EQ(parse_negotiate_response(r, &rs), ParseError::kNone);
  const auto* pre = find_context(rs.contexts, kPreauthIntegrityCapabilities);
  ASSERT_NE(pre, nullptr);
  PreauthIntegrity pi;
  ASSERT_EQ(parse_preauth_integrity(pre->data, &pi), ParseError::kNone);
  EXPECT_EQ(pi.hash_algorithms, std::vector<uint16_t>{kHashSha512});
  EXPECT_EQ(pi.salt.size(), 32u);
  EXPECT_EQ(pre->data.size(), answer[0].data.size());
}

// cifs 6.1 also sends NETNAME and its POSIX extensions context (0x0100):
// ignored, not refused.
TEST(NegotiateContexts, CifsRequestWithNetnameAndPosixContexts) {
  auto m = unhex(golden::kNegotiateReq311);
  NegotiateRequest rq;
  ASSERT_EQ(parse_negotiate_request(m, &rq), ParseError::kNone);
  EXPECT_NE(find_context(rq.contexts, kNetnameNegotiateContextId), nullptr);
  EXPECT_NE(find_context(rq.contexts, 0x0100), nullptr);
  std::vector<NegotiateContext> answer;
  ASSERT_EQ(answer_negotiate_contexts(rq.contexts, kSalt, &answer), ContextAnswer::kOk);
  expect_sha512_answer(answer);
}

// The answer in a response: built, parsed back by the client's parser.
TEST(NegotiateContexts, AnswerRoundTripsInAResponse) {
  std::vector<NegotiateContext> answer;
  auto rqm = unhex(golden311::kNegotiateRequest);
  NegotiateRequest rq;
  ASSERT_EQ(parse_negotiate_request(rqm, &rq), ParseError::kNone);
  ASSERT_EQ(answer_negotiate_contexts(rq.contexts, kSalt, &answer), ContextAnswer::kOk);
  Header h;
  h.command = kNegotiate;
  h.flags = kFlagResponse;
  std::vector<uint8_t> out;
  append_header(h, &out);
  const std::vector<uint8_t> token = {0x60, 0x01, 0x00};
  NegotiateResponse rs;
  rs.dialect = kDialect311;
  rs.security_buffer = token;
  rs.contexts = answer;
  append_negotiate_response(rs, &out);
  NegotiateResponse back;
  ASSERT_EQ(parse_negotiate_response(out, &back), ParseError::kNone);
  EXPECT_EQ(back.context_count, 1);
  EXPECT_EQ(back.context_offset % 8, 0u);
  ASSERT_EQ(back.contexts.size(), 1u);
  EXPECT_EQ(back.contexts[0].data, answer[0].data);
}

std::vector<NegotiateContext> with_preauth(std::vector<uint16_t> algs) {
  PreauthIntegrity pi;
  pi.hash_algorithms = std::move(algs);
  pi.salt.assign(32, 1);
  return {{kPreauthIntegrityCapabilities, preauth_integrity_data(pi)}};
}

TEST(NegotiateContexts, RefusalsOfMsSmb2_3_3_5_4) {
  std::vector<NegotiateContext> answer;
  // No preauth context.
  EXPECT_EQ(answer_negotiate_contexts({}, kSalt, &answer), ContextAnswer::kInvalidParameter);
  EXPECT_EQ(answer_negotiate_contexts({{kEncryptionCapabilities, id_list_data({{2, 1}})}}, kSalt,
                                      &answer),
            ContextAnswer::kInvalidParameter);
  // Two of them.
  auto two = with_preauth({kHashSha512});
  two.push_back(two[0]);
  EXPECT_EQ(answer_negotiate_contexts(two, kSalt, &answer), ContextAnswer::kInvalidParameter);
  // No hash algorithm in common (an unknown id only).
  EXPECT_EQ(answer_negotiate_contexts(with_preauth({0x0002}), kSalt, &answer),
            ContextAnswer::kNoHashOverlap);
  // SHA-512 among others is fine.
  EXPECT_EQ(answer_negotiate_contexts(with_preauth({0x0002, kHashSha512}), kSalt, &answer),
            ContextAnswer::kOk);
  expect_sha512_answer(answer);
  // A malformed preauth context (HashAlgorithmCount 0, or cut short).
  EXPECT_EQ(
      answer_negotiate_contexts({{kPreauthIntegrityCapabilities, {0, 0, 0, 0}}}, kSalt, &answer),
      ContextAnswer::kInvalidParameter);
  EXPECT_EQ(answer_negotiate_contexts({{kPreauthIntegrityCapabilities, {1, 0, 0}}}, kSalt, &answer),
            ContextAnswer::kInvalidParameter);
  // Encryption, compression, RDMA transform, signing: at most once each.
  for (uint16_t t : {kEncryptionCapabilities, kCompressionCapabilities, kRdmaTransformCapabilities,
                     kSigningCapabilities}) {
    auto c = with_preauth({kHashSha512});
    c.push_back({t, id_list_data({{1}})});
    EXPECT_EQ(answer_negotiate_contexts(c, kSalt, &answer), ContextAnswer::kOk) << t;
    c.push_back({t, id_list_data({{1}})});
    EXPECT_EQ(answer_negotiate_contexts(c, kSalt, &answer), ContextAnswer::kInvalidParameter) << t;
  }
  // Unknown types, however many, are ignored.
  auto u = with_preauth({kHashSha512});
  u.push_back({0x7777, {1, 2, 3}});
  u.push_back({0x7777, {}});
  EXPECT_EQ(answer_negotiate_contexts(u, kSalt, &answer), ContextAnswer::kOk);
  expect_sha512_answer(answer);
}

}  // namespace
