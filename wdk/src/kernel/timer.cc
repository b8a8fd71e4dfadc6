// SPDX-License-Identifier: Apache-2.0
// KTIMER: one kit thread keeps the armed timers by expiry; at expiry a timer
// becomes signaled (waking its waiters), its DPC is queued, and a periodic
// timer is armed again (softndk_wdk/ke.h).
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "irql/checker.h"
#include "kernel/dispatcher.h"

namespace softndk::wdk {
namespace {

using Clock = std::chrono::steady_clock;

struct TimerQueue {
  std::mutex mutex;
  std::condition_variable cv;
  std::set<std::pair<Clock::time_point, KTIMER*>> armed;
  std::map<KTIMER*, Clock::time_point> due;
  bool started = false;

  // Under mutex.
  bool Remove(KTIMER* t) {
    auto it = due.find(t);
    if (it == due.end()) return false;
    armed.erase({it->second, t});
    due.erase(it);
    t->Inserted = 0;
    return true;
  }

  // Under mutex.
  void Insert(KTIMER* t, Clock::time_point when) {
    armed.insert({when, t});
    due[t] = when;
    t->Inserted = 1;
    if (!started) {
      started = true;
      std::thread([this] { Run(); }).detach();
    }
    cv.notify_one();
  }

  void Run() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      if (armed.empty()) {
        cv.wait(lock);
        continue;
      }
      auto [when, t] = *armed.begin();
      if (Clock::now() < when) {
        cv.wait_until(lock, when);
        continue;
      }
      Remove(t);
      PKDPC dpc = t->Dpc;
      if (t->Period > 0) Insert(t, when + std::chrono::milliseconds(t->Period));
      {
        std::lock_guard<std::mutex> d(DispatcherLock());
        t->Header.SignalState = 1;
        DispatcherBroadcast();
      }
      if (dpc != nullptr) {
        // Windows passes the expiry's system time as the DPC's arguments.
        LARGE_INTEGER now;
        now.QuadPart = SystemTime100ns();
        KeInsertQueueDpc(dpc, reinterpret_cast<PVOID>(static_cast<ULONG_PTR>(now.LowPart)),
                         reinterpret_cast<PVOID>(static_cast<ULONG_PTR>(now.HighPart)));
      }
    }
  }
};

TimerQueue& Q() {
  static TimerQueue* q = new TimerQueue;  // never destroyed: its thread runs to process exit
  return *q;
}

bool CheckTimer(KTIMER* t, const char* call, const void* site) {
  if (t != nullptr && t->Header.Magic == kDispatcherMagic &&
      (t->Header.Type == kTimerNotificationObject ||
       t->Header.Type == kTimerSynchronizationObject)) {
    return true;
  }
  Report(SoftNdkWdkRuleUninitializedObject, call, site,
         "timer %p was never initialized with KeInitializeTimer(Ex)", static_cast<void*>(t));
  return false;
}

BOOLEAN SetTimer(PKTIMER Timer, LARGE_INTEGER DueTime, LONG Period, PKDPC Dpc, const char* call,
                 const void* site) {
  if (!CheckTimer(Timer, call, site)) return FALSE;
  if (Period < 0) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "negative period %d", Period);
    return FALSE;
  }
  auto when = *DeadlineFromTimeout(&DueTime);
  TimerQueue& q = Q();
  std::lock_guard<std::mutex> lock(q.mutex);
  bool was_armed = q.Remove(Timer);
  Timer->Dpc = Dpc;
  Timer->Period = Period;
  Timer->DueTime.QuadPart =
      InterruptTime100ns() + static_cast<ULONGLONG>((when - Clock::now()).count() / 100);
  {
    std::lock_guard<std::mutex> d(DispatcherLock());
    Timer->Header.SignalState = 0;
  }
  q.Insert(Timer, when);
  return was_armed ? TRUE : FALSE;
}

}  // namespace
}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

VOID KeInitializeTimerEx(PKTIMER Timer, TIMER_TYPE Type) {
  {
    std::lock_guard<std::mutex> lock(Q().mutex);
    // Re-initializing an armed timer would leave a dangling entry.
    Q().Remove(Timer);
  }
  std::lock_guard<std::mutex> d(DispatcherLock());
  Timer->Header.Type =
      Type == SynchronizationTimer ? kTimerSynchronizationObject : kTimerNotificationObject;
  Timer->Header.SignalState = 0;
  Timer->Header.Magic = kDispatcherMagic;
  Timer->DueTime.QuadPart = 0;
  Timer->TimerListEntry.Flink = Timer->TimerListEntry.Blink = nullptr;
  Timer->Dpc = nullptr;
  Timer->Period = 0;
  Timer->Inserted = 0;
}

VOID KeInitializeTimer(PKTIMER Timer) { KeInitializeTimerEx(Timer, NotificationTimer); }

BOOLEAN KeSetTimer(PKTIMER Timer, LARGE_INTEGER DueTime, PKDPC Dpc) {
  return SetTimer(Timer, DueTime, 0, Dpc, "KeSetTimer", SOFTNDK_WDK_SITE());
}

BOOLEAN KeSetTimerEx(PKTIMER Timer, LARGE_INTEGER DueTime, LONG Period, PKDPC Dpc) {
  return SetTimer(Timer, DueTime, Period, Dpc, "KeSetTimerEx", SOFTNDK_WDK_SITE());
}

BOOLEAN KeCancelTimer(PKTIMER Timer) {
  if (!CheckTimer(Timer, "KeCancelTimer", SOFTNDK_WDK_SITE())) return FALSE;
  std::lock_guard<std::mutex> lock(Q().mutex);
  return Q().Remove(Timer) ? TRUE : FALSE;
}

BOOLEAN KeReadStateTimer(PKTIMER Timer) {
  std::lock_guard<std::mutex> d(DispatcherLock());
  return Timer->Header.SignalState > 0 ? TRUE : FALSE;
}

}  // extern "C"
