// SPDX-License-Identifier: Apache-2.0
// transport/samehost/samehost_segments.cc - the shared-memory segment registry and the
// receiver's per-connection mappings (samehost_segments.h).
#include "transport/samehost/samehost_segments.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace softndk::samehost {

namespace {

struct Segment {
  size_t size;
  int fd;
  uint64_t dev, ino;
};

// Keyed by base address; segments never overlap (each is its own mmap).
struct Registry {
  std::shared_mutex mu;
  std::map<uintptr_t, Segment> segs;
  std::atomic<size_t> count{0};  // lets the send path skip the lock when empty
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: used until exit
  return *r;
}

size_t page_size() {
  static const size_t p = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}

int close_keep_errno(int fd, int e) {
  ::close(fd);
  return e;
}

}  // namespace

int shared_segment_alloc(size_t bytes, void** out) {
  const size_t pg = page_size();
  // Bounded well below the address space so the rounding cannot wrap.
  if (bytes == 0 || bytes > (size_t{1} << 46)) return EINVAL;
  const size_t size = (bytes + pg - 1) / pg * pg;
  int fd = ::memfd_create("softndk-shared", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return errno;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return close_keep_errno(fd, errno);
  // Shrink sealed: a peer that maps this can never meet a truncated page
  // (SIGBUS); grow sealed: the size a peer checked stays the size. Sealing
  // the seals keeps the promise for the segment's life.
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    return close_keep_errno(fd, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return close_keep_errno(fd, errno);
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return close_keep_errno(fd, errno);
  Registry& r = registry();
  {
    std::unique_lock lk(r.mu);
    r.segs[reinterpret_cast<uintptr_t>(p)] =
        Segment{size, fd, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    r.count.fetch_add(1, std::memory_order_release);
  }
  *out = p;
  return 0;
}

int shared_segment_free(void* base) {
  Registry& r = registry();
  Segment s;
  {
    std::unique_lock lk(r.mu);
    auto it = r.segs.find(reinterpret_cast<uintptr_t>(base));
    if (it == r.segs.end()) return EINVAL;
    s = it->second;
    r.segs.erase(it);
    r.count.fetch_sub(1, std::memory_order_release);
  }
  // A peer that mapped the segment keeps its pages until it unmaps them.
  ::munmap(base, s.size);
  ::close(s.fd);
  return 0;
}

std::optional<wire::SamehostSegment> shared_segment_find(uint64_t addr, uint64_t len) {
  Registry& r = registry();
  if (r.count.load(std::memory_order_acquire) == 0) return std::nullopt;
  std::shared_lock lk(r.mu);
  auto it = r.segs.upper_bound(static_cast<uintptr_t>(addr));
  if (it == r.segs.begin()) return std::nullopt;
  --it;
  const uint64_t off = addr - it->first;
  if (off >= it->second.size || len > it->second.size - off) return std::nullopt;
  return wire::SamehostSegment{static_cast<uint32_t>(it->second.fd), it->second.dev, it->second.ino,
                               off};
}

size_t shared_segment_count() { return registry().count.load(std::memory_order_acquire); }

// ---- receiver ----

SegmentMaps::~SegmentMaps() {
  for (const Map& m : maps_) ::munmap(const_cast<uint8_t*>(m.base), m.size);
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool SegmentMaps::copy(const wire::SamehostSegment& s, uint32_t length, uint8_t* dst) {
  const Map* m = find_or_map(s);
  // The mapping's size was read when it was made and the segment cannot
  // shrink (sealed), so every byte below it stays readable.
  if (m == nullptr || s.offset > m->size || length > m->size - s.offset) return false;
  std::memcpy(dst, m->base + s.offset, length);
  return true;
}

const SegmentMaps::Map* SegmentMaps::find_or_map(const wire::SamehostSegment& s) {
  for (Map& m : maps_) {
    if (m.fd == s.fd && m.ino == s.ino && m.dev == s.dev) {
      m.last_use = ++clock_;
      return &m;
    }
  }
  return map_new(s);
}

const SegmentMaps::Map* SegmentMaps::map_new(const wire::SamehostSegment& s) {
  if (pidfd_ < 0 && !pidfd_failed_) {
    // The same permission as process_vm_readv (a ptrace access check), so
    // a peer we may pull from is a peer whose fds we may take.
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, peer_, 0));
    pidfd_failed_ = pidfd_ < 0;
  }
  if (pidfd_ < 0) return nullptr;
  const int fd = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd_, static_cast<int>(s.fd), 0));
  if (fd < 0) return nullptr;  // closed meanwhile, or not ours to take
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // Only a memfd sealed against shrink: nothing the peer does later can
  // take a page from under our mapping. F_GET_SEALS fails on anything that
  // is not shmem/hugetlbfs, and a shmem file not made by memfd_create
  // reports F_SEAL_SEAL alone.
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_ino) != s.ino ||
      static_cast<uint64_t>(st.st_dev) != s.dev || st.st_size <= 0)
    return nullptr;
  const size_t size = static_cast<size_t>(st.st_size);
  if (s.offset > size) return nullptr;
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  // The peer's fd number now names this inode: a mapping of an older
  // segment under the same number can no longer be named; drop it.
  for (size_t i = 0; i < maps_.size();) {
    if (maps_[i].fd == s.fd) {
      ::munmap(const_cast<uint8_t*>(maps_[i].base), maps_[i].size);
      maps_[i] = maps_.back();
      maps_.pop_back();
    } else {
      ++i;
    }
  }
  if (maps_.size() >= kMaxMaps) {
    size_t lru = 0;
    for (size_t i = 1; i < maps_.size(); ++i)
      if (maps_[i].last_use < maps_[lru].last_use) lru = i;
    ::munmap(const_cast<uint8_t*>(maps_[lru].base), maps_[lru].size);
    maps_[lru] = maps_.back();
    maps_.pop_back();
  }
  maps_.push_back(Map{s.fd, s.dev, s.ino, static_cast<const uint8_t*>(p), size, ++clock_});
  return &maps_.back();
}

}  // namespace softndk::samehost
