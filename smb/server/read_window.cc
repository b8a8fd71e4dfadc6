// SPDX-License-Identifier: Apache-2.0
#include "read_window.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "file_window.h"

namespace smb::server {

namespace {

std::atomic<uint64_t> g_generation{0};

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace

void ReadWindow::size_changed() { g_generation.fetch_add(1, std::memory_order_acq_rel); }

ReadWindow::~ReadWindow() {
  if (!base_) return;
  fault_guard::remove(guard_);
  munmap(base_, len_);
}

bool ReadWindow::refresh_size(int fd) {
  // The generation first: a size change after this load makes the next
  // READ look again.
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  struct stat sb {};
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return false;
  size_ = uint64_t(sb.st_size);
  generation_ = gen;
  checked_ = std::chrono::steady_clock::now();
  return true;
}

int64_t ReadWindow::copy(int fd, uint64_t off, uint32_t len, uint8_t* dst) {
  if (off_) return -1;
  if (!base_) {
    if (++reads_ <= kMapAfter) return -1;
    if (!refresh_size(fd)) {
      off_ = true;
      return -1;
    }
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    const uint64_t want = std::min(kMaxMapped, round_up(size_ + kGrowth, page));
    void* m = mmap(nullptr, size_t(want), PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      off_ = true;  // a file system without shared mappings: pread() for good
      return -1;
    }
    base_ = static_cast<uint8_t*>(m);
    len_ = size_t(want);
    guard_ = fault_guard::add(base_, len_);
    if (guard_ < 0) {  // no guard slot left: a cut file would end the process
      munmap(base_, len_);
      base_ = nullptr;
      off_ = true;
      return -1;
    }
  }
  if (std::chrono::steady_clock::now() - checked_ > fresh_ ||
      g_generation.load(std::memory_order_acquire) != generation_) {
    if (!refresh_size(fd)) return -1;
  }
  // Past the size known (the file may have grown since: pread() sees it)
  // or the mapping's end.
  if (off >= size_ || off + len > len_) return -1;
  const uint32_t n = uint32_t(std::min<uint64_t>(len, size_ - off));
  std::memcpy(dst, base_ + off, n);
  if (fault_guard::take_hit(guard_)) {
    // Pages past the end of a file cut by another process: the guard put
    // zero pages in their place, so the mapping is no longer the file's.
    faulted_ = off_ = true;
    fault_guard::remove(guard_);
    munmap(base_, len_);
    base_ = nullptr;
    guard_ = -1;
    return -1;
  }
  ++copies_;
  return n;
}

}  // namespace smb::server
