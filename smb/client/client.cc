// SPDX-License-Identifier: Apache-2.0
// client.cc - connection, NEGOTIATE, SESSION_SETUP, TREE_CONNECT and the
// request/response exchange (credits, message ids, signing).
#include "client.h"

#include <sys/random.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "ntlm/ntlmssp.h"
#include "ntlm/ntlmv2.h"
#include "ntlm/spnego.h"
#include "smb2/command.h"
#include "smb2/keys.h"
#include "smb2/negotiate.h"
#include "smb2/query_info.h"
#include "smb2/session_setup.h"
#include "smb2/tree_connect.h"

namespace smb::client {

namespace {

constexpr uint32_t kStatusPending = 0x00000103;
constexpr uint32_t kStatusMoreProcessing = 0xC0000016;
using smb2::kCapLargeMtu;
using smb2::kFlagAsync;
using smb2::kSigningEnabled;
using smb2::kSigningRequired;
// UNICODE | REQUEST_TARGET | SIGN | NTLM | ALWAYS_SIGN | EXTENDED_SESSIONSECURITY |
// TARGET_INFO | 128 | 56. No KEY_EXCH: the exported session key is the
// session base key (MS-NLMP 3.4.5.1 with NTLMv2).
constexpr uint32_t kNtlmFlags =
    ntlm::kNegotiateUnicode | ntlm::kRequestTarget | ntlm::kNegotiateSign | ntlm::kNegotiateNtlm |
    ntlm::kNegotiateAlwaysSign | ntlm::kNegotiateExtendedSessionSecurity |
    ntlm::kNegotiateTargetInfo | ntlm::kNegotiate128 | ntlm::kNegotiate56;

// The NTLMSSP CHALLENGE of a SESSION_SETUP response: bare (raw NTLMSSP
// negotiation, what ksmbd answers a raw NEGOTIATE with) or the
// responseToken of a SPNEGO negTokenResp.
void parse_challenge_token(std::span<const uint8_t> token, ntlm::ChallengeMessage* ch) {
  std::vector<uint8_t> inner;
  if (ntlm::token_kind(token) == ntlm::TokenKind::kNegTokenResp) {
    ntlm::NegTokenResp r;
    if (auto e = ntlm::parse_neg_token_resp(token, &r); e != ntlm::SpnegoError::kNone)
      throw ClientError(kExitProtocol, std::string("protocol error: SPNEGO negTokenResp: ") +
                                           ntlm::spnego_error_name(e));
    inner = std::move(r.response_token);
    token = inner;
  }
  if (auto e = ntlm::parse_challenge(token, ch); e != ntlm::NtlmError::kNone)
    throw ClientError(kExitProtocol, std::string("protocol error: NTLMSSP CHALLENGE: ") +
                                         ntlm::ntlm_error_name(e));
}

uint64_t challenge_timestamp(const ntlm::ChallengeMessage& ch) {
  std::vector<ntlm::AvPair> av;
  if (ntlm::parse_av_pairs(ch.target_info, &av) != ntlm::NtlmError::kNone) return 0;
  for (const auto& p : av)
    if (p.id == ntlm::kAvTimestamp && p.value.size() == 8) {
      uint64_t t = 0;
      for (int i = 7; i >= 0; --i) t = t << 8 | p.value[size_t(i)];
      return t;
    }
  return 0;
}

const char* command_name(uint16_t c) {
  switch (c) {
    case smb2::kNegotiate:
      return "NEGOTIATE";
    case smb2::kSessionSetup:
      return "SESSION_SETUP";
    case smb2::kLogoff:
      return "LOGOFF";
    case smb2::kTreeConnect:
      return "TREE_CONNECT";
    case smb2::kTreeDisconnect:
      return "TREE_DISCONNECT";
    case smb2::kCreate:
      return "CREATE";
    case smb2::kClose:
      return "CLOSE";
    case smb2::kFlush:
      return "FLUSH";
    case smb2::kRead:
      return "READ";
    case smb2::kWrite:
      return "WRITE";
    case smb2::kEcho:
      return "ECHO";
    case smb2::kQueryDirectory:
      return "QUERY_DIRECTORY";
    case smb2::kQueryInfo:
      return "QUERY_INFO";
  }
  return "SMB2 command";
}

void random_bytes(uint8_t* p, size_t n) {
  while (n) {
    const ssize_t got = getrandom(p, n, 0);
    if (got <= 0) throw ClientError(kExitLocal, "getrandom failed");
    p += got, n -= size_t(got);
  }
}

// FILETIME now (100 ns since 1601-01-01).
uint64_t filetime_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t(ts.tv_sec) + 11644473600ull) * 10000000ull + uint64_t(ts.tv_nsec) / 100;
}

[[noreturn]] void protocol_error(const std::string& what) {
  throw ClientError(kExitProtocol, "protocol error: " + what);
}

}  // namespace

const char* channel_name(Channel c) {
  switch (c) {
    case Channel::kInline:
      return "inline";
    case Channel::kRdma:
      return "rdma";
    case Channel::kRdmaInvalidate:
      return "rdma-invalidate";
  }
  return "?";
}

std::string dialect_name(uint16_t d) {
  switch (d) {
    case 0x0300:
      return "3.0";
    case 0x0302:
      return "3.0.2";
    case 0x0311:
      return "3.1.1";
  }
  char b[16];
  std::snprintf(b, sizeof b, "0x%04x", d);
  return b;
}

uint16_t dialect_from(const std::string& s) {
  if (s == "3.0" || s == "30") return 0x0300;
  if (s == "3.0.2" || s == "3.02" || s == "302") return 0x0302;
  if (s == "3.1.1" || s == "3.11" || s == "311") return 0x0311;
  return 0;
}

std::vector<uint8_t> smb_path(const std::string& path) {
  std::string p = path;
  std::replace(p.begin(), p.end(), '/', '\\');
  const size_t first = p.find_first_not_of('\\');
  p = first == std::string::npos ? std::string() : p.substr(first);
  while (!p.empty() && p.back() == '\\') p.pop_back();
  return ntlm::utf16le(p);
}

std::string utf8_from_utf16le(std::span<const uint8_t> s) {
  std::string out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    uint32_t c = uint32_t(s[i] | (s[i + 1] << 8));
    if (c >= 0xD800 && c < 0xDC00 && i + 3 < s.size()) {
      const uint32_t lo = uint32_t(s[i + 2] | (s[i + 3] << 8));
      if (lo >= 0xDC00 && lo < 0xE000) {
        c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
        i += 2;
      }
    }
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xC0 | (c >> 6));
      out += char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += char(0xE0 | (c >> 12));
      out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    } else {
      out += char(0xF0 | (c >> 18));
      out += char(0x80 | ((c >> 12) & 0x3F));
      out += char(0x80 | ((c >> 6) & 0x3F));
      out += char(0x80 | (c & 0x3F));
    }
  }
  return out;
}

Client::Client(const Options& o) : o_(o) {}

Client::~Client() = default;

void Client::connect(tools::Adapter& a, const tools::SockAddr& local, const tools::SockAddr& peer) {
  if (t_) throw ClientError(kExitLocal, "Client::connect called twice");
  t_ = smbd::Transport::connect(a, local, peer, o_.transport);
  negotiate();
  session_setup();
  tree_connect();
  // The I/O size: ours, the server's READ/WRITE limits, and for the RDMA
  // channel the SMB Direct MaxReadWriteSize; inline, what one SMB Direct
  // message may carry either way (less room for the SMB2 headers).
  uint32_t io = std::min({o_.io_size, max_read_, max_write_});
  if (!large_mtu_) io = std::min<uint32_t>(io, 65536);
  channel_ = o_.channel;
  if (channel_ == Channel::kRdmaInvalidate && dialect_ == 0x0300) {
    channel_ = Channel::kRdma;
    notes_.push_back(
        "dialect 3.0 has no SMB2_CHANNEL_RDMA_V1_INVALIDATE: using RDMA_V1 (the client "
        "invalidates its buffers itself)");
  }
  const auto& n = t_->negotiated();
  const uint32_t inline_max = std::min(n.max_fragmented_send_size, n.max_fragmented_receive_size);
  if (channel_ == Channel::kInline) {
    io = std::min<uint32_t>(io, inline_max > 512 ? inline_max - 512 : 0);
    io &= ~uint32_t(4095);
    if (io == 0) throw ClientError(kExitTransport, "SMB Direct messages too small for inline I/O");
    slot_mem_.assign(std::max(1u, o_.slots), std::vector<uint8_t>(io));
  } else {
    io = std::min(io, n.max_read_write_size);
    if (io == 0) throw ClientError(kExitTransport, "the peer's MaxReadWriteSize is 0");
    pool_ = std::make_unique<smbd::BufferPool>(*t_, std::max(1u, o_.slots), io);
    slot_mem_.assign(std::max(1u, o_.slots), std::vector<uint8_t>());
  }
  io_size_ = io;
  // Room for every slot's I/O and response up front: none grows per I/O.
  io_.reserve(slots());
  stash_.reserve(slots() + 2);
}

std::vector<uint8_t> Client::header_only() {
  std::vector<uint8_t> m;
  smb2::append_header(smb2::Header{}, &m);
  return m;
}

std::vector<uint8_t>& Client::request_buffer() {
  req_.clear();
  smb2::append_header(smb2::Header{}, &req_);
  return req_;
}

uint64_t Client::send(std::vector<uint8_t>& msg, uint16_t command, uint32_t len) {
  uint16_t charge = 1;
  if (large_mtu_ && len > 65536) charge = uint16_t((len - 1) / 65536 + 1);
  // Wait for credits: each response in flight brings some back.
  while (credits_ < charge) {
    if (in_flight_ == 0) protocol_error("the server left the client without credits");
    receive_one("credits", UINT64_MAX);
  }
  smb2::Header h;
  h.credit_charge = command == smb2::kNegotiate ? 0 : charge;
  h.command = command;
  // Ask for enough to keep every slot busy (the server grants what it can).
  h.credits = uint16_t(charge + (credits_ < 512 ? 64 : 0));
  h.message_id = next_id_;
  h.tree_id = tree_id_;
  h.session_id = session_id_;
  // A 3.1.1 TREE_CONNECT is signed even when the session does not sign
  // (MS-SMB2 3.2.4.1.1): it proves to the server that both derived the
  // same key from the preauth hash.
  const bool tree_connect_311 =
      command == smb2::kTreeConnect && dialect_ == 0x0311 && has_signing_key_;
  if ((signing_ || tree_connect_311) && command != smb2::kNegotiate &&
      command != smb2::kSessionSetup)
    h.flags |= smb2::kFlagSigned;
  smb2::store_header(h, msg.data());
  if (h.flags & smb2::kFlagSigned) {
    smb2::sign(signing_key_, msg);
    ++stats_.signed_sent;
  }
  next_id_ += charge;
  credits_ -= command == smb2::kNegotiate ? 0 : charge;
  t_->send(msg);
  ++in_flight_;
  return h.message_id;
}

void Client::receive_one(const char* what, uint64_t id) {
  // A free entry of the stash: its vector's capacity takes the message
  // (receive() swaps), so that a steady exchange allocates nothing.
  size_t slot = 0;
  while (slot < stash_.size() && stash_[slot].held) ++slot;
  if (slot == stash_.size()) stash_.emplace_back();
  Response& r = stash_[slot];
  std::vector<uint8_t>& m = r.msg;
  uint32_t inv = 0;
  const double tmo = o_.timeout_s;
  if (!t_->receive(&m, tools::deadline_in(tmo), &inv)) {
    char b[200];
    std::snprintf(b, sizeof b, "no answer from the server within %.0f s (waiting for %s%s)", tmo,
                  what, id == UINT64_MAX ? "" : (", message id " + std::to_string(id)).c_str());
    throw ClientError(kExitTransport, b);
  }
  r.h = smb2::Header{};
  r.bad_signature = false;
  if (auto e = smb2::parse_header(m, &r.h); e != smb2::ParseError::kNone)
    protocol_error(std::string("a message that is no SMB2 response: ") + smb2::parse_error_name(e));
  if (!(r.h.flags & smb2::kFlagResponse)) protocol_error("the server sent a request");
  if (r.h.next_command) protocol_error("compounded responses to uncompounded requests");
  credits_ += r.h.credits;
  if (r.h.status == kStatusPending && (r.h.flags & kFlagAsync)) return;  // interim answer
  // SESSION_SETUP responses: session_setup() checks the final one with the
  // key it derives from it.
  if ((r.h.flags & smb2::kFlagSigned) && r.h.command != smb2::kSessionSetup) {
    // ksmbd's failed TREE_CONNECT responses do not verify either (its
    // error path signs other bytes than it sends). A failure ends what
    // the client was doing whatever its signature says, so it is reported
    // with its status and the note instead of as a protocol error.
    const bool check = signing_ || (r.h.command == smb2::kTreeConnect && has_signing_key_);
    const bool good = !check || smb2::verify(signing_key_, m) || ksmbd_rdma_read_signature(r.h, m);
    if (!good && !o_.strict_signing && r.h.status != 0 && (r.h.status >> 30) == 3) {
      r.bad_signature = true;
      ++stats_.unverified_errors;
    } else if (!good)
      protocol_error(std::string("bad signature on the ") + command_name(r.h.command) +
                     " response (message id " + std::to_string(r.h.message_id) + ")");
    if (check && !r.bad_signature) ++stats_.signatures_verified;
  } else if (signing_ && r.h.session_id == session_id_ && session_id_ &&
             r.h.command != smb2::kSessionSetup) {
    protocol_error(std::string("unsigned ") + command_name(r.h.command) +
                   " response on a signed session");
  }
  r.invalidated = inv;
  const uint64_t mid = r.h.message_id;
  for (const Response& o : stash_)
    if (o.held && o.h.message_id == mid)
      protocol_error("two responses to message id " + std::to_string(mid));
  if (in_flight_) --in_flight_;
  r.held = true;
}

// Linux ksmbd (6.1.192 as in the interop VM, and the iov-based signing of
// later kernels) signs a READ response whose data went by RDMA Write over
// the 4-byte RFC 1002 length it keeps in front of the message plus the
// message: its READ signing takes the iovec before the header's as the
// data's, and with no inline data that is the length prefix. Accepted
// unless --strict-signing, and counted (docs/smb-direct.md, quirks).
bool Client::ksmbd_rdma_read_signature(const smb2::Header& h, std::span<const uint8_t> m) {
  if (o_.strict_signing || h.command != smb2::kRead || h.status != 0 ||
      m.size() != smb2::kHeaderSize + 16)
    return false;
  std::vector<uint8_t> v = {uint8_t(m.size() >> 24), uint8_t(m.size() >> 16),
                            uint8_t(m.size() >> 8), uint8_t(m.size())};
  v.insert(v.end(), m.begin(), m.end());
  std::fill(v.begin() + 4 + 48, v.begin() + 4 + 64, 0);
  const auto mac = smb2::aes_cmac(signing_key_, v);
  if (!std::equal(mac.begin(), mac.end(), m.begin() + 48)) return false;
  ++stats_.ksmbd_read_signatures;
  return true;
}

const Client::Response& Client::wait(uint64_t id, uint16_t command) {
  for (;;) {
    auto it = std::find_if(stash_.begin(), stash_.end(),
                           [id](const Response& r) { return r.held && r.h.message_id == id; });
    if (it != stash_.end()) {
      const Response& r = *it;
      it->held = false;  // taken: its entry is reused by a later receive
      if (r.h.command != command)
        protocol_error(std::string("answer to ") + command_name(command) + " is a " +
                       command_name(r.h.command) + " response");
      return r;
    }
    receive_one(command_name(command), id);
  }
}

[[noreturn]] void Client::status_error(uint16_t command, uint32_t status, const char* what) {
  char b[64];
  std::snprintf(b, sizeof b, " (0x%08x)", status);
  throw ClientError(kExitStatus,
                    std::string(command_name(command)) + (what && *what ? " " : "") +
                        (what ? what : "") + ": " + nt_status_name(status) + b,
                    status);
}

Client::Response Client::call(std::vector<uint8_t>& msg, uint16_t command, uint32_t len) {
  Response r = wait(send(msg, command, len), command);
  if (r.h.status != 0) status_error(command, r.h.status, "");
  return r;
}

void Client::negotiate() {
  smb2::NegotiateRequest rq;
  rq.security_mode = uint16_t(kSigningEnabled | (o_.require_signing ? kSigningRequired : 0));
  rq.capabilities = kCapLargeMtu;
  random_bytes(rq.client_guid.data(), rq.client_guid.size());
  rq.dialects = o_.dialects;
  if (std::find(rq.dialects.begin(), rq.dialects.end(), smb2::kDialect311) != rq.dialects.end()) {
    smb2::PreauthIntegrity pi;
    pi.hash_algorithms = {smb2::kHashSha512};
    pi.salt.resize(32);
    random_bytes(pi.salt.data(), pi.salt.size());
    rq.contexts.push_back({smb2::kPreauthIntegrityCapabilities, smb2::preauth_integrity_data(pi)});
  }
  auto m = header_only();
  smb2::append_negotiate_request(rq, &m);
  const uint64_t id = send(m, smb2::kNegotiate);
  Response r = wait(id, smb2::kNegotiate);
  if (r.h.status != 0) {
    throw ClientError(
        kExitProtocol,
        "NEGOTIATE refused: " + nt_status_name(r.h.status) + " (none of the offered dialects?)",
        r.h.status);
  }
  smb2::NegotiateResponse rs;
  if (auto e = smb2::parse_negotiate_response(r.msg, &rs); e != smb2::ParseError::kNone)
    protocol_error(std::string("NEGOTIATE response: ") + smb2::parse_error_name(e));
  if (std::find(o_.dialects.begin(), o_.dialects.end(), rs.dialect) == o_.dialects.end())
    protocol_error("the server chose dialect " + dialect_name(rs.dialect) +
                   ", which was not offered");
  dialect_ = rs.dialect;
  max_read_ = rs.max_read_size;
  max_write_ = rs.max_write_size;
  max_transact_ = rs.max_transact_size;
  large_mtu_ = (rs.capabilities & kCapLargeMtu) != 0;
  if (!max_read_ || !max_write_) protocol_error("NEGOTIATE response: MaxRead/WriteSize 0");
  signing_ = o_.require_signing || (rs.security_mode & kSigningRequired);
  if (dialect_ == 0x0311) {
    const auto* c = smb2::find_context(rs.contexts, smb2::kPreauthIntegrityCapabilities);
    smb2::PreauthIntegrity pi;
    if (!c || smb2::parse_preauth_integrity(c->data, &pi) != smb2::ParseError::kNone ||
        pi.hash_algorithms.size() != 1 || pi.hash_algorithms[0] != smb2::kHashSha512)
      protocol_error("3.1.1 NEGOTIATE response without the SHA-512 preauth integrity context");
    preauth_.fill(0);
    smb2::preauth_update(preauth_, m);
    smb2::preauth_update(preauth_, r.msg);
  }
}

void Client::session_setup() {
  const bool anonymous_user = o_.guest && o_.user.empty();
  smb2::Hash512 h = preauth_;
  auto round = [&](std::vector<uint8_t> token, Response* out) {
    auto m = header_only();
    smb2::SessionSetupRequest rq;
    rq.security_mode = uint8_t(kSigningEnabled | (o_.require_signing ? kSigningRequired : 0));
    rq.security_buffer = token;
    smb2::append_session_setup_request(rq, &m);
    const uint64_t id = send(m, smb2::kSessionSetup);  // fills in the header: hash after
    if (dialect_ == 0x0311) smb2::preauth_update(h, m);
    *out = wait(id, smb2::kSessionSetup);
  };
  Response r1;
  ntlm::NegotiateMessage nm;
  nm.flags = kNtlmFlags;
  round(ntlm::build_negotiate(nm), &r1);
  if (r1.h.status != kStatusMoreProcessing) {
    throw ClientError(kExitAuth,
                      "SESSION_SETUP (NTLMSSP NEGOTIATE) refused: " + nt_status_name(r1.h.status),
                      r1.h.status);
  }
  if (dialect_ == 0x0311) smb2::preauth_update(h, r1.msg);
  session_id_ = r1.h.session_id;
  smb2::SessionSetupResponse s1;
  if (auto e = smb2::parse_session_setup_response(r1.msg, &s1); e != smb2::ParseError::kNone)
    protocol_error(std::string("SESSION_SETUP response: ") + smb2::parse_error_name(e));
  ntlm::ChallengeMessage ch;
  parse_challenge_token(s1.security_buffer, &ch);
  const uint64_t timestamp = challenge_timestamp(ch);
  ntlm::Challenge cc{};
  random_bytes(cc.data(), cc.size());
  const std::string user = anonymous_user ? std::string() : o_.user;
  const auto owf = ntlm::nt_owf_v2(user, o_.domain, o_.guest ? std::string() : o_.password);
  const auto resp = ntlm::ntlmv2_response(owf, ch.server_challenge, cc,
                                          timestamp ? timestamp : filetime_now(), ch.target_info);
  ntlm::AuthenticateMessage am;
  am.lm_response.assign(resp.lm_response.begin(), resp.lm_response.end());
  am.nt_response = resp.nt_response;
  am.domain = ntlm::utf16le(o_.domain);
  am.user = ntlm::utf16le(user);
  am.workstation = ntlm::utf16le("NDK-SMB");
  am.flags = ch.flags & kNtlmFlags;
  auto auth = ntlm::build_authenticate(am);
  Response r2;
  round(std::move(auth), &r2);
  if (r2.h.status != 0) {
    throw ClientError(kExitAuth,
                      "the server refused the session for " +
                          (user.empty() ? std::string("guest") : "user '" + user + "'") + ": " +
                          nt_status_name(r2.h.status),
                      r2.h.status);
  }
  smb2::SessionSetupResponse s2;
  if (auto e = smb2::parse_session_setup_response(r2.msg, &s2); e != smb2::ParseError::kNone)
    protocol_error(std::string("SESSION_SETUP response: ") + smb2::parse_error_name(e));
  guest_ = (s2.session_flags & (smb2::kSessionFlagIsGuest | smb2::kSessionFlagIsNull)) != 0;
  if (s2.session_flags & smb2::kSessionFlagEncryptData)
    protocol_error("the server requires encryption, which ndk-smb does not do");
  if (guest_) {
    if (o_.require_signing)
      throw ClientError(kExitAuth,
                        "the server made the session a guest session, which cannot "
                        "be signed (--sign)");
    signing_ = false;  // MS-SMB2 3.2.5.3.1: guest and anonymous sessions are not signed
    return;
  }
  smb2::Key16 session_key;
  std::copy(resp.session_base_key.begin(), resp.session_base_key.end(), session_key.begin());
  signing_key_ = dialect_ == 0x0311 ? smb2::signing_key_311(session_key, h)
                                    : smb2::signing_key_30(session_key);
  has_signing_key_ = true;
  if (signing_ || dialect_ == 0x0311 || (r2.h.flags & smb2::kFlagSigned)) {
    // The final SESSION_SETUP response is signed with the new key when the
    // session signs, and always at 3.1.1 (MS-SMB2 3.3.5.5.3): check it.
    if (!(r2.h.flags & smb2::kFlagSigned)) {
      protocol_error("the final SESSION_SETUP response of a signed session is not signed");
    }
    if (!smb2::verify(signing_key_, r2.msg))
      protocol_error("bad signature on the final SESSION_SETUP response (wrong session key?)");
    ++stats_.signatures_verified;
    // At 3.0/3.0.2 a signed final response means the server signs the
    // session. At 3.1.1 every final response is signed; the session signs
    // only when one side requires it (Session.SigningRequired, 3.2.5.3.1).
    if (dialect_ != 0x0311) signing_ = true;
  }
}

void Client::tree_connect() {
  auto m = header_only();
  const auto path = ntlm::utf16le("\\\\" + o_.host + "\\" + o_.share);
  smb2::append_tree_connect_request(smb2::TreeConnectRequest{.flags = 0, .path = path}, &m);
  Response r = wait(send(m, smb2::kTreeConnect), smb2::kTreeConnect);
  if (r.h.status != 0) {
    throw ClientError(kExitShare,
                      "TREE_CONNECT to \\\\" + o_.host + "\\" + o_.share +
                          " refused: " + nt_status_name(r.h.status) +
                          (r.bad_signature ? " (the response's signature did not verify)" : ""),
                      r.h.status);
  }
  smb2::TreeConnectResponse tc;
  if (auto e = smb2::parse_tree_connect_response(r.msg, &tc); e != smb2::ParseError::kNone)
    protocol_error(std::string("TREE_CONNECT response: ") + smb2::parse_error_name(e));
  if (tc.share_type != smb2::kShareTypeDisk)
    throw ClientError(kExitShare, "\\\\" + o_.host + "\\" + o_.share + " is not a disk share");
  tree_id_ = r.h.tree_id;
}

void Client::logoff() {
  if (!t_ || t_->ended()) return;
  try {
    const double keep = o_.timeout_s;
    o_.timeout_s = std::min(keep, 5.0);
    if (tree_id_) {
      auto m = header_only();
      smb2::append_tree_disconnect(&m);
      wait(send(m, smb2::kTreeDisconnect), smb2::kTreeDisconnect);
      tree_id_ = 0;
    }
    if (session_id_) {
      auto m = header_only();
      smb2::append_logoff(&m);
      wait(send(m, smb2::kLogoff), smb2::kLogoff);
    }
    o_.timeout_s = keep;
  } catch (const std::exception&) {
    // The server may be gone already; the disconnect below still runs.
  }
  pool_.reset();
  t_->disconnect();
}

}  // namespace smb::client
