// SPDX-License-Identifier: Apache-2.0
// Rundown protection (softndk_wdk/ex.h). Count: bit 0 = rundown started,
// references in steps of 2. The wait for the last reference is bounded: past
// the kit's limit it is reported and returns, so an unload never hangs.
#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/dispatcher.h"

using namespace softndk::wdk;

namespace {
constexpr ULONG_PTR kActive = 1;
constexpr ULONG_PTR kStep = 2;
}  // namespace

extern "C" {

VOID ExInitializeRundownProtection(PEX_RUNDOWN_REF RunRef) {
  __atomic_store_n(&RunRef->Count, 0, __ATOMIC_RELEASE);
}

VOID ExReInitializeRundownProtection(PEX_RUNDOWN_REF RunRef) {
  __atomic_store_n(&RunRef->Count, 0, __ATOMIC_RELEASE);
}

BOOLEAN ExAcquireRundownProtectionEx(PEX_RUNDOWN_REF RunRef, ULONG Count) {
  ULONG_PTR v = __atomic_load_n(&RunRef->Count, __ATOMIC_RELAXED);
  for (;;) {
    if ((v & kActive) != 0) return FALSE;
    if (__atomic_compare_exchange_n(&RunRef->Count, &v, v + kStep * Count, true, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      return TRUE;
    }
  }
}

BOOLEAN ExAcquireRundownProtection(PEX_RUNDOWN_REF RunRef) {
  return ExAcquireRundownProtectionEx(RunRef, 1);
}

static void Release(PEX_RUNDOWN_REF RunRef, ULONG Count, const char* call, const void* site) {
  ULONG_PTR v = __atomic_load_n(&RunRef->Count, __ATOMIC_RELAXED);
  for (;;) {
    if (v / kStep < Count) {
      Report(SoftNdkWdkRuleLockNotOwned, call, site,
             "releasing %u reference(s) of rundown %p, which holds %lu", Count,
             static_cast<void*>(RunRef), static_cast<unsigned long>(v / kStep));
      return;
    }
    if (__atomic_compare_exchange_n(&RunRef->Count, &v, v - kStep * Count, true, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED)) {
      break;
    }
  }
  if (v - kStep * Count == kActive) {
    // The last reference of a rundown in progress: wake the waiter.
    std::lock_guard<std::mutex> lock(DispatcherLock());
    DispatcherBroadcast();
  }
}

VOID ExReleaseRundownProtection(PEX_RUNDOWN_REF RunRef) {
  Release(RunRef, 1, "ExReleaseRundownProtection", SOFTNDK_WDK_SITE());
}

VOID ExReleaseRundownProtectionEx(PEX_RUNDOWN_REF RunRef, ULONG Count) {
  Release(RunRef, Count, "ExReleaseRundownProtectionEx", SOFTNDK_WDK_SITE());
}

VOID ExWaitForRundownProtectionRelease(PEX_RUNDOWN_REF RunRef) {
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(APC_LEVEL, "ExWaitForRundownProtectionRelease", site);
  __atomic_fetch_or(&RunRef->Count, kActive, __ATOMIC_ACQ_REL);
  ULONG limit = RundownWaitLimitMs();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit);
  std::unique_lock<std::mutex> lock(DispatcherLock());
  while (__atomic_load_n(&RunRef->Count, __ATOMIC_ACQUIRE) != kActive) {
    if (!DispatcherWait(lock, deadline) && std::chrono::steady_clock::now() >= deadline) {
      ULONG_PTR v = __atomic_load_n(&RunRef->Count, __ATOMIC_ACQUIRE);
      if (v == kActive) break;
      lock.unlock();
      Report(SoftNdkWdkRuleRundownTimeout, "ExWaitForRundownProtectionRelease", site,
             "rundown %p still has %lu reference(s) after %u ms; returning without waiting "
             "further (a hang on Windows)",
             static_cast<void*>(RunRef), static_cast<unsigned long>(v / kStep), limit);
      return;
    }
  }
}

VOID ExRundownCompleted(PEX_RUNDOWN_REF RunRef) {
  __atomic_store_n(&RunRef->Count, kActive, __ATOMIC_RELEASE);
}

}  // extern "C"
