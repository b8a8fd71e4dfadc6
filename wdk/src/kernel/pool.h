// SPDX-License-Identifier: Apache-2.0
// Pool internals shared by the lookaside lists, the I/O manager, contiguous
// memory and the bug-check analysis.
#pragma once

#include <wdm.h>

#include <cstdint>
#include <string>
#include <vector>

namespace softndk::wdk {

// A pool tag as it reads in memory ('kdnS' -> "Sndk"), unprintables as '.'.
std::string TagName(ULONG tag);

// How one allocation is placed, beyond size and tag.
struct PoolOptions {
  bool zero = false;
  bool cache_aligned = false;
  bool nonpaged = false;
  bool force_special = false;  // POOL_FLAG_SPECIAL_POOL
  int special_align = -1;      // -1: the configured one, 0: end, 1: start
};

// Allocates registered pool (the Ex* allocators' common path); `site` is
// the consumer's call site, for the leak report. `nonpaged` large blocks
// may be shared memory (pool.cc).
PVOID AllocatePool(SIZE_T bytes, ULONG tag, const PoolOptions& options, const char* call,
                   const void* site);
inline PVOID AllocatePool(SIZE_T bytes, ULONG tag, bool zero, bool cache_aligned, const char* call,
                          const void* site, bool nonpaged = false) {
  PoolOptions o;
  o.zero = zero;
  o.cache_aligned = cache_aligned;
  o.nonpaged = nonpaged;
  return AllocatePool(bytes, tag, o, call, site);
}
// Frees registered pool; `check_tag` compares the tag (ExFreePoolWithTag).
void FreePool(PVOID p, ULONG tag, bool check_tag, const char* call, const void* site);

// Registers contiguous memory (MmAllocateContiguousMemory*) so that frees
// are checked and leaks reported; FreeContiguous unregisters and unmaps.
void RegisterContiguous(PVOID p, SIZE_T bytes, const char* call, const void* site);
void FreeContiguous(PVOID p, const char* call, const void* site);

// Special Pool (Driver Verifier's, softndk-wdk-run --special-pool): `tags`
// as they read in memory ("Sndk"; '*' and '?' match any), empty for every
// allocation; `align_start` selects Verify Start.
void ConfigureSpecialPool(bool on, const std::vector<std::string>& tags, bool align_start);
bool SpecialPoolOn();

// What a faulting address is, for the bug-check analysis. Safe to call from
// a signal handler that interrupted anything but the pool itself (it gives
// up when the pool's lock is held).
struct PoolAddressInfo {
  bool found = false;
  bool freed = false;     // the block was freed
  bool special = false;   // a special-pool block
  bool in_guard = false;  // the address is on a guard or slack byte of the block
  uintptr_t start = 0;
  size_t size = 0;
  ULONG tag = 0;
  const char* alloc_call = "";
  const void* alloc_site = nullptr;
  const char* free_call = "";
  const void* free_site = nullptr;
  static constexpr int kFrames = 16;
  void* alloc_stack[kFrames] = {};
  int alloc_frames = 0;
  void* free_stack[kFrames] = {};
  int free_frames = 0;
};
bool LookupPoolAddress(uintptr_t address, PoolAddressInfo* out);

}  // namespace softndk::wdk
