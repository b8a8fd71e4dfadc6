// SPDX-License-Identifier: Apache-2.0
// Events, semaphores, mutexes and waits: timeouts in 100 ns units (relative,
// absolute, zero), WaitAny/WaitAll, auto-reset of synchronization events.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

using Clock = std::chrono::steady_clock;
class DispatcherTest : public KitTest {};

TEST_F(DispatcherTest, NotificationEventStaysSignaledUntilCleared) {
  KEVENT e;
  KeInitializeEvent(&e, NotificationEvent, FALSE);
  EXPECT_EQ(KeReadStateEvent(&e), 0);
  EXPECT_EQ(KeSetEvent(&e, IO_NO_INCREMENT, FALSE), 0);
  EXPECT_EQ(KeSetEvent(&e, IO_NO_INCREMENT, FALSE), 1);  // previous state
  LARGE_INTEGER zero{};
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &zero), STATUS_SUCCESS);
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &zero), STATUS_SUCCESS);
  EXPECT_EQ(KeResetEvent(&e), 1);
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &zero), STATUS_TIMEOUT);
  KeSetEvent(&e, IO_NO_INCREMENT, FALSE);
  KeClearEvent(&e);
  EXPECT_EQ(KeReadStateEvent(&e), 0);
  ExpectNone();
}

TEST_F(DispatcherTest, SynchronizationEventReleasesOneWaiterPerSet) {
  KEVENT e;
  KeInitializeEvent(&e, SynchronizationEvent, FALSE);
  std::atomic<int> woken{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; i++) {
    waiters.emplace_back([&] {
      LARGE_INTEGER t = RelativeMs(5000);
      if (KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &t) == STATUS_SUCCESS) woken++;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  KeSetEvent(&e, IO_NO_INCREMENT, FALSE);
  auto start = Clock::now();
  while (woken.load() == 0 && MsSince(start) < 5000) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(woken.load(), 1);  // one waiter satisfied; the event reset
  EXPECT_EQ(KeReadStateEvent(&e), 0);
  // With two threads waiting, each set releases one of them (Windows hands
  // the signal to a waiter rather than leaving the event signaled).
  KeSetEvent(&e, IO_NO_INCREMENT, FALSE);
  KeSetEvent(&e, IO_NO_INCREMENT, FALSE);
  for (auto& t : waiters) t.join();
  EXPECT_EQ(woken.load(), 3);
  EXPECT_EQ(KeReadStateEvent(&e), 0);
  // Without waiters the signal does not accumulate.
  KeSetEvent(&e, IO_NO_INCREMENT, FALSE);
  KeSetEvent(&e, IO_NO_INCREMENT, FALSE);
  LARGE_INTEGER zero{};
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &zero), STATUS_SUCCESS);
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &zero), STATUS_TIMEOUT);
  ExpectNone();
}

TEST_F(DispatcherTest, RelativeTimeoutWaitsThatLong) {
  KEVENT e;
  KeInitializeEvent(&e, NotificationEvent, FALSE);
  LARGE_INTEGER t = RelativeMs(120);
  auto start = Clock::now();
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &t), STATUS_TIMEOUT);
  long long ms = MsSince(start);
  EXPECT_GE(ms, 115);
  EXPECT_LT(ms, 2000);
}

TEST_F(DispatcherTest, AbsoluteTimeoutIsSystemTime) {
  KEVENT e;
  KeInitializeEvent(&e, NotificationEvent, FALSE);
  LARGE_INTEGER now;
  KeQuerySystemTime(&now);
  LARGE_INTEGER t;
  t.QuadPart = now.QuadPart + 100 * 10000;  // now + 100 ms
  auto start = Clock::now();
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &t), STATUS_TIMEOUT);
  EXPECT_GE(MsSince(start), 90);
  t.QuadPart = now.QuadPart - 10000000;  // in the past: a poll
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &t), STATUS_TIMEOUT);
}

TEST_F(DispatcherTest, InfiniteWaitEndsWhenSetFromAnotherThread) {
  KEVENT e;
  KeInitializeEvent(&e, NotificationEvent, FALSE);
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    KeSetEvent(&e, IO_NO_INCREMENT, FALSE);
  });
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, nullptr), STATUS_SUCCESS);
  setter.join();
}

TEST_F(DispatcherTest, WaitAnyReturnsTheIndexAndWaitAllNeedsAll) {
  KEVENT a, b, c;
  KeInitializeEvent(&a, NotificationEvent, FALSE);
  KeInitializeEvent(&b, SynchronizationEvent, FALSE);
  KeInitializeEvent(&c, NotificationEvent, FALSE);
  PVOID objs[3] = {&a, &b, &c};
  LARGE_INTEGER zero{};
  EXPECT_EQ(
      KeWaitForMultipleObjects(3, objs, WaitAny, Executive, KernelMode, FALSE, &zero, nullptr),
      STATUS_TIMEOUT);
  KeSetEvent(&c, IO_NO_INCREMENT, FALSE);
  EXPECT_EQ(
      KeWaitForMultipleObjects(3, objs, WaitAny, Executive, KernelMode, FALSE, &zero, nullptr),
      STATUS_WAIT_0 + 2);
  KeSetEvent(&b, IO_NO_INCREMENT, FALSE);
  EXPECT_EQ(
      KeWaitForMultipleObjects(3, objs, WaitAny, Executive, KernelMode, FALSE, &zero, nullptr),
      STATUS_WAIT_1);
  EXPECT_EQ(KeReadStateEvent(&b), 0);  // consumed
  EXPECT_EQ(
      KeWaitForMultipleObjects(3, objs, WaitAll, Executive, KernelMode, FALSE, &zero, nullptr),
      STATUS_TIMEOUT);
  KeSetEvent(&a, IO_NO_INCREMENT, FALSE);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    KeSetEvent(&b, IO_NO_INCREMENT, FALSE);
  });
  LARGE_INTEGER t = RelativeMs(2000);
  EXPECT_EQ(KeWaitForMultipleObjects(3, objs, WaitAll, Executive, KernelMode, FALSE, &t, nullptr),
            STATUS_SUCCESS);
  late.join();
  EXPECT_EQ(KeReadStateEvent(&b), 0);  // WaitAll consumed the synchronization event
  EXPECT_EQ(KeReadStateEvent(&a), 1);
  ExpectNone();
}

TEST_F(DispatcherTest, MoreThanThreeObjectsNeedWaitBlocks) {
  KEVENT ev[4];
  PVOID objs[4];
  for (int i = 0; i < 4; i++) {
    KeInitializeEvent(&ev[i], NotificationEvent, TRUE);
    objs[i] = &ev[i];
  }
  LARGE_INTEGER zero{};
  EXPECT_EQ(
      KeWaitForMultipleObjects(4, objs, WaitAll, Executive, KernelMode, FALSE, &zero, nullptr),
      STATUS_INVALID_PARAMETER);
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  KWAIT_BLOCK blocks[4];
  EXPECT_EQ(KeWaitForMultipleObjects(4, objs, WaitAll, Executive, KernelMode, FALSE, &zero, blocks),
            STATUS_SUCCESS);
}

TEST_F(DispatcherTest, SemaphoreCountsAndEnforcesItsLimit) {
  KSEMAPHORE s;
  KeInitializeSemaphore(&s, 0, 2);
  LARGE_INTEGER zero{};
  EXPECT_EQ(KeWaitForSingleObject(&s, Executive, KernelMode, FALSE, &zero), STATUS_TIMEOUT);
  EXPECT_EQ(KeReleaseSemaphore(&s, IO_NO_INCREMENT, 2, FALSE), 0);
  EXPECT_EQ(KeReadStateSemaphore(&s), 2);
  EXPECT_EQ(KeWaitForSingleObject(&s, Executive, KernelMode, FALSE, &zero), STATUS_SUCCESS);
  EXPECT_EQ(KeWaitForSingleObject(&s, Executive, KernelMode, FALSE, &zero), STATUS_SUCCESS);
  EXPECT_EQ(KeWaitForSingleObject(&s, Executive, KernelMode, FALSE, &zero), STATUS_TIMEOUT);
  ExpectNone();
  KeReleaseSemaphore(&s, IO_NO_INCREMENT, 2, FALSE);
  KeReleaseSemaphore(&s, IO_NO_INCREMENT, 1, FALSE);  // over the limit
  ExpectOnly(SoftNdkWdkRuleInvalidParameter);
  EXPECT_EQ(KeReadStateSemaphore(&s), 2);
}

TEST_F(DispatcherTest, MutexIsRecursiveAndOwned) {
  KMUTEX m;
  KeInitializeMutex(&m, 0);
  EXPECT_EQ(KeWaitForSingleObject(&m, Executive, KernelMode, FALSE, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(KeWaitForSingleObject(&m, Executive, KernelMode, FALSE, nullptr), STATUS_SUCCESS);
  std::atomic<NTSTATUS> other{STATUS_PENDING};
  std::thread t([&] {
    LARGE_INTEGER zero{};
    other = KeWaitForSingleObject(&m, Executive, KernelMode, FALSE, &zero);
    KeReleaseMutex(&m, FALSE);  // not the owner: reported
  });
  t.join();
  EXPECT_EQ(other.load(), STATUS_TIMEOUT);
  ExpectOnly(SoftNdkWdkRuleLockNotOwned);
  KeReleaseMutex(&m, FALSE);
  EXPECT_EQ(KeReadStateMutex(&m), 0);
  KeReleaseMutex(&m, FALSE);
  EXPECT_EQ(KeReadStateMutex(&m), 1);
  ExpectNone();
}

TEST_F(DispatcherTest, DelayExecutionSleepsRelativeIntervals) {
  LARGE_INTEGER t = RelativeMs(60);
  auto start = Clock::now();
  EXPECT_EQ(KeDelayExecutionThread(KernelMode, FALSE, &t), STATUS_SUCCESS);
  EXPECT_GE(MsSince(start), 55);
  ExpectNone();
}

TEST_F(DispatcherTest, TimeSourcesAdvance) {
  LARGE_INTEGER freq;
  LARGE_INTEGER c1 = KeQueryPerformanceCounter(&freq);
  EXPECT_EQ(freq.QuadPart, 10000000);
  ULONGLONG i1 = KeQueryInterruptTime();
  LARGE_INTEGER s1;
  KeQuerySystemTimePrecise(&s1);
  // 2020-01-01 in 100 ns since 1601 is 132223104000000000.
  EXPECT_GT(s1.QuadPart, 132223104000000000LL);
  KeStallExecutionProcessor(2000);
  LARGE_INTEGER c2 = KeQueryPerformanceCounter(nullptr);
  EXPECT_GE(c2.QuadPart - c1.QuadPart, 20000);
  EXPECT_GE(KeQueryInterruptTime() - i1, 20000u);
}

// Bad input: a wait on an event never initialized is reported, not a hang.
TEST_F(DispatcherTest, WaitOnUninitializedEventIsReported) {
  KEVENT e;
  std::memset(&e, 0xab, sizeof e);
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, nullptr),
            STATUS_INVALID_PARAMETER);
  ExpectOnly(SoftNdkWdkRuleUninitializedObject);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "");  // reset by ExpectOnly
  KeSetEvent(&e, IO_NO_INCREMENT, FALSE);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "KeSetEvent");
  ExpectOnly(SoftNdkWdkRuleUninitializedObject);
}

}  // namespace
}  // namespace softndk::wdk::test
