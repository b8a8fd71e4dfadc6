// SPDX-License-Identifier: Apache-2.0
// read_window.h - ndk-smbd's mapped inline READs: an open that has had
// many small READs answered in place (Connection::read_in_place) gets a
// read-only MAP_SHARED mapping of its file (its page-cache pages), and its
// later READs are copied out of the mapping into the send slot instead of
// pread(). On the measured host every system call cost ~1.5 us (a 4 KiB
// pread() 1.6-1.9 us, fstat() 1.6 us, a 4 KiB copy out of a mapping
// 0.1-0.15 us), a quarter of a 4 KiB QD1 READ's whole round trip.
//
// The end of the file: a copy out of a mapping does not know it, so each
// open keeps the file's size, looked at again (fstat) when it is older
// than kSizeFresh or when any open of the process changed a file's size
// (size_changed(): truncates, SET_INFO EndOfFile, an undone extension).
// A READ past the size it knows, or crossing the mapping's end, takes
// pread() (which sees a file grown meanwhile). A file cut by another
// process is seen within kSizeFresh; a READ of pages past the new end in
// that time faults, which fault_guard (file_window.h) catches: that READ
// and every later one of the open take pread(). docs/smb-direct.md,
// "Mapped inline READs".
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>

namespace smb::server {

class ReadWindow {
 public:
  // In-place READs of an open before its file is mapped: an open read a
  // few times (cp of a small file) never pays the mapping (mmap, a page
  // fault per page first read, munmap).
  static constexpr unsigned kMapAfter = 64;
  // Bytes mapped beyond the file's size at mapping time (room to grow),
  // and the most mapped: past it, pread().
  static constexpr uint64_t kGrowth = 32ull << 20;
  static constexpr uint64_t kMaxMapped = 1ull << 30;
  static constexpr std::chrono::milliseconds kSizeFresh{1};

  // `fresh`: how long a size looked at is trusted (kSizeFresh; tests
  // trust it longer to reach a cut file's fault without a race).
  explicit ReadWindow(std::chrono::steady_clock::duration fresh = kSizeFresh) : fresh_(fresh) {}
  ~ReadWindow();
  ReadWindow(const ReadWindow&) = delete;
  ReadWindow& operator=(const ReadWindow&) = delete;

  // Copies up to `len` bytes of the file open as `fd`, from file byte
  // `off`, into `dst`. Returns the bytes copied (fewer at the end of the
  // file), or -1: not served here, the caller takes pread() (not mapped
  // yet, cannot be mapped, past the size known or the mapping, a fault).
  int64_t copy(int fd, uint64_t off, uint32_t len, uint8_t* dst);
  // Any open of the process changed a file's size: every open looks at
  // its file's size again before its next mapped READ. Thread-safe.
  static void size_changed();

  bool mapped() const { return base_ != nullptr; }
  uint64_t copies() const { return copies_; }
  bool faulted() const { return faulted_; }

 private:
  bool refresh_size(int fd);
  std::chrono::steady_clock::duration fresh_;
  unsigned reads_ = 0;
  uint8_t* base_ = nullptr;
  size_t len_ = 0;
  int guard_ = -1;
  bool off_ = false;      // mapping failed or faulted: pread() from now on
  bool faulted_ = false;  // a copy faulted (the file was cut by another process)
  uint64_t size_ = 0;     // the file's size, as last looked at
  std::chrono::steady_clock::time_point checked_{};
  uint64_t generation_ = 0;  // of size_changed(), when size_ was looked at
  uint64_t copies_ = 0;
};

}  // namespace smb::server
