// SPDX-License-Identifier: Apache-2.0
// ndk-smbd's pipelined WRITEs (ServerConfig::write_pipeline, write_pipeline.h),
// softndk <-> softndk on 127.0.0.1 with the defaults a user gets: many
// 1 MiB WRITEs kept four outstanding, rewriting what earlier ones wrote
// (the last one's bytes stand), with a READ sent behind them that must see
// them; a WRITE failing in the middle of others (its own status, the
// others land); FLUSH and CLOSE sent right behind WRITEs (answered after
// them, the CLOSE's size counting them); signed answers of a signed
// session; and the client gone with WRITEs in flight (the server ends in
// bounded time, nothing left behind).
#include <sys/stat.h>

#include <cstdio>
#include <map>

#include "smb2/close.h"
#include "smb2/flush.h"
#include "smb2/read.h"
#include "smb_server_write_util.h"

namespace {

using namespace smb_server_test;
using namespace smb_server_write_test;

// The defaults, with `depth` bounce buffers and 1 MiB I/Os.
server::ServerConfig defaults(unsigned depth = server::ServerConfig{}.write_pipeline) {
  server::ServerConfig cfg;
  cfg.users["smbtest"] = "Pw-good";
  cfg.write_pipeline = depth;
  return cfg;
}

uint8_t pattern(uint32_t i, unsigned k) { return uint8_t(i * (2 * k + 1) + (i >> 12) + k * 7); }

// The body of a WRITE of `len` bytes at `at` from descriptors `d`.
std::vector<uint8_t> write_body(const std::array<uint8_t, 16>& id, uint64_t at, uint32_t len,
                                std::span<const smbd::BufferDescriptor> d) {
  std::vector<uint8_t> b = io_body_list(true, id, len, d);
  le::store64(b.data() + 8, at);
  return b;
}

class Depth : public testing::TestWithParam<unsigned> {};

// 24 WRITEs of 1 MiB over an 8 MiB file, four outstanding, each from its
// own client buffer: WRITEs k, k + 8 and k + 16 go to the same place, so
// the file holds the last 8 only if the WRITEs reached it in the order
// sent. A
// READ sent right behind the last WRITE (before any of the last answers)
// gets that WRITE's bytes, and is answered after every WRITE before it.
TEST_P(Depth, ManyWritesAtDepthFourLandInOrderAndAReadBehindSeesThem) {
  ServedShare s(defaults(GetParam()));
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "pipe.bin");
  constexpr unsigned kN = 24, kSpan = 8, kQd = 4;
  smbd::BufferPool pool(*t, kQd + 1, kMiB);  // slot kQd: the READ's sink
  std::vector<uint8_t> want(size_t(kSpan) * kMiB, 0);
  std::map<uint64_t, unsigned> slot_of;  // message id -> slot
  std::vector<unsigned> free_slots = {0, 1, 2, 3};
  std::vector<std::vector<smbd::BufferDescriptor>> d(kQd);
  unsigned sent = 0, answered = 0;
  auto send_write = [&](unsigned k) {
    const unsigned slot = free_slots.back();
    free_slots.pop_back();
    uint8_t* p = pool.data(slot);
    for (uint32_t i = 0; i < kMiB; ++i) p[i] = pattern(i, k);
    std::memcpy(want.data() + size_t(k % kSpan) * kMiB, p, kMiB);
    d[slot] = pool.expose(slot, kMiB, false);
    slot_of[c.mid] = slot;
    send_request(c, smb2::kWrite, c.mid++,
                 write_body(id, uint64_t(k % kSpan) * kMiB, kMiB, d[slot]));
  };
  auto take_write_answer = [&]() {
    Answer a = next_answer(c);
    ASSERT_EQ(a.h.command, smb2::kWrite);
    auto it = slot_of.find(a.h.message_id);
    ASSERT_NE(it, slot_of.end()) << "answer to an unknown message id " << a.h.message_id;
    EXPECT_EQ(a.h.status, nt::kSuccess) << "WRITE mid " << a.h.message_id;
    EXPECT_EQ(le::load32(a.bytes.data() + 64 + 4), kMiB);  // Count
    EXPECT_EQ(a.invalidated, d[it->second][0].token);
    pool.release(it->second, a.invalidated);
    free_slots.push_back(it->second);
    slot_of.erase(it);
    ++answered;
  };
  while (sent < kN) {
    while (sent < kN && !free_slots.empty()) send_write(sent++);
    if (sent < kN) take_write_answer();
    if (testing::Test::HasFatalFailure()) return;
  }
  // The READ of the last WRITE's place, with up to four WRITEs in flight.
  const uint64_t last_at = uint64_t((kN - 1) % kSpan) * kMiB;
  auto sink = pool.expose(kQd, kMiB, true);
  std::vector<uint8_t> rb = io_body_list(false, id, kMiB, sink);
  le::store64(rb.data() + 8, last_at);
  const uint64_t read_mid = c.mid;
  send_request(c, smb2::kRead, c.mid++, rb);
  while (answered < kN) {
    take_write_answer();
    if (testing::Test::HasFatalFailure()) return;
  }
  Answer r = next_answer(c);  // after every WRITE's answer
  ASSERT_EQ(r.h.message_id, read_mid);
  ASSERT_EQ(r.h.status, nt::kSuccess);
  pool.release(kQd, r.invalidated);
  EXPECT_EQ(std::memcmp(pool.data(kQd), want.data() + last_at, kMiB), 0)
      << "the READ behind the WRITEs did not see the last one";
  EXPECT_TRUE(file_bytes(s.dir.root / "export" / "pipe.bin") == want)
      << "the file is not the last 8 WRITEs' bytes";
  EXPECT_EQ(s.stats.rdma_reads.load(), kN);
  EXPECT_EQ(s.stats.pipelined_writes.load(), GetParam() ? kN : 0u);
  EXPECT_EQ(s.stats.bytes_written.load(), uint64_t(kN) * kMiB);
}

INSTANTIATE_TEST_SUITE_P(SmbServerPipeline, Depth, testing::Values(0u, 1u, 2u, 4u),
                         [](const auto& i) { return "depth_" + std::to_string(i.param); });

// Four WRITEs sent back to back; the second lies past the file system's
// largest file (its pwrite() writes up to there, then fails with EFBIG):
// it gets STATUS_FILE_TOO_LARGE, the others succeed and land, each answer
// invalidates its own request's buffer.
TEST(SmbServerPipeline, WriteFailingAmongOthersGetsItsStatusAndTheOthersLand) {
  ServedShare s(defaults());
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "fail.bin");
  const uint64_t most = largest_file_size(s.dir.root / "probe");
  ASSERT_GT(most, uint64_t(8 * kMiB));
  const uint64_t past = (most - 300000) & ~uint64_t(4095);  // 300 KB and some fit
  smbd::BufferPool pool(*t, 4, kMiB);
  const uint64_t at[4] = {0, past, kMiB, 2 * kMiB};
  std::vector<std::vector<smbd::BufferDescriptor>> d(4);
  const uint64_t first = c.mid;
  for (unsigned k = 0; k < 4; ++k) {
    for (uint32_t i = 0; i < kMiB; ++i) pool.data(k)[i] = pattern(i, k);
    d[k] = pool.expose(k, kMiB, false);
    send_request(c, smb2::kWrite, c.mid++, write_body(id, at[k], kMiB, d[k]));
  }
  for (unsigned n = 0; n < 4; ++n) {
    Answer a = next_answer(c);
    const uint64_t k = a.h.message_id - first;
    ASSERT_LT(k, 4u);
    EXPECT_EQ(a.h.status, k == 1 ? nt::kFileTooLarge : nt::kSuccess) << "WRITE " << k;
    EXPECT_EQ(a.invalidated, d[k][0].token) << "WRITE " << k;
    pool.release(unsigned(k), a.invalidated);
  }
  const int fd = ::open((s.dir.root / "export" / "fail.bin").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> got(kMiB);
  for (unsigned k : {0u, 2u, 3u}) {
    ASSERT_EQ(pread(fd, got.data(), kMiB, off_t(at[k])), ssize_t(kMiB));
    EXPECT_EQ(std::memcmp(got.data(), pool.data(k), kMiB), 0) << "WRITE " << k;
  }
  ::close(fd);
  EXPECT_EQ(s.stats.bytes_written.load(), 3u * kMiB);  // the failed one counts nothing
  // The connection goes on.
  for (uint32_t i = 0; i < kMiB; ++i) pool.data(0)[i] = pattern(i, 9);
  d[0] = pool.expose(0, kMiB, false);
  ASSERT_EQ(c.call(smb2::kWrite, write_body(id, 0, kMiB, d[0])), nt::kSuccess);
  pool.release(0, c.invalidated);
  EXPECT_EQ(s.stats.bytes_written.load(), 4u * kMiB);
}

// Three WRITEs, a FLUSH and a CLOSE sent back to back: the FLUSH and the
// CLOSE wait for the WRITEs (their answers come after the three WRITEs'),
// the CLOSE's EndOfFile counts all three, and the file holds them.
TEST(SmbServerPipeline, FlushAndCloseBehindWritesSeeTheirData) {
  ServedShare s(defaults());
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "flush.bin");
  smbd::BufferPool pool(*t, 3, kMiB);
  std::vector<uint8_t> want;
  std::vector<std::vector<smbd::BufferDescriptor>> d(3);
  const uint64_t first = c.mid;
  for (unsigned k = 0; k < 3; ++k) {
    const uint32_t len = kMiB - k * 1001;
    for (uint32_t i = 0; i < len; ++i) pool.data(k)[i] = pattern(i, k + 20);
    d[k] = pool.expose(k, len, false);
    send_request(c, smb2::kWrite, c.mid++, write_body(id, want.size(), len, d[k]));
    want.insert(want.end(), pool.data(k), pool.data(k) + len);
  }
  smb2::FlushRequest fq;
  fq.file_id = file_id(id);
  send_request(c, smb2::kFlush, c.mid++,
               Client::body([&](auto* m) { smb2::append_flush_request(fq, m); }));
  smb2::CloseRequest cq;
  cq.flags = smb2::kClosePostqueryAttrib;
  cq.file_id = file_id(id);
  send_request(c, smb2::kClose, c.mid++,
               Client::body([&](auto* m) { smb2::append_close_request(cq, m); }));
  for (unsigned n = 0; n < 5; ++n) {
    Answer a = next_answer(c);
    EXPECT_EQ(a.h.status, nt::kSuccess) << "answer " << n;
    if (n < 3) {
      ASSERT_EQ(a.h.command, smb2::kWrite) << "answer " << n << " (the WRITEs come first)";
      const uint64_t k = a.h.message_id - first;
      ASSERT_LT(k, 3u);
      pool.release(unsigned(k), a.invalidated);
    } else if (n == 3) {
      EXPECT_EQ(a.h.command, smb2::kFlush);
    } else {
      ASSERT_EQ(a.h.command, smb2::kClose);
      smb2::CloseResponse cr;
      ASSERT_EQ(smb2::parse_close_response(a.bytes, &cr), smb2::ParseError::kNone);
      EXPECT_EQ(cr.end_of_file, want.size());
    }
  }
  EXPECT_TRUE(file_bytes(s.dir.root / "export" / "flush.bin") == want);
  EXPECT_EQ(s.stats.pipelined_writes.load(), 3u);
}

// NTLMv2 without KEY_EXCH at 3.0.2 with signing required, the share
// connected; the session's signing key.
smb2::Key16 signed_session(Client& c) {
  EXPECT_EQ(
      negotiate(c, {smb2::kDialect302}, nullptr, smb2::kSigningEnabled | smb2::kSigningRequired),
      nt::kSuccess);
  ntlm::NegotiateMessage n;
  n.flags =
      ntlm::kNegotiateUnicode | ntlm::kNegotiateNtlm | ntlm::kNegotiateExtendedSessionSecurity;
  smb2::SessionSetupRequest sq;
  sq.security_mode = smb2::kSigningRequired;
  const auto negotiate_blob = ntlm::build_negotiate(n);
  sq.security_buffer = negotiate_blob;
  EXPECT_EQ(c.call(smb2::kSessionSetup,
                   Client::body([&](auto* m) { smb2::append_session_setup_request(sq, m); })),
            nt::kMoreProcessingRequired);
  smb2::SessionSetupResponse sr;
  EXPECT_EQ(smb2::parse_session_setup_response(c.last, &sr), smb2::ParseError::kNone);
  ntlm::ChallengeMessage ch;
  EXPECT_EQ(ntlm::parse_challenge(sr.security_buffer, &ch), ntlm::NtlmError::kNone);
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
  EXPECT_EQ(c.call(smb2::kSessionSetup,
                   Client::body([&](auto* m) { smb2::append_session_setup_request(sq, m); })),
            nt::kSuccess);
  smb2::Key16 base;
  std::copy(r.session_base_key.begin(), r.session_base_key.end(), base.begin());
  const smb2::Key16 key = smb2::signing_key_30(base);
  c.sign_key = key;
  EXPECT_EQ(tree_connect(c, "\\\\127.0.0.1\\share"), nt::kSuccess);
  return key;
}

// A signed session's pipelined WRITEs: every answer (the failed one's
// too) is signed with the session's key and verifies.
TEST(SmbServerPipeline, SignedSessionSignsPipelinedAnswers) {
  ServedShare s(defaults());
  auto t = s.connect();
  Client c(*t);
  const smb2::Key16 key = signed_session(c);
  ASSERT_EQ(c.call(smb2::kCreate, create_body("signed.bin", 2)), nt::kSuccess);
  std::array<uint8_t, 16> id{};
  ASSERT_GE(c.last.size(), 64u + 80u);
  std::copy(c.last.begin() + 128, c.last.begin() + 144, id.begin());
  const uint64_t most = largest_file_size(s.dir.root / "probe");
  ASSERT_GT(most, uint64_t(8 * kMiB));
  smbd::BufferPool pool(*t, 3, kMiB);
  std::vector<std::vector<smbd::BufferDescriptor>> d(3);
  const uint64_t first = c.mid;
  for (unsigned k = 0; k < 3; ++k) {
    for (uint32_t i = 0; i < kMiB; ++i) pool.data(k)[i] = pattern(i, k + 40);
    d[k] = pool.expose(k, kMiB, false);
    // The third fails in its pwrite() (past the largest file).
    const uint64_t at = k == 2 ? (most - 300000) & ~uint64_t(4095) : uint64_t(k) * kMiB;
    send_request(c, smb2::kWrite, c.mid++, write_body(id, at, kMiB, d[k]));
  }
  for (unsigned n = 0; n < 3; ++n) {
    Answer a = next_answer(c);
    const uint64_t k = a.h.message_id - first;
    ASSERT_LT(k, 3u);
    EXPECT_EQ(a.h.status, k < 2 ? nt::kSuccess : nt::kFileTooLarge) << "WRITE " << k;
    EXPECT_TRUE(a.h.flags & smb2::kFlagSigned) << "WRITE " << k;
    EXPECT_TRUE(smb2::verify(key, a.bytes)) << "WRITE " << k;
    pool.release(unsigned(k), a.invalidated);
  }
  EXPECT_EQ(s.stats.pipelined_writes.load(), 3u);
  EXPECT_EQ(s.stats.bad_signatures.load(), 0u);
}

// The client goes with four WRITEs sent and one answered: the server's
// connection ends (the transport names the peer's going) within a bounded
// time, its worker's WRITEs written and nothing left in flight, and the
// file holds no more than was sent.
TEST(SmbServerPipeline, ClientGoneWithWritesInFlightEndsTheConnection) {
  ServedShare s(defaults());
  {
    auto t = s.connect();
    Client c(*t);
    const auto id = open_new_file(c, "gone.bin");
    smbd::BufferPool pool(*t, 4, kMiB);
    for (unsigned k = 0; k < 4; ++k) {
      std::memset(pool.data(k), int(k + 1), kMiB);
      auto d = pool.expose(k, kMiB, false);
      send_request(c, smb2::kWrite, c.mid++, write_body(id, uint64_t(k) * kMiB, kMiB, d));
    }
    Answer a = next_answer(c);
    EXPECT_EQ(a.h.status, nt::kSuccess);
    t->disconnect();
  }  // the client's buffers deregistered, its adapter's connection closed
  expect_ended_by_the_peer(s);
  struct stat sb {};
  ASSERT_EQ(::stat((s.dir.root / "export" / "gone.bin").c_str(), &sb), 0);
  EXPECT_LE(uint64_t(sb.st_size), 4u * kMiB);
  EXPECT_GE(uint64_t(sb.st_size), kMiB);  // the answered one at least
  EXPECT_GE(s.stats.pipelined_writes.load(), 1u);
}

}  // namespace
