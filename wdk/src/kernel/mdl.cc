// SPDX-License-Identifier: Apache-2.0
// MDLs (softndk_wdk/io.h): softndk's MDL {Next, VirtualAddress, ByteCount},
// allocated by IoAllocateMdl and registered, so IoFreeMdl of a freed MDL is
// a report and live MDLs at unload are leaks. Nothing is locked or mapped:
// user memory has one mapping; MmProbeAndLockPages checks it is mapped.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <new>
#include <vector>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/registry.h"

using namespace softndk::wdk;

namespace {

struct MdlInfo {
  const void* site = nullptr;
};

LiveRegistry<MdlInfo>& Mdls() {
  static auto* r = new LiveRegistry<MdlInfo>;
  return *r;
}

ULONG ReportMdlLeaks() {
  auto live = Mdls().Snapshot();
  if (!live.empty()) {
    Report(SoftNdkWdkRuleLeak, "IoAllocateMdl", live.front().second.site,
           "%zu MDL(s) never freed with IoFreeMdl (one allocated at %s)", live.size(),
           DescribeAddress(live.front().second.site).c_str());
  }
  return static_cast<ULONG>(live.size());
}

const bool kRegistered = (RegisterLeakReporter("mdl", ReportMdlLeaks), true);

// True if every page of [va, va+len) is mapped.
bool Mapped(const void* va, SIZE_T len) {
  if (len == 0) return true;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t start = reinterpret_cast<uintptr_t>(va) & ~(page - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(va) + len;
  std::vector<unsigned char> vec((end - start + page - 1) / page);
  // mincore fails with ENOMEM when part of the range is not mapped.
  return mincore(reinterpret_cast<void*>(start), end - start, vec.data()) == 0 || errno != ENOMEM;
}

bool CheckMdl(PMDL mdl, const char* call, const void* site) {
  if (mdl == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "MDL is NULL");
    return false;
  }
  return true;
}

}  // namespace

extern "C" {

PMDL IoAllocateMdl(PVOID VirtualAddress, ULONG Length, BOOLEAN SecondaryBuffer, BOOLEAN ChargeQuota,
                   PIRP Irp) {
  (void)ChargeQuota;
  (void)kRegistered;
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "IoAllocateMdl", site);
  if (Length == 0) return nullptr;  // Windows: no MDL for an empty buffer
  auto* mdl = new (std::nothrow) MDL{nullptr, VirtualAddress, Length};
  if (mdl == nullptr) return nullptr;
  Mdls().Add(mdl, MdlInfo{site});
  if (Irp != nullptr) {
    if (!SecondaryBuffer || Irp->MdlAddress == nullptr) {
      Irp->MdlAddress = mdl;
    } else {
      PMDL last = Irp->MdlAddress;
      while (last->Next != nullptr) last = last->Next;
      last->Next = mdl;
    }
  }
  return mdl;
}

VOID IoFreeMdl(PMDL Mdl) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckMdl(Mdl, "IoFreeMdl", site)) return;
  const void* first = nullptr;
  auto state = Mdls().Remove(Mdl, site, nullptr, &first);
  if (state == LiveRegistry<MdlInfo>::State::kLive) {
    delete Mdl;
    return;
  }
  if (state == LiveRegistry<MdlInfo>::State::kFreed) {
    Report(SoftNdkWdkRuleDoubleFree, "IoFreeMdl", site, "MDL %p was already freed (at %s)",
           static_cast<void*>(Mdl), DescribeAddress(first).c_str());
  } else {
    Report(SoftNdkWdkRuleDoubleFree, "IoFreeMdl", site,
           "%p is not an MDL from IoAllocateMdl (or it was freed long ago)",
           static_cast<void*>(Mdl));
  }
}

VOID IoBuildPartialMdl(PMDL SourceMdl, PMDL TargetMdl, PVOID VirtualAddress, ULONG Length) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckMdl(SourceMdl, "IoBuildPartialMdl", site) ||
      !CheckMdl(TargetMdl, "IoBuildPartialMdl", site)) {
    return;
  }
  auto* src = static_cast<char*>(SourceMdl->VirtualAddress);
  auto* va = static_cast<char*>(VirtualAddress);
  if (Length == 0) Length = static_cast<ULONG>(SourceMdl->ByteCount - (va - src));
  if (va < src || va + Length > src + SourceMdl->ByteCount) {
    Report(SoftNdkWdkRuleInvalidParameter, "IoBuildPartialMdl", site,
           "[%p, +%u) is not inside the source MDL [%p, +%zu)", VirtualAddress, Length,
           SourceMdl->VirtualAddress, static_cast<size_t>(SourceMdl->ByteCount));
    return;
  }
  TargetMdl->VirtualAddress = VirtualAddress;
  TargetMdl->ByteCount = Length;
}

PVOID MmGetSystemAddressForMdlSafe(PMDL Mdl, ULONG Priority) {
  (void)Priority;
  if (!CheckMdl(Mdl, "MmGetSystemAddressForMdlSafe", SOFTNDK_WDK_SITE())) return nullptr;
  return Mdl->VirtualAddress;
}

PVOID MmMapLockedPagesSpecifyCache(PMDL MemoryDescriptorList, KPROCESSOR_MODE AccessMode,
                                   MEMORY_CACHING_TYPE CacheType, PVOID RequestedAddress,
                                   ULONG BugCheckOnFailure, ULONG Priority) {
  (void)AccessMode;
  (void)CacheType;
  (void)RequestedAddress;
  (void)BugCheckOnFailure;
  (void)Priority;
  if (!CheckMdl(MemoryDescriptorList, "MmMapLockedPagesSpecifyCache", SOFTNDK_WDK_SITE())) {
    return nullptr;
  }
  return MemoryDescriptorList->VirtualAddress;
}

VOID MmUnmapLockedPages(PVOID BaseAddress, PMDL MemoryDescriptorList) {
  (void)BaseAddress;
  (void)MemoryDescriptorList;
}

SIZE_T MmSizeOfMdl(PVOID Base, SIZE_T Length) {
  (void)Base;
  (void)Length;
  return sizeof(MDL);
}

VOID MmInitializeMdl(PMDL MemoryDescriptorList, PVOID BaseVa, SIZE_T Length) {
  MemoryDescriptorList->Next = nullptr;
  MemoryDescriptorList->VirtualAddress = BaseVa;
  MemoryDescriptorList->ByteCount = Length;
}

VOID MmBuildMdlForNonPagedPool(PMDL MemoryDescriptorList) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckMdl(MemoryDescriptorList, "MmBuildMdlForNonPagedPool", site)) return;
  if (!Mapped(MemoryDescriptorList->VirtualAddress, MemoryDescriptorList->ByteCount)) {
    Report(SoftNdkWdkRuleInvalidParameter, "MmBuildMdlForNonPagedPool", site,
           "MDL %p describes unmapped memory [%p, +%zu)", static_cast<void*>(MemoryDescriptorList),
           MemoryDescriptorList->VirtualAddress,
           static_cast<size_t>(MemoryDescriptorList->ByteCount));
  }
}

VOID MmProbeAndLockPages(PMDL MemoryDescriptorList, KPROCESSOR_MODE AccessMode,
                         LOCK_OPERATION Operation) {
  (void)AccessMode;
  (void)Operation;
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "MmProbeAndLockPages", site);
  for (PMDL m = MemoryDescriptorList; m != nullptr; m = m->Next) {
    if (!Mapped(m->VirtualAddress, m->ByteCount)) {
      // Windows raises STATUS_ACCESS_VIOLATION into the caller's __try.
      Report(SoftNdkWdkRuleInvalidParameter, "MmProbeAndLockPages", site,
             "MDL %p describes unmapped memory [%p, +%zu) (STATUS_ACCESS_VIOLATION on Windows)",
             static_cast<void*>(m), m->VirtualAddress, static_cast<size_t>(m->ByteCount));
      return;
    }
  }
}

VOID MmUnlockPages(PMDL MemoryDescriptorList) {
  (void)CheckMdl(MemoryDescriptorList, "MmUnlockPages", SOFTNDK_WDK_SITE());
}

BOOLEAN MmIsAddressValid(PVOID VirtualAddress) { return Mapped(VirtualAddress, 1) ? TRUE : FALSE; }

PHYSICAL_ADDRESS MmGetPhysicalAddress(PVOID BaseAddress) {
  // A "logical address" in softndk is the virtual address (ndkpi.h).
  PHYSICAL_ADDRESS pa;
  pa.QuadPart = static_cast<LONGLONG>(reinterpret_cast<uintptr_t>(BaseAddress));
  return pa;
}

}  // extern "C"
