// SPDX-License-Identifier: Apache-2.0
// file_window.h - ndk-smbd's mapped RDMA transfers: windows of an open
// file mapped MAP_SHARED (its page-cache pages) and registered as memory
// regions, so that a WRITE's RDMA Read lands in the file with one copy
// (out of the client) instead of two (out of the client into a staging
// buffer, then pwrite() into the page cache), and a READ's RDMA Write
// leaves from the file's pages (one copy, into the client, instead of
// pread() into a staging buffer first). Windows are kept by the process
// across READs, WRITEs, opens and connections: mmap, the first touch of
// each page (a page fault), NdkRegisterMr and above all munmap (a TLB
// shootdown on every CPU running one of the server's threads) are paid
// once per window, not per I/O. docs/smb-direct.md, "WRITE straight into
// the page cache" and "READ straight from the page cache".
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "smbd/transport.h"

namespace smb::server {

// Faults in a mapped window, caught. Another process may truncate a file
// while a WRITE's data is being placed in its window (or a READ's taken
// from it); a store to (or load from) a page past the new end is then
// SIGBUS, which would end the server wherever
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

// One window of a file (by device and inode, not by open), kept by the
// process for every connection's READs and WRITEs: its mapping (made when
// a transfer is first mapped into or out of it; read-only when a READ
// made it, replaced by a writable one when a WRITE needs it) and how many
// WRITEs each of its pages has had. A
// page's first store through a new mapping is a page fault (on the
// measured host ~20 us, against ~1 us to pwrite() the page), so the
// mapping pays only for pages written again and again: it outlives the
// open and the connection that made it (docs/smb-direct.md, "WRITE
// straight into the page cache").
struct SharedWindow;

class FileWindows {
 public:
  // Bytes of file each window starts in (aligned windows of this size,
  // each mapped max_io bytes longer so that any WRITE starting in it ends
  // in it too); the windows the process keeps (least recently used
  // replaced: their mappings go once no connection holds them), and the
  // windows a connection keeps registered.
  static constexpr uint64_t kWindowBytes = 32ull << 20;
  static constexpr unsigned kSharedWindows = 8;
  static constexpr unsigned kMaxWindows = 4;

  FileWindows(smbd::Transport& t, uint32_t max_io) : t_(t), max_io_(max_io) {}
  ~FileWindows();
  FileWindows(const FileWindows&) = delete;
  FileWindows& operator=(const FileWindows&) = delete;

  // Counts a WRITE of file bytes [off, off + len) of the file open as
  // `fd` (described by `sb`), and says whether every page it covers had at least
  // `before` WRITEs already (0: always true). The counts are the
  // process's, across opens and connections, and go with their window
  // when it is replaced.
  bool rewritten(int fd, const struct stat& sb, uint64_t off, uint32_t len, unsigned before);

  struct Sink {
    uint8_t* at = nullptr;  // the file byte `off`, in the mapping
    uint32_t token = 0;     // the window's local token on this connection
  };
  // The sink of file bytes [off, off + len) of the file open as `fd`
  // (described by `sb`), mapping the window that holds them (once for the
  // process) and registering it on this connection on a miss. False when
  // the file cannot be mapped for writing (a read-only open, a file system
  // without shared writable mappings) or the mapping cannot be registered:
  // the caller takes the pwrite() path. The bytes must lie inside the file
  // (extended first): a mapping's page past the end of the file is not
  // there to write.
  bool sink(int fd, const struct stat& sb, uint64_t off, uint32_t len, Sink* out);
  // The source of file bytes [off, off + len) for a READ's RDMA Write: the
  // same, mapped read-only (any readable open; a writable window of the
  // file serves too), registered for local reads. False: the caller takes
  // the pread() path. The bytes must lie inside the file (fstat first): a
  // mapping's page past the end of the file is not there to read.
  bool source(int fd, const struct stat& sb, uint64_t off, uint32_t len, Sink* out);
  // Whether a fault was caught in the window of `sink` (the file was cut
  // under it while the data was placed or taken, by this connection's
  // transfer or another's): the window is dropped for every connection
  // (pages of it are no longer the file's), the transfer failed.
  bool faulted(const Sink& sink);
  // An open of this connection is closed or its size set (`key`, unused:
  // windows are the file's, not the open's). Windows of files removed
  // meanwhile go, so that the process does not keep a deleted file's
  // blocks.
  void drop(uint64_t key);
  uint64_t mapped() const { return mapped_; }  // windows this connection registered

 private:
  struct Reg {
    std::shared_ptr<SharedWindow> w;
    NDK_MR* mr = nullptr;
    uint32_t token = 0;
    uint64_t used = 0;
  };
  void release(Reg& r);
  bool window(int fd, const struct stat& sb, uint64_t off, uint32_t len, bool write, Sink* out);
  smbd::Transport& t_;
  uint32_t max_io_;
  std::vector<Reg> regs_;
  uint64_t clock_ = 0, mapped_ = 0;
};

}  // namespace smb::server
