// SPDX-License-Identifier: Apache-2.0
// ndk-smbd's WRITE read straight into the file's page cache (ndk-smbd
// --map-writes: ServerConfig::map_writes, write.cc, file_window.h; off by
// default, which copies: checked too), softndk <-> softndk on
// 127.0.0.1: bytes land exactly at odd offsets and sizes, across a window's
// edge and past the end of the file; a READ through the server and a read(2)
// of another descriptor see them at once; a size set by SET_INFO or cut by
// another process between WRITEs; a WRITE whose RDMA Read fails leaves the
// file's size as it was; a WRITE the mapped path cannot take (past the
// largest file) is answered by the copy path as before, and the next one is
// mapped again.
#include <sys/mman.h>
#include <sys/stat.h>

#include "file_window.h"
#include "smb2/read.h"
#include "smb2/set_info.h"
#include "smb_server_write_util.h"

namespace {

using namespace smb_server_write_test;
using WW = server::FileWindows;

// The defaults, with --map-writes.
server::ServerConfig mapped() {
  server::ServerConfig cfg = config(0);
  cfg.map_writes = true;
  return cfg;
}

// An inline READ through the server: the bytes it answers.
std::vector<uint8_t> read_inline(Client& c, const std::array<uint8_t, 16>& id, uint64_t at,
                                 uint32_t len) {
  std::vector<uint8_t> data;
  EXPECT_EQ(smb_server_write_test::read_inline(c, id, at, len, &data), nt::kSuccess);
  return data;
}

// Odd offsets and sizes, in a new file and over what is there: one byte,
// a page less one at a page's last byte, 3 MiB + 123, 3 MiB + 5 across the
// first window's edge far past the end (a hole before it), and bytes
// rewritten. After every answer the file read by another descriptor
// and an inline READ of the server's are byte for byte what was written.
TEST(SmbServerMappedWrite, BytesLandAtOddOffsetsAndSizesAndAreSeenAtOnce) {
  ServedShare s(mapped());
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "mapped.bin");
  smbd::BufferPool pool(*t, 1, 4 * kMiB, 4 * kMiB);
  const fs::path path = s.dir.root / "export" / "mapped.bin";
  const int other = ::open(path.c_str(), O_RDONLY);  // a concurrent reader's descriptor
  ASSERT_GE(other, 0);
  std::vector<uint8_t> want;
  const FileRange ios[] = {{0, 1},
                           {4095, 4095},
                           {777, 3 * kMiB + 123},
                           {WW::kWindowBytes - 1000001, 3 * kMiB + 5},
                           {778, 2 * kMiB}};
  uint8_t seed = 1;
  for (const FileRange& io : ios) {
    ASSERT_EQ(write_at(c, pool, id, io.at, io.len, &want, seed++), nt::kSuccess) << io.at;
    std::vector<uint8_t> got(io.len + 2);
    const ssize_t n = pread(other, got.data(), got.size(), off_t(io.at) - (io.at ? 1 : 0));
    const size_t lead = io.at ? 1 : 0;
    ASSERT_GE(n, ssize_t(io.len + lead)) << io.at;
    EXPECT_EQ(std::memcmp(got.data() + lead, want.data() + io.at, io.len), 0) << io.at;
    const uint32_t probe = std::min<uint32_t>(io.len, 4096);
    const auto r = read_inline(c, id, io.at + io.len - probe, probe);
    EXPECT_TRUE(r == std::vector<uint8_t>(want.begin() + (io.at + io.len - probe),
                                          want.begin() + (io.at + io.len)))
        << "READ after the WRITE at " << io.at;
  }
  ::close(other);
  EXPECT_EQ(fs::file_size(path), want.size());
  EXPECT_TRUE(file_bytes(path) == want) << "the file differs from what was written";
  EXPECT_EQ(s.stats.mapped_writes.load(), std::size(ios));
  EXPECT_EQ(s.stats.rdma_reads.load(), std::size(ios));
}

// Sizes changed between WRITEs: SET_INFO EndOfFile (the open's windows
// are dropped) and another process's ftruncate(2) under a window the
// server keeps (the next WRITE extends the file again before it goes
// through the mapping). The bytes are exactly what a sequence of write(2)s
// and truncates makes.
TEST(SmbServerMappedWrite, SizeSetOrCutBetweenWritesIsHonoured) {
  ServedShare s(mapped());
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "cut.bin");
  smbd::BufferPool pool(*t, 1, 2 * kMiB, 2 * kMiB);
  const fs::path path = s.dir.root / "export" / "cut.bin";
  std::vector<uint8_t> want;
  ASSERT_EQ(write_at(c, pool, id, 100, 2 * kMiB, &want, 7), nt::kSuccess);

  // SET_INFO FileEndOfFileInformation: 5000 bytes.
  ASSERT_EQ(set_end_of_file(c, id, 5000), nt::kSuccess);
  want.resize(5000);
  EXPECT_EQ(fs::file_size(path), 5000u);
  ASSERT_EQ(write_at(c, pool, id, kMiB + 3, kMiB, &want, 9), nt::kSuccess);
  EXPECT_TRUE(file_bytes(path) == want);

  // Another process cuts the file to one page under the server's window.
  ASSERT_EQ(truncate(path.c_str(), 4096), 0);
  want.resize(4096);
  ASSERT_EQ(write_at(c, pool, id, 3 * kMiB + 1, kMiB - 1, &want, 11), nt::kSuccess);
  EXPECT_TRUE(file_bytes(path) == want);
  EXPECT_EQ(s.stats.mapped_writes.load(), 3u);
}

// A WRITE past the end whose RDMA Read fails (a token the client never
// registered: the connection ends): the size the WRITE gave the file
// before its data was read is taken back; the WRITE before it stands.
TEST(SmbServerMappedWrite, FailedReadRestoresTheSize) {
  ServedShare s(mapped());
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "restore.bin");
  smbd::BufferPool pool(*t, 1, kMiB);
  std::vector<uint8_t> want;
  ASSERT_EQ(write_at(c, pool, id, 0, kMiB, &want, 3), nt::kSuccess);
  std::memset(pool.data(0), 0x5a, kMiB);
  auto good = pool.expose(0, kMiB, false);
  smbd::BufferDescriptor bad = good[0];
  bad.token ^= 0x00ffff00;  // not a token of this client's
  std::vector<uint8_t> body = io_body_list(true, id, kMiB, std::span(&bad, 1), 1);
  le::store64(body.data() + 8, 5 * kMiB);
  t->send(write_message(c, c.mid++, body));
  ASSERT_EQ(s.srv.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  const std::string why = s.srv.get();
  EXPECT_TRUE(why.find("invalid STag") != std::string::npos ||
              why.find("NdkRead") != std::string::npos ||
              why.find("RDMA Read") != std::string::npos)
      << why;
  const fs::path path = s.dir.root / "export" / "restore.bin";
  EXPECT_EQ(fs::file_size(path), kMiB);
  EXPECT_TRUE(file_bytes(path) == want);
  EXPECT_EQ(s.stats.mapped_writes.load(), 1u);
}

// A WRITE the mapped path refuses (its end past the largest file: the
// file cannot be extended to it) goes the copy path and is answered as
// before: the bytes up to the limit written, STATUS_FILE_TOO_LARGE. The
// next WRITE is mapped again.
TEST(SmbServerMappedWrite, WriteTheMappedPathCannotTakeFallsBackToTheCopy) {
  ServedShare s(mapped());
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "limit.bin");
  const uint64_t most = largest_file_size(s.dir.root / "probe");
  ASSERT_GT(most, uint64_t(8 * kMiB));
  const uint32_t len = 2 * kMiB;
  smbd::BufferPool pool(*t, 1, len);
  std::vector<uint8_t> want;
  const uint64_t at = (most - 300000) & ~uint64_t(4095);
  std::vector<uint8_t> tail;
  EXPECT_EQ(write_at(c, pool, id, 0, 1, &tail, 1), nt::kSuccess);  // mapped
  for (uint32_t i = 0; i < len; ++i) pool.data(0)[i] = uint8_t(i * 5 + 1);
  auto d = pool.expose(0, len, false);
  std::vector<uint8_t> body = io_body_list(true, id, len, d);
  le::store64(body.data() + 8, at);
  EXPECT_EQ(c.call(smb2::kWrite, body), nt::kFileTooLarge);
  pool.release(0, c.invalidated);
  const fs::path path = s.dir.root / "export" / "limit.bin";
  EXPECT_EQ(fs::file_size(path), most);  // the copy path wrote up to the limit
  EXPECT_EQ(s.stats.mapped_writes.load(), 1u);
  ASSERT_EQ(write_at(c, pool, id, 4096, len, &want, 5), nt::kSuccess);
  EXPECT_EQ(s.stats.mapped_writes.load(), 2u);
  std::vector<uint8_t> got(len);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(pread(fd, got.data(), len, 4096), ssize_t(len));
  ::close(fd);
  EXPECT_EQ(std::memcmp(got.data(), want.data() + 4096, len), 0);
}

// By default (no --map-writes) the same bytes land by the copy path,
// nothing is mapped.
TEST(SmbServerMappedWrite, ByDefaultCopies) {
  ServedShare s(config(0));
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "copied.bin");
  smbd::BufferPool pool(*t, 1, 2 * kMiB, 2 * kMiB);
  std::vector<uint8_t> want;
  ASSERT_EQ(write_at(c, pool, id, 4097, 2 * kMiB - 3, &want, 2), nt::kSuccess);
  EXPECT_TRUE(file_bytes(s.dir.root / "export" / "copied.bin") == want);
  EXPECT_EQ(s.stats.mapped_writes.load(), 0u);
  EXPECT_EQ(s.stats.rdma_reads.load(), 1u);
}

// CLOSE of `id`: its status.
uint32_t close_file(Client& c, const std::array<uint8_t, 16>& id) {
  std::vector<uint8_t> b(24, 0);
  le::store16(b.data(), 24);
  std::copy(id.begin(), id.end(), b.begin() + 8);
  return c.call(smb2::kClose, b);
}

// Whether this process holds a descriptor or a mapping of a removed file
// named `leaf` (the server's windows).
bool holds_removed(const std::string& leaf) {
  const std::string gone = leaf + " (deleted)";
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = fs::read_symlink(e.path(), ec);
    if (!ec && target.string().find(gone) != std::string::npos) return true;
  }
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(gone) != std::string::npos) return true;
  return false;
}

// The server's configuration with pages mapped from their third WRITE on.
server::ServerConfig rewrites() {
  server::ServerConfig cfg = config(0);
  cfg.map_rewrites = 2;
  return cfg;
}

// --map-rewrites: a page's first WRITEs are copied, the ones after are
// mapped; a WRITE with a page not written often enough is copied whole.
// The bytes are right after every answer, whichever path took them.
TEST(SmbServerMappedWrite, PagesRewrittenAreMappedTheFirstWritesCopied) {
  ServedShare s(rewrites());
  auto t = s.connect();
  Client c(*t);
  const auto id = open_new_file(c, "rewritten.bin");
  smbd::BufferPool pool(*t, 1, 2 * kMiB, 2 * kMiB);
  const fs::path path = s.dir.root / "export" / "rewritten.bin";
  std::vector<uint8_t> want;
  for (uint8_t pass = 0; pass < 4; ++pass) {
    ASSERT_EQ(write_at(c, pool, id, 4096, kMiB + 5, &want, uint8_t(pass + 1)), nt::kSuccess);
    EXPECT_TRUE(file_bytes(path) == want) << "pass " << int(pass);
    EXPECT_EQ(s.stats.mapped_writes.load(), pass < 2 ? 0u : pass - 1u) << "pass " << int(pass);
  }
  // The last page of that range (written 4 times) and one never written.
  ASSERT_EQ(write_at(c, pool, id, 4096 + kMiB, 8192, &want, 9), nt::kSuccess);
  EXPECT_EQ(s.stats.mapped_writes.load(), 2u);
  EXPECT_TRUE(file_bytes(path) == want);
  // Past the end of the file, in a window never touched: copied.
  ASSERT_EQ(write_at(c, pool, id, 40 * kMiB + 7, 3000, &want, 10), nt::kSuccess);
  EXPECT_EQ(s.stats.mapped_writes.load(), 2u);
  EXPECT_TRUE(file_bytes(path) == want);
  EXPECT_EQ(s.stats.rdma_reads.load(), 6u);
}

// The counts and the mapping are the file's: another open on another
// connection maps a range the first one rewrote. Once the file is removed
// and its last open closed, the server keeps neither a descriptor nor a
// mapping of it (its blocks are freed).
TEST(SmbServerMappedWrite, WindowsOutliveTheOpenAndTheConnectionNotTheFile) {
  ServedShare s(rewrites());
  const fs::path path = s.dir.root / "export" / "kept.bin";
  std::vector<uint8_t> want;
  {
    auto t = s.connect();
    Client c(*t);
    const auto id = open_new_file(c, "kept.bin");
    smbd::BufferPool pool(*t, 1, kMiB, kMiB);
    for (uint8_t pass = 0; pass < 3; ++pass)
      ASSERT_EQ(write_at(c, pool, id, 0, kMiB, &want, uint8_t(pass + 1)), nt::kSuccess);
    EXPECT_EQ(s.stats.mapped_writes.load(), 1u);
    EXPECT_EQ(close_file(c, id), nt::kSuccess);
  }
  auto t = s.connect();  // after the first connection's end (ServedShare::connect)
  Client c(*t);
  const auto id = open_new_file(c, "kept.bin", 1);  // FILE_OPEN
  smbd::BufferPool pool(*t, 1, kMiB, kMiB);
  ASSERT_EQ(write_at(c, pool, id, 0, kMiB, &want, 4), nt::kSuccess);
  EXPECT_EQ(s.stats.mapped_writes.load(), 2u);
  EXPECT_TRUE(file_bytes(path) == want);
  ASSERT_EQ(write_at(c, pool, id, 2 * kMiB, kMiB, &want, 5), nt::kSuccess);  // new pages
  EXPECT_EQ(s.stats.mapped_writes.load(), 2u);
  EXPECT_TRUE(file_bytes(path) == want);

  fs::remove(path);
  EXPECT_TRUE(holds_removed("kept.bin"));  // the open and the window
  EXPECT_EQ(close_file(c, id), nt::kSuccess);
  EXPECT_FALSE(holds_removed("kept.bin"));
}

}  // namespace

namespace {

// A mapped window of a file another process cuts: a store past the new end
// is caught by fault_guard (an anonymous page takes it, the range is marked
// hit) instead of ending the process; the bytes before the cut are the
// file's. Once the range is no longer guarded, the same fault is the
// SIGBUS it always was.
TEST(SmbServerMappedWrite, FaultGuardCatchesAStorePastACutAndOnlyInItsRange) {
  TempDir dir;
  const fs::path path = dir.root / "export" / "cut-under.bin";
  const int fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  const size_t page = size_t(sysconf(_SC_PAGESIZE)), len = 4 * page;
  ASSERT_EQ(ftruncate(fd, off_t(len)), 0);
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* p = static_cast<uint8_t*>(m);
  const int slot = server::fault_guard::add(p, len);
  ASSERT_GE(slot, 0);
  ASSERT_EQ(ftruncate(fd, off_t(page + 100)), 0);  // cut: pages 2 and 3 are gone
  std::vector<uint8_t> src(len);
  for (size_t i = 0; i < len; ++i) src[i] = uint8_t(i * 7 + 1);
  // volatile: the stores happen, byte by byte, as a copy would do them.
  volatile uint8_t* v = p;
  for (size_t i = 0; i < len; ++i) v[i] = src[i];
  EXPECT_TRUE(server::fault_guard::take_hit(slot));
  EXPECT_FALSE(server::fault_guard::take_hit(slot));  // taken
  server::fault_guard::remove(slot);
  munmap(m, len);
  EXPECT_EQ(fs::file_size(path), page + 100);
  const auto got = file_bytes(path);
  ASSERT_EQ(got.size(), page + 100);
  EXPECT_EQ(std::memcmp(got.data(), src.data(), got.size()), 0);

  // Unguarded: the fault is the process's end, as without the guard.
  EXPECT_DEATH(
      {
        void* u = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (u == MAP_FAILED) _exit(0);  // the test then fails: no death
        static_cast<volatile uint8_t*>(u)[3 * page] = 1;
        _exit(0);
      },
      "");
  ::close(fd);
}

}  // namespace
