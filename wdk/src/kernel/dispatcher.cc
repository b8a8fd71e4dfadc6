// SPDX-License-Identifier: Apache-2.0
// Events, semaphores, mutexes and the waits on them (softndk_wdk/ke.h).
#include "kernel/dispatcher.h"

#include <time.h>

#include <thread>

#include "irql/checker.h"
#include "irql/irql.h"

namespace softndk::wdk {
namespace {

struct Dispatcher {
  std::mutex mutex;
  std::condition_variable cv;
};

Dispatcher& D() {
  static Dispatcher* d = new Dispatcher;  // never destroyed: kit threads outlive main
  return *d;
}

thread_local char t_thread_tag_anchor;

}  // namespace

std::mutex& DispatcherLock() { return D().mutex; }
void DispatcherBroadcast() { D().cv.notify_all(); }

bool DispatcherWait(std::unique_lock<std::mutex>& lock,
                    const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  if (!deadline) {
    D().cv.wait(lock);
    return true;
  }
  return D().cv.wait_until(lock, *deadline) == std::cv_status::no_timeout;
}

LONGLONG SystemTime100ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  // 1601-01-01 to 1970-01-01: 11644473600 s.
  return (static_cast<LONGLONG>(ts.tv_sec) + 11644473600LL) * 10000000LL + ts.tv_nsec / 100;
}

ULONGLONG InterruptTime100ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<ULONGLONG>(ts.tv_sec) * 10000000ULL + static_cast<ULONGLONG>(ts.tv_nsec) / 100;
}

std::optional<std::chrono::steady_clock::time_point> DeadlineFromTimeout(
    const LARGE_INTEGER* timeout) {
  if (timeout == nullptr) return std::nullopt;
  auto now = std::chrono::steady_clock::now();
  LONGLONG t = timeout->QuadPart;
  LONGLONG relative = t <= 0 ? -t : t - SystemTime100ns();
  if (relative < 0) relative = 0;
  return now + std::chrono::nanoseconds(relative) * 100;
}

ULONG_PTR CurrentThreadTag() { return reinterpret_cast<ULONG_PTR>(&t_thread_tag_anchor) | 1; }

namespace {

bool Initialized(const DISPATCHER_HEADER* h) { return h->Magic == kDispatcherMagic; }

// Under DispatcherLock.
bool Signaled(DISPATCHER_HEADER* h) {
  if (h->Type == kMutantObject) {
    auto* m = reinterpret_cast<KMUTEX*>(h);
    return h->SignalState > 0 || m->OwnerThread == reinterpret_cast<PVOID>(CurrentThreadTag());
  }
  return h->SignalState > 0;
}

// Under DispatcherLock: the side effect of a satisfied wait.
void Consume(DISPATCHER_HEADER* h) {
  switch (h->Type) {
    case kEventSynchronizationObject:
      h->SignalState = h->SignalState - 1;
      break;
    case kTimerSynchronizationObject:
      h->SignalState = 0;
      break;
    case kSemaphoreObject:
      h->SignalState = h->SignalState - 1;
      break;
    case kMutantObject: {
      auto* m = reinterpret_cast<KMUTEX*>(h);
      h->SignalState = 0;
      m->OwnerThread = reinterpret_cast<PVOID>(CurrentThreadTag());
      m->Recursion++;
      break;
    }
    default:
      break;
  }
}

NTSTATUS Wait(ULONG count, PVOID* objects, WAIT_TYPE type, PLARGE_INTEGER timeout, const char* call,
              const void* site) {
  if (count == 0 || count > MAXIMUM_WAIT_OBJECTS || objects == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "%u objects (1..%d allowed)", count,
           MAXIMUM_WAIT_OBJECTS);
    return STATUS_INVALID_PARAMETER;
  }
  for (ULONG i = 0; i < count; i++) {
    auto* h = static_cast<DISPATCHER_HEADER*>(objects[i]);
    if (h == nullptr || !Initialized(h)) {
      Report(SoftNdkWdkRuleUninitializedObject, call, site,
             "object %u (%p) is not an initialized dispatcher object (KeInitializeEvent/"
             "Semaphore/Timer/Mutex never called, or freed)",
             i, static_cast<void*>(h));
      return STATUS_INVALID_PARAMETER;
    }
  }
  bool zero_timeout = timeout != nullptr && timeout->QuadPart == 0;
  if (!zero_timeout && CurrentIrql() > APC_LEVEL) {
    Report(SoftNdkWdkRuleWaitAtDispatch, call, site,
           "waiting with a %s timeout at %s (only a zero timeout is allowed above APC_LEVEL)",
           timeout == nullptr ? "infinite" : "non-zero", IrqlName(CurrentIrql()));
  }
  auto deadline = DeadlineFromTimeout(timeout);
  std::unique_lock<std::mutex> lock(DispatcherLock());
  // Reserved2 counts the threads waiting on an object: a synchronization
  // event set while threads wait releases one of them per set.
  struct Waiting {
    ULONG count;
    PVOID* objects;
    Waiting(ULONG c, PVOID* o) : count(c), objects(o) {
      for (ULONG i = 0; i < count; i++) static_cast<DISPATCHER_HEADER*>(objects[i])->Reserved2++;
    }
    ~Waiting() {
      for (ULONG i = 0; i < count; i++) static_cast<DISPATCHER_HEADER*>(objects[i])->Reserved2--;
    }
  } waiting(count, objects);
  for (;;) {
    if (type == WaitAny) {
      for (ULONG i = 0; i < count; i++) {
        auto* h = static_cast<DISPATCHER_HEADER*>(objects[i]);
        if (Signaled(h)) {
          Consume(h);
          return STATUS_WAIT_0 + static_cast<NTSTATUS>(i);
        }
      }
    } else {
      bool all = true;
      for (ULONG i = 0; i < count && all; i++)
        all = Signaled(static_cast<DISPATCHER_HEADER*>(objects[i]));
      if (all) {
        for (ULONG i = 0; i < count; i++) Consume(static_cast<DISPATCHER_HEADER*>(objects[i]));
        return STATUS_SUCCESS;
      }
    }
    if (deadline && std::chrono::steady_clock::now() >= *deadline) return STATUS_TIMEOUT;
    DispatcherWait(lock, deadline);
  }
}

void InitHeader(DISPATCHER_HEADER* h, UCHAR type, LONG state) {
  std::lock_guard<std::mutex> lock(DispatcherLock());
  h->Type = type;
  h->Signalling = 0;
  h->Size = 0;
  h->Reserved1 = 0;
  h->SignalState = state;
  h->Magic = kDispatcherMagic;
  h->Reserved2 = 0;
}

bool CheckInitialized(const DISPATCHER_HEADER* h, const char* call, const void* site) {
  if (h != nullptr && Initialized(h)) return true;
  Report(SoftNdkWdkRuleUninitializedObject, call, site, "object %p was never initialized",
         static_cast<const void*>(h));
  return false;
}

}  // namespace
}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

VOID KeInitializeEvent(PRKEVENT Event, EVENT_TYPE Type, BOOLEAN State) {
  InitHeader(&Event->Header,
             Type == SynchronizationEvent ? kEventSynchronizationObject : kEventNotificationObject,
             State ? 1 : 0);
}

LONG KeSetEvent(PRKEVENT Event, KPRIORITY Increment, BOOLEAN Wait) {
  (void)Increment;
  (void)Wait;
  if (!CheckInitialized(&Event->Header, "KeSetEvent", SOFTNDK_WDK_SITE())) return 0;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  DISPATCHER_HEADER& h = Event->Header;
  LONG old = h.SignalState > 0 ? 1 : 0;
  if (h.Type == kEventSynchronizationObject && static_cast<ULONG>(h.SignalState) < h.Reserved2) {
    h.SignalState = h.SignalState + 1;  // one more waiter may go
  } else if (h.SignalState == 0) {
    h.SignalState = 1;
  }
  DispatcherBroadcast();
  return old;
}

VOID KeClearEvent(PRKEVENT Event) {
  if (!CheckInitialized(&Event->Header, "KeClearEvent", SOFTNDK_WDK_SITE())) return;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  Event->Header.SignalState = 0;
}

LONG KeResetEvent(PRKEVENT Event) {
  if (!CheckInitialized(&Event->Header, "KeResetEvent", SOFTNDK_WDK_SITE())) return 0;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  LONG old = Event->Header.SignalState > 0 ? 1 : 0;
  Event->Header.SignalState = 0;
  return old;
}

LONG KeReadStateEvent(PRKEVENT Event) {
  if (!CheckInitialized(&Event->Header, "KeReadStateEvent", SOFTNDK_WDK_SITE())) return 0;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  return Event->Header.SignalState > 0 ? 1 : 0;
}

VOID KeInitializeSemaphore(PRKSEMAPHORE Semaphore, LONG Count, LONG Limit) {
  if (Count < 0 || Limit <= 0 || Count > Limit) {
    Report(SoftNdkWdkRuleInvalidParameter, "KeInitializeSemaphore", SOFTNDK_WDK_SITE(),
           "count %d, limit %d", Count, Limit);
  }
  Semaphore->Limit = Limit;
  InitHeader(&Semaphore->Header, kSemaphoreObject, Count);
}

LONG KeReleaseSemaphore(PRKSEMAPHORE Semaphore, KPRIORITY Increment, LONG Adjustment,
                        BOOLEAN Wait) {
  (void)Increment;
  (void)Wait;
  if (!CheckInitialized(&Semaphore->Header, "KeReleaseSemaphore", SOFTNDK_WDK_SITE())) return 0;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  LONG old = Semaphore->Header.SignalState;
  if (Adjustment <= 0 || old > Semaphore->Limit - Adjustment) {
    // Windows raises STATUS_SEMAPHORE_LIMIT_EXCEEDED.
    Report(SoftNdkWdkRuleInvalidParameter, "KeReleaseSemaphore", SOFTNDK_WDK_SITE(),
           "count %d + adjustment %d exceeds the limit %d (STATUS_SEMAPHORE_LIMIT_EXCEEDED)", old,
           Adjustment, Semaphore->Limit);
    return old;
  }
  Semaphore->Header.SignalState = old + Adjustment;
  DispatcherBroadcast();
  return old;
}

LONG KeReadStateSemaphore(PRKSEMAPHORE Semaphore) {
  std::lock_guard<std::mutex> lock(DispatcherLock());
  return Semaphore->Header.SignalState;
}

VOID KeInitializeMutex(PRKMUTEX Mutex, ULONG Level) {
  (void)Level;
  Mutex->OwnerThread = nullptr;
  Mutex->Recursion = 0;
  Mutex->OldIrql = PASSIVE_LEVEL;
  InitHeader(&Mutex->Header, kMutantObject, 1);
}

LONG KeReleaseMutex(PRKMUTEX Mutex, BOOLEAN Wait) {
  (void)Wait;
  if (!CheckInitialized(&Mutex->Header, "KeReleaseMutex", SOFTNDK_WDK_SITE())) return 0;
  std::lock_guard<std::mutex> lock(DispatcherLock());
  if (Mutex->OwnerThread != reinterpret_cast<PVOID>(CurrentThreadTag())) {
    Report(SoftNdkWdkRuleLockNotOwned, "KeReleaseMutex", SOFTNDK_WDK_SITE(),
           "mutex %p is not owned by this thread (STATUS_MUTANT_NOT_OWNED)",
           static_cast<void*>(Mutex));
    return Mutex->Header.SignalState;
  }
  LONG old = Mutex->Header.SignalState;
  if (--Mutex->Recursion == 0) {
    Mutex->OwnerThread = nullptr;
    Mutex->Header.SignalState = 1;
    DispatcherBroadcast();
  }
  return old;
}

LONG KeReadStateMutex(PRKMUTEX Mutex) {
  std::lock_guard<std::mutex> lock(DispatcherLock());
  return Mutex->Header.SignalState;
}

NTSTATUS KeWaitForSingleObject(PVOID Object, KWAIT_REASON WaitReason, KPROCESSOR_MODE WaitMode,
                               BOOLEAN Alertable, PLARGE_INTEGER Timeout) {
  (void)WaitReason;
  (void)WaitMode;
  (void)Alertable;
  return Wait(1, &Object, WaitAny, Timeout, "KeWaitForSingleObject", SOFTNDK_WDK_SITE());
}

NTSTATUS KeWaitForMultipleObjects(ULONG Count, PVOID Object[], WAIT_TYPE WaitType,
                                  KWAIT_REASON WaitReason, KPROCESSOR_MODE WaitMode,
                                  BOOLEAN Alertable, PLARGE_INTEGER Timeout,
                                  PKWAIT_BLOCK WaitBlockArray) {
  (void)WaitReason;
  (void)WaitMode;
  (void)Alertable;
  if (Count > THREAD_WAIT_OBJECTS && WaitBlockArray == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, "KeWaitForMultipleObjects", SOFTNDK_WDK_SITE(),
           "%u objects need a WaitBlockArray (more than THREAD_WAIT_OBJECTS)", Count);
    return STATUS_INVALID_PARAMETER;
  }
  if (WaitType != WaitAll && WaitType != WaitAny) {
    Report(SoftNdkWdkRuleInvalidParameter, "KeWaitForMultipleObjects", SOFTNDK_WDK_SITE(),
           "wait type %d is not WaitAll or WaitAny", static_cast<int>(WaitType));
    return STATUS_INVALID_PARAMETER;
  }
  return Wait(Count, Object, WaitType, Timeout, "KeWaitForMultipleObjects", SOFTNDK_WDK_SITE());
}

NTSTATUS KeDelayExecutionThread(KPROCESSOR_MODE WaitMode, BOOLEAN Alertable,
                                PLARGE_INTEGER Interval) {
  (void)WaitMode;
  (void)Alertable;
  if (Interval == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, "KeDelayExecutionThread", SOFTNDK_WDK_SITE(),
           "Interval is NULL");
    return STATUS_INVALID_PARAMETER;
  }
  if (Interval->QuadPart != 0 && CurrentIrql() > APC_LEVEL) {
    Report(SoftNdkWdkRuleWaitAtDispatch, "KeDelayExecutionThread", SOFTNDK_WDK_SITE(),
           "delaying at %s (only allowed at or below APC_LEVEL)", IrqlName(CurrentIrql()));
  }
  auto deadline = DeadlineFromTimeout(Interval);
  if (Interval->QuadPart == 0) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_until(*deadline);
  }
  return STATUS_SUCCESS;
}

VOID KeStallExecutionProcessor(ULONG MicroSeconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(MicroSeconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}

LARGE_INTEGER KeQueryPerformanceCounter(PLARGE_INTEGER PerformanceFrequency) {
  if (PerformanceFrequency != nullptr) PerformanceFrequency->QuadPart = 10000000;
  LARGE_INTEGER v;
  v.QuadPart = static_cast<LONGLONG>(InterruptTime100ns());
  return v;
}

VOID KeQuerySystemTime(PLARGE_INTEGER CurrentTime) { CurrentTime->QuadPart = SystemTime100ns(); }
VOID KeQuerySystemTimePrecise(PLARGE_INTEGER CurrentTime) {
  CurrentTime->QuadPart = SystemTime100ns();
}
ULONGLONG KeQueryInterruptTime(void) { return InterruptTime100ns(); }
ULONGLONG KeQueryInterruptTimePrecise(PULONG64 QpcTimeStamp) {
  ULONGLONG t = InterruptTime100ns();
  if (QpcTimeStamp != nullptr) *QpcTimeStamp = t;
  return t;
}
ULONGLONG KeQueryUnbiasedInterruptTime(void) { return InterruptTime100ns(); }
// One tick is KeQueryTimeIncrement() (15.625 ms) of interrupt time.
ULONG KeQueryTimeIncrement(void) { return 156250; }
VOID KeQueryTickCount(PLARGE_INTEGER CurrentCount) {
  CurrentCount->QuadPart = static_cast<LONGLONG>(InterruptTime100ns() / 156250);
}

}  // extern "C"
