// SPDX-License-Identifier: Apache-2.0
// ndk-smbd's WRITE over the RDMA channel, softndk <-> softndk on 127.0.0.1:
// the server RDMA-Reads a WRITE in pieces (ServerConfig::write_chunk) and
// writes each to the file while the next ones are on the wire. Checked
// byte for byte over several descriptors and piece sizes, with several
// WRITEs outstanding on one connection, with a write(2) that fails part
// way (its status, the Reads already posted completed, the connection and
// its staging buffer still usable), and with a token the client never
// registered (the connection ends, saying why, after answering the WRITE
// before it).
#include <sys/stat.h>

#include <cstdio>

#include "smb_server_write_util.h"

namespace {

using namespace smb_server_test;
using namespace smb_server_write_test;

class PieceSize : public testing::TestWithParam<uint32_t> {};

// 3 MiB + 123 bytes at an odd offset from three descriptors of odd
// lengths: every piece size lands the same bytes, and a piece size below
// the transfer's takes that many Reads, several in flight at once.
TEST_P(PieceSize, WriteLandsByteForByte) {
  const uint32_t chunk = GetParam();
  ServedShare s(config(chunk));
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "pieces.bin");
  const uint32_t len = 3 * kMiB + 123, at = 777;
  smbd::BufferPool pool(*t, 3, 2 * kMiB, 2 * kMiB);  // one MR (descriptor) per slot
  const uint32_t w[3] = {1000003, 2 * kMiB - 1, len - 1000003 - (2 * kMiB - 1)};
  std::vector<uint8_t> want(at + len, 0);
  for (uint32_t i = 0; i < len; ++i) want[at + i] = uint8_t(i * 31 + (i >> 9) + chunk);
  std::vector<smbd::BufferDescriptor> d;
  for (uint32_t k = 0, off = 0; k < 3; off += w[k], ++k) {
    std::memcpy(pool.data(k), want.data() + at + off, w[k]);
    d.push_back(pool.expose(k, w[k], false).at(0));
  }
  std::vector<uint8_t> body = io_body_list(true, id, len, d);
  le::store64(body.data() + 8, at);
  ASSERT_EQ(c.call(smb2::kWrite, body), nt::kSuccess);
  EXPECT_EQ(c.invalidated, d[0].token);
  EXPECT_EQ(le::load32(c.last.data() + 64 + 4), len);  // Count
  pool.release(0, c.invalidated);
  pool.release(1, 0);
  pool.release(2, 0);
  EXPECT_TRUE(file_bytes(s.dir.root / "export" / "pieces.bin") == want)
      << "the file differs from what was written (piece size " << chunk << ")";
  EXPECT_EQ(s.stats.rdma_reads.load(), 1u);
  if (chunk && chunk < kMiB) {
    // Each descriptor in pieces of `chunk` bytes, the last one shorter.
    uint64_t pieces = 0;
    for (uint32_t x : w) pieces += (x + chunk - 1) / chunk;
    EXPECT_EQ(s.stats.rdma_read_requests.load(), pieces);
    EXPECT_GT(s.stats.rdma_reads_in_flight_max.load(), 1u);
    EXPECT_LE(s.stats.rdma_reads_in_flight_max.load(), s.tcfg.ird);  // the client's IRD
  }
}

INSTANTIATE_TEST_SUITE_P(SmbServerWrite, PieceSize,
                         testing::Values(0u, 1000u, 64u << 10, 128u << 10, 4 * kMiB),
                         [](const auto& i) { return "chunk_" + std::to_string(i.param); });

// Four WRITEs sent back to back on one connection (the client holds the
// credits), each from its own buffer: four answers, in order, each
// invalidating its own request's token, and the file holds every one.
TEST(SmbServerWrite, SeveralWritesOutstandingOnOneConnection) {
  ServedShare s(config(128u << 10));
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "many.bin");
  constexpr unsigned kN = 4;
  smbd::BufferPool pool(*t, kN, 2 * kMiB);
  std::vector<uint8_t> want;
  std::vector<std::vector<smbd::BufferDescriptor>> d(kN);
  uint64_t off = 0;
  const uint64_t first = c.mid;
  for (unsigned k = 0; k < kN; ++k) {
    const uint32_t len = kMiB + k * 4099 + 1;
    for (uint32_t i = 0; i < len; ++i) pool.data(k)[i] = uint8_t(i * (k + 3) + (i >> 11) + k);
    want.insert(want.end(), pool.data(k), pool.data(k) + len);
    d[k] = pool.expose(k, len, false);
    std::vector<uint8_t> body = io_body_list(true, id, len, d[k]);
    le::store64(body.data() + 8, off);
    t->send(write_message(c, c.mid++, body));
    off += len;
  }
  for (unsigned k = 0; k < kN; ++k) {
    std::vector<uint8_t> r;
    uint32_t inv = 0;
    ASSERT_TRUE(t->receive(&r, tools::deadline_in(20), &inv)) << "answer " << k;
    smb2::Header h;
    ASSERT_EQ(smb2::parse_header(r, &h), smb2::ParseError::kNone);
    EXPECT_EQ(h.message_id, first + k);
    EXPECT_EQ(h.status, nt::kSuccess);
    EXPECT_EQ(le::load32(r.data() + 64 + 4), kMiB + k * 4099 + 1);
    EXPECT_EQ(inv, d[k][0].token);
    pool.release(k, inv);
  }
  EXPECT_TRUE(file_bytes(s.dir.root / "export" / "many.bin") == want);
  EXPECT_EQ(s.stats.rdma_reads.load(), kN);
  EXPECT_EQ(s.stats.bytes_written.load(), want.size());
}

// A WRITE whose end lies past the file system's largest file: the pieces
// before that point are written, write(2) then fails with EFBIG, and the
// answer is STATUS_FILE_TOO_LARGE once the Reads already posted are done.
// The connection goes on: the next WRITE (the same staging buffer) lands.
TEST(SmbServerWrite, WriteFailingPartWayGivesItsStatusAndTheConnectionGoesOn) {
  ServedShare s(config(64u << 10));
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "big.bin");
  const uint64_t most = largest_file_size(s.dir.root / "probe");
  ASSERT_GT(most, uint64_t(8 * kMiB));
  const uint32_t len = 2 * kMiB;
  smbd::BufferPool pool(*t, 1, len);
  for (uint32_t i = 0; i < len; ++i) pool.data(0)[i] = uint8_t(i * 5 + 1);
  auto d = pool.expose(0, len, false);
  std::vector<uint8_t> body = io_body_list(true, id, len, d);
  const uint64_t at = (most - 300000) & ~uint64_t(4095);  // 300 KB and some fit
  le::store64(body.data() + 8, at);
  EXPECT_EQ(c.call(smb2::kWrite, body), nt::kFileTooLarge);
  EXPECT_EQ(c.invalidated, d[0].token);  // invalidated whatever the status
  pool.release(0, c.invalidated);
  EXPECT_EQ(fs::file_size(s.dir.root / "export" / "big.bin"), most);  // written up to the limit
  EXPECT_EQ(s.stats.bytes_written.load(), 0u);

  for (uint32_t i = 0; i < len; ++i) pool.data(0)[i] = uint8_t(i * 9 + 2);
  d = pool.expose(0, len, false);
  ASSERT_EQ(c.call(smb2::kWrite, io_body_list(true, id, len, d)), nt::kSuccess);
  pool.release(0, c.invalidated);
  std::ifstream f(s.dir.root / "export" / "big.bin", std::ios::binary);
  std::vector<uint8_t> head(len);
  f.read(reinterpret_cast<char*>(head.data()), len);
  EXPECT_EQ(std::memcmp(head.data(), pool.data(0), len), 0);
  EXPECT_EQ(s.stats.bytes_written.load(), len);
}

// A WRITE naming a token the client never registered: the RDMA Read fails
// (the peer terminates it), so there is no connection left to answer on;
// the server ends it naming the peer's Terminate, after writing and answering
// the WRITE sent before it, and waits no longer than the Terminate takes.
TEST(SmbServerWrite, UnregisteredTokenEndsTheConnectionAfterTheWriteBeforeIt) {
  ServedShare s(config(128u << 10));
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "bad.bin");
  smbd::BufferPool pool(*t, 1, kMiB);
  std::memset(pool.data(0), 0x5a, kMiB);
  auto good = pool.expose(0, kMiB, false);
  smbd::BufferDescriptor bad = good[0];
  bad.token ^= 0x00ffff00;  // not a token of this client's
  const uint64_t first = c.mid;
  t->send(write_message(c, c.mid++, io_body_list(true, id, kMiB, good)));
  t->send(write_message(c, c.mid++, io_body_list(true, id, kMiB, std::span(&bad, 1), 1)));
  // The client's own end sent the Terminate (its engine found the token
  // unknown), so its transport may end before or after it hands over the
  // first WRITE's answer; when it does hand it over, it is that WRITE's.
  try {
    std::vector<uint8_t> r;
    uint32_t inv = 0;
    ASSERT_TRUE(t->receive(&r, tools::deadline_in(20), &inv));
    smb2::Header h;
    ASSERT_EQ(smb2::parse_header(r, &h), smb2::ParseError::kNone);
    EXPECT_EQ(h.message_id, first);
    EXPECT_EQ(h.status, nt::kSuccess);
    EXPECT_EQ(inv, good[0].token);
  } catch (const smbd::TransportError& e) {
    // The client's end is over (its reason, usually the Terminate it sent).
    std::fprintf(stderr, "client's end: %s\n", e.what());
  }
  ASSERT_EQ(s.srv.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  const std::string why = s.srv.get();
  // The Terminate's reason; or, should its event come later than the
  // mover waits for it (a loaded machine), the Read that failed.
  EXPECT_TRUE(why.find("invalid STag") != std::string::npos ||
              why.find("NdkRead") != std::string::npos ||
              why.find("RDMA Read") != std::string::npos)
      << why;
  EXPECT_EQ(fs::file_size(s.dir.root / "export" / "bad.bin"), kMiB);
  EXPECT_EQ(s.stats.rdma_reads.load(), 1u);  // only the good one counted
}

}  // namespace
