// Pool internals shared by the lookaside lists and the I/O manager.
#pragma once

#include <wdm.h>

#include <string>

namespace softndk::wdk {

// A pool tag as it reads in memory ('kdnS' -> "Sndk"), unprintables as '.'.
std::string TagName(ULONG tag);
// Allocates registered pool (the Ex* allocators' common path); `site` is
// the consumer's call site, for the leak report. `nonpaged` large blocks
// may be shared memory (pool.cc).
PVOID AllocatePool(SIZE_T bytes, ULONG tag, bool zero, bool cache_aligned, const char* call,
                   const void* site, bool nonpaged = false);
// Frees registered pool; `check_tag` compares the tag (ExFreePoolWithTag).
void FreePool(PVOID p, ULONG tag, bool check_tag, const char* call, const void* site);

}  // namespace softndk::wdk
