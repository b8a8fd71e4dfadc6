// SPDX-License-Identifier: Apache-2.0
// Pool and NdkBuildLAM agree (issue 27 item 2): a pool block of PAGE_SIZE or
// more is page aligned, so its MDL's first byte offset is 0, and the LAM's
// pages are MmGetPhysicalAddress of the block's pages - with the same-host
// fast path on (the default) and off (registered again as
// wdk.net.pool_lam_tcp with SOFTNDK_SAMEHOST=off), where the driver this
// was found with failed with STATUS_INVALID_PARAMETER in NdkFastRegister.
#include <vector>

#include "kit_fixture.h"

namespace wdknet {
namespace {

class PoolLam : public KitTest {
 protected:
  // Builds the LAM of [va, va + length) and checks it against the memory
  // manager's view; returns the first byte offset.
  ULONG CheckLam(NDK_ADAPTER* a, char* va, SIZE_T length) {
    PMDL mdl = IoAllocateMdl(va, static_cast<ULONG>(length), FALSE, FALSE, nullptr);
    EXPECT_NE(mdl, nullptr);
    MmBuildMdlForNonPagedPool(mdl);
    ULONG size = 0, fbo = 0;
    EXPECT_EQ(a->Dispatch->NdkBuildLAM(a, mdl, length, nullptr, nullptr, nullptr, &size, &fbo),
              STATUS_BUFFER_TOO_SMALL);
    std::vector<char> storage(size);
    auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(storage.data());
    EXPECT_EQ(a->Dispatch->NdkBuildLAM(a, mdl, length, nullptr, nullptr, lam, &size, &fbo),
              STATUS_SUCCESS);
    EXPECT_EQ(fbo, MmGetMdlByteOffset(mdl));
    EXPECT_EQ(lam->AdapterPageCount,
              ADDRESS_AND_SIZE_TO_SPAN_PAGES(MmGetMdlVirtualAddress(mdl), length));
    for (ULONG i = 0; i < lam->AdapterPageCount; i++) {
      EXPECT_EQ(
          lam->AdapterPageArray[i].QuadPart,
          MmGetPhysicalAddress(static_cast<char*>(MmGetMdlBaseVa(mdl)) + i * PAGE_SIZE).QuadPart)
          << i;
    }
    a->Dispatch->NdkReleaseLAM(a, lam);
    IoFreeMdl(mdl);
    return fbo;
  }
};

TEST_F(PoolLam, PageSizedPoolHasFirstByteOffsetZero) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  const ULONG tag = 0x6d614c50;  // "PLam"
  for (SIZE_T n :
       {SIZE_T{PAGE_SIZE}, SIZE_T{3 * PAGE_SIZE + 100}, SIZE_T{64 * 1024}, SIZE_T{1} << 20}) {
    auto* p = static_cast<char*>(ExAllocatePool2(POOL_FLAG_NON_PAGED, n, tag));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(CheckLam(a, p, n), 0u) << n;
    EXPECT_EQ(CheckLam(a, p + 100, n - 100), 100u) << n;
    ExFreePoolWithTag(p, tag);
  }
  PHYSICAL_ADDRESS highest;
  highest.QuadPart = -1;
  auto* c = static_cast<char*>(MmAllocateContiguousMemory(5 * PAGE_SIZE, highest));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(CheckLam(a, c, 5 * PAGE_SIZE), 0u);
  MmFreeContiguousMemory(c);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

}  // namespace
}  // namespace wdknet
