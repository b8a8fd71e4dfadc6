// SPDX-License-Identifier: Apache-2.0
// Windows' documented memory rules (ExAllocatePoolWithTag / ExAllocatePool2
// remarks, POOL_FLAGS, ExAllocatePool3, MmAllocateContiguousMemory*, MDL
// offsets), checked for every allocator. Registered twice: with the
// defaults (the same-host fast path on) and as wdk.pool_rules_tcp with
// SOFTNDK_SAMEHOST=off, where large blocks are heap rather than shared memory.
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernel/pool.h"
#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

class PoolRules : public KitTest {};

using Allocator = std::function<void*(SIZE_T)>;

struct NamedAllocator {
  const char* name;
  Allocator allocate;
};

std::vector<NamedAllocator> AllAllocators() {
  return {
      {"ExAllocatePool2(NON_PAGED)",
       [](SIZE_T n) { return ExAllocatePool2(POOL_FLAG_NON_PAGED, n, kTestTag); }},
      {"ExAllocatePool2(PAGED)",
       [](SIZE_T n) { return ExAllocatePool2(POOL_FLAG_PAGED, n, kTestTag); }},
      {"ExAllocatePool2(NON_PAGED|UNINITIALIZED)",
       [](SIZE_T n) {
         return ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_UNINITIALIZED, n, kTestTag);
       }},
      {"ExAllocatePool3",
       [](SIZE_T n) { return ExAllocatePool3(POOL_FLAG_NON_PAGED, n, kTestTag, nullptr, 0); }},
      {"ExAllocatePoolWithTag(NonPagedPoolNx)",
       [](SIZE_T n) { return ExAllocatePoolWithTag(NonPagedPoolNx, n, kTestTag); }},
      {"ExAllocatePoolWithTag(PagedPool)",
       [](SIZE_T n) { return ExAllocatePoolWithTag(PagedPool, n, kTestTag); }},
      {"ExAllocatePoolWithTagPriority",
       [](SIZE_T n) {
         return ExAllocatePoolWithTagPriority(NonPagedPoolNx, n, kTestTag, NormalPoolPriority);
       }},
      {"ExAllocatePoolZero",
       [](SIZE_T n) { return ExAllocatePoolZero(NonPagedPoolNx, n, kTestTag); }},
      {"ExAllocatePoolUninitialized",
       [](SIZE_T n) { return ExAllocatePoolUninitialized(NonPagedPoolNx, n, kTestTag); }},
      {"ExAllocatePool", [](SIZE_T n) { return ExAllocatePool(NonPagedPoolNx, n); }},
  };
}

// "If NumberOfBytes is PAGE_SIZE or greater, a page-aligned buffer is
// allocated" - whatever the size's remainder, and wherever the block comes
// from (heap, or shared memory with the fast path on).
TEST_F(PoolRules, PageSizeOrMoreIsPageAligned) {
  const SIZE_T sizes[] = {PAGE_SIZE,     PAGE_SIZE + 1, 2 * PAGE_SIZE,   3 * PAGE_SIZE + 5,
                          64 * 1024 - 1, 64 * 1024,     64 * 1024 + 100, 1 << 20};
  for (auto& a : AllAllocators()) {
    for (SIZE_T n : sizes) {
      auto* p = static_cast<unsigned char*>(a.allocate(n));
      ASSERT_NE(p, nullptr) << a.name << " " << n;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % PAGE_SIZE, 0u) << a.name << " " << n;
      EXPECT_EQ(BYTE_OFFSET(p), 0u);
      std::memset(p, 0x5a, n);  // every byte is the caller's
      ExFreePool(p);
    }
  }
  ExpectNone();
}

// "Memory allocations of PAGE_SIZE or less do not cross page boundaries",
// and smaller ones are 16-byte aligned on 64-bit systems.
TEST_F(PoolRules, SmallBlocksNeverCrossAPageAndAre16ByteAligned) {
  const SIZE_T sizes[] = {1, 8, 15, 16, 17, 100, 1000, 2047, 2049, 3000, 4000, 4095};
  for (auto& a : AllAllocators()) {
    for (SIZE_T n : sizes) {
      std::vector<void*> blocks;
      for (int i = 0; i < 32; i++) {
        void* p = a.allocate(n);
        ASSERT_NE(p, nullptr) << a.name << " " << n;
        auto addr = reinterpret_cast<uintptr_t>(p);
        EXPECT_EQ(addr % 16, 0u) << a.name << " " << n;
        EXPECT_LE(addr % PAGE_SIZE + n, PAGE_SIZE) << a.name << " " << n << " crosses a page";
        blocks.push_back(p);
      }
      for (void* p : blocks) ExFreePool(p);
    }
  }
  ExpectNone();
}

TEST_F(PoolRules, CacheAlignedFlagsGiveCacheLines) {
  for (SIZE_T n : {SIZE_T{1}, SIZE_T{48}, SIZE_T{100}, SIZE_T{3000}}) {
    void* a = ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_CACHE_ALIGNED, n, kTestTag);
    void* b = ExAllocatePoolWithTag(NonPagedPoolNxCacheAligned, n, kTestTag);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
    ExFreePool(a);
    ExFreePool(b);
  }
  ExpectNone();
}

// Zeroed unless POOL_FLAG_UNINITIALIZED; POOL_ZERO_ALLOCATION on a POOL_TYPE.
TEST_F(PoolRules, Pool2ZeroesUnlessUninitialized) {
  for (SIZE_T n : {SIZE_T{24}, SIZE_T{PAGE_SIZE * 2}, SIZE_T{1} << 20}) {
    // Dirty heap first, so that a missing memset shows.
    void* dirty = ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_UNINITIALIZED, n, kTestTag);
    ASSERT_NE(dirty, nullptr);
    std::memset(dirty, 0xee, n);
    ExFreePool(dirty);
    auto* z = static_cast<unsigned char*>(ExAllocatePool2(POOL_FLAG_NON_PAGED, n, kTestTag));
    auto* z2 = static_cast<unsigned char*>(ExAllocatePoolWithTag(
        static_cast<POOL_TYPE>(NonPagedPoolNx | POOL_ZERO_ALLOCATION), n, kTestTag));
    ASSERT_TRUE(z && z2);
    for (SIZE_T i = 0; i < n; i++) {
      ASSERT_EQ(z[i], 0) << n << " at " << i;
      ASSERT_EQ(z2[i], 0) << n << " at " << i;
    }
    ExFreePool(z);
    ExFreePool(z2);
  }
  ExpectNone();
}

// NULL (and a report) for what the reference calls invalid: no or several
// pool kinds, unknown required flags, tag 0. Unknown optional flags (the
// high 32 bits) are ignored.
TEST_F(PoolRules, Pool2InvalidFlagsAndTagGiveNull) {
  EXPECT_EQ(ExAllocatePool2(0, 16, kTestTag), nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  EXPECT_EQ(ExAllocatePool2(POOL_FLAG_PAGED | POOL_FLAG_NON_PAGED, 16, kTestTag), nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  EXPECT_EQ(ExAllocatePool2(POOL_FLAG_NON_PAGED | 0x00010000ULL, 16, kTestTag), nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  EXPECT_EQ(ExAllocatePool2(POOL_FLAG_NON_PAGED, 16, 0), nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  void* p = ExAllocatePool2(POOL_FLAG_NON_PAGED | 0x0000004000000000ULL, 16, kTestTag);
  EXPECT_NE(p, nullptr);
  ExFreePool(p);
  ExpectNone();
}

TEST_F(PoolRules, Pool2OutOfMemoryIsNull) {
  EXPECT_EQ(ExAllocatePool2(POOL_FLAG_NON_PAGED, SIZE_MAX - 100, kTestTag), nullptr);
  EXPECT_EQ(ExAllocatePool2(POOL_FLAG_PAGED, SIZE_T{1} << 62, kTestTag), nullptr);
  EXPECT_EQ(ExAllocatePoolWithTag(NonPagedPoolNx, SIZE_MAX / 2, kTestTag), nullptr);
  ExpectNone();
}

using PoolRulesDeathTest = PoolRules;

// POOL_FLAG_RAISE_ON_FAILURE: the failure is raised, not returned; the kit
// has no structured exception handling, so the raise ends the driver with
// the exception named.
TEST_F(PoolRulesDeathTest, Pool2RaiseOnFailureRaises) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_RAISE_ON_FAILURE, SIZE_MAX - 100, kTestTag),
      "unhandled kernel exception 0xc000009a");
  EXPECT_DEATH(ExAllocatePool2(POOL_FLAG_RAISE_ON_FAILURE, 16, kTestTag),
               "unhandled kernel exception 0xc000000d");
  EXPECT_DEATH(ExAllocatePoolWithTag(
                   static_cast<POOL_TYPE>(NonPagedPoolNx | POOL_RAISE_IF_ALLOCATION_FAILURE),
                   SIZE_MAX / 2, kTestTag),
               "unhandled kernel exception 0xc000009a");
}

TEST_F(PoolRules, Pool3ExtendedParameters) {
  POOL_EXTENDED_PARAMETER e[2];
  std::memset(e, 0, sizeof e);
  e[0].Type = PoolExtendedParameterPriority;
  e[0].Priority = HighPoolPriority;
  e[1].Type = PoolExtendedParameterNumaNode;
  e[1].PreferredNode = 0;
  void* p = ExAllocatePool3(POOL_FLAG_NON_PAGED, 2 * PAGE_SIZE, kTestTag, e, 2);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % PAGE_SIZE, 0u);
  EXPECT_EQ(static_cast<unsigned char*>(p)[PAGE_SIZE], 0);
  ExFreePool(p);
  // Node 3 of a one-node machine: fails, unless any node will do.
  e[1].PreferredNode = 3;
  EXPECT_EQ(ExAllocatePool3(POOL_FLAG_NON_PAGED, 64, kTestTag, e, 2), nullptr);
  e[1].PreferredNode = 3 | MM_ANY_NODE_OK;
  p = ExAllocatePool3(POOL_FLAG_NON_PAGED, 64, kTestTag, e, 2);
  EXPECT_NE(p, nullptr);
  ExFreePool(p);
  ExpectNone();
  // Secure pool needs VBS: required -> NULL; an unknown optional type is ignored.
  e[0].Type = PoolExtendedParameterSecurePool;
  EXPECT_EQ(ExAllocatePool3(POOL_FLAG_NON_PAGED, 64, kTestTag, e, 1), nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  e[0].Type = 77;
  e[0].Optional = 1;
  p = ExAllocatePool3(POOL_FLAG_NON_PAGED, 64, kTestTag, e, 1);
  EXPECT_NE(p, nullptr);
  ExFreePool(p);
  EXPECT_EQ(ExAllocatePool3(POOL_FLAG_NON_PAGED, 64, kTestTag, nullptr, 1), nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
}

PHYSICAL_ADDRESS Pa(LONGLONG v) {
  PHYSICAL_ADDRESS a;
  a.QuadPart = v;
  return a;
}

// Contiguous memory: page aligned, "physical" = virtual, inside the
// acceptable range, never across the boundary multiple.
TEST_F(PoolRules, ContiguousMemoryHonoursItsConstraints) {
  void* a = MmAllocateContiguousMemory(3 * PAGE_SIZE + 1, Pa(-1));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % PAGE_SIZE, 0u);
  EXPECT_EQ(static_cast<uint64_t>(MmGetPhysicalAddress(a).QuadPart),
            reinterpret_cast<uintptr_t>(a));
  std::memset(a, 1, 3 * PAGE_SIZE + 1);
  // A device that addresses 32 bits only.
  void* low = MmAllocateContiguousMemorySpecifyCache(16 * PAGE_SIZE, Pa(0), Pa(0xffffffffLL), Pa(0),
                                                     MmCached);
  ASSERT_NE(low, nullptr);
  EXPECT_LE(reinterpret_cast<uintptr_t>(low) + 16 * PAGE_SIZE - 1, 0xffffffffu);
  // 48 KiB that must not cross a 64 KiB multiple.
  void* bounded = MmAllocateContiguousMemorySpecifyCacheNode(
      12 * PAGE_SIZE, Pa(0), Pa(-1), Pa(0x10000), MmNonCached, MM_ANY_NODE_OK);
  ASSERT_NE(bounded, nullptr);
  auto b = reinterpret_cast<uintptr_t>(bounded);
  EXPECT_EQ(b / 0x10000, (b + 12 * PAGE_SIZE - 1) / 0x10000);
  void* node =
      MmAllocateContiguousNodeMemory(PAGE_SIZE, Pa(0), Pa(-1), Pa(0), 0x04 /* PAGE_READWRITE */, 0);
  ASSERT_NE(node, nullptr);
  ExpectNone();
  // Larger than the boundary, or a boundary that is not a power of two.
  EXPECT_EQ(MmAllocateContiguousMemorySpecifyCache(0x20000, Pa(0), Pa(-1), Pa(0x10000), MmCached),
            nullptr);
  ExpectNone();
  EXPECT_EQ(MmAllocateContiguousMemorySpecifyCache(PAGE_SIZE, Pa(0), Pa(-1), Pa(0x3000), MmCached),
            nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  MmFreeContiguousMemory(a);
  MmFreeContiguousMemorySpecifyCache(low, 16 * PAGE_SIZE, MmCached);
  MmFreeContiguousMemory(bounded);
  MmFreeContiguousMemory(node);
  ExpectNone();
  MmFreeContiguousMemory(a);  // twice
  ExpectOnly(SoftNdkWdkRuleDoubleFree);
  void* pool = ExAllocatePool2(POOL_FLAG_NON_PAGED, 64, kTestTag);
  MmFreeContiguousMemory(pool);  // not contiguous memory: reported, still allocated
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  ExFreePool(pool);
  ExpectNone();
}

TEST_F(PoolRules, ContiguousMemoryLeakIsReported) {
  void* a = MmAllocateContiguousMemory(PAGE_SIZE, Pa(-1));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(SoftNdkWdkCheckLeaks(), 1u);
  ExpectOnly(SoftNdkWdkRuleLeak);
  MmFreeContiguousMemory(a);
}

// MDL offsets over pool: ByteOffset = the VA's offset in its page, the base
// VA its page, the system address the VA; a page-aligned block's MDL starts
// at offset 0 (what NdkFastRegister's FirstByteOffset relies on).
TEST_F(PoolRules, MdlOffsetsOverPool) {
  auto* p = static_cast<char*>(ExAllocatePool2(POOL_FLAG_NON_PAGED, 5 * PAGE_SIZE, kTestTag));
  ASSERT_NE(p, nullptr);
  PMDL whole = IoAllocateMdl(p, 5 * PAGE_SIZE, FALSE, FALSE, nullptr);
  PMDL part = IoAllocateMdl(p + 100, 2 * PAGE_SIZE, FALSE, FALSE, nullptr);
  ASSERT_TRUE(whole && part);
  MmBuildMdlForNonPagedPool(whole);
  MmBuildMdlForNonPagedPool(part);
  EXPECT_EQ(MmGetMdlByteOffset(whole), 0u);
  EXPECT_EQ(MmGetMdlVirtualAddress(whole), p);
  EXPECT_EQ(MmGetMdlBaseVa(whole), p);
  EXPECT_EQ(MmGetMdlByteCount(whole), 5u * PAGE_SIZE);
  EXPECT_EQ(MmGetMdlByteOffset(part), 100u);
  EXPECT_EQ(MmGetMdlVirtualAddress(part), p + 100);
  EXPECT_EQ(MmGetMdlBaseVa(part), p);
  EXPECT_EQ(MmGetSystemAddressForMdlSafe(part, NormalPagePriority), p + 100);
  EXPECT_EQ(ADDRESS_AND_SIZE_TO_SPAN_PAGES(MmGetMdlVirtualAddress(part), MmGetMdlByteCount(part)),
            3u);
  // Physical addresses: the page of each byte, with the same offset.
  EXPECT_EQ(BYTE_OFFSET(MmGetPhysicalAddress(p + 100).QuadPart), 100u);
  EXPECT_EQ(MmGetPhysicalAddress(p + 3 * PAGE_SIZE).QuadPart - MmGetPhysicalAddress(p).QuadPart,
            3 * PAGE_SIZE);
  // A partial MDL keeps its own offset.
  PMDL sub = IoAllocateMdl(p, PAGE_SIZE, FALSE, FALSE, nullptr);
  ASSERT_NE(sub, nullptr);
  IoBuildPartialMdl(whole, sub, p + 2 * PAGE_SIZE + 24, 64);
  EXPECT_EQ(MmGetMdlByteOffset(sub), 24u);
  EXPECT_EQ(MmGetMdlBaseVa(sub), p + 2 * PAGE_SIZE);
  IoFreeMdl(sub);
  IoFreeMdl(part);
  IoFreeMdl(whole);
  ExFreePool(p);
  ExpectNone();
}

}  // namespace
}  // namespace softndk::wdk::test
