// SPDX-License-Identifier: Apache-2.0
// Work items (softndk_wdk/io.h) on a pool of kit threads at PASSIVE_LEVEL.
// The pool grows while every worker is busy (up to kMaxWorkers), since work
// items may block on each other as on Windows' several system worker
// threads.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <new>
#include <thread>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/bugcheck.h"
#include "kernel/queues.h"
#include "kernel/registry.h"
#include "kernel/stress.h"

struct _IO_WORKITEM {
  ULONG Magic;
  PVOID IoObject;
  PIO_WORKITEM_ROUTINE Routine;
  PIO_WORKITEM_ROUTINE_EX RoutineEx;
  PVOID Context;
  volatile LONG Queued;
  BOOLEAN Allocated;  // by IoAllocateWorkItem (else IoInitializeWorkItem)
};

using namespace softndk::wdk;

namespace {

constexpr ULONG kWorkItemMagic = 0x6b726f57;  // "Work"
constexpr int kMaxWorkers = 16;

struct ItemInfo {
  const void* site = nullptr;
};

LiveRegistry<ItemInfo>& Items() {
  static auto* r = new LiveRegistry<ItemInfo>;
  return *r;
}

struct WorkQueue {
  std::mutex mutex;
  std::condition_variable cv;
  std::condition_variable idle_cv;
  std::deque<PIO_WORKITEM> queue;
  int workers = 0;
  int idle = 0;
  int running = 0;

  void Push(PIO_WORKITEM item) {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(item);
    if (idle == 0 && workers < kMaxWorkers) {
      workers++;
      std::thread([this] { Run(); }).detach();
    }
    cv.notify_one();
  }

  void Run() {
    PrepareThreadForFaults();
    SetCurrentIrql(PASSIVE_LEVEL);
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      idle++;
      cv.wait(lock, [this] { return !queue.empty(); });
      idle--;
      PIO_WORKITEM item = queue.front();
      queue.pop_front();
      running++;
      // Read everything first: the routine may free the item.
      PVOID object = item->IoObject;
      PVOID context = item->Context;
      auto routine = item->Routine;
      auto routine_ex = item->RoutineEx;
      __atomic_store_n(&item->Queued, 0, __ATOMIC_RELEASE);
      lock.unlock();
      Stress(StressPoint::kWorkItemDispatch);
      if (routine_ex != nullptr) {
        routine_ex(object, context, item);
      } else {
        routine(static_cast<PDEVICE_OBJECT>(object), context);
      }
      if (CurrentIrql() != PASSIVE_LEVEL) {
        Report(SoftNdkWdkRuleIrqlMismatch, "IO_WORKITEM_ROUTINE",
               routine_ex ? reinterpret_cast<const void*>(routine_ex)
                          : reinterpret_cast<const void*>(routine),
               "the work item routine returned at %s", IrqlName(CurrentIrql()));
        SetCurrentIrql(PASSIVE_LEVEL);
      }
      lock.lock();
      running--;
      idle_cv.notify_all();
    }
  }
};

WorkQueue& Q() {
  static auto* q = new WorkQueue;  // never destroyed: its threads run to process exit
  return *q;
}

ULONG ReportWorkItemLeaks() {
  auto live = Items().Snapshot();
  if (!live.empty()) {
    Report(SoftNdkWdkRuleLeak, "IoAllocateWorkItem", live.front().second.site,
           "%zu work item(s) never freed with IoFreeWorkItem/IoUninitializeWorkItem (one "
           "allocated at %s)",
           live.size(), DescribeAddress(live.front().second.site).c_str());
  }
  return static_cast<ULONG>(live.size());
}

const bool kRegistered = (RegisterLeakReporter("work item", ReportWorkItemLeaks), true);

bool CheckItem(PIO_WORKITEM item, const char* call, const void* site) {
  if (item != nullptr && Items().IsLive(item) && item->Magic == kWorkItemMagic) return true;
  Report(SoftNdkWdkRuleWorkItemMisuse, call, site,
         "%p is not a live work item (freed, or never allocated/initialized)",
         static_cast<void*>(item));
  return false;
}

void Queue(PIO_WORKITEM item, PIO_WORKITEM_ROUTINE routine, PIO_WORKITEM_ROUTINE_EX routine_ex,
           PVOID context, const char* call, const void* site) {
  RequireIrqlAtMost(DISPATCH_LEVEL, call, site);
  if (!CheckItem(item, call, site)) return;
  LONG expected = 0;
  if (!__atomic_compare_exchange_n(&item->Queued, &expected, 1, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    Report(SoftNdkWdkRuleWorkItemMisuse, call, site,
           "work item %p is already queued (a work item may be queued again only once its "
           "routine has started)",
           static_cast<void*>(item));
    return;
  }
  item->Routine = routine;
  item->RoutineEx = routine_ex;
  item->Context = context;
  Q().Push(item);
}

void Release(PIO_WORKITEM item, bool allocated, const char* call, const void* site) {
  if (item == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "work item is NULL");
    return;
  }
  if (Items().IsLive(item) && __atomic_load_n(&item->Queued, __ATOMIC_ACQUIRE) != 0) {
    Report(SoftNdkWdkRuleWorkItemMisuse, call, site,
           "work item %p is still queued; its routine has not run yet", static_cast<void*>(item));
    return;
  }
  const void* first = nullptr;
  auto state = Items().Remove(item, site, nullptr, &first);
  if (state == LiveRegistry<ItemInfo>::State::kFreed) {
    Report(SoftNdkWdkRuleDoubleFree, call, site, "work item %p was already freed (at %s)",
           static_cast<void*>(item), DescribeAddress(first).c_str());
    return;
  }
  if (state == LiveRegistry<ItemInfo>::State::kUnknown) {
    Report(SoftNdkWdkRuleDoubleFree, call, site, "%p is not a work item", static_cast<void*>(item));
    return;
  }
  item->Magic = 0;
  if (allocated) {
    if (!item->Allocated) {
      Report(SoftNdkWdkRuleWorkItemMisuse, call, site,
             "work item %p came from IoInitializeWorkItem: use IoUninitializeWorkItem",
             static_cast<void*>(item));
      return;
    }
    delete item;
  }
}

}  // namespace

namespace softndk::wdk {

bool DrainWorkItems(ULONG timeout_ms) {
  WorkQueue& q = Q();
  std::unique_lock<std::mutex> lock(q.mutex);
  return q.idle_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                            [&] { return q.queue.empty() && q.running == 0; });
}

ULONG PendingWorkItems() {
  WorkQueue& q = Q();
  std::lock_guard<std::mutex> lock(q.mutex);
  return static_cast<ULONG>(q.queue.size()) + static_cast<ULONG>(q.running);
}

}  // namespace softndk::wdk

extern "C" {

PIO_WORKITEM IoAllocateWorkItem(PDEVICE_OBJECT DeviceObject) {
  (void)kRegistered;
  const void* site = SOFTNDK_WDK_SITE();
  RequireIrqlAtMost(DISPATCH_LEVEL, "IoAllocateWorkItem", site);
  auto* item = new (std::nothrow) IO_WORKITEM{};
  if (item == nullptr) return nullptr;
  item->Magic = kWorkItemMagic;
  item->IoObject = DeviceObject;
  item->Allocated = TRUE;
  Items().Add(item, ItemInfo{site});
  return item;
}

VOID IoFreeWorkItem(PIO_WORKITEM IoWorkItem) {
  Release(IoWorkItem, true, "IoFreeWorkItem", SOFTNDK_WDK_SITE());
}

VOID IoQueueWorkItem(PIO_WORKITEM IoWorkItem, PIO_WORKITEM_ROUTINE WorkerRoutine,
                     WORK_QUEUE_TYPE QueueType, PVOID Context) {
  (void)QueueType;
  Queue(IoWorkItem, WorkerRoutine, nullptr, Context, "IoQueueWorkItem", SOFTNDK_WDK_SITE());
}

VOID IoQueueWorkItemEx(PIO_WORKITEM IoWorkItem, PIO_WORKITEM_ROUTINE_EX WorkerRoutine,
                       WORK_QUEUE_TYPE QueueType, PVOID Context) {
  (void)QueueType;
  Queue(IoWorkItem, nullptr, WorkerRoutine, Context, "IoQueueWorkItemEx", SOFTNDK_WDK_SITE());
}

ULONG IoSizeofWorkItem(void) { return sizeof(IO_WORKITEM); }

VOID IoInitializeWorkItem(PVOID IoObject, PIO_WORKITEM IoWorkItem) {
  *IoWorkItem = IO_WORKITEM{};
  IoWorkItem->Magic = kWorkItemMagic;
  IoWorkItem->IoObject = IoObject;
  IoWorkItem->Allocated = FALSE;
  Items().Add(IoWorkItem, ItemInfo{SOFTNDK_WDK_SITE()});
}

VOID IoUninitializeWorkItem(PIO_WORKITEM IoWorkItem) {
  Release(IoWorkItem, false, "IoUninitializeWorkItem", SOFTNDK_WDK_SITE());
}

}  // extern "C"
