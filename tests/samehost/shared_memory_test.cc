// SPDX-License-Identifier: Apache-2.0
// shared_memory_test.cc - SoftNdkAllocateSharedMemory, the segment registry,
// the receiver's mappings of a peer's segments (rdmap/samehost_segments.h)
// and the fast path copying from them (docs/samehost.md, "Shared memory").
// The peer here is this process (pidfd_getfd on ourselves takes the same
// path as on another process; peer_death_test.cc has the two-process case).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "samehost_fixture.h"
#include "softndk/softndk.h"
#include "transport/samehost/samehost_segments.h"

namespace dptest {
namespace {

using softndk::samehost::SegmentMaps;
using softndk::samehost::shared_segment_count;
using softndk::samehost::shared_segment_find;
using softndk::wire::SamehostSegment;

TEST(SharedMemory, AllocateFreeAndBadArguments) {
  const size_t before = shared_segment_count();
  void* p = nullptr;
  EXPECT_EQ(SoftNdkAllocateSharedMemory(0, &p), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(SoftNdkAllocateSharedMemory(4096, nullptr), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkAllocateSharedMemory(SIZE_T{1} << 50, &p), STATUS_INVALID_PARAMETER);
  // Out of file descriptors (each segment keeps one): a child process with
  // RLIMIT_NOFILE at 3 reports what it got as its exit code.
  pid_t c = ::fork();
  ASSERT_GE(c, 0);
  if (c == 0) {
    rlimit rl{3, 3};
    ::setrlimit(RLIMIT_NOFILE, &rl);
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
    void* q = nullptr;
    NTSTATUS st = SoftNdkAllocateSharedMemory(4096, &q);
    ::_exit(st == STATUS_INSUFFICIENT_RESOURCES && q == nullptr ? 0 : 1);
  }
  int wst = 0;
  ASSERT_EQ(::waitpid(c, &wst, 0), c);
  EXPECT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == 0) << wst;
  ASSERT_EQ(SoftNdkAllocateSharedMemory(5000, &p), STATUS_SUCCESS);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  auto* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < 8192; ++i) ASSERT_EQ(b[i], 0) << i;  // zeroed, rounded to 2 pages
  std::memset(b, 0xA5, 8192);
  EXPECT_EQ(shared_segment_count(), before + 1);
  EXPECT_EQ(SoftNdkFreeSharedMemory(nullptr), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkFreeSharedMemory(b + 4096), STATUS_INVALID_PARAMETER);  // not its start
  int local = 0;
  EXPECT_EQ(SoftNdkFreeSharedMemory(&local), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkFreeSharedMemory(p), STATUS_SUCCESS);
  EXPECT_EQ(SoftNdkFreeSharedMemory(p), STATUS_INVALID_PARAMETER);  // twice
  EXPECT_EQ(shared_segment_count(), before);
}

TEST(SharedMemory, SegmentsAreSealedMemfdsFoundByRange) {
  void* p = nullptr;
  ASSERT_EQ(SoftNdkAllocateSharedMemory(3 * 4096, &p), STATUS_SUCCESS);
  const uint64_t a = reinterpret_cast<uintptr_t>(p);
  auto s = shared_segment_find(a + 4096, 8192);  // the last two pages
  ASSERT_TRUE(s);
  EXPECT_EQ(s->offset, 4096u);
  const int seals = ::fcntl(static_cast<int>(s->fd), F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  struct stat st {};
  ASSERT_EQ(::fstat(static_cast<int>(s->fd), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_ino), s->ino);
  EXPECT_EQ(st.st_size, 3 * 4096);
  EXPECT_NE(::ftruncate(static_cast<int>(s->fd), 4096), 0);  // cannot shrink
  EXPECT_FALSE(shared_segment_find(a + 4096, 8193));         // runs past its end
  EXPECT_FALSE(shared_segment_find(a - 1, 2));               // starts before it
  int heap = 0;
  EXPECT_FALSE(shared_segment_find(reinterpret_cast<uintptr_t>(&heap), sizeof heap));
  EXPECT_EQ(SoftNdkFreeSharedMemory(p), STATUS_SUCCESS);
  EXPECT_FALSE(shared_segment_find(a, 1));
}

// A segment of our own, named as a peer's descriptor would name it.
struct Seg {
  uint8_t* p = nullptr;
  SamehostSegment name;
  explicit Seg(size_t n, uint8_t fill) {
    void* v = nullptr;
    EXPECT_EQ(SoftNdkAllocateSharedMemory(n, &v), STATUS_SUCCESS);
    p = static_cast<uint8_t*>(v);
    std::memset(p, fill, n);
    name = *shared_segment_find(reinterpret_cast<uintptr_t>(p), n);
  }
  ~Seg() {
    if (p != nullptr) SoftNdkFreeSharedMemory(p);
  }
};

TEST(SegmentMaps, CopiesFromAVerifiedSegmentAndKeepsTheMapping) {
  Seg s(1 << 20, 0x11);
  s.p[12345] = 0x77;
  SegmentMaps m(::getpid());
  std::vector<uint8_t> dst(4096, 0);
  SamehostSegment at = s.name;
  at.offset = 12345;
  ASSERT_TRUE(m.copy(at, 4096, dst.data()));
  EXPECT_EQ(dst[0], 0x77);
  EXPECT_EQ(dst[1], 0x11);
  EXPECT_EQ(m.mapped(), 1u);
  // MAP_SHARED: a later write by the owner is what the next copy sees.
  s.p[12345] = 0x78;
  ASSERT_TRUE(m.copy(at, 1, dst.data()));
  EXPECT_EQ(dst[0], 0x78);
  EXPECT_EQ(m.mapped(), 1u);
  at.offset = (1 << 20) - 16;
  EXPECT_TRUE(m.copy(at, 16, dst.data()));  // the very end
}

TEST(SegmentMaps, RefusesWhatItCannotTrust) {
  Seg s(65536, 0x22);
  SegmentMaps m(::getpid());
  std::vector<uint8_t> dst(65536, 0);
  SamehostSegment bad = s.name;
  bad.ino += 1;  // another inode under that fd number
  EXPECT_FALSE(m.copy(bad, 16, dst.data()));
  bad = s.name;
  bad.dev += 1;
  EXPECT_FALSE(m.copy(bad, 16, dst.data()));
  bad = s.name;
  bad.offset = 65536 - 8;  // out of the segment
  EXPECT_FALSE(m.copy(bad, 16, dst.data()));
  bad.offset = 65536;
  EXPECT_FALSE(m.copy(bad, 1, dst.data()));
  // An unsealed memfd: the peer could truncate it under our mapping.
  int u = ::memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(u, 0);
  ASSERT_EQ(::ftruncate(u, 65536), 0);
  struct stat st {};
  ASSERT_EQ(::fstat(u, &st), 0);
  SamehostSegment un{static_cast<uint32_t>(u), static_cast<uint64_t>(st.st_dev),
                     static_cast<uint64_t>(st.st_ino), 0};
  EXPECT_FALSE(m.copy(un, 16, dst.data()));
  // Sealed against growing only: still refused.
  ASSERT_EQ(::fcntl(u, F_ADD_SEALS, F_SEAL_GROW), 0);
  EXPECT_FALSE(m.copy(un, 16, dst.data()));
  ::close(u);
  // A closed fd.
  EXPECT_FALSE(m.copy(un, 16, dst.data()));
  // A file that is not shmem at all (a pipe).
  int pp[2];
  ASSERT_EQ(::pipe2(pp, O_CLOEXEC), 0);
  ASSERT_EQ(::fstat(pp[0], &st), 0);
  SamehostSegment pipe{static_cast<uint32_t>(pp[0]), static_cast<uint64_t>(st.st_dev),
                       static_cast<uint64_t>(st.st_ino), 0};
  EXPECT_FALSE(m.copy(pipe, 16, dst.data()));
  ::close(pp[0]);
  ::close(pp[1]);
  EXPECT_EQ(m.mapped(), 1u);  // only the good segment (the offset checks mapped it)
  EXPECT_TRUE(m.copy(s.name, 16, dst.data()));
  EXPECT_EQ(dst[0], 0x22);
  // A peer that is gone: nothing to take fds from.
  SegmentMaps gone(0x3FFFFFFF);
  EXPECT_FALSE(gone.copy(s.name, 16, dst.data()));
}

TEST(SegmentMaps, AReusedFdNumberReplacesTheOldMappingAndTheCacheIsBounded) {
  SegmentMaps m(::getpid());
  uint8_t b = 0;
  SamehostSegment first;
  {
    Seg s(4096, 1);
    first = s.name;
    ASSERT_TRUE(m.copy(s.name, 1, &b));
    EXPECT_EQ(b, 1);
  }
  // Freed; the next segment likely reuses the fd number with a new inode.
  Seg t(4096, 2);
  ASSERT_TRUE(m.copy(t.name, 1, &b));
  EXPECT_EQ(b, 2);
  EXPECT_EQ(m.mapped(), t.name.fd == first.fd ? 1u : 2u);
  EXPECT_FALSE(m.copy(first, 1, &b) && t.name.fd == first.fd);  // the old one is gone
  std::vector<std::unique_ptr<Seg>> many;
  for (int i = 0; i < 70; ++i) {
    many.push_back(std::make_unique<Seg>(4096, static_cast<uint8_t>(i)));
    ASSERT_TRUE(m.copy(many.back()->name, 1, &b));
    EXPECT_EQ(b, static_cast<uint8_t>(i));
  }
  EXPECT_EQ(m.mapped(), SegmentMaps::kMaxMaps);
}

// ---- the fast path over shared memory, two QPs of this process ----

struct ShmBuf {
  uint8_t* p = nullptr;
  size_t n = 0;
  uint32_t token = 0;
  NDK_MR* mr = nullptr;
  uint64_t addr() const { return reinterpret_cast<uintptr_t>(p); }
  NDK_SGE sge(size_t off, size_t len) const {
    NDK_SGE s{};
    s.VirtualAddress = p + off;
    s.Length = static_cast<ULONG>(len);
    s.MemoryRegionToken = token;  // as Buf does: this provider's tokens are one
    return s;
  }
};

class SamehostShm : public Samehost {
 protected:
  static constexpr size_t kLen = 1 << 20;

  // A registered shared segment of `n` bytes holding pattern `seed`, freed
  // at TearDown.
  ShmBuf shm(NDK_PD* pd, size_t n, uint32_t seed) {
    ShmBuf b;
    void* v = nullptr;
    EXPECT_EQ(SoftNdkAllocateSharedMemory(n, &v), STATUS_SUCCESS);
    b.p = static_cast<uint8_t*>(v);
    b.n = n;
    EXPECT_EQ(pd->Dispatch->NdkCreateMr(pd, FALSE, nullptr, nullptr, &b.mr), STATUS_SUCCESS);
    MDL mdl{};
    mdl.VirtualAddress = b.p;
    mdl.ByteCount = static_cast<ULONG>(n);
    EXPECT_EQ(b.mr->Dispatch->NdkRegisterMr(b.mr, &mdl, n, kAll, nullptr, nullptr), STATUS_SUCCESS);
    b.token = b.mr->Dispatch->NdkGetRemoteTokenFromMr(b.mr);
    segs_.push_back(b.p);
    if (b.p != nullptr) fill_pattern(b.p, n, seed);
    return b;
  }
  void TearDown() override {
    Samehost::TearDown();  // the QPs and MRs first: then nobody reads the memory
    for (void* p : segs_) EXPECT_EQ(SoftNdkFreeSharedMemory(p), STATUS_SUCCESS);
  }
  std::vector<void*> segs_;
};

TEST_F(SamehostShm, WriteAndReadFromSharedMemoryAreMappedCopies) {
  Side& a = new_side();
  Side& b = new_side();
  link_fast(a, b);
  ShmBuf src = shm(a.pd, kLen, 3);
  Buf dst = reg(b.pd, kLen, kAll);
  NDK_SGE sg[2] = {src.sge(0, kLen / 2), src.sge(kLen / 2, kLen / 2)};
  ASSERT_EQ(a.d()->NdkWrite(a.qp, &src, sg, 2, dst.addr(), dst.token, 0), STATUS_SUCCESS);
  NDK_RESULT_EX w = poll1(a.icq);
  EXPECT_EQ(w.Status, STATUS_SUCCESS);
  EXPECT_EQ(w.BytesTransferred, kLen);
  fence(a, b);
  ASSERT_EQ(std::memcmp(src.p, dst.data(), kLen), 0);
  SamehostStats sb = b.stream->samehost_stats();
  EXPECT_EQ(sb.mapped_descriptors, 2u);
  EXPECT_EQ(sb.mapped_octets, kLen);
  EXPECT_EQ(sb.cma_fallbacks, 0u);
  EXPECT_EQ(a.stream->samehost_stats().segment_descriptors_sent, 2u);

  // A Read of b's shared memory: b's Read Response names b's segment.
  ShmBuf rsrc = shm(b.pd, kLen, 4);
  Buf sink = reg(a.pd, kLen, kAll);
  NDK_SGE s = sink.sge(0, kLen);
  ASSERT_EQ(a.d()->NdkRead(a.qp, &sink, &s, 1, rsrc.addr(), rsrc.token, 0), STATUS_SUCCESS);
  NDK_RESULT_EX r = poll1(a.icq);
  EXPECT_EQ(r.Status, STATUS_SUCCESS);
  EXPECT_EQ(r.BytesTransferred, kLen);
  EXPECT_EQ(0, std::memcmp(rsrc.p, sink.data(), kLen));
  SamehostStats sa = a.stream->samehost_stats();
  EXPECT_EQ(sa.mapped_descriptors, 1u);
  EXPECT_EQ(sa.mapped_octets, kLen);
  EXPECT_EQ(sa.cma_fallbacks, 0u);
  EXPECT_EQ(sa.pulled_octets, kLen);
  EXPECT_EQ(b.stream->samehost_stats().segment_descriptors_sent, 1u);
  // A part of a segment that is partly outside it is plain memory: an SGE
  // of heap memory next to a shared one goes by process_vm_readv.
  Buf heap = reg(a.pd, 65536, kAll, 0x5c);
  NDK_SGE mix[2] = {src.sge(0, 65536), heap.sge(0, 65536)};
  ASSERT_EQ(a.d()->NdkWrite(a.qp, &heap, mix, 2, dst.addr(), dst.token, 0), STATUS_SUCCESS);
  EXPECT_EQ(poll1(a.icq).Status, STATUS_SUCCESS);
  fence(a, b);
  EXPECT_EQ(std::memcmp(dst.data(), src.p, 65536), 0);
  EXPECT_EQ(dst.data()[65536], 0x5c);
  sb = b.stream->samehost_stats();
  EXPECT_EQ(sb.mapped_descriptors, 3u);
  EXPECT_EQ(sb.pulled_octets, kLen + 131072);
}

// The segment's fd number in the sender now names another file (an
// unsealed memfd put there with dup2, as a hostile or buggy sender could):
// the receiver refuses to map it, pulls by process_vm_readv instead, and
// the data still lands; the fallback is counted.
TEST_F(SamehostShm, ASegmentTheReceiverCannotUseFallsBackToCma) {
  Side& a = new_side();
  Side& b = new_side();
  link_fast(a, b);
  ShmBuf src = shm(a.pd, kLen, 6);
  Buf dst = reg(b.pd, kLen, kAll);
  auto seg = shared_segment_find(src.addr(), kLen);
  ASSERT_TRUE(seg);
  const int fd = static_cast<int>(seg->fd);
  const int saved = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);  // the real segment, put back below
  ASSERT_GE(saved, 0);
  int other = ::memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_GE(other, 0);
  ASSERT_EQ(::ftruncate(other, kLen), 0);
  ASSERT_EQ(::dup2(other, fd), fd);
  ::close(other);
  NDK_SGE sg = src.sge(0, kLen);
  ASSERT_EQ(a.d()->NdkWrite(a.qp, &src, &sg, 1, dst.addr(), dst.token, 0), STATUS_SUCCESS);
  EXPECT_EQ(poll1(a.icq).Status, STATUS_SUCCESS);
  fence(a, b);
  EXPECT_EQ(std::memcmp(src.p, dst.data(), kLen), 0);
  SamehostStats sb = b.stream->samehost_stats();
  EXPECT_EQ(a.stream->samehost_stats().segment_descriptors_sent, 1u);
  EXPECT_EQ(sb.cma_fallbacks, 1u);
  EXPECT_EQ(sb.mapped_descriptors, 0u);
  EXPECT_EQ(sb.pulled_octets, kLen);
  // The real segment back under its number: the next Write is mapped.
  ASSERT_EQ(::dup2(saved, fd), fd);
  ::close(saved);
  fill_pattern(src.p, kLen, 8);
  ASSERT_EQ(a.d()->NdkWrite(a.qp, &src, &sg, 1, dst.addr(), dst.token, 0), STATUS_SUCCESS);
  EXPECT_EQ(poll1(a.icq).Status, STATUS_SUCCESS);
  fence(a, b);
  EXPECT_EQ(std::memcmp(src.p, dst.data(), kLen), 0);
  sb = b.stream->samehost_stats();
  EXPECT_EQ(sb.mapped_descriptors, 1u);
  EXPECT_EQ(sb.cma_fallbacks, 1u);
}

}  // namespace
}  // namespace dptest
