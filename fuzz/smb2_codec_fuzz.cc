// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the SMB2 command codecs of the server engineer's set
// (NEGOTIATE with contexts, SESSION_SETUP, TREE_CONNECT, TREE_DISCONNECT,
// LOGOFF, IOCTL + validate-negotiate, SET_INFO, ERROR) and the NTLMSSP
// and SPNEGO codecs, on arbitrary bytes. Checks that every span a parser
// returns lies within the input, and that what a parser accepts, rebuilt by
// the matching builder, parses again.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "ntlm/ntlmssp.h"
#include "ntlm/spnego.h"
#include "smb2/error_response.h"
#include "smb2/ioctl.h"
#include "smb2/negotiate.h"
#include "smb2/session_setup.h"
#include "smb2/set_info.h"
#include "smb2/tree_connect.h"

namespace {

std::span<const uint8_t> g_in;

void inside(std::span<const uint8_t> s) {
  if (s.empty()) return;
  if (s.data() < g_in.data() || s.data() + s.size() > g_in.data() + g_in.size()) std::abort();
}

template <class T>
void ok(T e) {
  if (e != T{}) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smb::smb2;
  using namespace smb::ntlm;
  std::span<const uint8_t> in(data, size);
  g_in = in;
  Header h;
  parse_header(in, &h);
  std::vector<uint8_t> hdr;
  append_header(h, &hdr);

  NegotiateRequest nq;
  if (parse_negotiate_request(in, &nq) == ParseError::kNone) {
    auto out = hdr;
    append_negotiate_request(nq, &out);
    NegotiateRequest again;
    if (nq.dialects.size() < 0x8000 && nq.contexts.size() < 0x100) {
      ok(parse_negotiate_request(out, &again));
      if (again.dialects != nq.dialects) std::abort();
    }
    for (const auto& c : nq.contexts) {
      PreauthIntegrity pi;
      parse_preauth_integrity(c.data, &pi);
      std::vector<uint16_t> ids;
      parse_id_list(c.data, &ids);
    }
  }
  NegotiateResponse nr;
  if (parse_negotiate_response(in, &nr) == ParseError::kNone) inside(nr.security_buffer);
  SessionSetupRequest sq;
  if (parse_session_setup_request(in, &sq) == ParseError::kNone) {
    inside(sq.security_buffer);
    auto out = hdr;
    append_session_setup_request(sq, &out);
    SessionSetupRequest again;
    ok(parse_session_setup_request(out, &again));
  }
  SessionSetupResponse sr;
  if (parse_session_setup_response(in, &sr) == ParseError::kNone) inside(sr.security_buffer);
  TreeConnectRequest tq;
  if (parse_tree_connect_request(in, &tq) == ParseError::kNone) inside(tq.path);
  TreeConnectResponse tr;
  parse_tree_connect_response(in, &tr);
  parse_tree_disconnect(in);
  parse_logoff(in);
  IoctlRequest iq;
  if (parse_ioctl_request(in, &iq) == ParseError::kNone) {
    inside(iq.input);
    ValidateNegotiateRequest vn;
    parse_validate_negotiate_request(iq.input, &vn);
  }
  IoctlResponse ir;
  if (parse_ioctl_response(in, &ir) == ParseError::kNone) {
    inside(ir.output);
    ValidateNegotiateResponse vr;
    parse_validate_negotiate_response(ir.output, &vr);
  }
  SetInfoRequest si;
  if (parse_set_info_request(in, &si) == ParseError::kNone) inside(si.buffer);
  parse_set_info_response(in);
  std::span<const uint8_t> ed;
  if (parse_error_response(in, &ed) == ParseError::kNone) inside(ed);

  NegotiateMessage n;
  if (parse_negotiate(in, &n) == NtlmError::kNone) ok(parse_negotiate(build_negotiate(n), &n));
  ChallengeMessage c;
  if (parse_challenge(in, &c) == NtlmError::kNone) {
    std::vector<AvPair> av;
    parse_av_pairs(c.target_info, &av);
  }
  AuthenticateMessage a;
  if (parse_authenticate(in, &a) == NtlmError::kNone) {
    AuthenticateMessage again;
    ok(parse_authenticate(build_authenticate(a), &again));
    if (again.nt_response != a.nt_response || again.user != a.user) std::abort();
  }
  NegTokenInit ti;
  if (parse_neg_token_init(in, &ti) == SpnegoError::kNone) {
    NegTokenInit again;
    ok(parse_neg_token_init(build_neg_token_init(ti), &again));
    if (again.mech_token != ti.mech_token) std::abort();
  }
  NegTokenResp tr2;
  if (parse_neg_token_resp(in, &tr2) == SpnegoError::kNone) {
    NegTokenResp again;
    ok(parse_neg_token_resp(build_neg_token_resp(tr2), &again));
    if (again.response_token != tr2.response_token) std::abort();
  }
  token_kind(in);
  return 0;
}
