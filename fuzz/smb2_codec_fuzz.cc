// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: every SMB2 command codec (smb/smb2/<command>.h), the
// MS-FSCC information classes, and the NTLMSSP and SPNEGO codecs, on
// arbitrary bytes, both directions. Every span a parser returns must lie
// within the input, and what a parser accepts, rebuilt by the matching
// builder, must parse again to the same fields.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "ntlm/ntlmssp.h"
#include "ntlm/spnego.h"
#include "smb2/close.h"
#include "smb2/create.h"
#include "smb2/echo.h"
#include "smb2/error_response.h"
#include "smb2/file_info.h"
#include "smb2/flush.h"
#include "smb2/ioctl.h"
#include "smb2/lock.h"
#include "smb2/negotiate.h"
#include "smb2/negotiate_contexts.h"
#include "smb2/query_directory.h"
#include "smb2/query_info.h"
#include "smb2/read.h"
#include "smb2/session_setup.h"
#include "smb2/set_info.h"
#include "smb2/tree_connect.h"
#include "smb2/write.h"

namespace {

using namespace smb::smb2;

void within(std::span<const uint8_t> s, std::span<const uint8_t> in) {
  if (!s.empty() && (s.data() < in.data() || s.data() + s.size() > in.data() + in.size()))
    std::abort();
}

// Re-encodes a parsed request behind a fresh header and parses it again.
template <typename T, typename Enc, typename Dec>
void reencode(const T& r, Enc enc, Dec dec, T* again) {
  std::vector<uint8_t> m;
  append_header(Header{}, &m);
  enc(r, &m);
  if (dec(m, again) != ParseError::kNone) std::abort();
}

}  // namespace

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

namespace {

// NEGOTIATE, SESSION_SETUP, TREE_CONNECT, LOGOFF, IOCTL, SET_INFO, ERROR,
// NTLMSSP and SPNEGO.
void session_codecs(std::span<const uint8_t> in) {
  using namespace smb::smb2;
  using namespace smb::ntlm;
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
    // ndk-smbd's answer: on success exactly one SHA-512 preauth context.
    static const uint8_t salt[32] = {};
    std::vector<NegotiateContext> answer;
    if (answer_negotiate_contexts(nq.contexts, salt, &answer) == ContextAnswer::kOk &&
        (answer.size() != 1 || answer[0].type != kPreauthIntegrityCapabilities))
      std::abort();
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
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  CreateRequest cq, cq2;
  if (parse_create_request(in, &cq) == ParseError::kNone) {
    reencode(cq, append_create_request, parse_create_request, &cq2);
    if (cq2.name != cq.name || cq2.contexts != cq.contexts) std::abort();
    std::vector<CreateContext> cc;
    parse_create_contexts(cq.contexts, 32, &cc);
  }
  CreateResponse cr;
  if (parse_create_response(in, &cr) == ParseError::kNone) {
    std::vector<CreateContext> cc;
    parse_create_contexts(cr.contexts, 32, &cc);
  }
  CloseRequest clq;
  parse_close_request(in, &clq);
  CloseResponse clr;
  parse_close_response(in, &clr);
  FlushRequest fq;
  parse_flush_request(in, &fq);
  parse_flush_response(in);
  LockRequest lq, lq2;
  if (parse_lock_request(in, &lq) == ParseError::kNone) {
    if (lq.locks.empty() || lq.locks.size() > kMaxLockElements) std::abort();
    reencode(lq, append_lock_request, parse_lock_request, &lq2);
    if (lq2.locks != lq.locks || !(lq2.file_id == lq.file_id)) std::abort();
  }
  parse_lock_response(in);
  parse_echo(in);
  ReadRequest rq, rq2;
  if (parse_read_request(in, &rq) == ParseError::kNone) {
    reencode(rq, append_read_request, parse_read_request, &rq2);
    if (rq2.channel_info != rq.channel_info || rq2.length != rq.length) std::abort();
  }
  ReadResponse rr;
  if (parse_read_response(in, &rr) == ParseError::kNone) within(rr.data, in);
  WriteRequest wq, wq2;
  if (parse_write_request(in, &wq) == ParseError::kNone) {
    within(wq.data, in);
    std::vector<uint8_t> m;
    append_header(Header{}, &m);
    append_write_request(wq, &m);
    if (parse_write_request(m, &wq2) != ParseError::kNone ||
        !std::equal(wq.data.begin(), wq.data.end(), wq2.data.begin(), wq2.data.end()))
      std::abort();
  }
  WriteResponse wr;
  parse_write_response(in, &wr);
  QueryInfoRequest qi, qi2;
  if (parse_query_info_request(in, &qi) == ParseError::kNone)
    reencode(qi, append_query_info_request, parse_query_info_request, &qi2);
  QueryDirectoryRequest qd, qd2;
  if (parse_query_directory_request(in, &qd) == ParseError::kNone) {
    reencode(qd, append_query_directory_request, parse_query_directory_request, &qd2);
    if (qd2.pattern != qd.pattern) std::abort();
  }
  std::span<const uint8_t> out;
  if (parse_output_buffer_response(in, &out) == ParseError::kNone) within(out, in);
  if (parse_error_response(in, &out) == ParseError::kNone) within(out, in);
  // The information classes over the whole input.
  std::vector<DirectoryEntry> entries;
  for (uint8_t c : {kFileDirectoryInformation, kFileFullDirectoryInformation,
                    kFileIdFullDirectoryInformation, kFileIdBothDirectoryInformation})
    if (parse_directory_entries(c, in, 1024, &entries) == ParseError::kNone &&
        entries.size() > size)
      std::abort();
  NetworkOpenInformation no;
  parse_network_open_information(in, &no);
  StandardInformation si;
  parse_standard_information(in, &si);
  BasicInformation bi;
  parse_basic_information(in, &bi);
  session_codecs(in);
  return 0;
}
