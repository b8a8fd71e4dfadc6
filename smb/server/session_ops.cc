// SPDX-License-Identifier: Apache-2.0
// session_ops.cc - ndk-smbd's connection and session set-up: NEGOTIATE
// (dialect, 3.1.1 negotiate contexts, the preauth integrity hash),
// SESSION_SETUP (NTLMv2, raw or inside SPNEGO; the signing key) and
// TREE_CONNECT. The dispatcher that calls them is in connection.cc.
#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "connection.h"
#include "nt_status.h"
#include "ntlm/ntlmv2_verify.h"
#include "ntlm/spnego.h"
#include "smb2/negotiate.h"
#include "smb2/negotiate_contexts.h"
#include "smb2/session_setup.h"
#include "smb2/tree_connect.h"
#include "smbd/le.h"

namespace smb::server {

namespace le = smbd::le;
using namespace smb::smb2;

namespace {

uint64_t now_filetime() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return uint64_t(ns / 100) + 116444736000000000ull;
}

void random_bytes(uint8_t* p, size_t n) {
  while (n) {
    ssize_t k = getrandom(p, n, 0);
    if (k <= 0) throw std::runtime_error("getrandom failed");
    p += k;
    n -= size_t(k);
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

uint32_t Connection::negotiate(std::span<const uint8_t> m, std::vector<uint8_t>* out) {
  if (negotiated_) {
    fatal_ = true;  // 3.3.5.3.1: a second NEGOTIATE ends the connection
    fatal_reason_ = "a second NEGOTIATE on the connection: dropped";
    return nt::kInvalidParameter;
  }
  NegotiateRequest rq;
  if (parse_negotiate_request(m, &rq) != ParseError::kNone || rq.dialects.empty())
    return nt::kInvalidParameter;
  // The greatest common dialect: 3.1.1, 3.0.2, 3.0.
  uint16_t dialect = 0;
  for (uint16_t d : {kDialect311, kDialect302, kDialect300})
    if (std::find(rq.dialects.begin(), rq.dialects.end(), d) != rq.dialects.end()) {
      dialect = d;
      break;
    }
  if (!dialect) return nt::kNotSupported;
  // 3.1.1: the negotiate contexts (negotiate_contexts.h says what is
  // answered), then the preauth integrity hash starts from zero over this
  // request (3.3.5.4); response_built() adds the response.
  std::vector<NegotiateContext> contexts;
  if (dialect == kDialect311) {
    uint8_t salt[32];
    random_bytes(salt, sizeof salt);
    switch (answer_negotiate_contexts(rq.contexts, salt, &contexts)) {
      case ContextAnswer::kOk:
        break;
      case ContextAnswer::kInvalidParameter:
        return nt::kInvalidParameter;
      case ContextAnswer::kNoHashOverlap:
        return kStatusNoPreauthIntegrityHashOverlap;
    }
    preauth_.fill(0);
    preauth_update(preauth_, m);
  }
  dialect_ = dialect;
  negotiated_ = true;
  client_caps_ = rq.capabilities;
  client_security_mode_ = rq.security_mode;
  client_guid_ = rq.client_guid;
  client_dialects_ = rq.dialects;
  ntlm::NegTokenInit init;
  init.mech_types.push_back({std::begin(ntlm::kOidNtlmssp), std::end(ntlm::kOidNtlmssp)});
  const auto token = ntlm::build_neg_token_init(init);
  NegotiateResponse rs;
  rs.security_mode = kSigningEnabled;
  rs.dialect = dialect_;
  rs.server_guid = cfg_.server_guid;
  rs.capabilities = kServerCapabilities;
  rs.max_transact_size = 65536;
  rs.max_read_size = rs.max_write_size = cfg_.max_io;
  rs.system_time = now_filetime();
  rs.security_buffer = token;
  rs.contexts = std::move(contexts);
  append_negotiate_response(rs, out);
  return nt::kSuccess;
}

void Connection::response_built(const Header& h, uint32_t st, std::span<const uint8_t> r) {
  if (dialect_ != kDialect311) return;
  if (h.command == kNegotiate && st == nt::kSuccess) {
    preauth_update(preauth_, r);
  } else if (h.command == kSessionSetup && st == nt::kMoreProcessingRequired) {
    auto s = sessions_.find(cur_session_);
    if (s != sessions_.end()) preauth_update(s->second.preauth, r);
  }
}

uint32_t Connection::session_setup(const Header& h, std::span<const uint8_t> m,
                                   std::vector<uint8_t>* out) {
  SessionSetupRequest rq;
  if (parse_session_setup_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  if (rq.flags & kSessionFlagBinding) return nt::kNotSupported;  // no multichannel
  // The NTLMSSP message: raw (Linux cifs) or inside SPNEGO.
  bool spnego = false;
  std::vector<uint8_t> token;
  switch (ntlm::token_kind(rq.security_buffer)) {
    case ntlm::TokenKind::kRawNtlmssp:
      token.assign(rq.security_buffer.begin(), rq.security_buffer.end());
      break;
    case ntlm::TokenKind::kNegTokenInit: {
      ntlm::NegTokenInit ti;
      if (ntlm::parse_neg_token_init(rq.security_buffer, &ti) != ntlm::SpnegoError::kNone)
        return nt::kInvalidParameter;
      token = std::move(ti.mech_token);
      spnego = true;
      break;
    }
    case ntlm::TokenKind::kNegTokenResp: {
      ntlm::NegTokenResp tr;
      if (ntlm::parse_neg_token_resp(rq.security_buffer, &tr) != ntlm::SpnegoError::kNone)
        return nt::kInvalidParameter;
      token = std::move(tr.response_token);
      spnego = true;
      break;
    }
    default:
      return nt::kInvalidParameter;
  }
  const uint32_t type = ntlm::message_type(token);
  if (type == 1) {
    ntlm::NegotiateMessage nm;
    if (ntlm::parse_negotiate(token, &nm) != ntlm::NtlmError::kNone) return nt::kInvalidParameter;
    if (sessions_.size() >= 64) return nt::kInsufficientResources;
    cur_session_ = next_session_++;
    Session& s = sessions_[cur_session_];
    s.spnego = spnego;
    if (dialect_ == kDialect311) {
      s.preauth = preauth_;  // a new session starts from the connection's hash
      preauth_update(s.preauth, m);
    }
    ntlm::ChallengeMessage& c = s.sent;
    random_bytes(c.server_challenge.data(), 8);
    c.flags = ntlm::kNegotiateUnicode | ntlm::kRequestTarget | ntlm::kNegotiateNtlm |
              ntlm::kNegotiateAlwaysSign | ntlm::kTargetTypeServer |
              ntlm::kNegotiateExtendedSessionSecurity | ntlm::kNegotiateTargetInfo |
              ntlm::kNegotiate128 | ntlm::kNegotiate56 |
              (nm.flags & (ntlm::kNegotiateSign | ntlm::kNegotiateSeal | ntlm::kNegotiateKeyExch));
    c.target_name = ntlm::utf16le("NDK-SMBD");
    uint8_t ts[8];
    le::store64(ts, now_filetime());
    c.target_info = ntlm::build_av_pairs({{ntlm::kAvNbDomainName, ntlm::utf16le("NDK-SMBD")},
                                          {ntlm::kAvNbComputerName, ntlm::utf16le("NDK-SMBD")},
                                          {ntlm::kAvDnsDomainName, ntlm::utf16le("ndk-smbd")},
                                          {ntlm::kAvDnsComputerName, ntlm::utf16le("ndk-smbd")},
                                          {ntlm::kAvTimestamp, {ts, ts + 8}}});
    auto blob = ntlm::build_challenge(c);
    if (spnego) {
      ntlm::NegTokenResp r;
      r.neg_state = ntlm::kAcceptIncomplete;
      r.supported_mech.assign(std::begin(ntlm::kOidNtlmssp), std::end(ntlm::kOidNtlmssp));
      r.response_token = std::move(blob);
      blob = ntlm::build_neg_token_resp(r);
    }
    SessionSetupResponse rs;
    rs.security_buffer = blob;
    append_session_setup_response(rs, out);
    return nt::kMoreProcessingRequired;
  }
  if (type != 3) return nt::kInvalidParameter;
  auto it = sessions_.find(h.session_id);
  if (it == sessions_.end() || it->second.valid) return nt::kUserSessionDeleted;
  cur_session_ = h.session_id;
  Session& s = it->second;
  if (dialect_ == kDialect311) preauth_update(s.preauth, m);  // the final request counts
  ntlm::AuthenticateMessage a;
  if (ntlm::parse_authenticate(token, &a) != ntlm::NtlmError::kNone) {
    sessions_.erase(it);
    return nt::kInvalidParameter;
  }
  const bool unicode = a.flags & ntlm::kNegotiateUnicode;
  const std::string user =
      unicode ? ntlm::utf8_from_utf16le(a.user) : std::string(a.user.begin(), a.user.end());
  const std::string domain =
      unicode ? ntlm::utf8_from_utf16le(a.domain) : std::string(a.domain.begin(), a.domain.end());
  auto u = cfg_.users.find(lower(user));
  bool ok = false;
  if (u != cfg_.users.end()) {
    smb2::Key16 key{};
    ok = ntlm::verify_ntlmv2(ntlm::nt_owf_v2(user, domain, u->second), s.sent.server_challenge,
                             a.nt_response, a.flags, a.encrypted_random_session_key, &key);
    if (ok) {
      s.signing_key =
          dialect_ == kDialect311 ? signing_key_311(key, s.preauth) : signing_key_30(key);
      s.has_key = true;
      s.signing_required = (rq.security_mode & kSigningRequired) != 0;
      s.sign_final = s.signing_required || dialect_ == kDialect311;
    }
  } else if (cfg_.guest) {
    ok = true;  // unknown or empty user: the guest session, unsigned
    s.guest = true;
  }
  if (!ok) {
    ++stats_.logon_failures;
    sessions_.erase(it);
    return nt::kLogonFailure;
  }
  s.valid = true;
  ++stats_.sessions;
  if (dialect_ == kDialect311) ++stats_.sessions_311;
  std::vector<uint8_t> blob;
  if (s.spnego) {
    ntlm::NegTokenResp r;
    r.neg_state = ntlm::kAcceptCompleted;
    blob = ntlm::build_neg_token_resp(r);
  }
  SessionSetupResponse rs;
  rs.session_flags = s.guest ? kSessionFlagIsGuest : 0;
  rs.security_buffer = blob;
  append_session_setup_response(rs, out);
  return nt::kSuccess;
}

uint32_t Connection::tree_connect(const Header&, std::span<const uint8_t> m,
                                  std::vector<uint8_t>* out) {
  TreeConnectRequest rq;
  if (parse_tree_connect_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  const std::string path = ntlm::utf8_from_utf16le(rq.path);
  const size_t slash = path.rfind('\\');
  const std::string name = lower(slash == std::string::npos ? path : path.substr(slash + 1));
  TreeConnectResponse rs;
  bool ipc = false;
  if (name == "ipc$") {
    ipc = true;
    rs.share_type = kShareTypePipe;
  } else if (name != lower(cfg_.share_name)) {
    return nt::kBadNetworkName;
  }
  if (trees_.size() >= 64) return nt::kInsufficientResources;
  cur_tree_ = next_tree_++;
  trees_[cur_tree_].ipc = ipc;
  rs.maximal_access = 0x001F01FF;
  append_tree_connect_response(rs, out);
  return nt::kSuccess;
}

}  // namespace smb::server
