// SPDX-License-Identifier: Apache-2.0
// SMB2 command codecs (NEGOTIATE with contexts, SESSION_SETUP, TREE_CONNECT,
// IOCTL validate-negotiate, SET_INFO, LOGOFF, TREE_DISCONNECT, ERROR): the
// golden messages of cifs and ksmbd (golden_smb2.h) parse, and building them
// back from the parsed fields gives the same bytes; malformed lengths are
// refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "golden_smb2.h"
#include "smb2/error_response.h"
#include "smb2/ioctl.h"
#include "smb2/negotiate.h"
#include "smb2/session_setup.h"
#include "smb2/set_info.h"
#include "smb2/tree_connect.h"

namespace {

using namespace smb::smb2;

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    v.push_back(uint8_t(std::stoul(s.substr(i, 2), nullptr, 16)));
  return v;
}

// The message's own header, re-encoded: the start of every rebuilt message.
std::vector<uint8_t> header_of(const std::vector<uint8_t>& m) {
  Header h;
  EXPECT_EQ(parse_header(m, &h), ParseError::kNone);
  std::vector<uint8_t> out;
  append_header(h, &out);
  return out;
}

TEST(Smb2Codec, Negotiate302RoundTrip) {
  auto m = unhex(golden::kNegotiateReq302);
  NegotiateRequest rq;
  ASSERT_EQ(parse_negotiate_request(m, &rq), ParseError::kNone);
  EXPECT_EQ(rq.dialects, std::vector<uint16_t>{kDialect302});
  EXPECT_TRUE(rq.contexts.empty());
  auto out = header_of(m);
  append_negotiate_request(rq, &out);
  EXPECT_EQ(out, m);

  auto r = unhex(golden::kNegotiateResp302);
  NegotiateResponse rs;
  ASSERT_EQ(parse_negotiate_response(r, &rs), ParseError::kNone);
  EXPECT_EQ(rs.dialect, kDialect302);
  out = header_of(r);
  append_negotiate_response(rs, &out);
  EXPECT_EQ(out, r);
}

TEST(Smb2Codec, Negotiate311ContextsRoundTrip) {
  auto m = unhex(golden::kNegotiateReq311);
  NegotiateRequest rq;
  ASSERT_EQ(parse_negotiate_request(m, &rq), ParseError::kNone);
  EXPECT_EQ(rq.dialects.back(), kDialect311);
  ASSERT_GE(rq.contexts.size(), 2u);
  const auto* pre = find_context(rq.contexts, kPreauthIntegrityCapabilities);
  ASSERT_NE(pre, nullptr);
  PreauthIntegrity pi;
  ASSERT_EQ(parse_preauth_integrity(pre->data, &pi), ParseError::kNone);
  EXPECT_EQ(pi.hash_algorithms, std::vector<uint16_t>{kHashSha512});
  EXPECT_EQ(pi.salt.size(), 32u);
  EXPECT_EQ(preauth_integrity_data(pi), pre->data);
  const auto* enc = find_context(rq.contexts, kEncryptionCapabilities);
  ASSERT_NE(enc, nullptr);
  std::vector<uint16_t> ciphers;
  ASSERT_EQ(parse_id_list(enc->data, &ciphers), ParseError::kNone);
  EXPECT_FALSE(ciphers.empty());
  auto out = header_of(m);
  append_negotiate_request(rq, &out);
  EXPECT_EQ(out, m);

  auto r = unhex(golden::kNegotiateResp311);
  NegotiateResponse rs;
  ASSERT_EQ(parse_negotiate_response(r, &rs), ParseError::kNone);
  EXPECT_EQ(rs.dialect, kDialect311);
  ASSERT_EQ(rs.contexts.size(), rs.context_count);
  ASSERT_NE(find_context(rs.contexts, kPreauthIntegrityCapabilities), nullptr);
  out = header_of(r);
  append_negotiate_response(rs, &out);
  EXPECT_EQ(out, r);
}

TEST(Smb2Codec, NegotiateRejects) {
  auto m = unhex(golden::kNegotiateReq311);
  NegotiateRequest rq;
  EXPECT_EQ(parse_negotiate_request(std::span(m).first(80), &rq), ParseError::kTooShort);
  auto n = m;
  n[64 + 2] = 0xff;  // DialectCount beyond the message
  EXPECT_EQ(parse_negotiate_request(n, &rq), ParseError::kOutOfBounds);
  auto c = std::vector<uint8_t>(m.begin(), m.end() - 1);  // last context cut
  EXPECT_EQ(parse_negotiate_request(c, &rq), ParseError::kOutOfBounds);
  auto o = m;
  o[64 + 28] = 0xf0, o[64 + 29] = 0xff;  // NegotiateContextOffset beyond the message
  EXPECT_EQ(parse_negotiate_request(o, &rq), ParseError::kOutOfBounds);
  PreauthIntegrity pi;
  const uint8_t none[] = {0, 0, 0, 0};
  EXPECT_EQ(parse_preauth_integrity(none, &pi), ParseError::kBadStructureSize);
  const uint8_t salt_over[] = {1, 0, 9, 0, 1, 0, 0};
  EXPECT_EQ(parse_preauth_integrity(salt_over, &pi), ParseError::kOutOfBounds);
}

TEST(Smb2Codec, SessionSetupRoundTrip) {
  for (const char* g : {golden::kSessionSetupReq1, golden::kSessionSetupReq2}) {
    auto m = unhex(g);
    SessionSetupRequest rq;
    ASSERT_EQ(parse_session_setup_request(m, &rq), ParseError::kNone);
    ASSERT_GE(rq.security_buffer.size(), 12u);
    EXPECT_EQ(rq.security_buffer[0], 'N');  // cifs sends raw NTLMSSP
    auto out = header_of(m);
    append_session_setup_request(rq, &out);
    EXPECT_EQ(out, m);
  }
  for (const char* g : {golden::kSessionSetupResp1, golden::kSessionSetupResp2}) {
    auto m = unhex(g);
    SessionSetupResponse rs;
    ASSERT_EQ(parse_session_setup_response(m, &rs), ParseError::kNone);
    auto out = header_of(m);
    append_session_setup_response(rs, &out);
    EXPECT_EQ(out, m);
  }
  auto m = unhex(golden::kSessionSetupReq2);
  SessionSetupRequest rq;
  m[64 + 14] = 0xff, m[64 + 15] = 0xff;
  EXPECT_EQ(parse_session_setup_request(m, &rq), ParseError::kOutOfBounds);
  m = unhex(golden::kSessionSetupReq2);
  m[64 + 12] = 0x10, m[64 + 13] = 0;  // buffer inside the header
  EXPECT_EQ(parse_session_setup_request(m, &rq), ParseError::kOutOfBounds);
}

TEST(Smb2Codec, TreeConnectRoundTrip) {
  auto m = unhex(golden::kTreeConnectReqShare);
  TreeConnectRequest rq;
  ASSERT_EQ(parse_tree_connect_request(m, &rq), ParseError::kNone);
  std::string path;
  for (size_t i = 0; i < rq.path.size(); i += 2) path += char(rq.path[i]);
  EXPECT_EQ(path, "\\\\10.0.2.15\\share");
  auto out = header_of(m);
  append_tree_connect_request(rq, &out);
  // cifs pads the request to 8 bytes (2 bytes after the path).
  ASSERT_EQ(out.size(), m.size() - 2);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), m.begin()));
  for (const char* g : {golden::kTreeConnectRespIpc, golden::kTreeConnectRespShare}) {
    auto r = unhex(g);
    TreeConnectResponse rs;
    ASSERT_EQ(parse_tree_connect_response(r, &rs), ParseError::kNone);
    out = header_of(r);
    append_tree_connect_response(rs, &out);
    EXPECT_EQ(out, r);
  }
  m[64 + 6] = 0xff;
  EXPECT_EQ(parse_tree_connect_request(m, &rq), ParseError::kOutOfBounds);
}

TEST(Smb2Codec, IoctlValidateNegotiateRoundTrip) {
  auto m = unhex(golden::kIoctlValidateReq);
  IoctlRequest rq;
  ASSERT_EQ(parse_ioctl_request(m, &rq), ParseError::kNone);
  EXPECT_EQ(rq.ctl_code, kFsctlValidateNegotiateInfo);
  EXPECT_EQ(rq.file_id, kNoFileId);
  ValidateNegotiateRequest vn;
  ASSERT_EQ(parse_validate_negotiate_request(rq.input, &vn), ParseError::kNone);
  EXPECT_EQ(vn.dialects, std::vector<uint16_t>{kDialect302});
  auto in = validate_negotiate_request_data(vn);
  EXPECT_TRUE(std::equal(in.begin(), in.end(), rq.input.begin(), rq.input.end()));
  auto out = header_of(m);
  rq.input = in;
  append_ioctl_request(rq, &out);
  EXPECT_EQ(out, m);

  auto r = unhex(golden::kIoctlValidateResp);
  IoctlResponse rs;
  ASSERT_EQ(parse_ioctl_response(r, &rs), ParseError::kNone);
  ValidateNegotiateResponse vr;
  ASSERT_EQ(parse_validate_negotiate_response(rs.output, &vr), ParseError::kNone);
  EXPECT_EQ(vr.dialect, kDialect302);
  out = header_of(r);
  append_ioctl_response(rs, &out);
  EXPECT_EQ(out, r);

  m[64 + 28] = 0xff;  // InputCount beyond the message
  EXPECT_EQ(parse_ioctl_request(m, &rq), ParseError::kOutOfBounds);
  const uint8_t short_vn[] = {0, 0, 0};
  EXPECT_EQ(parse_validate_negotiate_request(short_vn, &vn), ParseError::kTooShort);
}

TEST(Smb2Codec, SetInfoLogoffTreeDisconnectError) {
  Header h;
  h.command = kSetInfo;
  std::vector<uint8_t> m;
  append_header(h, &m);
  SetInfoRequest si;
  si.info_class = 20;  // FileEndOfFileInformation
  const uint8_t eof[8] = {0, 0, 1, 0, 0, 0, 0, 0};
  si.buffer = eof;
  si.file_id.persistent = 7;
  append_set_info_request(si, &m);
  SetInfoRequest back;
  ASSERT_EQ(parse_set_info_request(m, &back), ParseError::kNone);
  EXPECT_EQ(back.info_class, 20);
  EXPECT_EQ(back.file_id.persistent, 7u);
  EXPECT_TRUE(std::equal(back.buffer.begin(), back.buffer.end(), eof, eof + 8));
  m[64 + 4] = 0x20;
  EXPECT_EQ(parse_set_info_request(m, &back), ParseError::kOutOfBounds);

  std::vector<uint8_t> r;
  append_header(h, &r);
  append_set_info_response(&r);
  EXPECT_EQ(parse_set_info_response(r), ParseError::kNone);
  std::vector<uint8_t> l;
  append_header(h, &l);
  append_logoff(&l);
  EXPECT_EQ(parse_logoff(l), ParseError::kNone);
  std::vector<uint8_t> t;
  append_header(h, &t);
  append_tree_disconnect(&t);
  EXPECT_EQ(parse_tree_disconnect(t), ParseError::kNone);
  t[64] = 5;
  EXPECT_EQ(parse_tree_disconnect(t), ParseError::kBadStructureSize);

  std::vector<uint8_t> e;
  append_header(h, &e);
  append_error_response(&e);
  EXPECT_EQ(e.size(), 64u + 9u);
  std::span<const uint8_t> data;
  ASSERT_EQ(parse_error_response(e, &data), ParseError::kNone);
  EXPECT_EQ(data.size(), 0u);
  e[64 + 4] = 2;
  EXPECT_EQ(parse_error_response(e, &data), ParseError::kOutOfBounds);
}

}  // namespace
