// SPDX-License-Identifier: Apache-2.0
// ndk-smbd's dialect rules, softndk <-> softndk on 127.0.0.1: a 3.1.1
// NEGOTIATE's preauth context and an undefined command (MS-SMB2 3.3.5.4,
// 3.3.5.2.6); at 3.0 the RDMA channel without remote invalidation
// (3.3.5.12/13).
#include "smb_server_harness.h"

namespace {

using namespace smb_server_test;

// A 3.1.1 NEGOTIATE: refused without a preauth context or without SHA-512
// (MS-SMB2 3.3.5.4), answered with exactly one SHA-512 preauth context
// otherwise; then a command code SMB2 does not define ends the connection
// without a response (3.3.5.2.6).
TEST(SmbServer, Negotiate311AndAnUnknownCommand) {
  server::ServerConfig cfg;
  cfg.guest = true;
  ServedShare s(cfg);
  auto t = s.connect();
  Client c(*t);
  auto negotiate = [&](const std::vector<smb2::NegotiateContext>& contexts) {
    smb2::NegotiateRequest nq;
    nq.dialects = {smb2::kDialect302, smb2::kDialect311};
    nq.contexts = contexts;
    return c.call(smb2::kNegotiate,
                  Client::body([&](auto* m) { smb2::append_negotiate_request(nq, m); }));
  };
  EXPECT_EQ(negotiate({}), nt::kInvalidParameter);
  smb2::PreauthIntegrity pi;
  pi.hash_algorithms = {0x0002};
  pi.salt.assign(32, 3);
  EXPECT_EQ(negotiate({{smb2::kPreauthIntegrityCapabilities, smb2::preauth_integrity_data(pi)}}),
            smb2::kStatusNoPreauthIntegrityHashOverlap);
  pi.hash_algorithms = {smb2::kHashSha512};
  const std::vector<uint16_t> ciphers = {2, 1};
  ASSERT_EQ(negotiate({{smb2::kPreauthIntegrityCapabilities, smb2::preauth_integrity_data(pi)},
                       {smb2::kEncryptionCapabilities, smb2::id_list_data(ciphers)}}),
            nt::kSuccess);
  smb2::NegotiateResponse nr;
  ASSERT_EQ(smb2::parse_negotiate_response(c.last, &nr), smb2::ParseError::kNone);
  EXPECT_EQ(nr.dialect, smb2::kDialect311);
  EXPECT_EQ(nr.capabilities & smb2::kCapEncryption, 0u);
  ASSERT_EQ(nr.contexts.size(), 1u);  // no encryption context: ndk-smbd does not encrypt
  smb2::PreauthIntegrity back;
  ASSERT_EQ(smb2::parse_preauth_integrity(nr.contexts[0].data, &back), smb2::ParseError::kNone);
  EXPECT_EQ(back.hash_algorithms, std::vector<uint16_t>{smb2::kHashSha512});
  EXPECT_EQ(back.salt.size(), 32u);

  smb2::Header h;
  h.command = 0x0013;
  h.message_id = c.mid++;
  std::vector<uint8_t> m;
  smb2::append_header(h, &m);
  m.resize(m.size() + 8);
  t->send(m);
  ASSERT_EQ(s.srv.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_NE(s.srv.get().find("unknown SMB2 command 0x0013"), std::string::npos);
  t->disconnect();
}

// MS-SMB2 3.3.5.12 / 3.3.5.13: at dialect 3.0 the server fails a READ or
// WRITE whose Channel is SMB2_CHANNEL_RDMA_V1_INVALIDATE (it came with
// 3.0.2) with STATUS_INVALID_PARAMETER, before any RDMA operation and
// without invalidating the client's token; SMB2_CHANNEL_RDMA_V1 works and
// its answers are plain Sends (the client invalidates its buffers itself).
TEST(SmbServer, Dialect30RefusesRdmaV1Invalidate) {
  server::ServerConfig cfg;
  cfg.users["smbtest"] = "Pw-good";
  ServedShare s(cfg);
  auto t = s.connect();
  Client c(*t);
  smb2::NegotiateResponse nr;
  ASSERT_EQ(negotiate(c, {smb2::kDialect300}, &nr), nt::kSuccess);
  ASSERT_EQ(nr.dialect, smb2::kDialect300);
  ASSERT_EQ(authenticate_as(c, "Pw-good"), nt::kSuccess);
  ASSERT_EQ(tree_connect(c, "\\\\127.0.0.1\\share"), nt::kSuccess);
  ASSERT_EQ(c.call(smb2::kCreate, create_body("v30.bin", 2)), nt::kSuccess);
  std::array<uint8_t, 16> id;
  std::copy(c.last.begin() + 64 + 64, c.last.begin() + 64 + 80, id.begin());

  const uint32_t len = 100003;
  smbd::BufferPool pool(*t, 2, 1u << 20);
  for (uint32_t i = 0; i < len; ++i) pool.data(0)[i] = uint8_t(i * 13 + 5);
  constexpr uint32_t kV1 = 1, kV1Invalidate = 2;
  // V1_INVALIDATE refused both ways; nothing moved, nothing invalidated.
  auto src = pool.expose(0, len, false);
  EXPECT_EQ(c.call(smb2::kWrite, io_body_list(true, id, len, src, kV1Invalidate)),
            nt::kInvalidParameter);
  EXPECT_EQ(c.invalidated, 0u);
  pool.release(0, c.invalidated);
  auto sink = pool.expose(1, len, true);
  EXPECT_EQ(c.call(smb2::kRead, io_body_list(false, id, len, sink, kV1Invalidate)),
            nt::kInvalidParameter);
  EXPECT_EQ(c.invalidated, 0u);
  pool.release(1, c.invalidated);
  EXPECT_EQ(
      s.stats.rdma_reads.load() + s.stats.rdma_writes.load() + s.stats.send_invalidates.load(), 0u);
  EXPECT_EQ(fs::file_size(s.dir.root / "export" / "v30.bin"), 0u);
  // RDMA_V1: the data moves, the answers invalidate nothing.
  src = pool.expose(0, len, false);
  ASSERT_EQ(c.call(smb2::kWrite, io_body_list(true, id, len, src, kV1)), nt::kSuccess);
  EXPECT_EQ(c.invalidated, 0u);
  pool.release(0, c.invalidated);
  std::memset(pool.data(1), 0, len);
  sink = pool.expose(1, len, true);
  ASSERT_EQ(c.call(smb2::kRead, io_body_list(false, id, len, sink, kV1)), nt::kSuccess);
  EXPECT_EQ(c.invalidated, 0u);
  pool.release(1, c.invalidated);
  EXPECT_EQ(std::memcmp(pool.data(0), pool.data(1), len), 0);
  EXPECT_EQ(s.stats.rdma_reads.load(), 1u);
  EXPECT_EQ(s.stats.rdma_writes.load(), 1u);
  EXPECT_EQ(s.stats.send_invalidates.load(), 0u);
  EXPECT_EQ(pool.remote_invalidations(), 0u);
  EXPECT_EQ(pool.local_invalidations(), 4u);
  s.stop = true;
  ASSERT_EQ(s.srv.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(s.srv.get(), "stopped");
  t->disconnect();
}

}  // namespace
