// SPDX-License-Identifier: Apache-2.0
// KSPIN_LOCK and in-stack queued spin locks (softndk_wdk/ke.h).
#include "kernel/spinlock.h"

#include <sched.h>

#include <chrono>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/dispatcher.h"
#include "kernel/stress.h"

namespace softndk::wdk {

bool HoldsSpinLock(const KSPIN_LOCK* lock) {
  return __atomic_load_n(lock, __ATOMIC_ACQUIRE) == CurrentThreadTag();
}

bool AcquireSpinLockRaw(PKSPIN_LOCK lock, const char* call, const void* site) {
  ULONG_PTR me = CurrentThreadTag();
  if (__atomic_load_n(lock, __ATOMIC_RELAXED) == me) {
    Report(SoftNdkWdkRuleSpinLockRecursion, call, site,
           "spin lock %p is already held by this thread (a deadlock on Windows)",
           static_cast<void*>(lock));
    return false;
  }
  unsigned spins = 0;
  bool reported = false;
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    ULONG_PTR expected = 0;
    if (__atomic_compare_exchange_n(lock, &expected, me, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      return true;
    }
    if (++spins < 64) {
      YieldProcessor();
      continue;
    }
    sched_yield();
    if (!reported && (spins & 1023) == 0 &&
        std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
      reported = true;
      Report(SoftNdkWdkRuleUninitializedObject, call, site,
             "spin lock %p has been busy for 10 s (value 0x%lx: never initialized, or its holder "
             "never released it); still spinning",
             static_cast<void*>(lock), static_cast<unsigned long>(*lock));
    }
  }
}

bool ReleaseSpinLockRaw(PKSPIN_LOCK lock, const char* call, const void* site) {
  ULONG_PTR me = CurrentThreadTag();
  ULONG_PTR v = __atomic_load_n(lock, __ATOMIC_RELAXED);
  if (v != me) {
    Report(SoftNdkWdkRuleSpinLockNotHeld, call, site, "spin lock %p is %s",
           static_cast<void*>(lock), v == 0 ? "not held" : "held by another thread");
    return false;
  }
  __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
  return true;
}

namespace {

KIRQL RaiseToDispatch(const char* call, const void* site) {
  KIRQL old = CurrentIrql();
  if (old > DISPATCH_LEVEL) {
    Report(SoftNdkWdkRuleIrqlTooHigh, call, site, "called at %s (above DISPATCH_LEVEL)",
           IrqlName(old));
    return old;
  }
  SetCurrentIrql(DISPATCH_LEVEL);
  return old;
}

void LowerTo(KIRQL irql, const char* call, const void* site) {
  if (irql > CurrentIrql()) {
    Report(SoftNdkWdkRuleIrqlMismatch, call, site, "restoring %s from %s", IrqlName(irql),
           IrqlName(CurrentIrql()));
    return;
  }
  SetCurrentIrql(irql);
  // The lock is free again: another thread may take it right here.
  Stress(StressPoint::kLockRelease);
}

void RequireDispatch(const char* call, const void* site) {
  if (CurrentIrql() < DISPATCH_LEVEL) {
    Report(SoftNdkWdkRuleIrqlMismatch, call, site, "requires DISPATCH_LEVEL, called at %s",
           IrqlName(CurrentIrql()));
  }
}

}  // namespace
}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

VOID KeInitializeSpinLock(PKSPIN_LOCK SpinLock) { __atomic_store_n(SpinLock, 0, __ATOMIC_RELEASE); }

VOID KeAcquireSpinLock(PKSPIN_LOCK SpinLock, PKIRQL OldIrql) {
  const void* site = SOFTNDK_WDK_SITE();
  *OldIrql = RaiseToDispatch("KeAcquireSpinLock", site);
  AcquireSpinLockRaw(SpinLock, "KeAcquireSpinLock", site);
}

KIRQL KeAcquireSpinLockRaiseToDpc(PKSPIN_LOCK SpinLock) {
  const void* site = SOFTNDK_WDK_SITE();
  KIRQL old = RaiseToDispatch("KeAcquireSpinLockRaiseToDpc", site);
  AcquireSpinLockRaw(SpinLock, "KeAcquireSpinLockRaiseToDpc", site);
  return old;
}

VOID KeReleaseSpinLock(PKSPIN_LOCK SpinLock, KIRQL NewIrql) {
  const void* site = SOFTNDK_WDK_SITE();
  ReleaseSpinLockRaw(SpinLock, "KeReleaseSpinLock", site);
  LowerTo(NewIrql, "KeReleaseSpinLock", site);
}

VOID KeAcquireSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock) {
  const void* site = SOFTNDK_WDK_SITE();
  RequireDispatch("KeAcquireSpinLockAtDpcLevel", site);
  AcquireSpinLockRaw(SpinLock, "KeAcquireSpinLockAtDpcLevel", site);
}

VOID KeReleaseSpinLockFromDpcLevel(PKSPIN_LOCK SpinLock) {
  ReleaseSpinLockRaw(SpinLock, "KeReleaseSpinLockFromDpcLevel", SOFTNDK_WDK_SITE());
}

BOOLEAN KeTryToAcquireSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock) {
  RequireDispatch("KeTryToAcquireSpinLockAtDpcLevel", SOFTNDK_WDK_SITE());
  ULONG_PTR expected = 0;
  return __atomic_compare_exchange_n(SpinLock, &expected, CurrentThreadTag(), false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

BOOLEAN KeTestSpinLock(PKSPIN_LOCK SpinLock) {
  return __atomic_load_n(SpinLock, __ATOMIC_RELAXED) == 0;
}

VOID KeAcquireInStackQueuedSpinLock(PKSPIN_LOCK SpinLock, PKLOCK_QUEUE_HANDLE LockHandle) {
  const void* site = SOFTNDK_WDK_SITE();
  LockHandle->OldIrql = RaiseToDispatch("KeAcquireInStackQueuedSpinLock", site);
  LockHandle->LockQueue.Next = nullptr;
  LockHandle->LockQueue.Lock = SpinLock;
  AcquireSpinLockRaw(SpinLock, "KeAcquireInStackQueuedSpinLock", site);
}

VOID KeReleaseInStackQueuedSpinLock(PKLOCK_QUEUE_HANDLE LockHandle) {
  const void* site = SOFTNDK_WDK_SITE();
  if (LockHandle->LockQueue.Lock == nullptr) {
    Report(SoftNdkWdkRuleSpinLockNotHeld, "KeReleaseInStackQueuedSpinLock", site,
           "the lock handle %p holds no lock", static_cast<void*>(LockHandle));
    return;
  }
  ReleaseSpinLockRaw(LockHandle->LockQueue.Lock, "KeReleaseInStackQueuedSpinLock", site);
  LockHandle->LockQueue.Lock = nullptr;
  LowerTo(LockHandle->OldIrql, "KeReleaseInStackQueuedSpinLock", site);
}

VOID KeAcquireInStackQueuedSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock,
                                              PKLOCK_QUEUE_HANDLE LockHandle) {
  const void* site = SOFTNDK_WDK_SITE();
  RequireDispatch("KeAcquireInStackQueuedSpinLockAtDpcLevel", site);
  LockHandle->OldIrql = DISPATCH_LEVEL;
  LockHandle->LockQueue.Next = nullptr;
  LockHandle->LockQueue.Lock = SpinLock;
  AcquireSpinLockRaw(SpinLock, "KeAcquireInStackQueuedSpinLockAtDpcLevel", site);
}

VOID KeReleaseInStackQueuedSpinLockFromDpcLevel(PKLOCK_QUEUE_HANDLE LockHandle) {
  const void* site = SOFTNDK_WDK_SITE();
  if (LockHandle->LockQueue.Lock == nullptr) {
    Report(SoftNdkWdkRuleSpinLockNotHeld, "KeReleaseInStackQueuedSpinLockFromDpcLevel", site,
           "the lock handle %p holds no lock", static_cast<void*>(LockHandle));
    return;
  }
  ReleaseSpinLockRaw(LockHandle->LockQueue.Lock, "KeReleaseInStackQueuedSpinLockFromDpcLevel",
                     site);
  LockHandle->LockQueue.Lock = nullptr;
}

}  // extern "C"
