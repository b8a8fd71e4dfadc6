// SPDX-License-Identifier: Apache-2.0
// smb_server_harness.h - what the ndk-smbd server tests share: ndk-smbd's
// Connection served on 127.0.0.1 from its own thread (ServedShare), a small
// client on the codecs (Client: one request at a time), request bodies and
// the raw NTLMv2 authentication cifs sends (authenticate_as).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>

#include "connection.h"
#include "nt_status.h"
#include "ntlm/ntlmssp.h"
#include "ntlm/ntlmv2.h"
#include "smb2/ioctl.h"
#include "smb2/keys.h"
#include "smb2/negotiate.h"
#include "smb2/negotiate_contexts.h"
#include "smb2/session_setup.h"
#include "smb2/tree_connect.h"
#include "smbd/buffer_descriptor.h"
#include "smbd/le.h"

namespace smb_server_test {

namespace tools = softndk::tools;
namespace fs = std::filesystem;
using namespace smb;
namespace le = smbd::le;

inline tools::SockAddr addr(uint16_t port) {
  tools::SockAddr s;
  std::string err;
  EXPECT_TRUE(tools::resolve("127.0.0.1", port, s, err)) << err;
  return s;
}
inline tools::AdapterOptions adapter_options() {
  tools::AdapterOptions o;
  o.name = "127.0.0.1";
  o.timeout_s = 10;
  o.disconnect_timeout_s = 1;
  return o;
}

struct TempDir {
  fs::path root = fs::temp_directory_path() / ("ndk-smbd-test-" + std::to_string(getpid()));
  TempDir() {
    fs::remove_all(root);
    fs::create_directories(root / "export");
    fs::create_directories(root / "outside");
    std::ofstream(root / "outside" / "secret") << "secret";
    fs::create_symlink(root / "outside", root / "export" / "link");
  }
  ~TempDir() { fs::remove_all(root); }
};

// The client side: one request at a time, message ids counted.
struct Client {
  explicit Client(smbd::Transport& tr) : t(tr) {}
  smbd::Transport& t;
  uint64_t mid = 0, session = 0;
  uint32_t tree = 0, flags = 0;
  std::optional<smb2::Key16> sign_key;  // set: every request signed with it
  std::vector<uint8_t> last;
  uint32_t invalidated = 0;

  uint32_t call(uint16_t cmd, const std::vector<uint8_t>& body) {
    smb2::Header h;
    h.command = cmd;
    h.credits = 8;
    h.message_id = mid++;
    h.session_id = session;
    h.tree_id = tree;
    h.flags = flags;
    std::vector<uint8_t> m;
    smb2::append_header(h, &m);
    m.insert(m.end(), body.begin(), body.end());
    if (sign_key) {
      le::store32(m.data() + 16, le::load32(m.data() + 16) | smb2::kFlagSigned);
      smb2::sign(*sign_key, m);
    }
    t.send(m);
    EXPECT_TRUE(t.receive(&last, tools::deadline_in(20), &invalidated));
    smb2::Header r;
    EXPECT_EQ(smb2::parse_header(last, &r), smb2::ParseError::kNone);
    EXPECT_EQ(r.message_id, h.message_id);
    if (cmd == smb2::kSessionSetup) session = r.session_id;
    if (cmd == smb2::kTreeConnect) tree = r.tree_id;
    return r.status;
  }
  // The body of a request built by a codec that appends after a header.
  template <class F>
  static std::vector<uint8_t> body(F f) {
    std::vector<uint8_t> m(smb2::kHeaderSize);
    f(&m);
    return {m.begin() + smb2::kHeaderSize, m.end()};
  }
};

inline std::vector<uint8_t> create_body(const std::string& name, uint32_t disposition) {
  const auto n = ntlm::utf16le(name);
  std::vector<uint8_t> b(56);
  le::store16(b.data(), 57);
  le::store32(b.data() + 24, 0x0012019F);  // read/write
  le::store32(b.data() + 36, disposition);
  le::store16(b.data() + 44, uint16_t(smb2::kHeaderSize + 56));
  le::store16(b.data() + 46, uint16_t(n.size()));
  b.insert(b.end(), n.begin(), n.end());
  if (n.empty()) b.push_back(0);
  return b;
}

// READ (write=false) or WRITE whose channel info is `info` (normally a
// list of buffer descriptors), with the given channel (2: V1_INVALIDATE).
inline std::vector<uint8_t> io_body_info(bool write, const std::array<uint8_t, 16>& id,
                                         uint32_t len, std::span<const uint8_t> info,
                                         uint32_t channel = 2) {
  std::vector<uint8_t> b(48);
  le::store16(b.data(), 49);
  std::copy(id.begin(), id.end(), b.data() + 16);
  if (write) {
    le::store16(b.data() + 2, uint16_t(smb2::kHeaderSize + 48));
    le::store32(b.data() + 32, channel);
    le::store32(b.data() + 36, len);  // RemainingBytes
    le::store16(b.data() + 40, uint16_t(smb2::kHeaderSize + 48));
    le::store16(b.data() + 42, uint16_t(info.size()));
  } else {
    le::store32(b.data() + 4, len);
    le::store32(b.data() + 36, channel);
    le::store16(b.data() + 44, uint16_t(smb2::kHeaderSize + 48));
    le::store16(b.data() + 46, uint16_t(info.size()));
  }
  // Grown to its final size first (gcc 12's -Warray-bounds misreads an
  // insert at the end of a vector of known size).
  b.resize(48 + std::max<size_t>(info.size(), 1));  // an empty list: the one-byte Buffer
  if (!info.empty()) std::memcpy(b.data() + 48, info.data(), info.size());
  return b;
}
inline std::vector<uint8_t> io_body_list(bool write, const std::array<uint8_t, 16>& id,
                                         uint32_t len, std::span<const smbd::BufferDescriptor> d,
                                         uint32_t channel = 2) {
  std::vector<uint8_t> info;
  smbd::append_buffer_descriptors(d, &info);
  return io_body_info(write, id, len, info, channel);
}

// NEGOTIATE offering `dialects` (and `security_mode`); the status, and
// the parsed response in *out when it succeeded.
inline uint32_t negotiate(Client& c, const std::vector<uint16_t>& dialects,
                          smb2::NegotiateResponse* out = nullptr, uint16_t security_mode = 0) {
  smb2::NegotiateRequest nq;
  nq.dialects = dialects;
  nq.security_mode = security_mode;
  const uint32_t st = c.call(smb2::kNegotiate,
                             Client::body([&](auto* m) { smb2::append_negotiate_request(nq, m); }));
  if (st == nt::kSuccess && out != nullptr) {
    EXPECT_EQ(smb2::parse_negotiate_response(c.last, out), smb2::ParseError::kNone);
  }
  return st;
}

// TREE_CONNECT to `unc` (\\127.0.0.1\share); the status (c.tree is set).
inline uint32_t tree_connect(Client& c, const char* unc) {
  smb2::TreeConnectRequest tq;
  const auto path = ntlm::utf16le(unc);
  tq.path = path;
  return c.call(smb2::kTreeConnect,
                Client::body([&](auto* m) { smb2::append_tree_connect_request(tq, m); }));
}

// NTLMSSP: NEGOTIATE -> CHALLENGE -> AUTHENTICATE as smbtest, raw (as cifs
// sends it); the final SESSION_SETUP's status.
inline uint32_t authenticate_as(Client& c, const char* password) {
  c.session = 0;
  ntlm::NegotiateMessage n;
  n.flags = ntlm::kNegotiateUnicode | ntlm::kNegotiateNtlm | ntlm::kNegotiateKeyExch |
            ntlm::kNegotiateExtendedSessionSecurity;
  auto blob = ntlm::build_negotiate(n);
  smb2::SessionSetupRequest sq;
  sq.security_buffer = blob;
  EXPECT_EQ(c.call(smb2::kSessionSetup,
                   Client::body([&](auto* m) { smb2::append_session_setup_request(sq, m); })),
            nt::kMoreProcessingRequired);
  smb2::SessionSetupResponse sr;
  EXPECT_EQ(smb2::parse_session_setup_response(c.last, &sr), smb2::ParseError::kNone);
  ntlm::ChallengeMessage ch;
  EXPECT_EQ(ntlm::parse_challenge(sr.security_buffer, &ch), ntlm::NtlmError::kNone);
  const ntlm::Challenge cc = {1, 2, 3, 4, 5, 6, 7, 8};
  auto r = ntlm::ntlmv2_response(ntlm::nt_owf_v2("smbtest", "WORKGROUP", password),
                                 ch.server_challenge, cc, 0x01d9000000000000ull, ch.target_info);
  ntlm::AuthenticateMessage a;
  a.flags = ch.flags;
  a.user = ntlm::utf16le("smbtest");
  a.domain = ntlm::utf16le("WORKGROUP");
  a.nt_response = r.nt_response;
  a.lm_response.assign(r.lm_response.begin(), r.lm_response.end());
  a.encrypted_random_session_key.assign(16, 0x11);
  auto ab = ntlm::build_authenticate(a);
  sq.security_buffer = ab;
  return c.call(smb2::kSessionSetup,
                Client::body([&](auto* m) { smb2::append_session_setup_request(sq, m); }));
}

// ndk-smbd's Connection serving one softndk connection on 127.0.0.1 from
// its own thread, over a temporary exported directory; the test's side is
// the transport connect() returns.
struct ServedShare {
  explicit ServedShare(const server::ServerConfig& c) : cfg(c) {}
  std::unique_ptr<smbd::Transport> connect() {
    srv = std::async(std::launch::async, [this]() -> std::string {
      try {
        auto in = listener.next(tools::deadline_in(10));
        if (!in) return "no connection";
        auto t = smbd::Transport::accept(sa, std::move(in), tcfg);
        server::Connection c(cfg, share, *t, stats);
        return c.serve(stop);
      } catch (const std::exception& e) {
        return e.what();
      }
    });
    return smbd::Transport::connect(ca, addr(0), addr(listener.port()), tcfg);
  }
  TempDir dir;
  const server::ServerConfig cfg;
  server::Share share{(dir.root / "export").string()};
  server::ServerStats stats;
  tools::Adapter sa{adapter_options()}, ca{adapter_options()};
  tools::Listener listener{sa, addr(0)};
  std::atomic<bool> stop{false};
  smbd::TransportConfig tcfg;
  std::future<std::string> srv;  // last: its end (the server thread's) comes first
};

}  // namespace smb_server_test
