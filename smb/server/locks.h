// SPDX-License-Identifier: Apache-2.0
// locks.h - ndk-smbd's byte-range locks (SMB2 LOCK, MS-SMB2 3.3.5.14 with
// the object store's rules of MS-FSA 2.1.5.7): one table for the share,
// shared by every connection, keyed by the file (device, inode) so that two
// opens of one file by different names or connections see each other's
// locks. The locks are advisory: READ and WRITE do not check them (Linux
// cifs checks its own mount's locks before it sends I/O).
//
// Limits: a lock that conflicts is refused at once (STATUS_LOCK_NOT_GRANTED)
// also when the client asked to wait (no SMB2_LOCKFLAG_FAIL_IMMEDIATELY):
// ndk-smbd sends no interim STATUS_PENDING responses. cifs waits itself for
// a conflicting lock of its own mount, so only a lock another client holds
// fails a blocking F_SETLKW / flock().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "smb2/lock.h"

namespace smb::server {

class LockTable {
 public:
  // Who holds a lock: an open of a connection (an address that is unique
  // while the connection lives) and the open's key there.
  struct Owner {
    const void* connection = nullptr;
    uint64_t open = 0;
    bool operator==(const Owner&) const = default;
  };
  struct File {
    dev_t dev = 0;
    ino_t ino = 0;
    auto operator<=>(const File&) const = default;
  };

  // One SMB2 LOCK request's elements for `owner` on `file`: all unlocks
  // (3.3.5.14.1) or all locks (3.3.5.14.2). Returns the NTSTATUS; a lock
  // request either takes every range or none.
  uint32_t apply(const File& file, const Owner& owner, std::span<const smb2::LockElement> e);
  // Every lock of `owner` (the open is closed).
  void release(const Owner& owner);
  size_t count() const;

 private:
  struct Range {
    uint64_t offset, length;
    bool exclusive;
    Owner owner;
  };
  uint32_t lock_locked(const File& file, const Owner& owner, std::span<const smb2::LockElement> e);
  uint32_t unlock_locked(const File& file, const Owner& owner,
                         std::span<const smb2::LockElement> e);
  mutable std::mutex mu_;
  std::map<File, std::vector<Range>> files_;
};

}  // namespace smb::server
