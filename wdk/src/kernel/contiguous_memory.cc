// SPDX-License-Identifier: Apache-2.0
// MmAllocateContiguousMemory* / MmFreeContiguousMemory* (softndk_wdk/io.h).
// A process has no physical addresses: the kit's "physical" address is the
// virtual one (MmGetPhysicalAddress, NdkBuildLAM), so contiguous memory is
// page-aligned anonymous memory placed so that its addresses satisfy the
// caller's Lowest/Highest/Boundary constraints; when they cannot be met (a
// device limited below the process's lowest mappings), NULL, as Windows
// returns when it has no such range.
#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/pool.h"
#include "kernel/pool_pages.h"

using namespace softndk::wdk;

namespace {

PVOID Allocate(SIZE_T bytes, PHYSICAL_ADDRESS lowest, PHYSICAL_ADDRESS highest,
               PHYSICAL_ADDRESS boundary, const char* call, const void* site) {
  RequireIrqlAtMost(DISPATCH_LEVEL, call, site);
  if (bytes == 0) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "NumberOfBytes is 0");
    return nullptr;
  }
  if (boundary.QuadPart != 0 && (boundary.QuadPart & (boundary.QuadPart - 1)) != 0) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site,
           "BoundaryAddressMultiple 0x%llx is not a power of two",
           static_cast<unsigned long long>(boundary.QuadPart));
    return nullptr;
  }
  PVOID p = PoolPagesMapContiguous(bytes, static_cast<uint64_t>(lowest.QuadPart),
                                   static_cast<uint64_t>(highest.QuadPart),
                                   static_cast<uint64_t>(boundary.QuadPart));
  if (p != nullptr) RegisterContiguous(p, bytes, call, site);
  return p;
}

PHYSICAL_ADDRESS Zero() {
  PHYSICAL_ADDRESS a;
  a.QuadPart = 0;
  return a;
}

}  // namespace

extern "C" {

PVOID MmAllocateContiguousMemory(SIZE_T NumberOfBytes, PHYSICAL_ADDRESS HighestAcceptableAddress) {
  return Allocate(NumberOfBytes, Zero(), HighestAcceptableAddress, Zero(),
                  "MmAllocateContiguousMemory", SOFTNDK_WDK_SITE());
}

PVOID MmAllocateContiguousMemorySpecifyCache(SIZE_T NumberOfBytes,
                                             PHYSICAL_ADDRESS LowestAcceptableAddress,
                                             PHYSICAL_ADDRESS HighestAcceptableAddress,
                                             PHYSICAL_ADDRESS BoundaryAddressMultiple,
                                             MEMORY_CACHING_TYPE CacheType) {
  (void)CacheType;  // one mapping, cached: the kit has no device to be coherent with
  return Allocate(NumberOfBytes, LowestAcceptableAddress, HighestAcceptableAddress,
                  BoundaryAddressMultiple, "MmAllocateContiguousMemorySpecifyCache",
                  SOFTNDK_WDK_SITE());
}

PVOID MmAllocateContiguousMemorySpecifyCacheNode(SIZE_T NumberOfBytes,
                                                 PHYSICAL_ADDRESS LowestAcceptableAddress,
                                                 PHYSICAL_ADDRESS HighestAcceptableAddress,
                                                 PHYSICAL_ADDRESS BoundaryAddressMultiple,
                                                 MEMORY_CACHING_TYPE CacheType,
                                                 NODE_REQUIREMENT PreferredNode) {
  (void)CacheType;
  // One node (0): another fails unless any node will do.
  if ((PreferredNode & ~MM_ANY_NODE_OK) != 0 && (PreferredNode & MM_ANY_NODE_OK) == 0) {
    return nullptr;
  }
  return Allocate(NumberOfBytes, LowestAcceptableAddress, HighestAcceptableAddress,
                  BoundaryAddressMultiple, "MmAllocateContiguousMemorySpecifyCacheNode",
                  SOFTNDK_WDK_SITE());
}

PVOID MmAllocateContiguousNodeMemory(SIZE_T NumberOfBytes, PHYSICAL_ADDRESS LowestAcceptableAddress,
                                     PHYSICAL_ADDRESS HighestAcceptableAddress,
                                     PHYSICAL_ADDRESS BoundaryAddressMultiple, ULONG Protect,
                                     NODE_REQUIREMENT PreferredNode) {
  (void)Protect;
  if ((PreferredNode & ~MM_ANY_NODE_OK) != 0 && (PreferredNode & MM_ANY_NODE_OK) == 0) {
    return nullptr;
  }
  return Allocate(NumberOfBytes, LowestAcceptableAddress, HighestAcceptableAddress,
                  BoundaryAddressMultiple, "MmAllocateContiguousNodeMemory", SOFTNDK_WDK_SITE());
}

VOID MmFreeContiguousMemory(PVOID BaseAddress) {
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "MmFreeContiguousMemory", site);
  FreeContiguous(BaseAddress, "MmFreeContiguousMemory", site);
}

VOID MmFreeContiguousMemorySpecifyCache(PVOID BaseAddress, SIZE_T NumberOfBytes,
                                        MEMORY_CACHING_TYPE CacheType) {
  (void)NumberOfBytes;
  (void)CacheType;
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "MmFreeContiguousMemorySpecifyCache", site);
  FreeContiguous(BaseAddress, "MmFreeContiguousMemorySpecifyCache", site);
}

}  // extern "C"
