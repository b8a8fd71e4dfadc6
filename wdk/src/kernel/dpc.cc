// SPDX-License-Identifier: Apache-2.0
// DPCs: one kit thread runs queued DPC routines, in queue order, at
// DISPATCH_LEVEL (softndk_wdk/ke.h). HighImportance DPCs go to the front.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/bugcheck.h"
#include "kernel/queues.h"
#include "kernel/stress.h"

namespace softndk::wdk {
namespace {

constexpr ULONG kDpcMagic = 0x4470634b;  // "KcpD"

struct DpcQueue {
  std::mutex mutex;
  std::condition_variable cv;       // work for the DPC thread
  std::condition_variable idle_cv;  // the queue drained
  std::deque<KDPC*> queue;
  unsigned long long inserted = 0;  // DPCs queued so far
  unsigned long long finished = 0;  // DPCs dequeued and run (or removed)
  bool running = false;
  bool started = false;

  void Start() {
    if (started) return;
    started = true;
    std::thread([this] { Run(); }).detach();
  }

  void Run() {
    PrepareThreadForFaults();
    SetCurrentIrql(DISPATCH_LEVEL);
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      cv.wait(lock, [this] { return !queue.empty(); });
      KDPC* dpc = queue.front();
      queue.pop_front();
      // Cleared before the routine runs, so it may queue itself again.
      PKDEFERRED_ROUTINE routine = dpc->DeferredRoutine;
      PVOID context = dpc->DeferredContext;
      PVOID a1 = dpc->SystemArgument1;
      PVOID a2 = dpc->SystemArgument2;
      __atomic_store_n(&dpc->Queued, 0, __ATOMIC_RELEASE);
      running = true;
      lock.unlock();
      Stress(StressPoint::kDpcDispatch);
      routine(dpc, context, a1, a2);
      if (CurrentIrql() != DISPATCH_LEVEL) {
        Report(SoftNdkWdkRuleIrqlMismatch, "KDEFERRED_ROUTINE",
               reinterpret_cast<const void*>(routine), "the DPC routine returned at %s",
               IrqlName(CurrentIrql()));
        SetCurrentIrql(DISPATCH_LEVEL);
      }
      lock.lock();
      running = false;
      finished++;
      idle_cv.notify_all();
    }
  }
};

DpcQueue& Q() {
  static DpcQueue* q = new DpcQueue;  // never destroyed: its thread runs to process exit
  return *q;
}

}  // namespace

bool DrainDpcs(ULONG timeout_ms) {
  DpcQueue& q = Q();
  std::unique_lock<std::mutex> lock(q.mutex);
  unsigned long long target = q.inserted;
  return q.idle_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                            [&] { return q.finished >= target && !q.running; });
}

}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

VOID KeInitializeDpc(PRKDPC Dpc, PKDEFERRED_ROUTINE DeferredRoutine, PVOID DeferredContext) {
  Dpc->Type = 19;  // DpcObject
  Dpc->Importance = MediumImportance;
  Dpc->Number = 0;
  Dpc->Magic = kDpcMagic;
  Dpc->DpcListEntry.Flink = Dpc->DpcListEntry.Blink = nullptr;
  Dpc->DeferredRoutine = DeferredRoutine;
  Dpc->DeferredContext = DeferredContext;
  Dpc->SystemArgument1 = Dpc->SystemArgument2 = nullptr;
  Dpc->Queued = 0;
}

VOID KeInitializeThreadedDpc(PRKDPC Dpc, PKDEFERRED_ROUTINE DeferredRoutine,
                             PVOID DeferredContext) {
  KeInitializeDpc(Dpc, DeferredRoutine, DeferredContext);
}

BOOLEAN KeInsertQueueDpc(PRKDPC Dpc, PVOID SystemArgument1, PVOID SystemArgument2) {
  if (Dpc == nullptr || Dpc->Magic != kDpcMagic || Dpc->DeferredRoutine == nullptr) {
    Report(SoftNdkWdkRuleUninitializedObject, "KeInsertQueueDpc", SOFTNDK_WDK_SITE(),
           "DPC %p was never initialized with KeInitializeDpc", static_cast<void*>(Dpc));
    return FALSE;
  }
  DpcQueue& q = Q();
  std::lock_guard<std::mutex> lock(q.mutex);
  if (Dpc->Queued) return FALSE;
  Dpc->Queued = 1;
  Dpc->SystemArgument1 = SystemArgument1;
  Dpc->SystemArgument2 = SystemArgument2;
  if (Dpc->Importance == HighImportance) {
    q.queue.push_front(Dpc);
  } else {
    q.queue.push_back(Dpc);
  }
  q.inserted++;
  q.Start();
  q.cv.notify_one();
  return TRUE;
}

BOOLEAN KeRemoveQueueDpc(PRKDPC Dpc) {
  DpcQueue& q = Q();
  std::lock_guard<std::mutex> lock(q.mutex);
  if (!Dpc->Queued) return FALSE;
  for (auto it = q.queue.begin(); it != q.queue.end(); ++it) {
    if (*it == Dpc) {
      q.queue.erase(it);
      Dpc->Queued = 0;
      q.finished++;
      q.idle_cv.notify_all();
      return TRUE;
    }
  }
  return FALSE;
}

VOID KeSetImportanceDpc(PRKDPC Dpc, KDPC_IMPORTANCE Importance) {
  Dpc->Importance = static_cast<UCHAR>(Importance);
}

VOID KeSetTargetProcessorDpc(PRKDPC Dpc, CCHAR Number) {
  Dpc->Number = static_cast<USHORT>(Number);  // one DPC thread: a hint only
}

VOID KeFlushQueuedDpcs(void) {
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(PASSIVE_LEVEL, "KeFlushQueuedDpcs", site);
  if (!DrainDpcs(RundownWaitLimitMs())) {
    Report(SoftNdkWdkRuleRundownTimeout, "KeFlushQueuedDpcs", site,
           "queued DPCs did not finish within %u ms", RundownWaitLimitMs());
  }
}

}  // extern "C"
