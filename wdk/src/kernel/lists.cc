// SPDX-License-Identifier: Apache-2.0
// Interlocked lists: SLISTs and the spin-lock-protected LIST_ENTRY and
// SINGLE_LIST_ENTRY calls (softndk_wdk/ex.h). An SLIST is serialised by a
// small lock word in its header (a 128-bit compare-exchange is not needed
// for correctness here).
#include <sched.h>

#include "irql/checker.h"
#include "kernel/spinlock.h"

using namespace softndk::wdk;

namespace {

void LockSList(PSLIST_HEADER h) {
  LONG expected = 0;
  while (!__atomic_compare_exchange_n(&h->s.Lock, &expected, 1, false, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED)) {
    expected = 0;
    sched_yield();
  }
}

void UnlockSList(PSLIST_HEADER h) { __atomic_store_n(&h->s.Lock, 0, __ATOMIC_RELEASE); }

// Interlocked list operations hold the caller's spin lock at DISPATCH_LEVEL.
struct Held {
  Held(PKSPIN_LOCK lock, const char* call, const void* site)
      : lock_(lock), call_(call), site_(site) {
    old_ = KeGetCurrentIrql();
    if (old_ < DISPATCH_LEVEL) KeRaiseIrql(DISPATCH_LEVEL, &old_);
    AcquireSpinLockRaw(lock_, call_, site_);
  }
  ~Held() {
    ReleaseSpinLockRaw(lock_, call_, site_);
    KeLowerIrql(old_);
  }
  PKSPIN_LOCK lock_;
  const char* call_;
  const void* site_;
  KIRQL old_;
};

}  // namespace

extern "C" {

VOID InitializeSListHead(PSLIST_HEADER SListHead) {
  SListHead->Alignment[0] = 0;
  SListHead->Alignment[1] = 0;
}

PSLIST_ENTRY InterlockedPushEntrySList(PSLIST_HEADER ListHead, PSLIST_ENTRY ListEntry) {
  LockSList(ListHead);
  PSLIST_ENTRY old = ListHead->s.Next;
  ListEntry->Next = old;
  ListHead->s.Next = ListEntry;
  ListHead->s.Depth++;
  ListHead->s.Sequence++;
  UnlockSList(ListHead);
  return old;
}

PSLIST_ENTRY InterlockedPopEntrySList(PSLIST_HEADER ListHead) {
  LockSList(ListHead);
  PSLIST_ENTRY e = ListHead->s.Next;
  if (e != nullptr) {
    ListHead->s.Next = e->Next;
    ListHead->s.Depth--;
    ListHead->s.Sequence++;
  }
  UnlockSList(ListHead);
  return e;
}

PSLIST_ENTRY InterlockedFlushSList(PSLIST_HEADER ListHead) {
  LockSList(ListHead);
  PSLIST_ENTRY e = ListHead->s.Next;
  ListHead->s.Next = nullptr;
  ListHead->s.Depth = 0;
  ListHead->s.Sequence++;
  UnlockSList(ListHead);
  return e;
}

USHORT QueryDepthSList(PSLIST_HEADER ListHead) {
  return __atomic_load_n(&ListHead->s.Depth, __ATOMIC_RELAXED);
}

PLIST_ENTRY ExInterlockedInsertHeadList(PLIST_ENTRY ListHead, PLIST_ENTRY ListEntry,
                                        PKSPIN_LOCK Lock) {
  Held held(Lock, "ExInterlockedInsertHeadList", __builtin_return_address(0));
  PLIST_ENTRY first = ListHead->Flink == ListHead ? nullptr : ListHead->Flink;
  InsertHeadList(ListHead, ListEntry);
  return first;
}

PLIST_ENTRY ExInterlockedInsertTailList(PLIST_ENTRY ListHead, PLIST_ENTRY ListEntry,
                                        PKSPIN_LOCK Lock) {
  Held held(Lock, "ExInterlockedInsertTailList", __builtin_return_address(0));
  PLIST_ENTRY last = ListHead->Blink == ListHead ? nullptr : ListHead->Blink;
  InsertTailList(ListHead, ListEntry);
  return last;
}

PLIST_ENTRY ExInterlockedRemoveHeadList(PLIST_ENTRY ListHead, PKSPIN_LOCK Lock) {
  Held held(Lock, "ExInterlockedRemoveHeadList", __builtin_return_address(0));
  if (IsListEmpty(ListHead)) return nullptr;
  return RemoveHeadList(ListHead);
}

PSINGLE_LIST_ENTRY ExInterlockedPushEntryList(PSINGLE_LIST_ENTRY ListHead,
                                              PSINGLE_LIST_ENTRY ListEntry, PKSPIN_LOCK Lock) {
  Held held(Lock, "ExInterlockedPushEntryList", __builtin_return_address(0));
  PSINGLE_LIST_ENTRY old = ListHead->Next;
  PushEntryList(ListHead, ListEntry);
  return old;
}

PSINGLE_LIST_ENTRY ExInterlockedPopEntryList(PSINGLE_LIST_ENTRY ListHead, PKSPIN_LOCK Lock) {
  Held held(Lock, "ExInterlockedPopEntryList", __builtin_return_address(0));
  return PopEntryList(ListHead);
}

}  // extern "C"
