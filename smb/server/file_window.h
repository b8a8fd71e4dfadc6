// SPDX-License-Identifier: Apache-2.0
// file_window.h - ndk-smbd's mapped WRITE sinks: windows of an open file
// mapped MAP_SHARED (its page-cache pages) and registered as memory
// regions, so that a WRITE's RDMA Read lands in the file with one copy
// (out of the client) instead of two (out of the client into a staging
// buffer, then pwrite() into the page cache). A few windows per
// connection, reused across WRITEs: mmap, NdkRegisterMr and above all
// munmap (a TLB shootdown on every CPU running one of the server's
// threads) are paid once per window, not per WRITE. docs/smb-direct.md,
// "WRITE straight into the page cache".
#pragma once

#include <cstdint>
#include <vector>

#include "smbd/transport.h"

namespace smb::server {

// Faults in a mapped window, caught. Another process may truncate a file
// while a WRITE's data is being placed in its window; a store to a page
// past the new end is then SIGBUS, which would end the server wherever
// the engine copies with memcpy (a TCP peer's data, a same-host peer's
// shared memory; process_vm_readv gets EFAULT instead, and the engine ends
// that connection). A process-wide SIGBUS handler (installed at the first
// add()) maps a private anonymous page over a faulting page inside a
// guarded range, marks the range hit and lets the copy go on; any other
// SIGBUS gets the disposition there was before.
namespace fault_guard {
// Guards [base, base + len); -1 when every slot is taken (4096).
int add(void* base, size_t len);
// Whether a fault was caught in range `slot` since add() (or the last call).
bool take_hit(int slot);
void remove(int slot);
}  // namespace fault_guard

class WriteWindows {
 public:
  // Bytes of file each window starts in (aligned windows of this size,
  // each mapped max_io bytes longer so that any WRITE starting in it ends
  // in it too), and the windows a connection keeps (least recently used
  // replaced).
  static constexpr uint64_t kWindowBytes = 32ull << 20;
  static constexpr unsigned kMaxWindows = 4;

  WriteWindows(smbd::Transport& t, uint32_t max_io) : t_(t), max_io_(max_io) {}
  ~WriteWindows();
  WriteWindows(const WriteWindows&) = delete;
  WriteWindows& operator=(const WriteWindows&) = delete;

  struct Sink {
    uint8_t* at = nullptr;  // the file byte `off`, in the mapping
    uint32_t token = 0;     // the window's local token
  };
  // The sink of file bytes [off, off + len) of open `key` (descriptor
  // `fd`), mapping and registering the window that holds them on a miss.
  // False when the file cannot be mapped for writing (a read-only open, a
  // file system without shared writable mappings) or the mapping cannot be
  // registered: the caller takes the pwrite() path. The bytes must lie
  // inside the file (extended first): a mapping's page past the end of the
  // file is not there to write.
  bool sink(uint64_t key, int fd, uint64_t off, uint32_t len, Sink* out);
  // Whether a fault was caught in the window of `sink` (the file was cut
  // under it while the data was placed): the window is dropped (pages of
  // it are no longer the file's), the WRITE failed.
  bool faulted(const Sink& sink);
  // Forgets (deregisters, unmaps) the windows of open `key`: it is closed,
  // or its size was set.
  void drop(uint64_t key);
  uint64_t mapped() const { return mapped_; }  // windows mapped so far

 private:
  struct Window {
    uint64_t key = 0, off = 0, used = 0;
    uint8_t* base = nullptr;
    size_t len = 0;
    NDK_MR* mr = nullptr;
    uint32_t token = 0;
    int guard = -1;  // fault_guard slot
  };
  void release(Window& w);
  smbd::Transport& t_;
  uint32_t max_io_;
  std::vector<Window> w_;
  uint64_t clock_ = 0, mapped_ = 0;
};

}  // namespace smb::server
