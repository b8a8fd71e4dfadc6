// SPDX-License-Identifier: Apache-2.0
// transport/samehost/samehost_segments.h - shared-memory segments for the same-host
// fast path (docs/samehost.md, "Shared memory").
//
// Sender side: SoftNdkAllocateSharedMemory hands out page-aligned memory
// backed by a memfd sealed against shrink and grow. The process-wide
// registry here keeps each segment's fd open and answers, for a descriptor's
// source range, which segment holds all of it (so the descriptor can name
// it).
//
// Receiver side: SegmentMaps, one per connection, turns a segment
// descriptor into a read-only mapping of the peer's segment (pidfd_getfd of
// the named fd, then checks: a memfd sealed against shrink - so the peer can
// never truncate it under our mapping -, the named inode, the range inside
// its size) and copies from it with memcpy. Anything that does not check
// out leaves the descriptor to process_vm_readv.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "transport/samehost/samehost_wire.h"

namespace softndk::samehost {

// ---- the process-wide registry (sender side) ----

// 0 and *out set, or an errno: EINVAL (0 bytes, or too large to round up),
// ENOMEM/EMFILE/ENOSPC... (memfd_create, ftruncate, mmap failed).
int shared_segment_alloc(size_t bytes, void** out);
// 0, or EINVAL when `base` is not the start of a live segment.
int shared_segment_free(void* base);
// The segment holding all of [addr, addr+len), named for a descriptor.
std::optional<wire::SamehostSegment> shared_segment_find(uint64_t addr, uint64_t len);
// Live segments (tests).
size_t shared_segment_count();

// ---- the per-connection mappings of the peer's segments (receiver) ----

class SegmentMaps {
 public:
  static constexpr size_t kMaxMaps = 64;  // mappings kept per connection

  explicit SegmentMaps(pid_t peer) : peer_(peer) {}
  ~SegmentMaps();
  SegmentMaps(const SegmentMaps&) = delete;
  SegmentMaps& operator=(const SegmentMaps&) = delete;

  // Copies the descriptor's `length` bytes from the peer's segment to dst.
  // false (nothing copied) when the segment cannot be used: the caller
  // pulls with process_vm_readv instead.
  bool copy(const wire::SamehostSegment& s, uint32_t length, uint8_t* dst);

  size_t mapped() const { return maps_.size(); }

 private:
  struct Map {
    uint32_t fd;
    uint64_t dev, ino;
    const uint8_t* base;
    size_t size;
    uint64_t last_use;
  };
  const Map* find_or_map(const wire::SamehostSegment& s);
  const Map* map_new(const wire::SamehostSegment& s);

  const pid_t peer_;
  int pidfd_ = -1;  // opened at the first segment descriptor
  bool pidfd_failed_ = false;
  std::vector<Map> maps_;
  uint64_t clock_ = 0;  // for least-recently-used eviction
};

}  // namespace softndk::samehost
