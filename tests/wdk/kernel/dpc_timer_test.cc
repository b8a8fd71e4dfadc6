// SPDX-License-Identifier: Apache-2.0
// DPCs and timers: DPCs run in queue order on the DPC thread at
// DISPATCH_LEVEL; a queued DPC is not queued twice; timers signal, queue
// their DPC, repeat with a period and stop when cancelled.
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

using Clock = std::chrono::steady_clock;
class DpcTimerTest : public KitTest {};

struct DpcLog {
  std::mutex mutex;
  std::vector<int> order;
  std::vector<KIRQL> irqls;
  std::vector<std::thread::id> threads;
  KEVENT done;
  int expected = 0;
};

VOID LogDpc(PKDPC Dpc, PVOID Context, PVOID A1, PVOID A2) {
  (void)Dpc;
  (void)A2;
  auto* log = static_cast<DpcLog*>(Context);
  bool last;
  {
    std::lock_guard<std::mutex> lock(log->mutex);
    log->order.push_back(static_cast<int>(reinterpret_cast<intptr_t>(A1)));
    log->irqls.push_back(KeGetCurrentIrql());
    log->threads.push_back(std::this_thread::get_id());
    last = static_cast<int>(log->order.size()) == log->expected;
  }
  // The test may return (and the log go away) once this is set.
  if (last) KeSetEvent(&log->done, IO_NO_INCREMENT, FALSE);
}

TEST_F(DpcTimerTest, DpcsRunInOrderAtDispatchLevelOnOneThread) {
  DpcLog log;
  KeInitializeEvent(&log.done, NotificationEvent, FALSE);
  log.expected = 5;
  KDPC dpcs[5];
  for (int i = 0; i < 5; i++) KeInitializeDpc(&dpcs[i], LogDpc, &log);
  for (int i = 0; i < 5; i++) {
    EXPECT_TRUE(KeInsertQueueDpc(&dpcs[i], reinterpret_cast<PVOID>(intptr_t{i}), nullptr));
  }
  LARGE_INTEGER t = RelativeMs(5000);
  ASSERT_EQ(KeWaitForSingleObject(&log.done, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  KeFlushQueuedDpcs();
  std::lock_guard<std::mutex> lock(log.mutex);
  EXPECT_EQ(log.order, (std::vector<int>{0, 1, 2, 3, 4}));
  for (KIRQL irql : log.irqls) EXPECT_EQ(irql, DISPATCH_LEVEL);
  for (auto& id : log.threads) EXPECT_EQ(id, log.threads[0]);
  EXPECT_NE(log.threads[0], std::this_thread::get_id());
  EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);
  ExpectNone();
}

VOID SlowDpc(PKDPC Dpc, PVOID Context, PVOID A1, PVOID A2) {
  (void)Dpc;
  (void)A1;
  (void)A2;
  auto* gate = static_cast<KEVENT*>(Context);
  LARGE_INTEGER zero{};
  // Polling is allowed at DISPATCH_LEVEL (a zero timeout); spin until open.
  while (KeWaitForSingleObject(gate, Executive, KernelMode, FALSE, &zero) == STATUS_TIMEOUT) {
    std::this_thread::yield();
  }
}

TEST_F(DpcTimerTest, AQueuedDpcIsNotQueuedTwiceAndCanBeRemoved) {
  KEVENT gate;
  KeInitializeEvent(&gate, NotificationEvent, FALSE);
  KDPC blocker, dpc;
  KeInitializeDpc(&blocker, SlowDpc, &gate);
  DpcLog log;
  KeInitializeEvent(&log.done, NotificationEvent, FALSE);
  log.expected = 1;
  KeInitializeDpc(&dpc, LogDpc, &log);
  ASSERT_TRUE(KeInsertQueueDpc(&blocker, nullptr, nullptr));  // holds the DPC thread
  EXPECT_TRUE(KeInsertQueueDpc(&dpc, reinterpret_cast<PVOID>(intptr_t{7}), nullptr));
  EXPECT_FALSE(KeInsertQueueDpc(&dpc, reinterpret_cast<PVOID>(intptr_t{8}), nullptr));
  EXPECT_TRUE(KeRemoveQueueDpc(&dpc));
  EXPECT_FALSE(KeRemoveQueueDpc(&dpc));
  EXPECT_TRUE(KeInsertQueueDpc(&dpc, reinterpret_cast<PVOID>(intptr_t{9}), nullptr));
  KeSetEvent(&gate, IO_NO_INCREMENT, FALSE);
  KeFlushQueuedDpcs();
  std::lock_guard<std::mutex> lock(log.mutex);
  EXPECT_EQ(log.order, (std::vector<int>{9}));
  ExpectNone();
}

TEST_F(DpcTimerTest, OneShotTimerSignalsAndQueuesItsDpc) {
  KTIMER timer;
  KeInitializeTimer(&timer);
  DpcLog log;
  KeInitializeEvent(&log.done, NotificationEvent, FALSE);
  log.expected = 1;
  KDPC dpc;
  KeInitializeDpc(&dpc, LogDpc, &log);
  auto start = Clock::now();
  EXPECT_FALSE(KeSetTimer(&timer, RelativeMs(80), &dpc));
  EXPECT_FALSE(KeReadStateTimer(&timer));
  LARGE_INTEGER t = RelativeMs(5000);
  ASSERT_EQ(KeWaitForSingleObject(&timer, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  EXPECT_GE(MsSince(start), 75);
  ASSERT_EQ(KeWaitForSingleObject(&log.done, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  EXPECT_TRUE(KeReadStateTimer(&timer));  // a notification timer stays signaled
  EXPECT_FALSE(KeCancelTimer(&timer));    // no longer armed
  KeFlushQueuedDpcs();                    // the DPC has returned: the log may go
  ExpectNone();
}

TEST_F(DpcTimerTest, PeriodicTimerRepeatsUntilCancelled) {
  KTIMER timer;
  KeInitializeTimerEx(&timer, SynchronizationTimer);
  std::atomic<int> fired{0};
  KDPC dpc;
  KeInitializeDpc(
      &dpc,
      [](PKDPC, PVOID ctx, PVOID, PVOID) { static_cast<std::atomic<int>*>(ctx)->fetch_add(1); },
      &fired);
  EXPECT_FALSE(KeSetTimerEx(&timer, RelativeMs(10), 20, &dpc));
  auto start = Clock::now();
  while (fired.load() < 4 && MsSince(start) < 5000)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_GE(fired.load(), 4);
  EXPECT_TRUE(KeCancelTimer(&timer));  // armed for the next period
  KeFlushQueuedDpcs();
  int after = fired.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(fired.load(), after);
  ExpectNone();
}

TEST_F(DpcTimerTest, ResettingAnArmedTimerReturnsTrueAndMovesIt) {
  KTIMER timer;
  KeInitializeTimer(&timer);
  EXPECT_FALSE(KeSetTimer(&timer, RelativeMs(5000), nullptr));
  EXPECT_TRUE(KeSetTimer(&timer, RelativeMs(30), nullptr));
  LARGE_INTEGER t = RelativeMs(2000);
  EXPECT_EQ(KeWaitForSingleObject(&timer, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  ExpectNone();
}

TEST_F(DpcTimerTest, SynchronizationTimerResetsOnWait) {
  KTIMER timer;
  KeInitializeTimerEx(&timer, SynchronizationTimer);
  KeSetTimer(&timer, RelativeMs(1), nullptr);
  LARGE_INTEGER t = RelativeMs(2000);
  EXPECT_EQ(KeWaitForSingleObject(&timer, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  LARGE_INTEGER zero{};
  EXPECT_EQ(KeWaitForSingleObject(&timer, Executive, KernelMode, FALSE, &zero), STATUS_TIMEOUT);
}

// Bad input: an uninitialized DPC is reported and not queued.
TEST_F(DpcTimerTest, UninitializedDpcIsReported) {
  KDPC dpc{};
  EXPECT_FALSE(KeInsertQueueDpc(&dpc, nullptr, nullptr));
  ExpectOnly(SoftNdkWdkRuleUninitializedObject);
  KTIMER timer{};
  EXPECT_FALSE(KeSetTimer(&timer, RelativeMs(1), nullptr));
  ExpectOnly(SoftNdkWdkRuleUninitializedObject);
}

}  // namespace
}  // namespace softndk::wdk::test
