// SPDX-License-Identifier: Apache-2.0
// The poll loops' backoff (smb/smbd/backoff.h): a quick answer earns a
// bounded spin that keeps the core, a slow or missing one makes every
// empty poll yield, a wait that outlives the spin sleeps and forgets the
// peer's pace. The clock is the test's (FakePoll): time moves only when a
// test moves it or a sleep passes, so every count below is exact and no
// assertion depends on how fast or how loaded this host is.
#include <gtest/gtest.h>

#include <chrono>

#include "backoff.h"

namespace {

using smbd::Pace;
using std::chrono::microseconds;

struct FakePoll {
  static inline Pace::Clock::time_point t{};
  static inline unsigned yields = 0, sleeps = 0;
  static inline microseconds last_sleep{};
  // How long a yield takes: 0 (the default) or a few us, it returned at
  // once (no other task); kSwitched or more, another task ran.
  static inline microseconds yield_takes{};
  static Pace::Clock::time_point now() { return t; }
  static void yield() {
    ++yields;
    t += yield_takes;
  }
  static void sleep(microseconds d) {
    ++sleeps;
    last_sleep = d;
    t += d;  // a sleep takes its time
  }
};

using Backoff = smbd::BasicBackoff<FakePoll>;
constexpr unsigned kFree = Backoff::kFreePolls;

class SmbdBackoff : public ::testing::Test {
 protected:
  void SetUp() override {
    FakePoll::t = Pace::Clock::time_point{} + std::chrono::seconds(1);
    FakePoll::yields = FakePoll::sleeps = 0;
    FakePoll::last_sleep = {};
    FakePoll::yield_takes = {};
  }
  static void advance(microseconds d) { FakePoll::t += d; }
  static Pace pace(microseconds answer, microseconds hot_max) {
    Pace p;
    p.answer = answer;
    p.hot_max = hot_max;
    return p;
  }
  // n empty polls at the current time.
  static void waits(Backoff& b, unsigned n) {
    for (unsigned i = 0; i < n; ++i) b.wait();
  }
};

TEST_F(SmbdBackoff, BudgetFollowsTheLastAnswer) {
  EXPECT_EQ(Backoff::budget(pace(microseconds(2), microseconds(20))), microseconds(12));
  EXPECT_EQ(Backoff::budget(pace(microseconds(10), microseconds(20))), microseconds(20));
  EXPECT_EQ(Backoff::budget(pace(microseconds(20), microseconds(20))), microseconds(20));
  EXPECT_EQ(Backoff::budget(pace(microseconds(21), microseconds(20))), microseconds(0));
  EXPECT_EQ(Backoff::budget(pace(microseconds(1), microseconds(0))), microseconds(0));
  Pace unknown;  // no answer yet: yield from the start, as before
  unknown.hot_max = microseconds(20);
  EXPECT_EQ(Backoff::budget(unknown), microseconds(0));
}

// The first empty polls cost nothing: no yield, no sleep, no counter.
TEST_F(SmbdBackoff, FreePollsDoNothing) {
  Pace p = pace(microseconds(500), microseconds(20));
  Backoff b(p);
  waits(b, kFree - 1);
  EXPECT_EQ(FakePoll::yields + FakePoll::sleeps, 0u);
  EXPECT_EQ(p.yields + p.sleeps + p.hot_polls, 0u);
  b.wait();
  EXPECT_EQ(FakePoll::yields, 1u);
  EXPECT_EQ(p.yields, 1u);
}

// Without a quick answer every empty poll past the free ones yields while
// the spin lasts; then the wait sleeps and forgets the peer's pace.
TEST_F(SmbdBackoff, SlowPeerYieldsThenSleeps) {
  Pace p = pace(microseconds(500), microseconds(20));
  Backoff b(p);
  waits(b, 1000);
  EXPECT_EQ(p.hot_polls, 0u);
  EXPECT_EQ(p.yields, 1000 - (kFree - 1));
  EXPECT_EQ(FakePoll::yields, p.yields);
  EXPECT_EQ(p.sleeps, 0u);
  EXPECT_TRUE(b.spinning());
  advance(Backoff::kSpin);
  waits(b, 8);  // the clock is read on every 8th empty poll
  EXPECT_FALSE(b.spinning());
  EXPECT_GE(p.sleeps, 1u);
  EXPECT_EQ(FakePoll::last_sleep, microseconds(20));
  EXPECT_EQ(p.answer, Pace::Clock::duration::max());
}

// A quick answer keeps the core for its budget only (4x the answer + 4
// us), then the same wait yields, then sleeps.
TEST_F(SmbdBackoff, QuickPeerSpinsHotThenYieldsThenSleeps) {
  Pace p = pace(microseconds(1), microseconds(20));
  Backoff b(p);
  ASSERT_EQ(b.hot_for(), microseconds(8));
  waits(b, 1000);
  EXPECT_EQ(p.hot_polls, 1000 - (kFree - 1));
  EXPECT_EQ(p.yields, 0u);
  EXPECT_EQ(FakePoll::yields, 0u);
  advance(microseconds(8));
  waits(b, 8);  // the 8th reads the clock: the budget is spent
  const uint64_t hot = p.hot_polls;
  waits(b, 100);
  EXPECT_EQ(p.hot_polls, hot);
  EXPECT_GE(p.yields, 100u);
  EXPECT_EQ(p.sleeps, 0u);
  advance(Backoff::kSpin);
  waits(b, 8);
  EXPECT_GE(p.sleeps, 1u);
  // The peer went quiet: the next wait yields from the start.
  EXPECT_EQ(p.answer, Pace::Clock::duration::max());
  Backoff next(p);
  EXPECT_EQ(next.hot_for(), microseconds(0));
}

// A long idle sleeps 20 us a time, then 200 us (kLongIdle sleeps later);
// an answer resets that.
TEST_F(SmbdBackoff, LongIdleSleepsLonger) {
  Pace p = pace(microseconds(500), microseconds(20));
  Backoff b(p);
  advance(Backoff::kSpin);
  waits(b, kFree + 7);  // the first clock reading (idle 64) ends the spin
  ASSERT_FALSE(b.spinning());
  EXPECT_EQ(FakePoll::last_sleep, microseconds(20));
  waits(b, Backoff::kLongIdle);
  EXPECT_EQ(FakePoll::last_sleep, microseconds(200));
  b.hit();
  EXPECT_TRUE(b.spinning());
  EXPECT_EQ(b.hot_for(), microseconds(0));  // an answer after a sleep is a slow one
  const unsigned slept = FakePoll::sleeps;
  waits(b, kFree);
  EXPECT_EQ(FakePoll::sleeps, slept);  // spinning again, not sleeping
}

// hit() measures the answer time: a slow answer switches the hot spin off
// for the next wait, a quick one switches it on.
TEST_F(SmbdBackoff, HitRecordsTheAnswerTime) {
  Pace p = pace(microseconds(1), microseconds(20));
  Backoff b(p);
  advance(microseconds(3));
  b.hit();
  EXPECT_EQ(p.answer, microseconds(3));
  EXPECT_EQ(b.hot_for(), microseconds(16));
  advance(microseconds(30));
  b.hit();
  EXPECT_EQ(p.answer, microseconds(30));
  EXPECT_EQ(b.hot_for(), microseconds(0));
  Backoff next(p);  // the next wait starts from the last answer
  EXPECT_EQ(next.hot_for(), microseconds(0));
  advance(microseconds(2));
  next.hit();
  EXPECT_EQ(next.hot_for(), microseconds(12));
}

// Our own Send's completion is no answer: the pace stays, the spin restarts.
TEST_F(SmbdBackoff, OwnSendCompletionKeepsThePace) {
  Pace p = pace(microseconds(3), microseconds(20));
  Backoff b(p);
  advance(microseconds(1000));
  b.hit(false);
  EXPECT_EQ(p.answer, microseconds(3));
  EXPECT_EQ(b.hot_for(), microseconds(16));
  EXPECT_TRUE(b.spinning());
}

// An answer that came only after a yield that ran another task earns no
// hot spin, however quick: the yield may be what let the peer run (one CPU
// for both).
TEST_F(SmbdBackoff, AnswerAfterAYieldThatRanAnotherTaskEarnsNoHotSpin) {
  Pace p;  // no answer yet: yields from the first poll past the free ones
  p.hot_max = microseconds(20);
  Backoff b(p);
  FakePoll::yield_takes = Backoff::kSwitched;
  waits(b, kFree);
  ASSERT_EQ(p.yields, 1u);
  EXPECT_EQ(p.switches, 1u);
  b.hit();
  EXPECT_EQ(p.answer, Pace::Clock::duration::max());
  EXPECT_EQ(b.hot_for(), microseconds(0));
  // The next answer within the free polls (no yield): the pace is back.
  waits(b, kFree - 1);
  advance(microseconds(2));
  b.hit();
  EXPECT_EQ(p.answer, microseconds(2));
  EXPECT_EQ(b.hot_for(), microseconds(12));
}

// Yields that return at once ran nobody: the peer has a core of its own
// and its answer time, yields included, is its pace. The first version
// counted every yield, so one answer slower than the free polls (~3 us)
// switched the hot spin off for good: each later wait yielded before its
// answer, and each such answer earned no hot spin.
TEST_F(SmbdBackoff, AnswerAfterQuickYieldsKeepsThePace) {
  Pace p;  // unknown pace: the first wait yields past the free polls
  p.hot_max = microseconds(20);
  FakePoll::yield_takes = microseconds(1);
  {
    Backoff b(p);
    waits(b, kFree - 1 + 3);  // three quick yields: 3 us
    ASSERT_EQ(p.yields, 3u);
    EXPECT_EQ(p.switches, 0u);
    b.hit();
    EXPECT_EQ(p.answer, microseconds(3));
    EXPECT_EQ(b.hot_for(), microseconds(16));
  }
  // The next wait keeps the core (hot polls, no yield) until its answer.
  Backoff b(p);
  waits(b, kFree - 1 + 100);
  EXPECT_EQ(p.hot_polls, 100u);
  EXPECT_EQ(p.yields, 3u);
  advance(microseconds(4));
  b.hit();
  EXPECT_EQ(p.answer, microseconds(4));
  EXPECT_EQ(b.hot_for(), microseconds(20));
}

// A peer that stops answering costs at most the spin: the hot part ends at
// its budget, the yields at kSpin, then the loop sleeps, and the waits
// after that start cold (no hot poll at all) however quick the peer was
// before: an idle connection does not burn a core.
TEST_F(SmbdBackoff, IdlePeerEndsTheSpinAndTheNextWaitStartsCold) {
  Pace p = pace(microseconds(2), microseconds(20));
  FakePoll::yield_takes = microseconds(1);
  {
    Backoff b(p);
    const auto t0 = FakePoll::t;
    unsigned polls = 0;
    while (FakePoll::sleeps == 0 && polls < 100000) {
      b.wait();
      ++polls;
      if (b.spinning() && p.yields == 0 && polls % 8 == 0) advance(microseconds(1));
    }
    ASSERT_EQ(FakePoll::sleeps, 1u);
    // Hot for the budget (12 us), then yields until kSpin (200 us).
    EXPECT_GT(p.hot_polls, 0u);
    EXPECT_LE(FakePoll::t - t0, Backoff::kSpin + microseconds(30));
    EXPECT_EQ(p.answer, Pace::Clock::duration::max());  // the pace is forgotten
    waits(b, 50);
    EXPECT_EQ(FakePoll::sleeps, 51u);  // and it keeps sleeping
  }
  const uint64_t hot = p.hot_polls;
  Backoff b(p);
  EXPECT_EQ(b.hot_for(), microseconds(0));
  waits(b, 1000);
  EXPECT_EQ(p.hot_polls, hot);
}

// The opt-out: hot_spin_us 0 (Pace::hot_max 0) never keeps the core.
TEST_F(SmbdBackoff, HotSpinOffNeverKeepsTheCore) {
  Pace p = pace(microseconds(1), microseconds(0));
  Backoff b(p);
  waits(b, 500);
  EXPECT_EQ(p.hot_polls, 0u);
  EXPECT_EQ(p.yields, 500 - (kFree - 1));
}

// The periodic work (timers, deadlines, the disconnect event) runs every
// 64th empty poll while spinning, hot or not, and on every poll once
// sleeping: a hot spin does not starve the keepalive timer, and a peer's
// disconnect is seen within 64 polls.
TEST_F(SmbdBackoff, PeriodicWorkWhileSpinningAndSleeping) {
  Pace p = pace(microseconds(5), microseconds(20));
  Backoff b(p);
  unsigned periodic = 0, gap = 0, max_gap = 0;
  for (unsigned i = 0; i < 640; ++i) {
    b.wait();
    if (b.periodic()) {
      ++periodic;
      gap = 0;
    } else {
      max_gap = std::max(max_gap, ++gap);
    }
  }
  EXPECT_EQ(p.hot_polls, 640 - (kFree - 1));  // all of it hot (the clock did not move)
  EXPECT_EQ(periodic, 10u);
  EXPECT_EQ(max_gap, 63u);
  advance(Backoff::kSpin);
  waits(b, 8);
  ASSERT_FALSE(b.spinning());
  for (unsigned i = 0; i < 10; ++i) {
    b.wait();
    EXPECT_TRUE(b.periodic());
  }
}

}  // namespace
