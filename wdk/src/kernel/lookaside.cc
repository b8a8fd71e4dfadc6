// SPDX-License-Identifier: Apache-2.0
// Lookaside lists (softndk_wdk/ex.h): a cache of up to Depth freed entries
// in front of the pool (or the driver's own allocate/free functions). The
// entries are pool blocks with the list's tag, so leaks show under it.
#include <sched.h>

#include "irql/checker.h"
#include "kernel/pool.h"

using namespace softndk::wdk;

namespace {

constexpr ULONG kLookasideMagic = 0x6b6f6f4c;  // "Look"
constexpr USHORT kDefaultDepth = 64;

bool Check(PLOOKASIDE_LIST_EX l, const char* call, const void* site) {
  if (l != nullptr && l->Magic == kLookasideMagic) return true;
  Report(SoftNdkWdkRuleUninitializedObject, call, site,
         "lookaside list %p was never initialized (or was deleted)", static_cast<void*>(l));
  return false;
}

void Lock(PLOOKASIDE_LIST_EX l) {
  LONG expected = 0;
  while (!__atomic_compare_exchange_n(&l->CacheLock, &expected, 1, false, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED)) {
    expected = 0;
    sched_yield();
  }
}
void Unlock(PLOOKASIDE_LIST_EX l) { __atomic_store_n(&l->CacheLock, 0, __ATOMIC_RELEASE); }

void Init(PLOOKASIDE_LIST_EX l, PALLOCATE_FUNCTION_EX aex, PFREE_FUNCTION_EX fex,
          PALLOCATE_FUNCTION a, PFREE_FUNCTION f, POOL_TYPE type, ULONG flags, SIZE_T size,
          ULONG tag, USHORT depth) {
  *l = LOOKASIDE_LIST_EX{};
  l->Magic = kLookasideMagic;
  l->PoolType = type;
  l->Tag = tag;
  // Each cached entry holds the cache link in its first bytes.
  l->Size = static_cast<ULONG>(size < sizeof(SINGLE_LIST_ENTRY) ? sizeof(SINGLE_LIST_ENTRY) : size);
  l->Depth = depth == 0 ? kDefaultDepth : depth;
  l->Flags = static_cast<USHORT>(flags);
  l->AllocateEx = aex;
  l->FreeEx = fex;
  l->Allocate = a;
  l->Free = f;
}

PVOID Allocate(PLOOKASIDE_LIST_EX l, const char* call, const void* site) {
  if (!Check(l, call, site)) return nullptr;
  Lock(l);
  PSINGLE_LIST_ENTRY e = PopEntryList(&l->Cache);
  if (e != nullptr) l->CacheCount--;
  l->TotalAllocates++;
  Unlock(l);
  if (e != nullptr) return e;
  if (l->AllocateEx != nullptr) return l->AllocateEx(l->PoolType, l->Size, l->Tag, l);
  if (l->Allocate != nullptr) return l->Allocate(l->PoolType, l->Size, l->Tag);
  return AllocatePool(l->Size, l->Tag, false, false, call, site);
}

void FreeEntry(PLOOKASIDE_LIST_EX l, PVOID entry, const char* call, const void* site) {
  if (l->FreeEx != nullptr) {
    l->FreeEx(entry, l);
  } else if (l->Free != nullptr) {
    l->Free(entry);
  } else {
    FreePool(entry, l->Tag, true, call, site);
  }
}

void Free(PLOOKASIDE_LIST_EX l, PVOID entry, const char* call, const void* site) {
  if (!Check(l, call, site)) return;
  if (entry == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "freeing NULL to lookaside list %p",
           static_cast<void*>(l));
    return;
  }
  Lock(l);
  l->TotalFrees++;
  if (l->CacheCount < l->Depth) {
    PushEntryList(&l->Cache, static_cast<PSINGLE_LIST_ENTRY>(entry));
    l->CacheCount++;
    Unlock(l);
    return;
  }
  Unlock(l);
  FreeEntry(l, entry, call, site);
}

void Flush(PLOOKASIDE_LIST_EX l, const char* call, const void* site) {
  Lock(l);
  PSINGLE_LIST_ENTRY e = l->Cache.Next;
  l->Cache.Next = nullptr;
  l->CacheCount = 0;
  Unlock(l);
  while (e != nullptr) {
    PSINGLE_LIST_ENTRY next = e->Next;
    FreeEntry(l, e, call, site);
    e = next;
  }
}

void Delete(PLOOKASIDE_LIST_EX l, const char* call, const void* site) {
  if (!Check(l, call, site)) return;
  Flush(l, call, site);
  l->Magic = 0;
}

}  // namespace

extern "C" {

NTSTATUS ExInitializeLookasideListEx(PLOOKASIDE_LIST_EX Lookaside, PALLOCATE_FUNCTION_EX Allocate,
                                     PFREE_FUNCTION_EX Free, POOL_TYPE PoolType, ULONG Flags,
                                     SIZE_T Size, ULONG Tag, USHORT Depth) {
  if (Lookaside == nullptr || Size == 0) return STATUS_INVALID_PARAMETER;
  Init(Lookaside, Allocate, Free, nullptr, nullptr, PoolType, Flags, Size, Tag, Depth);
  return STATUS_SUCCESS;
}
PVOID ExAllocateFromLookasideListEx(PLOOKASIDE_LIST_EX Lookaside) {
  return Allocate(Lookaside, "ExAllocateFromLookasideListEx", SOFTNDK_WDK_SITE());
}
VOID ExFreeToLookasideListEx(PLOOKASIDE_LIST_EX Lookaside, PVOID Entry) {
  Free(Lookaside, Entry, "ExFreeToLookasideListEx", SOFTNDK_WDK_SITE());
}
VOID ExDeleteLookasideListEx(PLOOKASIDE_LIST_EX Lookaside) {
  Delete(Lookaside, "ExDeleteLookasideListEx", SOFTNDK_WDK_SITE());
}
VOID ExFlushLookasideListEx(PLOOKASIDE_LIST_EX Lookaside) {
  if (Check(Lookaside, "ExFlushLookasideListEx", SOFTNDK_WDK_SITE())) {
    Flush(Lookaside, "ExFlushLookasideListEx", SOFTNDK_WDK_SITE());
  }
}

VOID ExInitializeNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside, PALLOCATE_FUNCTION Allocate,
                                     PFREE_FUNCTION Free, ULONG Flags, SIZE_T Size, ULONG Tag,
                                     USHORT Depth) {
  Init(Lookaside, nullptr, nullptr, Allocate, Free, NonPagedPoolNx, Flags, Size, Tag, Depth);
}
PVOID ExAllocateFromNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside) {
  return Allocate(Lookaside, "ExAllocateFromNPagedLookasideList", SOFTNDK_WDK_SITE());
}
VOID ExFreeToNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside, PVOID Entry) {
  Free(Lookaside, Entry, "ExFreeToNPagedLookasideList", SOFTNDK_WDK_SITE());
}
VOID ExDeleteNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside) {
  Delete(Lookaside, "ExDeleteNPagedLookasideList", SOFTNDK_WDK_SITE());
}

VOID ExInitializePagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside, PALLOCATE_FUNCTION Allocate,
                                    PFREE_FUNCTION Free, ULONG Flags, SIZE_T Size, ULONG Tag,
                                    USHORT Depth) {
  Init(Lookaside, nullptr, nullptr, Allocate, Free, PagedPool, Flags, Size, Tag, Depth);
}
PVOID ExAllocateFromPagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside) {
  return Allocate(Lookaside, "ExAllocateFromPagedLookasideList", SOFTNDK_WDK_SITE());
}
VOID ExFreeToPagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside, PVOID Entry) {
  Free(Lookaside, Entry, "ExFreeToPagedLookasideList", SOFTNDK_WDK_SITE());
}
VOID ExDeletePagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside) {
  Delete(Lookaside, "ExDeletePagedLookasideList", SOFTNDK_WDK_SITE());
}

}  // extern "C"
