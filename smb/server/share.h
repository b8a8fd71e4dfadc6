// SPDX-License-Identifier: Apache-2.0
// share.h - the one exported directory of ndk-smbd, with every path confined
// to it: names are resolved with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) from the share's directory
// descriptor, so neither `..` nor a symbolic link (ours or one a client
// planted by other means) leads outside it. Errors are NTSTATUS values.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "locks.h"

namespace smb::server {

// MS-FSCC 2.6 file attributes.
inline constexpr uint32_t kAttrReadonly = 0x1;
inline constexpr uint32_t kAttrDirectory = 0x10;
inline constexpr uint32_t kAttrArchive = 0x20;
inline constexpr uint32_t kAttrNormal = 0x80;

uint64_t filetime(const struct timespec& t);
struct timespec from_filetime(uint64_t ft);
uint32_t status_from_errno(int e);  // an NTSTATUS (nt_status.h)

// A client path (UTF-16LE, '\' separators, relative to the share) as a
// relative POSIX path ("" for the share root). Refuses ':' (streams), '/',
// NUL and "." / ".." components with STATUS_OBJECT_NAME_INVALID.
uint32_t share_path(std::span<const uint8_t> utf16, std::string* out);

// A QUERY_DIRECTORY search pattern (wildcards of MS-FSA 2.1.4.4) matches
// the name.
bool name_matches(const std::string& pattern, const std::string& name);

// The directory open as `fd` has no entry but "." and "..".
bool dir_empty(int fd);

class Share {
 public:
  explicit Share(const std::string& dir);  // throws std::runtime_error
  ~Share();
  Share(const Share&) = delete;
  Share& operator=(const Share&) = delete;

  // openat2 beneath the share; `rel` "" opens the root. Returns fd or -errno.
  int open_beneath(const std::string& rel, int flags, mode_t mode = 0) const;
  // The parent directory's fd and the last component of `rel` (non-empty).
  int open_parent(const std::string& rel, std::string* leaf) const;
  int root_fd() const { return root_; }
  // The byte-range locks of the share's files (every connection's).
  LockTable& locks() const { return locks_; }

 private:
  int root_ = -1;
  mutable LockTable locks_;
};

}  // namespace smb::server
