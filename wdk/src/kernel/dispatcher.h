// SPDX-License-Identifier: Apache-2.0
// Dispatcher objects (events, semaphores, mutexes, timers, threads) share
// one lock and one condition variable: every state change broadcasts and
// each waiter re-checks its objects. Simple and correct for any mix of
// KeWaitForMultipleObjects; the kit is not a scheduler benchmark.
#pragma once

#include <wdm.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace softndk::wdk {

// Object types in DISPATCHER_HEADER.Type (the Windows numbering).
enum : UCHAR {
  kEventNotificationObject = 0,
  kEventSynchronizationObject = 1,
  kMutantObject = 2,
  kSemaphoreObject = 5,
  kThreadObject = 6,
  kTimerNotificationObject = 8,
  kTimerSynchronizationObject = 9,
};
// DISPATCHER_HEADER.Magic of an initialized object.
constexpr ULONG kDispatcherMagic = 0x4b646973;  // "sidK"

std::mutex& DispatcherLock();
// Wakes every waiter; call with DispatcherLock held.
void DispatcherBroadcast();
// Waits on the dispatcher condition variable until `deadline` (none: no
// limit). Returns false on timeout.
bool DispatcherWait(std::unique_lock<std::mutex>& lock,
                    const std::optional<std::chrono::steady_clock::time_point>& deadline);

// A KeWait* timeout (NULL: none; 0: poll; < 0 relative; > 0 absolute
// system time, both in 100 ns) as a steady-clock deadline.
std::optional<std::chrono::steady_clock::time_point> DeadlineFromTimeout(
    const LARGE_INTEGER* timeout);
// Current system time (100 ns since 1601) and interrupt time (100 ns, monotonic).
LONGLONG SystemTime100ns();
ULONGLONG InterruptTime100ns();

// An opaque tag for the calling thread (non-zero, odd), for spin lock and
// mutex ownership.
ULONG_PTR CurrentThreadTag();

}  // namespace softndk::wdk
