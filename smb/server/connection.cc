// SPDX-License-Identifier: Apache-2.0
// connection.cc - the SMB2 dispatcher of ndk-smbd: compounds, credits,
// signing, IOCTL and the small commands. NEGOTIATE, SESSION_SETUP and
// TREE_CONNECT are in session_ops.cc, the file commands in file_ops.cc.
#include "connection.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "file_window.h"
#include "nt_status.h"
#include "smb2/echo.h"
#include "smb2/error_response.h"
#include "smb2/ioctl.h"
#include "smb2/negotiate.h"
#include "smb2/session_setup.h"
#include "smb2/tree_connect.h"
#include "smbd/le.h"
#include "write_pipeline.h"

namespace smb::server {

namespace le = smbd::le;
using namespace smb::smb2;

std::map<std::string, std::string> load_users(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read the users file " + path);
  std::map<std::string, std::string> users;
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0)
      throw std::runtime_error(path + ":" + std::to_string(n) + ": expected user:password");
    std::string user = line.substr(0, colon);
    std::transform(user.begin(), user.end(), user.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    users[user] = line.substr(colon + 1);
  }
  return users;
}

namespace {

std::string hex16(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "%04x", v);
  return b;
}

}  // namespace

Connection::Connection(const ServerConfig& cfg, const Share& share, smbd::Transport& t,
                       ServerStats& stats)
    : cfg_(cfg), share_(share), t_(t), stats_(stats) {}

Connection::~Connection() {
  // The WRITEs in flight use the opens' descriptors: written first.
  if (pipe_) end_writes();
  for (auto& [k, o] : opens_) {
    share_.locks().release({this, k});
    if (o.fd >= 0) ::close(o.fd);
  }
}

smbd::RdmaMover& Connection::mover() {
  if (!mover_) mover_ = std::make_unique<smbd::RdmaMover>(t_, cfg_.max_io, cfg_.staging_buffers);
  return *mover_;
}

std::string Connection::serve(const std::atomic<bool>& stop) {
  std::string why = serve_requests(stop);
  end_writes();
  return why;
}

std::string Connection::serve_requests(const std::atomic<bool>& stop) {
  std::vector<uint8_t> msg;
  try {
    while (!stop) {
      // WRITEs in flight (write_pipeline.h): answer those written; with
      // every bounce buffer taken nothing else can be served before one
      // finishes (a WRITE needs a buffer, any other request waits for them
      // all); otherwise look for the next request for a moment only, so
      // that the next WRITE written is answered soon.
      double wait = 0.5;
      if (pipe_ && pipe_->in_flight()) {
        answer_writes(pipe_->free_slot() < 0 ? 1 : 0);
        if (pipe_->in_flight()) wait = 50e-6;
      }
      if (!t_.receive(&msg, softndk::tools::deadline_in(wait))) continue;
      // A lone inline READ is answered in its send slot (file_ops.cc), but
      // only with no WRITE in flight: the general path first drains them, so
      // that the READ sees their data.
      if (!(pipe_ && pipe_->in_flight()) && read_in_place(msg)) continue;
      // The compound, request by request (MS-SMB2 3.3.5.2.7).
      std::vector<uint8_t> resp;
      uint32_t inv = 0;
      size_t off = 0;
      uint32_t related_status = nt::kSuccess;
      for (;;) {
        auto m = std::span<const uint8_t>(msg).subspan(off);
        Header h;
        if (parse_header(m, &h) != ParseError::kNone)
          return std::string("not an SMB2 message (") + (m.size() < 4 ? "short" : "ProtocolId") +
                 "): connection dropped";
        if (h.flags & kFlagResponse) return "an SMB2 response from the client: connection dropped";
        if (h.next_command) {
          if (h.next_command % 8 || h.next_command < kHeaderSize || h.next_command > m.size())
            return "bad NextCommand in a compound: connection dropped";
          m = m.first(h.next_command);
        }
        const bool related = h.flags & kFlagRelated;
        if (!related) {
          cur_session_ = h.session_id;
          cur_tree_ = h.tree_id;
          cur_file_ = kNoFileId;
          related_status = nt::kSuccess;
        } else {
          if (h.session_id != ~uint64_t(0)) cur_session_ = h.session_id;
          if (h.tree_id != ~uint32_t(0)) cur_tree_ = h.tree_id;
        }
        const size_t at = resp.size();
        Header rh = h;
        rh.flags = kFlagResponse | (h.flags & kFlagRelated);
        rh.next_command = 0;
        rh.signature = {};
        rh.credits = uint16_t(std::clamp<uint16_t>(h.credits, 1, 128));
        rh.session_id = cur_session_;
        rh.tree_id = cur_tree_;
        append_header(rh, &resp);
        std::vector<uint8_t> body;
        uint32_t st;
        if (cancel_ignored(h)) {
          resp.resize(at);  // CANCEL gets no response (3.3.5.16)
          if (!h.next_command) break;
          off += h.next_command;
          continue;
        }
        // A request other than a WRITE that may be pipelined is served once
        // the connection's WRITEs in flight are written: it sees their
        // data (READ, FLUSH, CLOSE, SET_INFO) or may end their open.
        single_ = off == 0 && h.next_command == 0;
        if (pipe_ && pipe_->in_flight() && !(h.command == kWrite && single_)) answer_writes(2);
        // The signing key of the session the request names, as the request
        // found it: a LOGOFF ends the session, yet its response is signed
        // like any response to a signed request (MS-SMB2 3.3.4.1.1), with
        // that session's key (cifs checks it: "sign fail cmd 0x2").
        std::optional<smb2::Key16> request_key;
        if (auto s0 = sessions_.find(cur_session_); s0 != sessions_.end() && s0->second.has_key)
          request_key = s0->second.signing_key;
        if (h.command == kWrite && single_) {
          // What its answer needs should the WRITE go to the pipeline: the
          // header as built, the key to sign it with (a WRITE does not
          // change the session).
          std::copy_n(resp.begin() + ptrdiff_t(at), later_header_.size(), later_header_.begin());
          later_key_ = (h.flags & kFlagSigned) ? request_key : std::nullopt;
        }
        if (related && related_status != nt::kSuccess)
          st = related_status;  // the failure of the request it depends on (3.3.5.2.7.2)
        else if (!signature_ok(h, m))
          st = nt::kAccessDenied;  // 3.3.5.2.4
        else
          st = dispatch(h, m, &body, &inv);
        if (fatal_) return fatal_reason_;
        if (deferred_) {
          // In the pipeline: answered once written (answer_writes), with
          // the header built above and the key of the request's session.
          deferred_ = false;
          resp.resize(at);
          break;
        }
        if (cfg_.trace)
          std::fprintf(stderr, "ndk-smbd: cmd %u mid %llu%s -> 0x%08x (%zu bytes)\n", h.command,
                       (unsigned long long)h.message_id, related ? " related" : "", st,
                       body.size());
        if (st != nt::kSuccess && st != nt::kMoreProcessingRequired && st != nt::kBufferOverflow) {
          body.clear();
          append_error_response(&body);
          if (related || h.next_command) related_status = st;
        }
        le::store32(resp.data() + at + 8, st);
        if (h.command == kSessionSetup) le::store64(resp.data() + at + 40, cur_session_);
        if (h.command == kTreeConnect && st == nt::kSuccess)
          le::store32(resp.data() + at + 36, cur_tree_);
        resp.insert(resp.end(), body.begin(), body.end());
        const bool last = h.next_command == 0;
        response_built(h, st, std::span<const uint8_t>(resp).subspan(at));
        if (!last)
          while ((resp.size() - at) % 8) resp.push_back(0);
        // Sign when the request was signed and the session has a key, and
        // the final SESSION_SETUP response of a session whose client
        // requires signing (MS-SMB2 3.3.5.5.3: the request itself could
        // not be signed, the key did not exist yet).
        auto s = sessions_.find(cur_session_);
        const bool final_setup = h.command == kSessionSetup && st == nt::kSuccess &&
                                 s != sessions_.end() && s->second.sign_final;
        // The session's key now (a SESSION_SETUP may just have made it), or
        // the one the request found (a LOGOFF has removed the session).
        const std::optional<smb2::Key16> key =
            s != sessions_.end() && s->second.has_key ? s->second.signing_key : request_key;
        if (((h.flags & kFlagSigned) || final_setup) && key && h.command != kNegotiate) {
          le::store32(resp.data() + at + 16, le::load32(resp.data() + at + 16) | kFlagSigned);
          if (!last) le::store32(resp.data() + at + 20, uint32_t(resp.size() - at));
          sign(*key, std::span<uint8_t>(resp).subspan(at));
          ++stats_.signed_responses;
        } else if (!last) {
          le::store32(resp.data() + at + 20, uint32_t(resp.size() - at));
        }
        if (last) break;
        off += h.next_command;
      }
      if (resp.empty()) continue;
      if (inv) ++stats_.send_invalidates;
      t_.send(resp, inv ? &inv : nullptr);
    }
    return "stopped";
  } catch (const smbd::TransportError& e) {
    return e.what();
  }
}

bool Connection::cancel_ignored(const Header& h) { return h.command == kCancel; }

bool Connection::signature_ok(const Header& h, std::span<const uint8_t> m) {
  // 3.3.5.2.4: a signed request of a session with a key is verified (the
  // SESSION_SETUP of a new session cannot be; binding is not served).
  if (!(h.flags & kFlagSigned) || h.command == kNegotiate || h.command == kSessionSetup)
    return true;
  auto s = sessions_.find(cur_session_);
  if (s == sessions_.end() || !s->second.has_key) return true;
  if (verify(s->second.signing_key, m)) return true;
  // Once per connection on stderr: the client sent bytes other than those
  // it signed (Linux cifs 6.1 does so for inline WRITEs that span pages:
  // docs/smb-direct.md, "cifs inline I/O").
  ++stats_.bad_signatures;
  if (!bad_signature_logged_) {
    std::fprintf(stderr,
                 "ndk-smbd: the signature of a request (command %u, message id %llu, %zu bytes) "
                 "does not verify: STATUS_ACCESS_DENIED (reported once per connection)\n",
                 h.command, (unsigned long long)h.message_id, m.size());
    bad_signature_logged_ = true;
  }
  return false;
}

uint32_t Connection::dispatch(const Header& h, std::span<const uint8_t> m,
                              std::vector<uint8_t>* out, uint32_t* inv) {
  if (h.command > kOplockBreak) {
    // 3.3.5.2.6: a command code SMB2 does not define ends the connection
    // without a response.
    fatal_ = true;
    fatal_reason_ = "unknown SMB2 command 0x" + hex16(h.command) + ": connection dropped";
    return nt::kInvalidParameter;
  }
  if (h.command == kNegotiate) return negotiate(m, out);
  if (!negotiated_) return nt::kInvalidParameter;
  if (h.command == kEcho) {
    if (parse_echo(m) != ParseError::kNone) return nt::kInvalidParameter;
    append_echo(out);
    return nt::kSuccess;
  }
  if (h.command == kSessionSetup) return session_setup(h, m, out);
  auto s = sessions_.find(cur_session_);
  if (s == sessions_.end() || !s->second.valid) return nt::kUserSessionDeleted;
  switch (h.command) {
    case kLogoff:
      if (parse_logoff(m) != ParseError::kNone) return nt::kInvalidParameter;
      for (auto it = opens_.begin(); it != opens_.end();) {
        auto next = std::next(it);
        if (it->second.session == cur_session_) close_open(it->first);
        it = next;
      }
      sessions_.erase(s);
      append_logoff(out);
      return nt::kSuccess;
    case kTreeConnect:
      return tree_connect(h, m, out);
    default:
      break;
  }
  auto t = trees_.find(cur_tree_);
  if (t == trees_.end()) return nt::kNetworkNameDeleted;
  switch (h.command) {
    case kTreeDisconnect:
      if (parse_tree_disconnect(m) != ParseError::kNone) return nt::kInvalidParameter;
      for (auto it = opens_.begin(); it != opens_.end();) {
        auto next = std::next(it);
        if (it->second.tree == cur_tree_) close_open(it->first);
        it = next;
      }
      trees_.erase(t);
      append_tree_disconnect(out);
      return nt::kSuccess;
    case kIoctl:
      return ioctl(m, out);
    case kOplockBreak:
      return oplock_break(m);
    default:
      break;
  }
  if (t->second.ipc) {
    ++stats_.not_supported;
    return nt::kNotSupported;  // no named pipes
  }
  switch (h.command) {
    case kCreate:
      return create(h, m, out);
    case kClose:
      return close(m, out);
    case kFlush:
      return flush(m, out);
    case kRead:
      return read(m, out, inv);
    case kWrite:
      return write(m, out, inv);
    case kQueryInfo:
      return query_info(m, out);
    case kSetInfo:
      return set_info(m, out);
    case kQueryDirectory:
      return query_directory(m, out);
    case kLock:
      return lock(m, out);
    default:
      // CHANGE_NOTIFY (3.3.5.19: the store does not notify).
      ++stats_.not_supported;
      return nt::kNotSupported;
  }
}

uint32_t Connection::ioctl(std::span<const uint8_t> m, std::vector<uint8_t>* out) {
  IoctlRequest rq;
  if (parse_ioctl_request(m, &rq) != ParseError::kNone) return nt::kInvalidParameter;
  // 3.3.5.15, in its order.
  if (rq.flags != kIoctlIsFsctl) {
    ++stats_.not_supported;
    return nt::kNotSupported;
  }
  const bool on_no_file =
      rq.ctl_code == kFsctlDfsGetReferrals || rq.ctl_code == kFsctlDfsGetReferralsEx ||
      rq.ctl_code == kFsctlQueryNetworkInterfaceInfo ||
      rq.ctl_code == kFsctlValidateNegotiateInfo || rq.ctl_code == kFsctlPipeWait;
  if (on_no_file && !(rq.file_id == kNoFileId)) return nt::kInvalidParameter;
  if (!on_no_file) {
    if (!find_open(rq.file_id)) return nt::kFileClosed;
    ++stats_.not_supported;
    return nt::kInvalidDeviceRequest;  // no other FSCTL (copychunk, sparse, ...)
  }
  if (rq.ctl_code == kFsctlDfsGetReferrals || rq.ctl_code == kFsctlDfsGetReferralsEx)
    return nt::kFsDriverRequired;  // not a DFS server (3.3.5.15.2)
  if (rq.ctl_code != kFsctlValidateNegotiateInfo) {
    // No multichannel interface list (3.3.5.15.11), no named pipes.
    ++stats_.not_supported;
    return nt::kNotSupported;
  }
  ValidateNegotiateRequest vn;
  if (parse_validate_negotiate_request(rq.input, &vn) != ParseError::kNone)
    return nt::kInvalidParameter;
  // 3.3.5.15.12: any difference from what NEGOTIATE saw ends the connection.
  if (vn.capabilities != client_caps_ || vn.guid != client_guid_ ||
      vn.security_mode != client_security_mode_ || vn.dialects != client_dialects_) {
    fatal_ = true;
    fatal_reason_ = "FSCTL_VALIDATE_NEGOTIATE_INFO differs from the NEGOTIATE: dropped";
    return nt::kAccessDenied;
  }
  ValidateNegotiateResponse vr;
  vr.capabilities = kServerCapabilities;
  vr.guid = cfg_.server_guid;
  vr.security_mode = kSigningEnabled;
  vr.dialect = dialect_;
  const auto data = validate_negotiate_response_data(vr);
  IoctlResponse rs;
  rs.ctl_code = rq.ctl_code;
  rs.file_id = rq.file_id;
  rs.output = data;
  append_ioctl_response(rs, out);
  return nt::kSuccess;
}

uint32_t Connection::oplock_break(std::span<const uint8_t> m) {
  // 3.3.5.22: ndk-smbd grants no oplock and no lease, so no acknowledgment
  // can match a break in progress.
  if (m.size() < kHeaderSize + 2) return nt::kInvalidParameter;
  const uint16_t size = le::load16(m.data() + kHeaderSize);
  if (size == 24 && m.size() >= kHeaderSize + 24) {  // oplock break acknowledgment
    const FileId id{le::load64(m.data() + kHeaderSize + 8),
                    le::load64(m.data() + kHeaderSize + 16)};
    return find_open(id) ? nt::kInvalidDeviceState : nt::kFileClosed;  // 3.3.5.22.1
  }
  if (size == 36 && m.size() >= kHeaderSize + 36)  // lease break acknowledgment
    return nt::kObjectNameNotFound;                // 3.3.5.22.2: no such lease
  return nt::kInvalidParameter;
}

}  // namespace smb::server
