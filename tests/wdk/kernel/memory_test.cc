// SPDX-License-Identifier: Apache-2.0
// Pool (tags, zeroing, wrong tag, double free, leaks per tag), lookaside
// lists, MDLs (chains on IRPs, double free, probing unmapped memory).
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

class MemoryTest : public KitTest {};

TEST_F(MemoryTest, Pool2ZeroesUnlessUninitialized) {
  auto* p = static_cast<unsigned char*>(ExAllocatePool2(POOL_FLAG_NON_PAGED, 4096, kTestTag));
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 4096; i++) ASSERT_EQ(p[i], 0) << i;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
  ExFreePoolWithTag(p, kTestTag);
  auto* q = ExAllocatePool2(POOL_FLAG_NON_PAGED | POOL_FLAG_UNINITIALIZED | POOL_FLAG_CACHE_ALIGNED,
                            100, kTestTag);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u);
  ExFreePool(q);
  void* z = ExAllocatePoolZero(NonPagedPoolNx, 64, kTestTag);
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(static_cast<unsigned char*>(z)[63], 0);
  ExFreePoolWithTag(z, kTestTag | PROTECTED_POOL);  // the protected bit is ignored
  ExpectNone();
}

// The mapping /proc/self/maps shows for address p ("" if none).
std::string MappingOf(const void* p) {
  FILE* f = std::fopen("/proc/self/maps", "r");
  if (f == nullptr) return "";
  char line[512];
  std::string found;
  const auto a = reinterpret_cast<uintptr_t>(p);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi) {
      found = line;
      break;
    }
  }
  std::fclose(f);
  return found;
}

// With the same-host fast path on (the default; registered again as
// wdk.pool_shared_off with SOFTNDK_SAMEHOST=off), a large non-paged block is
// a shared-memory segment a same-host peer can map; small or paged blocks,
// and every block with the fast path off, stay on the heap.
TEST_F(MemoryTest, LargeNonPagedPoolIsSharedMemoryOnlyWithTheFastPathOn) {
  const char* env = std::getenv("SOFTNDK_SAMEHOST");
  const bool on = env == nullptr || (std::strcmp(env, "off") != 0 && std::strcmp(env, "0") != 0);
  void* big = ExAllocatePool2(POOL_FLAG_NON_PAGED, 1 << 20, kTestTag);
  void* nx = ExAllocatePoolWithTag(NonPagedPoolNx, 64 * 1024, kTestTag);
  void* small = ExAllocatePool2(POOL_FLAG_NON_PAGED, 4096, kTestTag);
  void* paged = ExAllocatePool2(POOL_FLAG_PAGED, 1 << 20, kTestTag);
  ASSERT_TRUE(big && nx && small && paged);
  for (size_t i = 0; i < (1 << 20); i += 4096) ASSERT_EQ(static_cast<char*>(big)[i], 0);
  const std::string kShared = "memfd:softndk-shared";
  EXPECT_EQ(MappingOf(big).find(kShared) != std::string::npos, on) << MappingOf(big);
  EXPECT_EQ(MappingOf(nx).find(kShared) != std::string::npos, on) << MappingOf(nx);
  EXPECT_EQ(MappingOf(small).find(kShared), std::string::npos);
  EXPECT_EQ(MappingOf(paged).find(kShared), std::string::npos);
  std::memset(big, 1, 1 << 20);
  ExFreePoolWithTag(big, kTestTag);
  ExFreePool(nx);
  ExFreePool(small);
  ExFreePool(paged);
  EXPECT_EQ(MappingOf(big).find(kShared), std::string::npos);  // unmapped by the free
  ExpectNone();
}

// The checker: paged pool above APC_LEVEL.
TEST_F(MemoryTest, PagedPoolAtDispatchLevelIsReported) {
  KIRQL old = KeRaiseIrqlToDpcLevel();
  void* np = ExAllocatePoolWithTag(NonPagedPoolNx, 16, kTestTag);
  ExpectNone();
  void* p = ExAllocatePoolWithTag(PagedPool, 16, kTestTag);
  ExpectOnly(SoftNdkWdkRuleIrqlTooHigh);
  void* p2 = ExAllocatePool2(POOL_FLAG_PAGED, 16, kTestTag);
  ExpectOnly(SoftNdkWdkRuleIrqlTooHigh);
  KeLowerIrql(old);
  ExFreePool(np);
  ExFreePool(p);
  ExFreePool(p2);
}

TEST_F(MemoryTest, Pool2NeedsExactlyOnePoolKind) {
  EXPECT_EQ(ExAllocatePool2(0, 16, kTestTag), nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  EXPECT_EQ(ExAllocatePool2(POOL_FLAG_PAGED | POOL_FLAG_NON_PAGED, 16, kTestTag), nullptr);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
}

// The checker: freeing pool with the wrong tag.
TEST_F(MemoryTest, WrongTagIsReportedAndTheBlockStays) {
  void* p = ExAllocatePoolWithTag(NonPagedPoolNx, 32, kTestTag);
  ASSERT_NE(p, nullptr);
  ExFreePoolWithTag(p, 0x656e6f4e);  // 'None'
  ExpectOnly(SoftNdkWdkRulePoolWrongTag);
  ExFreePoolWithTag(p, kTestTag);
  ExpectNone();
}

// The checker: a double free is reported (no heap corruption).
TEST_F(MemoryTest, DoubleFreeIsReported) {
  void* p = ExAllocatePoolWithTagPriority(NonPagedPoolNx, 32, kTestTag, NormalPoolPriority);
  ExFreePool(p);
  ExFreePool(p);
  ExpectOnly(SoftNdkWdkRuleDoubleFree);
  int on_stack = 0;
  ExFreePool(&on_stack);  // never pool
  ExpectOnly(SoftNdkWdkRuleDoubleFree);
}

// The checker: pool still allocated at unload is reported per tag.
TEST_F(MemoryTest, LeaksAreReportedPerTag) {
  const ULONG other = 0x72687441;  // "Athr"
  void* a = ExAllocatePool2(POOL_FLAG_NON_PAGED, 10, kTestTag);
  void* b = ExAllocatePool2(POOL_FLAG_NON_PAGED, 20, kTestTag);
  void* c = ExAllocatePool2(POOL_FLAG_PAGED, 30, other);
  SoftNdkWdkSetCheckMode(SoftNdkWdkCheckReport);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(SoftNdkWdkCheckLeaks(), 3u);
  std::string err = ::testing::internal::GetCapturedStderr();
  SoftNdkWdkSetCheckMode(SoftNdkWdkCheckQuiet);
  ExpectOnly(SoftNdkWdkRuleLeak, 2);  // one report per tag
  EXPECT_NE(err.find("pool tag 'Test': 2 block(s), 30 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("pool tag 'Athr': 1 block(s), 30 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("CHECK leak: ExAllocatePool2"), std::string::npos) << err;
  ExFreePool(a);
  ExFreePool(b);
  ExFreePool(c);
}

TEST_F(MemoryTest, LookasideListsCacheAndFree) {
  LOOKASIDE_LIST_EX l;
  ASSERT_EQ(ExInitializeLookasideListEx(&l, nullptr, nullptr, NonPagedPoolNx, 0, 256, kTestTag, 0),
            STATUS_SUCCESS);
  void* a = ExAllocateFromLookasideListEx(&l);
  void* b = ExAllocateFromLookasideListEx(&l);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::memset(a, 1, 256);
  ExFreeToLookasideListEx(&l, a);
  EXPECT_EQ(ExAllocateFromLookasideListEx(&l), a);  // from the cache
  ExFreeToLookasideListEx(&l, a);
  ExFreeToLookasideListEx(&l, b);
  ExDeleteLookasideListEx(&l);
  EXPECT_EQ(ExAllocateFromLookasideListEx(&l), nullptr);  // deleted
  ExpectOnly(SoftNdkWdkRuleUninitializedObject);

  NPAGED_LOOKASIDE_LIST n;
  ExInitializeNPagedLookasideList(&n, nullptr, nullptr, 0, 48, kTestTag, 2);
  void* e[4];
  for (auto& x : e) x = ExAllocateFromNPagedLookasideList(&n);
  for (auto& x : e) ExFreeToNPagedLookasideList(&n, x);  // 2 cached, 2 freed
  ExDeleteNPagedLookasideList(&n);
  ExpectNone();
}

TEST_F(MemoryTest, MdlDescribesItsBufferAndChainsOnAnIrp) {
  alignas(4096) static char buf[3 * 4096];
  PIRP irp = IoAllocateIrp(1, FALSE);
  ASSERT_NE(irp, nullptr);
  PMDL m1 = IoAllocateMdl(buf + 100, 1000, FALSE, FALSE, irp);
  PMDL m2 = IoAllocateMdl(buf + 1100, 5000, TRUE, FALSE, irp);
  ASSERT_NE(m1, nullptr);
  ASSERT_NE(m2, nullptr);
  EXPECT_EQ(irp->MdlAddress, m1);
  EXPECT_EQ(m1->Next, m2);
  EXPECT_EQ(MmGetMdlVirtualAddress(m2), buf + 1100);
  EXPECT_EQ(MmGetMdlByteCount(m2), 5000u);
  EXPECT_EQ(MmGetMdlByteOffset(m1), 100u);
  EXPECT_EQ(MmGetSystemAddressForMdlSafe(m1, NormalPagePriority | MdlMappingNoExecute), buf + 100);
  MmBuildMdlForNonPagedPool(m1);
  MmProbeAndLockPages(m1, KernelMode, IoWriteAccess);
  MmUnlockPages(m1);
  MDL partial;
  MmInitializeMdl(&partial, nullptr, 0);
  IoBuildPartialMdl(m2, &partial, buf + 2000, 100);
  EXPECT_EQ(partial.VirtualAddress, buf + 2000);
  EXPECT_EQ(partial.ByteCount, 100u);
  IoBuildPartialMdl(m2, &partial, buf + 6000, 1000);  // past the source
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  EXPECT_EQ(IoAllocateMdl(buf, 0, FALSE, FALSE, nullptr), nullptr);
  IoFreeMdl(m2);
  IoFreeMdl(m1);
  IoFreeIrp(irp);
  ExpectNone();
}

// The checker: an MDL freed twice.
TEST_F(MemoryTest, MdlDoubleFreeIsReported) {
  char buf[64];
  PMDL m = IoAllocateMdl(buf, sizeof buf, FALSE, FALSE, nullptr);
  IoFreeMdl(m);
  IoFreeMdl(m);
  ExpectOnly(SoftNdkWdkRuleDoubleFree);
}

// Bad input: probing memory that is not mapped is reported, not a crash.
TEST_F(MemoryTest, ProbingUnmappedMemoryIsReported) {
  void* region = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  PMDL m = IoAllocateMdl(region, 8192, FALSE, FALSE, nullptr);
  MmProbeAndLockPages(m, KernelMode, IoReadAccess);
  ExpectNone();
  munmap(static_cast<char*>(region) + 4096, 4096);
  MmProbeAndLockPages(m, KernelMode, IoReadAccess);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  munmap(region, 4096);
  IoFreeMdl(m);
}

}  // namespace
}  // namespace softndk::wdk::test
