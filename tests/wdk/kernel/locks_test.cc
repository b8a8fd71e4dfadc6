// SPDX-License-Identifier: Apache-2.0
// Spin locks (IRQL, mutual exclusion, misuse), fast mutexes, resources,
// push locks, rundown protection.
#include <atomic>
#include <thread>
#include <vector>

#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

using Clock = std::chrono::steady_clock;
class LocksTest : public KitTest {};

TEST_F(LocksTest, SpinLockRaisesToDispatchAndExcludes) {
  KSPIN_LOCK lock;
  KeInitializeSpinLock(&lock);
  long counter = 0;  // plain: the lock is the only protection
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; i++) {
        KIRQL old;
        KeAcquireSpinLock(&lock, &old);
        EXPECT_EQ(old, PASSIVE_LEVEL);
        if (KeGetCurrentIrql() != DISPATCH_LEVEL) ADD_FAILURE();
        counter++;
        KeReleaseSpinLock(&lock, old);
      }
      EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 80000);
  EXPECT_TRUE(KeTestSpinLock(&lock));
  ExpectNone();
}

TEST_F(LocksTest, InStackQueuedAndDpcLevelVariants) {
  KSPIN_LOCK lock;
  KeInitializeSpinLock(&lock);
  KLOCK_QUEUE_HANDLE h;
  KeAcquireInStackQueuedSpinLock(&lock, &h);
  EXPECT_EQ(KeGetCurrentIrql(), DISPATCH_LEVEL);
  EXPECT_FALSE(KeTestSpinLock(&lock));
  KeReleaseInStackQueuedSpinLock(&h);
  EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);
  KIRQL old = KeRaiseIrqlToDpcLevel();
  KeAcquireSpinLockAtDpcLevel(&lock);
  EXPECT_FALSE(KeTryToAcquireSpinLockAtDpcLevel(&lock));  // held (by us)
  KeReleaseSpinLockFromDpcLevel(&lock);
  KeAcquireInStackQueuedSpinLockAtDpcLevel(&lock, &h);
  KeReleaseInStackQueuedSpinLockFromDpcLevel(&h);
  EXPECT_EQ(KeGetCurrentIrql(), DISPATCH_LEVEL);
  KeLowerIrql(old);
  ExpectNone();
}

// The checker: releasing a spin lock that is not held.
TEST_F(LocksTest, ReleasingASpinLockNotHeldIsReported) {
  KSPIN_LOCK lock;
  KeInitializeSpinLock(&lock);
  KeReleaseSpinLock(&lock, PASSIVE_LEVEL);
  ExpectOnly(SoftNdkWdkRuleSpinLockNotHeld);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "");
  KIRQL old;
  KeAcquireSpinLock(&lock, &old);
  std::thread other([&] { KeReleaseSpinLockFromDpcLevel(&lock); });  // not its lock
  other.join();
  ExpectOnly(SoftNdkWdkRuleSpinLockNotHeld);
  KeReleaseSpinLock(&lock, old);
  ExpectNone();
}

TEST_F(LocksTest, RecursiveSpinLockAcquireIsReportedNotDeadlocked) {
  KSPIN_LOCK lock;
  KeInitializeSpinLock(&lock);
  KIRQL old, old2;
  KeAcquireSpinLock(&lock, &old);
  KeAcquireSpinLock(&lock, &old2);
  ExpectOnly(SoftNdkWdkRuleSpinLockRecursion);
  KeReleaseSpinLock(&lock, old);
}

TEST_F(LocksTest, FastMutexRaisesToApcAndExcludes) {
  FAST_MUTEX m;
  ExInitializeFastMutex(&m);
  ExAcquireFastMutex(&m);
  EXPECT_EQ(KeGetCurrentIrql(), APC_LEVEL);
  std::atomic<bool> got{true};
  std::thread t([&] { got = ExTryToAcquireFastMutex(&m); });
  t.join();
  EXPECT_FALSE(got.load());
  ExReleaseFastMutex(&m);
  EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);
  int counter = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; i++) {
    threads.emplace_back([&] {
      for (int j = 0; j < 2000; j++) {
        ExAcquireFastMutex(&m);
        counter++;
        ExReleaseFastMutex(&m);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter, 6000);
  ExReleaseFastMutex(&m);  // not owned
  ExpectOnly(SoftNdkWdkRuleLockNotOwned);
}

TEST_F(LocksTest, ResourceSharedAndExclusive) {
  ERESOURCE r;
  ASSERT_EQ(ExInitializeResourceLite(&r), STATUS_SUCCESS);
  KeEnterCriticalRegion();
  EXPECT_TRUE(ExAcquireResourceSharedLite(&r, TRUE));
  EXPECT_TRUE(ExAcquireResourceSharedLite(&r, TRUE));
  EXPECT_EQ(ExIsResourceAcquiredSharedLite(&r), 2u);
  std::atomic<int> excl{-1}, shared{-1};
  std::thread t([&] {
    excl = ExAcquireResourceExclusiveLite(&r, FALSE);
    shared = ExAcquireResourceSharedLite(&r, FALSE);
    if (shared) ExReleaseResourceLite(&r);
  });
  t.join();
  EXPECT_EQ(excl.load(), FALSE);
  EXPECT_EQ(shared.load(), TRUE);
  ExReleaseResourceLite(&r);
  ExReleaseResourceLite(&r);
  EXPECT_TRUE(ExAcquireResourceExclusiveLite(&r, TRUE));
  EXPECT_TRUE(ExAcquireResourceExclusiveLite(&r, TRUE));  // recursive
  EXPECT_TRUE(ExIsResourceAcquiredExclusiveLite(&r));
  std::thread t2([&] { shared = ExAcquireResourceSharedLite(&r, FALSE); });
  t2.join();
  EXPECT_EQ(shared.load(), FALSE);
  ExReleaseResourceLite(&r);
  ExReleaseResourceLite(&r);
  EXPECT_FALSE(ExIsResourceAcquiredExclusiveLite(&r));
  KeLeaveCriticalRegion();
  ExReleaseResourceLite(&r);  // not held
  ExpectOnly(SoftNdkWdkRuleLockNotOwned);
  EXPECT_EQ(ExDeleteResourceLite(&r), STATUS_SUCCESS);
}

TEST_F(LocksTest, PushLockReadersShareWritersExclude) {
  EX_PUSH_LOCK p;
  ExInitializePushLock(&p);
  ExAcquirePushLockShared(&p);
  ExAcquirePushLockShared(&p);
  std::atomic<bool> writer_in{false};
  std::thread w([&] {
    ExAcquirePushLockExclusive(&p);
    writer_in = true;
    ExReleasePushLockExclusive(&p);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(writer_in.load());
  ExReleasePushLockShared(&p);
  ExReleasePushLockShared(&p);
  w.join();
  EXPECT_TRUE(writer_in.load());
  ExReleasePushLockShared(&p);  // not held
  ExpectOnly(SoftNdkWdkRuleLockNotOwned);
}

TEST_F(LocksTest, RundownWaitsForTheLastReference) {
  EX_RUNDOWN_REF ref;
  ExInitializeRundownProtection(&ref);
  ASSERT_TRUE(ExAcquireRundownProtection(&ref));
  ASSERT_TRUE(ExAcquireRundownProtectionEx(&ref, 2));
  std::atomic<bool> done{false};
  auto start = Clock::now();
  std::thread waiter([&] {
    ExWaitForRundownProtectionRelease(&ref);
    done = true;
  });
  // Once the waiter has started the rundown, new references are refused.
  // Under load the thread may start late: a reference taken before that is
  // handed back, and the test waits (bounded) for the rundown to begin.
  bool refused = false;
  for (int i = 0; i < 5000 && !refused; ++i) {
    if (!ExAcquireRundownProtection(&ref)) {
      refused = true;
    } else {
      ExReleaseRundownProtection(&ref);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  EXPECT_TRUE(refused);  // rundown in progress
  EXPECT_FALSE(done.load());
  ExReleaseRundownProtectionEx(&ref, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_FALSE(done.load());
  ExReleaseRundownProtection(&ref);
  waiter.join();
  EXPECT_TRUE(done.load());
  EXPECT_LT(MsSince(start), 5000);
  ExRundownCompleted(&ref);
  EXPECT_FALSE(ExAcquireRundownProtection(&ref));
  ExReInitializeRundownProtection(&ref);
  EXPECT_TRUE(ExAcquireRundownProtection(&ref));
  ExReleaseRundownProtection(&ref);
  ExpectNone();
}

// The checker: a rundown wait that never ends is reported after the limit
// and returns instead of hanging.
TEST_F(LocksTest, RundownWaitThatNeverEndsIsReportedAndReturns) {
  SoftNdkWdkSetRundownWaitLimit(200);
  EX_RUNDOWN_REF ref;
  ExInitializeRundownProtection(&ref);
  ASSERT_TRUE(ExAcquireRundownProtection(&ref));  // never released
  auto start = Clock::now();
  ExWaitForRundownProtectionRelease(&ref);
  long long ms = MsSince(start);
  EXPECT_GE(ms, 190);
  EXPECT_LT(ms, 5000);
  ExpectOnly(SoftNdkWdkRuleRundownTimeout);
  SoftNdkWdkSetRundownWaitLimit(30000);
}

TEST_F(LocksTest, ReleasingMoreRundownReferencesThanHeldIsReported) {
  EX_RUNDOWN_REF ref;
  ExInitializeRundownProtection(&ref);
  ExReleaseRundownProtection(&ref);
  ExpectOnly(SoftNdkWdkRuleLockNotOwned);
}

}  // namespace
}  // namespace softndk::wdk::test
