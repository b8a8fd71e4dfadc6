// SPDX-License-Identifier: Apache-2.0
// Where pool blocks live: the placement rules Windows documents for pool
// (ExAllocatePoolWithTag, ExAllocatePool2 remarks) and Driver Verifier's
// Special Pool (guard pages, a quarantine of freed blocks).
//
//   * a block of PAGE_SIZE or more starts on a page boundary;
//   * a smaller block lies inside one page (it never crosses a boundary) and
//     is 16-byte aligned (64 with the cache-aligned flags).
//
// Special Pool places each block on its own pages between inaccessible guard
// pages, at the end of its last page (Verify End, the default: an overrun
// faults at the first byte past the page) or at the start of its first page
// (Verify Start: an underrun faults at once). Windows' special pool serves
// only blocks smaller than a page; the kit also serves larger ones, and keeps
// them page aligned as the pool rule above says, so for those the guard page
// follows the last whole page and the slack between the end of the block and
// the end of its page is filled with a pattern that the free checks
// (SPECIAL_POOL_DETECTED_MEMORY_CORRUPTION, 0xC1). The same holds for the
// at most 15 bytes of slack left by the 16-byte alignment of small blocks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace softndk::wdk {

constexpr size_t kPoolPage = 4096;

// Ordinary pool memory following the rules above; nullptr when out of memory.
void* PoolPagesAllocate(size_t bytes, bool cache_aligned);
void PoolPagesFree(void* p);

// Page-aligned anonymous memory [result, result + round_up(bytes)), placed
// below `highest` (an inclusive address; 0: anywhere) and, when `boundary`
// is a power of two, not crossing a multiple of it. For
// MmAllocateContiguousMemory*; nullptr when it cannot be placed.
void* PoolPagesMapContiguous(size_t bytes, uint64_t lowest, uint64_t highest, uint64_t boundary);
void PoolPagesUnmap(void* p, size_t bytes);

// A special-pool block: the mapping (guard pages included) and the block.
struct SpecialBlock {
  uintptr_t map = 0;    // start of the mapping (first guard page)
  size_t map_len = 0;   // whole mapping, guards included
  uintptr_t start = 0;  // what the driver got
  size_t size = 0;      // what it asked for
  bool align_start = false;
};

// Maps a special-pool block (zeroed); false when the mapping fails (the
// caller falls back to ordinary pool, as Windows does when special pool is
// exhausted).
bool SpecialAllocate(size_t bytes, bool align_start, SpecialBlock* out);
// Checks the slack pattern (returns the first corrupted address, or 0) and
// makes the whole block inaccessible; the caller keeps it in quarantine.
uintptr_t SpecialRetire(const SpecialBlock& b);
// Returns a retired block's pages to the system (quarantine eviction).
void SpecialRelease(const SpecialBlock& b);

}  // namespace softndk::wdk
