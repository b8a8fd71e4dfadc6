// SPDX-License-Identifier: Apache-2.0
// transport/samehost/shm_ring.cc - the shared-memory byte ring of shm_ring.h.
#include "transport/samehost/shm_ring.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace softndk::samehost {

static_assert((kRingDataSize & (kRingDataSize - 1)) == 0, "the ring size is a power of two");

struct ShmRing::Header {
  alignas(64) std::atomic<uint64_t> prod;
  alignas(64) std::atomic<uint64_t> cons;
  alignas(64) std::atomic<uint32_t> cons_sleeping;
  alignas(64) std::atomic<uint32_t> prod_waiting;
};

namespace {
constexpr size_t kRingBytes = kRingHeaderSize + kRingDataSize;
constexpr unsigned kSeals = F_SEAL_SHRINK | F_SEAL_GROW;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

std::shared_ptr<ShmRing> ShmRing::create() {
  std::shared_ptr<ShmRing> r(new ShmRing);
  r->memfd_ = ::memfd_create("softndk-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (r->memfd_ < 0 || ::ftruncate(r->memfd_, kRingBytes) != 0 ||
      ::fcntl(r->memfd_, F_ADD_SEALS, kSeals | F_SEAL_SEAL) != 0)
    return nullptr;
  r->data_efd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  r->space_efd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (r->data_efd_ < 0 || r->space_efd_ < 0 || !r->map()) return nullptr;
  return r;
}

std::shared_ptr<ShmRing> ShmRing::attach(int memfd, int data_efd, int space_efd) {
  std::shared_ptr<ShmRing> r(new ShmRing);
  r->memfd_ = memfd;
  r->data_efd_ = data_efd;
  r->space_efd_ = space_efd;
  // The size cannot change under us (a shrink would make our reads fault):
  // the producer must have sealed it, and we check before mapping.
  struct stat st {};
  const int seals = ::fcntl(memfd, F_GET_SEALS);
  if (memfd < 0 || data_efd < 0 || space_efd < 0 || ::fstat(memfd, &st) != 0 ||
      !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) != kRingBytes || seals < 0 ||
      (static_cast<unsigned>(seals) & kSeals) != kSeals)
    return nullptr;
  // The eventfds must be eventfds: we write and read 8-byte counts.
  char link[64] = {};
  for (int fd : {data_efd, space_efd}) {
    char path[32];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(path, link, sizeof link - 1);
    constexpr char kEventfd[] = "anon_inode:[eventfd]";
    if (n != static_cast<ssize_t>(sizeof kEventfd - 1) ||
        std::memcmp(link, kEventfd, sizeof kEventfd - 1) != 0)
      return nullptr;
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  if (!r->map()) return nullptr;
  // The consumer starts where the producer does: at 0 (a peer that wrote
  // another value has only corrupted its own stream: read() says EPROTO).
  r->cons_ = 0;
  return r;
}

bool ShmRing::map() {
  void* p = ::mmap(nullptr, kRingBytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
  if (p == MAP_FAILED) return false;
  base_ = p;
  h_ = static_cast<Header*>(p);
  data_ = static_cast<uint8_t*>(p) + kRingHeaderSize;
  return true;
}

ShmRing::~ShmRing() {
  if (base_ != nullptr) ::munmap(base_, kRingBytes);
  close_fd(memfd_);
  close_fd(data_efd_);
  close_fd(space_efd_);
}

std::atomic<uint64_t>* ShmRing::shared_prod() { return &h_->prod; }
std::atomic<uint64_t>* ShmRing::shared_cons() { return &h_->cons; }

ssize_t ShmRing::write(const iovec* iov, int niov, bool arm) {
  constexpr uint64_t mask = kRingDataSize - 1;
  uint64_t cons = h_->cons.load(std::memory_order_acquire);
  int64_t room = ring_writable(prod_, cons, cons_seen_, kRingDataSize);
  if (room < 0) {
    errno = EPROTO;
    return -1;
  }
  cons_seen_ = cons;
  size_t done = 0;
  int i = 0;
  size_t off = 0;  // within iov[i]
  for (;;) {
    while (room > 0 && i < niov) {
      const size_t want = std::min<size_t>(iov[i].iov_len - off, static_cast<size_t>(room));
      const uint8_t* src = static_cast<const uint8_t*>(iov[i].iov_base) + off;
      // Up to the end of the data area, then from its start.
      const uint64_t at = prod_ & mask;
      const size_t first = std::min<size_t>(want, kRingDataSize - at);
      // An empty entry may have a null base: memcpy must not see it.
      if (first > 0) std::memcpy(data_ + at, src, first);
      if (want > first) std::memcpy(data_, src + first, want - first);
      prod_ += want;
      room -= static_cast<int64_t>(want);
      done += want;
      off += want;
      if (off == iov[i].iov_len) {
        ++i;
        off = 0;
      }
    }
    // Everything written, or not asked to wait: a busy producer retries
    // by itself (no summing of a long iovec array on every retry).
    if (i == niov || !arm) break;
    // Full: ask for a doorbell, then look again (the consumer may have
    // freed room between our look and the flag: Dekker, both seq_cst).
    h_->prod_waiting.store(1, std::memory_order_seq_cst);
    cons = h_->cons.load(std::memory_order_seq_cst);
    room = ring_writable(prod_, cons, cons_seen_, kRingDataSize);
    if (room < 0) {
      errno = EPROTO;
      return -1;
    }
    cons_seen_ = cons;
    if (room == 0) break;
  }
  if (done > 0) {
    // seq_cst store, then seq_cst load of the flag (Dekker with sleep();
    // no fence: TSan does not model them). Ring only for a consumer that
    // said it sleeps (event mode): no syscall per message while it polls.
    h_->prod.store(prod_, std::memory_order_seq_cst);
    if (h_->cons_sleeping.load(std::memory_order_seq_cst) != 0 &&
        h_->cons_sleeping.exchange(0, std::memory_order_acq_rel) != 0)
      ring(data_efd_);
  }
  return static_cast<ssize_t>(done);
}

bool ShmRing::drained() const { return h_->cons.load(std::memory_order_acquire) == prod_; }

uint64_t ShmRing::readable() const {
  int64_t n = ring_readable(h_->prod.load(std::memory_order_acquire), cons_, kRingDataSize);
  return n < 0 ? 0 : static_cast<uint64_t>(n);
}

ssize_t ShmRing::read(const iovec* iov, int niov) {
  constexpr uint64_t mask = kRingDataSize - 1;
  int64_t avail = ring_readable(h_->prod.load(std::memory_order_acquire), cons_, kRingDataSize);
  if (avail < 0) {
    errno = EPROTO;
    return -1;
  }
  size_t done = 0;
  for (int i = 0; i < niov && avail > 0; ++i) {
    const size_t want = std::min<size_t>(iov[i].iov_len, static_cast<size_t>(avail));
    uint8_t* dst = static_cast<uint8_t*>(iov[i].iov_base);
    const uint64_t at = cons_ & mask;
    const size_t first = std::min<size_t>(want, kRingDataSize - at);
    // RingPath::peek() reads into an empty {nullptr, 0} entry to check the
    // producer index: memcpy must not see the null base.
    if (first > 0) std::memcpy(dst, data_ + at, first);
    if (want > first) std::memcpy(dst + first, data_, want - first);
    cons_ += want;
    avail -= static_cast<int64_t>(want);
    done += want;
    if (want < iov[i].iov_len) break;
  }
  if (done > 0) {
    h_->cons.store(cons_, std::memory_order_seq_cst);  // Dekker with write()'s wait
    if (h_->prod_waiting.load(std::memory_order_seq_cst) != 0 &&
        h_->prod_waiting.exchange(0, std::memory_order_acq_rel) != 0)
      ring(space_efd_);
  }
  return static_cast<ssize_t>(done);
}

bool ShmRing::sleep() {
  h_->cons_sleeping.store(1, std::memory_order_seq_cst);
  const uint64_t prod = h_->prod.load(std::memory_order_seq_cst);
  return prod == cons_;
}

void ShmRing::ring(int efd) {
  const uint64_t one = 1;
  // A full counter (never, at one per wake-up) would only mean a wake-up
  // is already pending.
  ssize_t r = ::write(efd, &one, sizeof one);
  (void)r;
}

void ShmRing::drain(int efd) {
  uint64_t v;
  ssize_t r = ::read(efd, &v, sizeof v);
  (void)r;
}

}  // namespace softndk::samehost
