// SPDX-License-Identifier: Apache-2.0
// ndk-smbd's mapped inline READs (read_window.h; on by default,
// --no-map-reads: pread() only). The window alone on a file of its own:
// mapped only after many READs, byte for byte the file at odd offsets and
// lengths, short at the end of the file, another writer's bytes seen at
// once, a file grown or cut by another process, a size changed by the
// server seen at once. Then through the server (softndk <-> softndk on
// 127.0.0.1): many inline READs answered from the mapping, a SET_INFO
// EndOfFile honoured by the next READ, and with --no-map-reads nothing
// mapped. READs over the RDMA channel written out of the file's mapped
// window (file_window.h): byte for byte at odd offsets and lengths, short
// at the end, another writer's bytes and size seen at once, a window made
// by READs replaced by a writable one for a mapped WRITE.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>

#include "read_window.h"
#include "smb2/read.h"
#include "smb2/set_info.h"
#include "smb_server_write_util.h"

namespace {

using namespace smb_server_write_test;
using RW = server::ReadWindow;
using namespace std::chrono_literals;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 31 + (i >> 12) + seed);
  return v;
}

// A file of its own with `bytes`, open read-write.
struct TempFile {
  explicit TempFile(const std::vector<uint8_t>& bytes) {
    path = (dir.root / "f.bin").string();
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), ssize_t(bytes.size()));
  }
  ~TempFile() { ::close(fd); }
  TempDir dir;
  std::string path;
  int fd = -1;
};

// Makes `w` map its file: the READs before kMapAfter are not its.
void warm(RW& w, int fd) {
  uint8_t b[16];
  for (unsigned i = 0; i < RW::kMapAfter; ++i) ASSERT_EQ(w.copy(fd, 0, sizeof b, b), -1);
  ASSERT_FALSE(w.mapped());
}

TEST(ReadWindow, MapsOnlyAfterManyReadsThenCopiesTheFileExactly) {
  const auto want = pattern(3 * kMiB + 777, 5);
  TempFile f(want);
  RW w;
  warm(w, f.fd);
  std::mt19937_64 rng(42);
  std::vector<uint8_t> got(70000);
  for (int i = 0; i < 500; ++i) {
    const uint64_t off = rng() % want.size();
    const uint32_t len = 1 + uint32_t(rng() % got.size());
    const int64_t n = w.copy(f.fd, off, len, got.data());
    ASSERT_EQ(n, int64_t(std::min<uint64_t>(len, want.size() - off))) << "at " << off;
    ASSERT_TRUE(std::equal(got.begin(), got.begin() + n, want.begin() + int64_t(off)))
        << "at " << off << " len " << len;
  }
  EXPECT_TRUE(w.mapped());
  EXPECT_EQ(w.copies(), 500u);
  // At and past the end of the file: pread()'s (it answers the end).
  EXPECT_EQ(w.copy(f.fd, want.size(), 10, got.data()), -1);
  EXPECT_EQ(w.copy(f.fd, want.size() + 5000, 10, got.data()), -1);
}

TEST(ReadWindow, AnotherWritersBytesAreSeenAtOnce) {
  TempFile f(pattern(1 * kMiB, 1));
  RW w;
  warm(w, f.fd);
  const int other = ::open(f.path.c_str(), O_WRONLY);
  ASSERT_GE(other, 0);
  const auto fresh = pattern(5000, 99);
  ASSERT_EQ(pwrite(other, fresh.data(), fresh.size(), 12345), ssize_t(fresh.size()));
  ::close(other);
  std::vector<uint8_t> got(5000);
  ASSERT_EQ(w.copy(f.fd, 12345, 5000, got.data()), 5000);
  EXPECT_TRUE(got == fresh);
}

// Sizes trusted for an hour: only size_changed() and the mapping's own
// checks can make the copies right.
TEST(ReadWindow, AFileGrownElsewhereIsLeftToPreadUntilItsSizeIsLookedAt) {
  TempFile f(pattern(100000, 2));
  RW w(1h);
  warm(w, f.fd);
  std::vector<uint8_t> got(4096);
  ASSERT_EQ(w.copy(f.fd, 0, 4096, got.data()), 4096);  // maps; size 100000
  const auto more = pattern(8192, 3);
  ASSERT_EQ(pwrite(f.fd, more.data(), more.size(), 100000), 8192);
  EXPECT_EQ(w.copy(f.fd, 100000, 4096, got.data()), -1);  // past the size it knows
  RW::size_changed();
  ASSERT_EQ(w.copy(f.fd, 100000, 4096, got.data()), 4096);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), more.begin()));
}

TEST(ReadWindow, ASizeSetByTheServerIsSeenAtOnce) {
  TempFile f(pattern(1 * kMiB, 4));
  RW w(1h);
  warm(w, f.fd);
  std::vector<uint8_t> got(8192);
  ASSERT_EQ(w.copy(f.fd, 0, 4096, got.data()), 4096);
  ASSERT_EQ(ftruncate(f.fd, 5000), 0);
  RW::size_changed();  // what SET_INFO EndOfFile, CREATE's overwrite do
  EXPECT_EQ(w.copy(f.fd, 4096, 8192, got.data()), 904);
  EXPECT_EQ(w.copy(f.fd, 5000, 10, got.data()), -1);
}

// Another process cuts the file under the mapping, and the window still
// trusts the old size: the copy of pages past the new end faults (SIGBUS,
// caught), is not answered, and the open takes pread() from then on.
TEST(ReadWindow, AFileCutElsewhereFaultsAndIsLeftToPread) {
  TempFile f(pattern(2 * kMiB, 6));
  RW w(1h);
  warm(w, f.fd);
  std::vector<uint8_t> got(4096);
  ASSERT_EQ(w.copy(f.fd, kMiB, 4096, got.data()), 4096);
  ASSERT_EQ(truncate(f.path.c_str(), 4096), 0);
  EXPECT_EQ(w.copy(f.fd, kMiB, 4096, got.data()), -1);
  EXPECT_TRUE(w.faulted());
  EXPECT_FALSE(w.mapped());
  EXPECT_EQ(w.copy(f.fd, 0, 100, got.data()), -1);  // pread() for good
}

// --- through the server --------------------------------------------------

// 300 READs of 1 byte to 4 KiB at random offsets of a 1 MiB file (written
// by another descriptor), each byte for byte the file; the later ones
// answered from the mapping. Then SET_INFO EndOfFile of 5000 bytes: a READ
// across the new end is short at once, one at it is STATUS_END_OF_FILE.
void reads_through_server(bool map_reads) {
  server::ServerConfig cfg = config(0);
  cfg.map_reads = map_reads;
  ServedShare s(cfg);
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "r.bin");
  const auto want = pattern(kMiB, 8);
  {
    std::ofstream o(s.dir.root / "export" / "r.bin", std::ios::binary);
    o.write(reinterpret_cast<const char*>(want.data()), std::streamsize(want.size()));
  }
  std::mt19937_64 rng(7);
  std::vector<uint8_t> got;
  for (int i = 0; i < 300; ++i) {
    const uint64_t off = rng() % (want.size() - 4096);
    const uint32_t len = 1 + uint32_t(rng() % 4096);
    ASSERT_EQ(read_inline(c, id, off, len, &got), nt::kSuccess);
    ASSERT_EQ(got.size(), len);
    ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin() + int64_t(off))) << "at " << off;
  }
  EXPECT_EQ(s.stats.inline_reads.load(), 300u);
  if (map_reads)
    EXPECT_EQ(s.stats.mapped_reads.load(), 300u - RW::kMapAfter);
  else
    EXPECT_EQ(s.stats.mapped_reads.load(), 0u);

  ASSERT_EQ(set_end_of_file(c, id, 5000), nt::kSuccess);
  ASSERT_EQ(read_inline(c, id, 4096, 4096, &got), nt::kSuccess);
  EXPECT_EQ(got.size(), 904u);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin() + 4096));
  EXPECT_EQ(read_inline(c, id, 5000, 100, &got), nt::kEndOfFile);
}

TEST(SmbServerMappedRead, InlineReadsAreMappedByDefaultAndMatchTheFile) {
  reads_through_server(true);
}

TEST(SmbServerMappedRead, NoMapReadsAnswersEveryReadWithPread) { reads_through_server(false); }

// READs over the RDMA channel of a 3 MiB + 777 file written by another
// descriptor: odd offsets and lengths, across the end (short), at it
// (STATUS_END_OF_FILE); another descriptor's bytes and a cut seen by the
// next READ; a WRITE (copied, or with --map-writes mapped into the window
// the READs made read-only) read back at once. `map_reads`: through the
// window (counted), else pread() (none counted).
void rdma_reads_through_server(bool map_reads, bool map_writes) {
  server::ServerConfig cfg = config(0);
  cfg.map_reads = map_reads;
  cfg.map_writes = map_writes;
  ServedShare s(cfg);
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "r.bin");
  auto want = pattern(3 * kMiB + 777, 9);
  const auto path = s.dir.root / "export" / "r.bin";
  const int other = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(other, 0);
  ASSERT_EQ(pwrite(other, want.data(), want.size(), 0), ssize_t(want.size()));
  smbd::BufferPool pool(*t, 1, 4 * kMiB, 4 * kMiB);
  std::vector<uint8_t> got;
  const FileRange ios[] = {{0, 1},
                           {4095, 4097},
                           {777, 3 * kMiB},
                           {12345, 65536 + 3},
                           {3 * kMiB + 700, 200},  // across the end: 77 bytes
                           {0, 4 * kMiB}};         // the whole file, short
  uint64_t reads = 0;
  for (const FileRange& io : ios) {
    SCOPED_TRACE(testing::Message() << io.len << " at " << io.at);
    ASSERT_EQ(read_rdma(c, pool, id, io.at, io.len, &got), nt::kSuccess);
    const size_t n = size_t(std::min<uint64_t>(io.len, want.size() - io.at));
    ASSERT_EQ(got.size(), n);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin() + int64_t(io.at)));
    ++reads;
  }
  EXPECT_EQ(read_rdma(c, pool, id, want.size(), 100, &got), nt::kEndOfFile);
  EXPECT_EQ(read_rdma(c, pool, id, 5 * kMiB, 100, &got), nt::kEndOfFile);

  // Another descriptor's bytes, at once.
  const std::vector<uint8_t> fresh(5000, 0xa5);
  ASSERT_EQ(pwrite(other, fresh.data(), fresh.size(), 2 * kMiB), ssize_t(fresh.size()));
  std::copy(fresh.begin(), fresh.end(), want.begin() + 2 * kMiB);
  ASSERT_EQ(read_rdma(c, pool, id, 2 * kMiB - 10, 6000, &got), nt::kSuccess);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin() + 2 * kMiB - 10));
  ++reads;

  // A WRITE over the RDMA channel (with --map-writes: into a writable
  // window replacing the read-only one the READs made), read back.
  ASSERT_EQ(write_at(c, pool, id, kMiB + 3, 300000, &want, 4), nt::kSuccess);
  ASSERT_EQ(read_rdma(c, pool, id, kMiB, 400000, &got), nt::kSuccess);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin() + kMiB));
  ++reads;
  EXPECT_EQ(s.stats.mapped_writes.load(), map_writes ? 1u : 0u);

  // Cut by another process: the next READ sees the new end.
  ASSERT_EQ(ftruncate(other, 5000), 0);
  ASSERT_EQ(read_rdma(c, pool, id, 4096, 8192, &got), nt::kSuccess);
  EXPECT_EQ(got.size(), 904u);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin() + 4096));
  ++reads;
  EXPECT_EQ(read_rdma(c, pool, id, kMiB, 4096, &got), nt::kEndOfFile);
  ::close(other);

  EXPECT_EQ(s.stats.rdma_writes.load(), reads);
  EXPECT_EQ(s.stats.mapped_rdma_reads.load(), map_reads ? reads : 0u);
  EXPECT_EQ(s.stats.mapped_read_faults.load(), 0u);
}

TEST(SmbServerMappedRead, RdmaReadsLeaveFromTheMappedFileByDefault) {
  rdma_reads_through_server(true, false);
}

TEST(SmbServerMappedRead, RdmaReadsMappedReadOnlyGiveWayToAMappedWrite) {
  rdma_reads_through_server(true, true);
}

TEST(SmbServerMappedRead, NoMapReadsAnswersRdmaReadsWithPread) {
  rdma_reads_through_server(false, false);
}

// The client goes with four 1 MiB READs sent (their RDMA Writes leave
// from the mapped file) and one answered: the server's connection ends
// within a bounded time (a READ waiting for its Writes is released by the
// flush, not left waiting), with the transport's reason, not "stopped".
TEST(SmbServerMappedRead, ClientGoneWithReadsInFlightEndsTheConnection) {
  server::ServerConfig cfg = config(0);
  ServedShare s(cfg);
  {
    auto t = s.connect();
    Client c(*t);
    const auto id = open_new_file(c, "gone.bin");
    const auto want = pattern(8 * kMiB, 3);
    {
      std::ofstream o(s.dir.root / "export" / "gone.bin", std::ios::binary);
      o.write(reinterpret_cast<const char*>(want.data()), std::streamsize(want.size()));
    }
    smbd::BufferPool pool(*t, 4, kMiB);
    const uint64_t first = c.mid;
    for (unsigned k = 0; k < 4; ++k) {
      auto d = pool.expose(k, kMiB, true);
      std::vector<uint8_t> body = io_body_list(false, id, kMiB, d);
      le::store64(body.data() + 8, uint64_t(2 * k) * kMiB);
      send_request(c, smb2::kRead, c.mid++, body);
    }
    Answer a = next_answer(c);
    EXPECT_EQ(a.h.status, nt::kSuccess);
    const uint64_t k = a.h.message_id - first;
    ASSERT_LT(k, 4u);
    EXPECT_TRUE(std::equal(pool.data(unsigned(k)), pool.data(unsigned(k)) + kMiB,
                           want.begin() + int64_t(2 * k * kMiB)))
        << "READ " << k;
    t->disconnect();
  }  // the client's buffers deregistered, its adapter's connection closed
  expect_ended_by_the_peer(s);
  EXPECT_GE(s.stats.mapped_rdma_reads.load(), 1u);
  EXPECT_EQ(s.stats.mapped_read_faults.load(), 0u);
}

}  // namespace
