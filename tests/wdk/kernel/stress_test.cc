// SPDX-License-Identifier: Apache-2.0
// Concurrency stress (--stress SEED): the delays are drawn from the seed,
// the same per thread for the same seed, different for another seed, and
// the points are reached from DPC and work item dispatch, lock release and
// IRQL lowering.
#include "kernel/stress.h"

#include <chrono>
#include <vector>

#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

class StressTest : public KitTest {
 protected:
  void TearDown() override {
    ConfigureStress(false, 0);
    KitTest::TearDown();
  }
  static std::vector<uint32_t> Draw(uint64_t seed, int n) {
    ConfigureStress(true, seed);
    std::vector<uint32_t> v;
    for (int i = 0; i < n; i++) v.push_back(StressNextDelayUs(StressPoint::kLockRelease));
    return v;
  }
};

TEST_F(StressTest, SameSeedSameDelaysAnotherSeedOthers) {
  auto a = Draw(42, 400);
  auto b = Draw(42, 400);
  auto c = Draw(43, 400);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  int delayed = 0;
  for (uint32_t us : a) {
    EXPECT_LE(us, 2000u);
    delayed += us != 0;
  }
  // About one point in four waits.
  EXPECT_GT(delayed, 50);
  EXPECT_LT(delayed, 150);
}

// With stress on, a loop of spin lock releases and IRQL lowerings takes
// measurably longer (the delays happen); off, it does not.
TEST_F(StressTest, LockReleaseAndIrqlLoweringAreStressPoints) {
  KSPIN_LOCK lock;
  KeInitializeSpinLock(&lock);
  auto run = [&] {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; i++) {
      KIRQL old;
      KeAcquireSpinLock(&lock, &old);
      KeReleaseSpinLock(&lock, old);
      KIRQL o2 = KeRaiseIrqlToDpcLevel();
      KeLowerIrql(o2);
    }
    return MsSince(start);
  };
  ConfigureStress(false, 0);
  long long off = run();
  ConfigureStress(true, 7);
  long long on = run();
  EXPECT_LT(off, 20);
  EXPECT_GT(on, 20) << "200 stress points, ~50 delays of up to 2 ms";
}

// DPC and work item dispatch: the routines still run, once each.
TEST_F(StressTest, DispatchStillRunsEveryRoutineOnce) {
  ConfigureStress(true, 99);
  static volatile LONG ran;
  ran = 0;
  KDPC dpcs[20];
  for (auto& d : dpcs) {
    KeInitializeDpc(
        &d, [](PKDPC, PVOID, PVOID, PVOID) { InterlockedIncrement(&ran); }, nullptr);
    KeInsertQueueDpc(&d, nullptr, nullptr);
  }
  KeFlushQueuedDpcs();
  EXPECT_EQ(ran, 20);
  ExpectNone();
}

}  // namespace
}  // namespace softndk::wdk::test
