// SPDX-License-Identifier: Apache-2.0
// ndk-smbd's server (smb/server) softndk <-> softndk on 127.0.0.1, no VM: a
// small client built on the codecs negotiates 3.0.2, authenticates with
// NTLMv2 (and is refused with a wrong password), connects the share,
// creates a file, WRITEs it by RDMA Read from the client's buffer and READs
// it back by RDMA Write with Send with Invalidate (token checked), and
// checks that paths cannot leave the share ("..", a symbolic link out).
// Also the path mapping and confinement on their own.
#include "smb_server_harness.h"

namespace {

using namespace smb_server_test;

TEST(SmbServerPaths, MappingAndConfinement) {
  std::string rel;
  auto u = [](const char* s) { return ntlm::utf16le(s); };
  EXPECT_EQ(server::share_path(u("a\\b\\c.txt"), &rel), nt::kSuccess);
  EXPECT_EQ(rel, "a/b/c.txt");
  EXPECT_EQ(server::share_path(u(""), &rel), nt::kSuccess);
  EXPECT_EQ(rel, "");
  EXPECT_EQ(server::share_path(u("\\x\\\\y"), &rel), nt::kSuccess);
  EXPECT_EQ(rel, "x/y");
  for (const char* bad : {"..", "a\\..\\..\\etc", "a\\.\\b", "a/b", "f:stream"})
    EXPECT_EQ(server::share_path(u(bad), &rel), nt::kObjectNameInvalid) << bad;
  const uint8_t odd[] = {'a', 0, 'b'};
  EXPECT_EQ(server::share_path(odd, &rel), nt::kObjectNameInvalid);

  TempDir d;
  server::Share share((d.root / "export").string());
  int fd = share.open_beneath("link/secret", O_RDONLY);
  EXPECT_LT(fd, 0);  // a symbolic link on the way
  EXPECT_EQ(server::status_from_errno(-fd), nt::kAccessDenied);
  fd = share.open_beneath("../outside/secret", O_RDONLY);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(server::status_from_errno(-fd), nt::kAccessDenied);
}

TEST(SmbServer, CodecClientEndToEndOverRdma) {
  server::ServerConfig cfg;
  cfg.users["smbtest"] = "Pw-good";
  cfg.max_io = 4u << 20;
  ServedShare s(cfg);
  auto t = s.connect();
  Client c(*t);

  smb2::NegotiateResponse nr;
  ASSERT_EQ(negotiate(c, {smb2::kDialect300, smb2::kDialect302}, &nr), nt::kSuccess);
  EXPECT_EQ(nr.dialect, smb2::kDialect302);

  auto authenticate = [&](const char* password) { return authenticate_as(c, password); };
  EXPECT_EQ(authenticate("Pw-bad"), nt::kLogonFailure);
  ASSERT_EQ(authenticate("Pw-good"), nt::kSuccess);
  // A request flagged signed whose signature is not the session key's
  // (here: zeros): STATUS_ACCESS_DENIED (MS-SMB2 3.3.5.2.4).
  // The server says so on stderr, once per connection.
  c.flags = smb2::kFlagSigned;
  testing::internal::CaptureStderr();
  EXPECT_EQ(c.call(smb2::kEcho, {4, 0, 0, 0}), nt::kAccessDenied);
  EXPECT_EQ(c.call(smb2::kEcho, {4, 0, 0, 0}), nt::kAccessDenied);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("the signature of a request (command 13, message id"), std::string::npos)
      << said;
  EXPECT_EQ(said.find("does not verify"), said.rfind("does not verify")) << said;
  c.flags = 0;
  EXPECT_EQ(c.call(smb2::kEcho, {4, 0, 0, 0}), nt::kSuccess);
  EXPECT_EQ(s.stats.bad_signatures.load(), 2u);

  EXPECT_EQ(tree_connect(c, "\\\\127.0.0.1\\nosuch"), nt::kBadNetworkName);
  ASSERT_EQ(tree_connect(c, "\\\\127.0.0.1\\share"), nt::kSuccess);

  // Escapes refused.
  EXPECT_EQ(c.call(smb2::kCreate, create_body("..\\outside\\secret", 1)), nt::kObjectNameInvalid);
  EXPECT_EQ(c.call(smb2::kCreate, create_body("link\\secret", 1)), nt::kAccessDenied);

  ASSERT_EQ(c.call(smb2::kCreate, create_body("data.bin", 2)), nt::kSuccess);  // FILE_CREATE
  std::array<uint8_t, 16> id;
  std::copy(c.last.begin() + 64 + 64, c.last.begin() + 64 + 80, id.begin());

  const uint32_t len = 3u << 20 | 123;  // odd size, several chunks
  smbd::BufferPool pool(*t, 2, 4u << 20);
  for (uint32_t i = 0; i < len; ++i) pool.data(0)[i] = uint8_t(i * 7 + (i >> 12));
  // 4 MiB slots of FRMRPageCount-page MRs: the client's own descriptor
  // lists (one per MR the I/O spans).
  auto src = pool.expose(0, len, false);
  EXPECT_EQ(src.size(), (len + pool.mr_size() - 1) / pool.mr_size());
  ASSERT_EQ(c.call(smb2::kWrite, io_body_list(true, id, len, src)), nt::kSuccess);
  EXPECT_EQ(c.invalidated, src[0].token);  // Send with Invalidate of our first token
  pool.release(0, c.invalidated);
  EXPECT_EQ(le::load32(c.last.data() + 64 + 4), len);  // Count
  EXPECT_EQ(fs::file_size(s.dir.root / "export" / "data.bin"), len);

  std::memset(pool.data(1), 0, len);
  auto sink = pool.expose(1, len, true);
  ASSERT_EQ(c.call(smb2::kRead, io_body_list(false, id, len, sink)), nt::kSuccess);
  EXPECT_EQ(c.invalidated, sink[0].token);
  pool.release(1, c.invalidated);
  EXPECT_EQ(c.last.size(), 80u);                       // no padding byte after an RDMA READ
  EXPECT_EQ(le::load32(c.last.data() + 64 + 8), len);  // DataRemaining
  EXPECT_EQ(std::memcmp(pool.data(0), pool.data(1), len), 0);

  // Past the end: STATUS_END_OF_FILE, the buffer invalidated all the same.
  auto sink2 = pool.expose(1, 4096, true);
  std::vector<uint8_t> eof = io_body_list(false, id, 4096, sink2);
  le::store64(eof.data() + 8, uint64_t(len) + 10);
  EXPECT_EQ(c.call(smb2::kRead, eof), nt::kEndOfFile);
  EXPECT_EQ(c.invalidated, sink2[0].token);
  pool.release(1, c.invalidated);

  // What ndk-smbd does not implement, each with the status of MS-SMB2.
  // OPLOCK_BREAK: nothing was granted, so no break is in progress
  // (3.3.5.22.1), and there is no lease (3.3.5.22.2).
  std::vector<uint8_t> oplock_ack(24);
  le::store16(oplock_ack.data(), 24);
  std::copy(id.begin(), id.end(), oplock_ack.data() + 8);
  EXPECT_EQ(c.call(smb2::kOplockBreak, oplock_ack), nt::kInvalidDeviceState);
  std::vector<uint8_t> lease_ack(36);
  le::store16(lease_ack.data(), 36);
  EXPECT_EQ(c.call(smb2::kOplockBreak, lease_ack), nt::kObjectNameNotFound);
  EXPECT_EQ(c.call(smb2::kOplockBreak, std::vector<uint8_t>(8, 0)), nt::kInvalidParameter);
  // IOCTL (3.3.5.15): not an FSCTL; an interface list (no multichannel);
  // the FSCTLs of "no file" on a file; another FSCTL on the open file
  // (server-side copy) and on no open.
  smb2::FileId fid{le::load64(id.data()), le::load64(id.data() + 8)};
  auto ioctl = [&](uint32_t code, smb2::FileId f, uint32_t flags) {
    smb2::IoctlRequest rq;
    rq.ctl_code = code;
    rq.file_id = f;
    rq.flags = flags;
    rq.max_output_response = 1024;
    return c.call(smb2::kIoctl, Client::body([&](auto* m) { smb2::append_ioctl_request(rq, m); }));
  };
  EXPECT_EQ(ioctl(smb2::kFsctlQueryNetworkInterfaceInfo, smb2::kNoFileId, 0), nt::kNotSupported);
  EXPECT_EQ(ioctl(smb2::kFsctlQueryNetworkInterfaceInfo, smb2::kNoFileId, smb2::kIoctlIsFsctl),
            nt::kNotSupported);
  EXPECT_EQ(ioctl(smb2::kFsctlQueryNetworkInterfaceInfo, fid, smb2::kIoctlIsFsctl),
            nt::kInvalidParameter);
  EXPECT_EQ(ioctl(smb2::kFsctlDfsGetReferrals, smb2::kNoFileId, smb2::kIoctlIsFsctl),
            nt::kFsDriverRequired);
  constexpr uint32_t kFsctlSrvCopychunk = 0x001440F2;
  EXPECT_EQ(ioctl(kFsctlSrvCopychunk, fid, smb2::kIoctlIsFsctl), nt::kInvalidDeviceRequest);
  EXPECT_EQ(ioctl(kFsctlSrvCopychunk, smb2::FileId{7, 7}, smb2::kIoctlIsFsctl), nt::kFileClosed);
  std::vector<uint8_t> notify(32);
  le::store16(notify.data(), 32);
  std::copy(id.begin(), id.end(), notify.data() + 8);
  EXPECT_EQ(c.call(smb2::kChangeNotify, notify), nt::kNotSupported);
  // More than one buffer descriptor per I/O (MS-SMB2 2.2.19/2.2.21: "one or
  // more SMB_DIRECT_BUFFER_DESCRIPTOR_V1"), each its own registration, with
  // odd lengths so that no RDMA operation lines up with a slot: a WRITE
  // pulled from three (V1_INVALIDATE: the answer invalidates the first, the
  // client the others), a READ pushed into three other pieces (V1: the
  // client invalidates them all).
  {
    smbd::BufferPool many(*t, 3, 2u << 20, 2u << 20);  // one MR per slot
    const uint32_t w[3] = {1000003, 2u << 20, len - 1000003 - (2u << 20)};
    std::vector<uint8_t> want(len);
    for (uint32_t i = 0; i < len; ++i) want[i] = uint8_t(i * 13 + (i >> 10) + 1);
    std::vector<smbd::BufferDescriptor> d;
    for (uint32_t k = 0, at = 0; k < 3; at += w[k], ++k) {
      std::memcpy(many.data(k), want.data() + at, w[k]);
      d.push_back(many.expose(k, w[k], false).at(0));
    }
    ASSERT_EQ(c.call(smb2::kWrite, io_body_list(true, id, len, d)), nt::kSuccess);
    EXPECT_EQ(c.invalidated, d[0].token);  // the first descriptor's token
    many.release(0, c.invalidated);
    many.release(1, 0);
    many.release(2, 0);
    EXPECT_EQ(le::load32(c.last.data() + 64 + 4), len);
    std::ifstream f(s.dir.root / "export" / "data.bin", std::ios::binary);
    std::vector<uint8_t> disk(len);
    f.read(reinterpret_cast<char*>(disk.data()), len);
    EXPECT_TRUE(disk == want) << "the file differs from the three pieces written";

    const uint32_t r[3] = {4096 + 1, (2u << 20) - 7, len - 4097 - ((2u << 20) - 7)};
    d.clear();
    for (uint32_t k = 0; k < 3; ++k) {
      std::memset(many.data(k), 0, 2u << 20);
      d.push_back(many.expose(k, r[k], true).at(0));
    }
    ASSERT_EQ(c.call(smb2::kRead, io_body_list(false, id, len, d, 1)), nt::kSuccess);
    EXPECT_EQ(c.invalidated, 0u);  // RDMA_V1: a plain Send
    std::vector<uint8_t> got;
    for (uint32_t k = 0; k < 3; ++k) {
      got.insert(got.end(), many.data(k), many.data(k) + r[k]);
      many.release(k, 0);
    }
    EXPECT_EQ(many.local_invalidations(), 5u);
    EXPECT_TRUE(got == want) << "the three pieces read back differ from the file";

    // At an offset inside a page, ending inside another: WRITE 100000
    // bytes at 12345, READ 70001 bytes back from 12345 + 999.
    const uint32_t at = 12345, n = 100000;
    for (uint32_t i = 0; i < n; ++i) many.data(0)[i] = uint8_t(i * 101 + 3);
    auto wd = many.expose(0, n, false);
    std::vector<uint8_t> wb = io_body_list(true, id, n, wd, 1);
    le::store64(wb.data() + 8, at);
    ASSERT_EQ(c.call(smb2::kWrite, wb), nt::kSuccess);
    many.release(0, 0);
    for (uint32_t i = 0; i < n; ++i) want[at + i] = uint8_t(i * 101 + 3);
    std::memset(many.data(1), 0, n);
    auto rd = many.expose(1, 70001, true);
    std::vector<uint8_t> rb = io_body_list(false, id, 70001, rd, 1);
    le::store64(rb.data() + 8, at + 999);
    ASSERT_EQ(c.call(smb2::kRead, rb), nt::kSuccess);
    many.release(1, 0);
    EXPECT_EQ(std::memcmp(many.data(1), want.data() + at + 999, 70001), 0);
  }

  // Malformed descriptor lists: STATUS_INVALID_PARAMETER (MS-SMB2 3.3.5.12,
  // 3.3.5.13), no RDMA operation tried, the connection kept. Channel V1, so
  // no answer names a token.
  {
    const uint64_t before_r = s.stats.rdma_reads.load(), before_w = s.stats.rdma_writes.load();
    const smbd::BufferDescriptor fake{0x1000, 0x1234, 4096};
    std::vector<uint8_t> list;
    smbd::append_buffer_descriptors(std::span(&fake, 1), &list);
    for (bool wr : {false, true}) {
      SCOPED_TRACE(wr ? "WRITE" : "READ");
      // Not a whole number of descriptors.
      std::vector<uint8_t> odd = list;
      odd.resize(24);
      EXPECT_EQ(c.call(wr ? smb2::kWrite : smb2::kRead, io_body_info(wr, id, 4096, odd, 1)),
                nt::kInvalidParameter);
      // An RDMA channel without any descriptor.
      EXPECT_EQ(c.call(wr ? smb2::kWrite : smb2::kRead, io_body_info(wr, id, 4096, {}, 1)),
                nt::kInvalidParameter);
      // More descriptors than the server takes (16).
      std::vector<smbd::BufferDescriptor> seventeen(17, smbd::BufferDescriptor{0x1000, 0x1234, 1});
      EXPECT_EQ(c.call(wr ? smb2::kWrite : smb2::kRead, io_body_list(wr, id, 17, seventeen, 1)),
                nt::kInvalidParameter);
      // Descriptors that cover less than the I/O.
      const smbd::BufferDescriptor two[2] = {{0x1000, 0x1234, 4096}, {0x9000, 0x1235, 4095}};
      EXPECT_EQ(c.call(wr ? smb2::kWrite : smb2::kRead, io_body_list(wr, id, 8192, two, 1)),
                nt::kInvalidParameter);
      // A channel-info offset past the end of the message.
      std::vector<uint8_t> past = io_body_info(wr, id, 4096, list, 1);
      le::store16(past.data() + (wr ? 40 : 44), uint16_t(smb2::kHeaderSize + 48 + 8));
      EXPECT_EQ(c.call(wr ? smb2::kWrite : smb2::kRead, past), nt::kInvalidParameter);
      // A channel value that is none of NONE, RDMA_V1, RDMA_V1_INVALIDATE.
      EXPECT_EQ(c.call(wr ? smb2::kWrite : smb2::kRead, io_body_info(wr, id, 4096, list, 7)),
                nt::kInvalidParameter);
    }
    EXPECT_EQ(s.stats.rdma_reads.load(), before_r);
    EXPECT_EQ(s.stats.rdma_writes.load(), before_w);
  }

  std::vector<uint8_t> close(24);
  le::store16(close.data(), 24);
  std::copy(id.begin(), id.end(), close.data() + 8);
  EXPECT_EQ(c.call(smb2::kClose, close), nt::kSuccess);
  EXPECT_EQ(c.call(smb2::kClose, close), nt::kFileClosed);
  EXPECT_EQ(c.call(smb2::kOplockBreak, oplock_ack), nt::kFileClosed);
  // A LOCK whose StructureSize is not 48: malformed (a well-formed one on
  // the closed file: STATUS_FILE_CLOSED; smb_server_fileops_test.cc has the
  // locks themselves).
  EXPECT_EQ(c.call(smb2::kLock, std::vector<uint8_t>(48, 0)), nt::kInvalidParameter);
  std::vector<uint8_t> lock(48);
  le::store16(lock.data(), 48);
  le::store16(lock.data() + 2, 1);
  std::copy(id.begin(), id.end(), lock.data() + 8);
  le::store32(lock.data() + 40, 0x12);  // exclusive, fail immediately
  EXPECT_EQ(c.call(smb2::kLock, lock), nt::kFileClosed);
  EXPECT_EQ(s.stats.rdma_reads.load(), 3u);
  EXPECT_EQ(s.stats.rdma_writes.load(), 3u);

  // Garbage instead of an SMB2 message: the server drops the connection.
  const std::vector<uint8_t> junk(80, 0x42);
  t->send(junk);
  ASSERT_EQ(s.srv.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_NE(s.srv.get().find("not an SMB2 message"), std::string::npos);
  t->disconnect();
}

// cifs signs every request of a session that requires signing, LOGOFF
// included, and checks the signature of every response ("sign fail cmd
// 0x2" when the LOGOFF response came back unsigned). MS-SMB2 3.3.4.1.1: the
// response to a signed request is signed with the session's key, also
// when the request (LOGOFF, 3.3.5.6) removes the session.
TEST(SmbServer, SignedSessionSignsItsLogoffResponse) {
  server::ServerConfig cfg;
  cfg.users["smbtest"] = "Pw-good";
  ServedShare s(cfg);
  auto t = s.connect();
  Client c(*t);
  ASSERT_EQ(
      negotiate(c, {smb2::kDialect302}, nullptr, smb2::kSigningEnabled | smb2::kSigningRequired),
      nt::kSuccess);

  // NTLMv2 without KEY_EXCH: the session key is the session base key.
  ntlm::NegotiateMessage n;
  n.flags =
      ntlm::kNegotiateUnicode | ntlm::kNegotiateNtlm | ntlm::kNegotiateExtendedSessionSecurity;
  smb2::SessionSetupRequest sq;
  sq.security_mode = smb2::kSigningRequired;
  const auto negotiate_blob = ntlm::build_negotiate(n);
  sq.security_buffer = negotiate_blob;  // a view: the blob outlives the call
  ASSERT_EQ(c.call(smb2::kSessionSetup,
                   Client::body([&](auto* m) { smb2::append_session_setup_request(sq, m); })),
            nt::kMoreProcessingRequired);
  smb2::SessionSetupResponse sr;
  ASSERT_EQ(smb2::parse_session_setup_response(c.last, &sr), smb2::ParseError::kNone);
  ntlm::ChallengeMessage ch;
  ASSERT_EQ(ntlm::parse_challenge(sr.security_buffer, &ch), ntlm::NtlmError::kNone);
  const ntlm::Challenge cc = {8, 7, 6, 5, 4, 3, 2, 1};
  auto r = ntlm::ntlmv2_response(ntlm::nt_owf_v2("smbtest", "WORKGROUP", "Pw-good"),
                                 ch.server_challenge, cc, 0x01d9000000000000ull, ch.target_info);
  ntlm::AuthenticateMessage a;
  a.flags = ch.flags & ~ntlm::kNegotiateKeyExch;
  a.user = ntlm::utf16le("smbtest");
  a.domain = ntlm::utf16le("WORKGROUP");
  a.nt_response = r.nt_response;
  a.lm_response.assign(r.lm_response.begin(), r.lm_response.end());
  const auto authenticate_blob = ntlm::build_authenticate(a);
  sq.security_buffer = authenticate_blob;
  ASSERT_EQ(c.call(smb2::kSessionSetup,
                   Client::body([&](auto* m) { smb2::append_session_setup_request(sq, m); })),
            nt::kSuccess);
  smb2::Key16 base;
  std::copy(r.session_base_key.begin(), r.session_base_key.end(), base.begin());
  const smb2::Key16 key = smb2::signing_key_30(base);
  auto signed_and_verifies = [&]() {
    smb2::Header rh;
    EXPECT_EQ(smb2::parse_header(c.last, &rh), smb2::ParseError::kNone);
    EXPECT_TRUE(rh.flags & smb2::kFlagSigned) << "response to command " << rh.command;
    EXPECT_TRUE(smb2::verify(key, c.last)) << "response to command " << rh.command;
  };
  signed_and_verifies();  // the final SESSION_SETUP response (signing required)

  c.sign_key = key;
  ASSERT_EQ(tree_connect(c, "\\\\127.0.0.1\\share"), nt::kSuccess);
  signed_and_verifies();
  EXPECT_EQ(c.call(smb2::kLogoff, {4, 0, 0, 0}), nt::kSuccess);
  signed_and_verifies();
  // The session is gone: its next request is refused (unsigned now, as the
  // key left with the session).
  EXPECT_EQ(c.call(smb2::kEcho, {4, 0, 0, 0}), nt::kSuccess);  // ECHO needs no session
  EXPECT_EQ(tree_connect(c, "\\\\127.0.0.1\\share"), nt::kUserSessionDeleted);
  EXPECT_EQ(s.stats.bad_signatures.load(), 0u);
  s.stop = true;
  ASSERT_EQ(s.srv.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(s.srv.get(), "stopped");
  t->disconnect();
}

}  // namespace
