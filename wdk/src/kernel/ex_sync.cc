// SPDX-License-Identifier: Apache-2.0
// Fast mutexes, executive resources, push locks and executive spin locks
// (softndk_wdk/ex.h). Blocking ones wait on the dispatcher's condition
// variable (kernel/dispatcher.h).
#include <sched.h>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/dispatcher.h"

namespace softndk::wdk {
namespace {

constexpr ULONG kFastMutexMagic = 0x784d5446;  // "FTMx"
constexpr ULONG kResourceMagic = 0x73655245;   // "ERes"

bool CheckFastMutex(PFAST_MUTEX m, const char* call, const void* site) {
  if (m != nullptr && m->Magic == kFastMutexMagic) return true;
  Report(SoftNdkWdkRuleUninitializedObject, call, site,
         "fast mutex %p was never initialized with ExInitializeFastMutex", static_cast<void*>(m));
  return false;
}

// Takes the fast mutex (no IRQL change).
void AcquireFast(PFAST_MUTEX m, const char* call, const void* site) {
  PVOID me = reinterpret_cast<PVOID>(CurrentThreadTag());
  std::unique_lock<std::mutex> lock(DispatcherLock());
  if (m->Owner == me) {
    Report(SoftNdkWdkRuleSpinLockRecursion, call, site,
           "fast mutex %p is already owned by this thread (fast mutexes are not recursive; a "
           "deadlock on Windows)",
           static_cast<void*>(m));
    return;
  }
  while (m->Owner != nullptr) DispatcherWait(lock, std::nullopt);
  m->Owner = me;
  m->Count = 0;
}

bool ReleaseFast(PFAST_MUTEX m, const char* call, const void* site) {
  std::lock_guard<std::mutex> lock(DispatcherLock());
  if (m->Owner != reinterpret_cast<PVOID>(CurrentThreadTag())) {
    Report(SoftNdkWdkRuleLockNotOwned, call, site, "fast mutex %p is %s", static_cast<void*>(m),
           m->Owner == nullptr ? "not owned" : "owned by another thread");
    return false;
  }
  m->Owner = nullptr;
  m->Count = 1;
  DispatcherBroadcast();
  return true;
}

bool CheckResource(PERESOURCE r, const char* call, const void* site) {
  if (r != nullptr && r->Magic == kResourceMagic) return true;
  Report(SoftNdkWdkRuleUninitializedObject, call, site,
         "resource %p was never initialized with ExInitializeResourceLite", static_cast<void*>(r));
  return false;
}

// Under DispatcherLock: this thread's sharer slot, or -1.
int SharerSlot(PERESOURCE r, PVOID me) {
  for (int i = 0; i < SOFTNDK_WDK_ERESOURCE_SHARERS; i++) {
    if (r->Sharers[i].Thread == me && r->Sharers[i].Count > 0) return i;
  }
  return -1;
}

BOOLEAN AcquireShared(PERESOURCE r, BOOLEAN wait, const char* call, const void* site) {
  if (!CheckResource(r, call, site)) return FALSE;
  if (wait) RequireIrqlAtMost(APC_LEVEL, call, site);
  PVOID me = reinterpret_cast<PVOID>(CurrentThreadTag());
  std::unique_lock<std::mutex> lock(DispatcherLock());
  if (r->ExclusiveOwner == me) {  // an exclusive owner may also acquire shared
    r->ExclusiveCount++;
    return TRUE;
  }
  int slot = SharerSlot(r, me);
  if (slot < 0) {
    while (r->ExclusiveOwner != nullptr) {
      if (!wait) return FALSE;
      DispatcherWait(lock, std::nullopt);
    }
    for (;;) {
      for (int i = 0; i < SOFTNDK_WDK_ERESOURCE_SHARERS && slot < 0; i++) {
        if (r->Sharers[i].Count == 0) slot = i;
      }
      if (slot >= 0) break;
      if (!wait) return FALSE;
      DispatcherWait(lock, std::nullopt);  // all sharer slots busy
    }
    r->Sharers[slot].Thread = me;
  }
  r->Sharers[slot].Count++;
  r->SharedCount++;
  return TRUE;
}

}  // namespace
}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

// ---- fast mutexes: raise to APC_LEVEL while held ---------------------------
VOID ExInitializeFastMutex(PFAST_MUTEX FastMutex) {
  std::lock_guard<std::mutex> lock(DispatcherLock());
  FastMutex->Magic = kFastMutexMagic;
  FastMutex->Count = 1;
  FastMutex->Owner = nullptr;
  FastMutex->OldIrql = PASSIVE_LEVEL;
}

VOID ExAcquireFastMutex(PFAST_MUTEX FastMutex) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckFastMutex(FastMutex, "ExAcquireFastMutex", site)) return;
  RequireIrqlAtMost(APC_LEVEL, "ExAcquireFastMutex", site);
  KIRQL old = CurrentIrql();
  if (old < APC_LEVEL) SetCurrentIrql(APC_LEVEL);
  AcquireFast(FastMutex, "ExAcquireFastMutex", site);
  FastMutex->OldIrql = old;
}

BOOLEAN ExTryToAcquireFastMutex(PFAST_MUTEX FastMutex) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckFastMutex(FastMutex, "ExTryToAcquireFastMutex", site)) return FALSE;
  RequireIrqlAtMost(APC_LEVEL, "ExTryToAcquireFastMutex", site);
  std::lock_guard<std::mutex> lock(DispatcherLock());
  if (FastMutex->Owner != nullptr) return FALSE;
  FastMutex->Owner = reinterpret_cast<PVOID>(CurrentThreadTag());
  FastMutex->Count = 0;
  FastMutex->OldIrql = CurrentIrql();
  if (CurrentIrql() < APC_LEVEL) SetCurrentIrql(APC_LEVEL);
  return TRUE;
}

VOID ExReleaseFastMutex(PFAST_MUTEX FastMutex) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckFastMutex(FastMutex, "ExReleaseFastMutex", site)) return;
  KIRQL old = FastMutex->OldIrql;
  if (ReleaseFast(FastMutex, "ExReleaseFastMutex", site)) SetCurrentIrql(old);
}

VOID ExAcquireFastMutexUnsafe(PFAST_MUTEX FastMutex) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckFastMutex(FastMutex, "ExAcquireFastMutexUnsafe", site)) return;
  AcquireFast(FastMutex, "ExAcquireFastMutexUnsafe", site);
}

VOID ExReleaseFastMutexUnsafe(PFAST_MUTEX FastMutex) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckFastMutex(FastMutex, "ExReleaseFastMutexUnsafe", site)) return;
  ReleaseFast(FastMutex, "ExReleaseFastMutexUnsafe", site);
}

// ---- executive resources ---------------------------------------------------
NTSTATUS ExInitializeResourceLite(PERESOURCE Resource) {
  std::lock_guard<std::mutex> lock(DispatcherLock());
  *Resource = ERESOURCE{};
  Resource->Magic = kResourceMagic;
  return STATUS_SUCCESS;
}

NTSTATUS ExReinitializeResourceLite(PERESOURCE Resource) {
  return ExInitializeResourceLite(Resource);
}

NTSTATUS ExDeleteResourceLite(PERESOURCE Resource) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckResource(Resource, "ExDeleteResourceLite", site)) return STATUS_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  if (Resource->ExclusiveOwner != nullptr || Resource->SharedCount != 0) {
    Report(SoftNdkWdkRuleInvalidParameter, "ExDeleteResourceLite", site,
           "resource %p is still acquired", static_cast<void*>(Resource));
  }
  Resource->Magic = 0;
  return STATUS_SUCCESS;
}

BOOLEAN ExAcquireResourceExclusiveLite(PERESOURCE Resource, BOOLEAN Wait) {
  const void* site = SOFTNDK_WDK_SITE();
  if (!CheckResource(Resource, "ExAcquireResourceExclusiveLite", site)) return FALSE;
  if (Wait) RequireIrqlAtMost(APC_LEVEL, "ExAcquireResourceExclusiveLite", site);
  PVOID me = reinterpret_cast<PVOID>(CurrentThreadTag());
  std::unique_lock<std::mutex> lock(DispatcherLock());
  if (Resource->ExclusiveOwner == me) {
    Resource->ExclusiveCount++;
    return TRUE;
  }
  if (SharerSlot(Resource, me) >= 0) {
    Report(SoftNdkWdkRuleSpinLockRecursion, "ExAcquireResourceExclusiveLite", site,
           "resource %p is held shared by this thread (shared-to-exclusive is a deadlock)",
           static_cast<void*>(Resource));
    return FALSE;
  }
  while (Resource->ExclusiveOwner != nullptr || Resource->SharedCount != 0) {
    if (!Wait) return FALSE;
    DispatcherWait(lock, std::nullopt);
  }
  Resource->ExclusiveOwner = me;
  Resource->ExclusiveCount = 1;
  return TRUE;
}

BOOLEAN ExAcquireResourceSharedLite(PERESOURCE Resource, BOOLEAN Wait) {
  return AcquireShared(Resource, Wait, "ExAcquireResourceSharedLite", SOFTNDK_WDK_SITE());
}
BOOLEAN ExAcquireSharedStarveExclusive(PERESOURCE Resource, BOOLEAN Wait) {
  return AcquireShared(Resource, Wait, "ExAcquireSharedStarveExclusive", SOFTNDK_WDK_SITE());
}
BOOLEAN ExAcquireSharedWaitForExclusive(PERESOURCE Resource, BOOLEAN Wait) {
  return AcquireShared(Resource, Wait, "ExAcquireSharedWaitForExclusive", SOFTNDK_WDK_SITE());
}

static void ReleaseResource(PERESOURCE Resource, PVOID thread, const char* call, const void* site) {
  if (!CheckResource(Resource, call, site)) return;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  if (Resource->ExclusiveOwner == thread) {
    if (--Resource->ExclusiveCount == 0) {
      Resource->ExclusiveOwner = nullptr;
      DispatcherBroadcast();
    }
    return;
  }
  int slot = SharerSlot(Resource, thread);
  if (slot < 0) {
    Report(SoftNdkWdkRuleLockNotOwned, call, site, "resource %p is not held by this thread",
           static_cast<void*>(Resource));
    return;
  }
  if (--Resource->Sharers[slot].Count == 0) Resource->Sharers[slot].Thread = nullptr;
  if (--Resource->SharedCount == 0 || Resource->Sharers[slot].Count == 0) DispatcherBroadcast();
}

VOID ExReleaseResourceLite(PERESOURCE Resource) {
  ReleaseResource(Resource, reinterpret_cast<PVOID>(CurrentThreadTag()), "ExReleaseResourceLite",
                  SOFTNDK_WDK_SITE());
}

VOID ExReleaseResourceForThreadLite(PERESOURCE Resource, ULONG_PTR ResourceThreadId) {
  ReleaseResource(Resource, reinterpret_cast<PVOID>(ResourceThreadId),
                  "ExReleaseResourceForThreadLite", SOFTNDK_WDK_SITE());
}

ULONG_PTR ExGetCurrentResourceThread(void) { return CurrentThreadTag(); }

BOOLEAN ExIsResourceAcquiredExclusiveLite(PERESOURCE Resource) {
  std::lock_guard<std::mutex> lock(DispatcherLock());
  return Resource->ExclusiveOwner == reinterpret_cast<PVOID>(CurrentThreadTag()) ? TRUE : FALSE;
}

ULONG ExIsResourceAcquiredSharedLite(PERESOURCE Resource) {
  PVOID me = reinterpret_cast<PVOID>(CurrentThreadTag());
  std::lock_guard<std::mutex> lock(DispatcherLock());
  if (Resource->ExclusiveOwner == me) return Resource->ExclusiveCount;
  int slot = SharerSlot(Resource, me);
  return slot < 0 ? 0 : Resource->Sharers[slot].Count;
}

ULONG ExGetExclusiveWaiterCount(PERESOURCE Resource) {
  (void)Resource;
  return 0;  // waiters are not tracked
}
ULONG ExGetSharedWaiterCount(PERESOURCE Resource) {
  (void)Resource;
  return 0;
}

PVOID ExEnterCriticalRegionAndAcquireResourceExclusive(PERESOURCE Resource) {
  KeEnterCriticalRegion();
  ExAcquireResourceExclusiveLite(Resource, TRUE);
  return nullptr;
}
PVOID ExEnterCriticalRegionAndAcquireResourceShared(PERESOURCE Resource) {
  KeEnterCriticalRegion();
  ExAcquireResourceSharedLite(Resource, TRUE);
  return nullptr;
}
VOID ExReleaseResourceAndLeaveCriticalRegion(PERESOURCE Resource) {
  ExReleaseResourceLite(Resource);
  KeLeaveCriticalRegion();
}

// ---- push locks: bit 0 exclusive, the rest shared count * 2 ---------------
VOID ExInitializePushLock(PEX_PUSH_LOCK PushLock) {
  __atomic_store_n(&PushLock->Value, 0, __ATOMIC_RELEASE);
}

VOID ExAcquirePushLockExclusiveEx(PEX_PUSH_LOCK PushLock, ULONG Flags) {
  (void)Flags;
  RequireIrqlAtMost(APC_LEVEL, "ExAcquirePushLockExclusiveEx", SOFTNDK_WDK_SITE());
  std::unique_lock<std::mutex> lock(DispatcherLock());
  while (PushLock->Value != 0) DispatcherWait(lock, std::nullopt);
  PushLock->Value = 1;
}

VOID ExAcquirePushLockSharedEx(PEX_PUSH_LOCK PushLock, ULONG Flags) {
  (void)Flags;
  RequireIrqlAtMost(APC_LEVEL, "ExAcquirePushLockSharedEx", SOFTNDK_WDK_SITE());
  std::unique_lock<std::mutex> lock(DispatcherLock());
  while ((PushLock->Value & 1) != 0) DispatcherWait(lock, std::nullopt);
  PushLock->Value = PushLock->Value + 2;
}

VOID ExReleasePushLockExclusiveEx(PEX_PUSH_LOCK PushLock, ULONG Flags) {
  (void)Flags;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  if (PushLock->Value != 1) {
    Report(SoftNdkWdkRuleLockNotOwned, "ExReleasePushLockExclusiveEx", SOFTNDK_WDK_SITE(),
           "push lock %p is not held exclusive", static_cast<void*>(PushLock));
    return;
  }
  PushLock->Value = 0;
  DispatcherBroadcast();
}

VOID ExReleasePushLockSharedEx(PEX_PUSH_LOCK PushLock, ULONG Flags) {
  (void)Flags;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  if ((PushLock->Value & 1) != 0 || PushLock->Value < 2) {
    Report(SoftNdkWdkRuleLockNotOwned, "ExReleasePushLockSharedEx", SOFTNDK_WDK_SITE(),
           "push lock %p is not held shared", static_cast<void*>(PushLock));
    return;
  }
  PushLock->Value = PushLock->Value - 2;
  if (PushLock->Value == 0) DispatcherBroadcast();
}

// ---- executive spin locks: reader/writer, raise to DISPATCH_LEVEL --------
// Value: -1 exclusive, > 0 shared count.
KIRQL ExAcquireSpinLockExclusive(PEX_SPIN_LOCK SpinLock) {
  KIRQL old = KeRaiseIrqlToDpcLevel();
  LONG expected = 0;
  while (!__atomic_compare_exchange_n(SpinLock, &expected, -1, false, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED)) {
    expected = 0;
    sched_yield();
  }
  return old;
}

VOID ExReleaseSpinLockExclusive(PEX_SPIN_LOCK SpinLock, KIRQL OldIrql) {
  if (__atomic_load_n(SpinLock, __ATOMIC_RELAXED) != -1) {
    Report(SoftNdkWdkRuleSpinLockNotHeld, "ExReleaseSpinLockExclusive", SOFTNDK_WDK_SITE(),
           "executive spin lock %p is not held exclusive",
           static_cast<void*>(const_cast<LONG*>(SpinLock)));
  } else {
    __atomic_store_n(SpinLock, 0, __ATOMIC_RELEASE);
  }
  KeLowerIrql(OldIrql);
}

KIRQL ExAcquireSpinLockShared(PEX_SPIN_LOCK SpinLock) {
  KIRQL old = KeRaiseIrqlToDpcLevel();
  for (;;) {
    LONG v = __atomic_load_n(SpinLock, __ATOMIC_RELAXED);
    if (v >= 0 && __atomic_compare_exchange_n(SpinLock, &v, v + 1, false, __ATOMIC_ACQUIRE,
                                              __ATOMIC_RELAXED)) {
      return old;
    }
    sched_yield();
  }
}

VOID ExReleaseSpinLockShared(PEX_SPIN_LOCK SpinLock, KIRQL OldIrql) {
  if (__atomic_load_n(SpinLock, __ATOMIC_RELAXED) <= 0) {
    Report(SoftNdkWdkRuleSpinLockNotHeld, "ExReleaseSpinLockShared", SOFTNDK_WDK_SITE(),
           "executive spin lock %p is not held shared",
           static_cast<void*>(const_cast<LONG*>(SpinLock)));
  } else {
    __atomic_sub_fetch(SpinLock, 1, __ATOMIC_RELEASE);
  }
  KeLowerIrql(OldIrql);
}

}  // extern "C"
