// SPDX-License-Identifier: Apache-2.0
// The poll loops' backoff (smb/smbd/backoff.h): a quick answer earns a
// bounded spin that keeps the core, a slow or missing one makes every
// empty poll yield, and a wait that outlives the spin sleeps and forgets
// the peer's pace. Checked through its counters, with no assumption on how
// fast this host polls.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "backoff.h"

namespace {

using smbd::Backoff;
using smbd::Pace;
using std::chrono::microseconds;
using std::chrono::milliseconds;

Pace pace(microseconds answer, microseconds hot_max) {
  Pace p;
  p.answer = answer;
  p.hot_max = hot_max;
  return p;
}

TEST(SmbdBackoff, BudgetFollowsTheLastAnswer) {
  EXPECT_EQ(Backoff::budget(pace(microseconds(2), microseconds(20))), microseconds(12));
  EXPECT_EQ(Backoff::budget(pace(microseconds(10), microseconds(20))), microseconds(20));
  EXPECT_EQ(Backoff::budget(pace(microseconds(21), microseconds(20))), microseconds(0));
  EXPECT_EQ(Backoff::budget(pace(microseconds(1), microseconds(0))), microseconds(0));
  Pace unknown;  // no answer yet: yield from the start, as before
  unknown.hot_max = microseconds(20);
  EXPECT_EQ(Backoff::budget(unknown), microseconds(0));
}

// Without a quick answer every empty poll past the free ones yields (or,
// once the spin is over, sleeps): nothing keeps the core.
TEST(SmbdBackoff, SlowPeerYieldsEveryEmptyPoll) {
  Pace p = pace(microseconds(500), microseconds(20));
  Backoff b(p);
  const unsigned n = 1000;
  for (unsigned i = 0; i < n; ++i) b.wait();
  EXPECT_EQ(p.hot_polls, 0u);
  EXPECT_EQ(p.yields + p.sleeps, n - (Backoff::kFreePolls - 1));
  EXPECT_GT(p.yields, 0u);
}

// A quick answer keeps the core for a bounded time only: the same wait
// yields once the budget is spent, and sleeps after the spin.
TEST(SmbdBackoff, QuickPeerSpinsHotThenYieldsThenSleeps) {
  Pace p = pace(microseconds(1), microseconds(20));
  Backoff b(p);
  ASSERT_EQ(b.hot_for(), microseconds(8));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (p.sleeps == 0 && std::chrono::steady_clock::now() < deadline) b.wait();
  ASSERT_GT(p.sleeps, 0u) << "the wait never went to sleep";
  // Preempted past the budget on a loaded host, the hot phase may be
  // skipped; it can never outlast kSpin, and yielding follows it.
  EXPECT_GT(p.yields, 0u);
  // The peer went quiet: the next wait yields from the start.
  EXPECT_EQ(p.answer, Pace::Clock::duration::max());
  Backoff next(p);
  EXPECT_EQ(next.hot_for(), microseconds(0));
}

// hit() measures the answer time: a slow answer switches the hot spin off
// for the next wait, a quick one switches it on.
TEST(SmbdBackoff, HitRecordsTheAnswerTime) {
  Pace p = pace(microseconds(1), microseconds(20));
  Backoff b(p);
  std::this_thread::sleep_for(milliseconds(2));
  b.hit();
  EXPECT_GE(p.answer, milliseconds(2));
  EXPECT_EQ(b.hot_for(), microseconds(0));
  // Two hits in a row: the second answer took at most the time between
  // them; under a preempting host that may exceed the bound, so only the
  // consistency of budget and answer is checked.
  b.hit();
  EXPECT_EQ(b.hot_for(), Backoff::budget(p));
  p.answer = microseconds(3);
  Backoff c(p);
  EXPECT_EQ(c.hot_for(), microseconds(16));
  // Our own Send's completion is no answer: the pace stays.
  std::this_thread::sleep_for(milliseconds(1));
  c.hit(false);
  EXPECT_EQ(p.answer, microseconds(3));
  EXPECT_EQ(c.hot_for(), microseconds(16));
}

// An answer that came only after the wait yielded earns no hot spin,
// however quick: the yield may be what let the peer run (one CPU for both).
TEST(SmbdBackoff, AnswerAfterAYieldEarnsNoHotSpin) {
  Pace p;  // no answer yet: yields from the first poll past the free ones
  p.hot_max = microseconds(20);
  Backoff b(p);
  while (p.yields == 0 && p.sleeps == 0) b.wait();
  b.hit();
  EXPECT_EQ(p.answer, Pace::Clock::duration::max());
  EXPECT_EQ(b.hot_for(), microseconds(0));
  // The next answer, within the free polls (no yield): the pace is back.
  b.hit();
  EXPECT_NE(p.answer, Pace::Clock::duration::max());
}

// The opt-out: hot_spin_us 0 (Pace::hot_max 0) never keeps the core.
TEST(SmbdBackoff, HotSpinOffNeverKeepsTheCore) {
  Pace p = pace(microseconds(1), microseconds(0));
  Backoff b(p);
  for (unsigned i = 0; i < 500; ++i) b.wait();
  EXPECT_EQ(p.hot_polls, 0u);
  EXPECT_EQ(p.yields + p.sleeps, 500 - (Backoff::kFreePolls - 1));
}

// The periodic work (timers, deadlines) runs every 64th empty poll while
// spinning, hot or not: a hot spin does not starve the keepalive timer.
TEST(SmbdBackoff, PeriodicWorkRunsWhileSpinningHot) {
  Pace p = pace(microseconds(5), microseconds(20));
  Backoff b(p);
  unsigned periodic = 0;
  for (unsigned i = 0; i < 640; ++i) {
    b.wait();
    periodic += b.periodic();
  }
  EXPECT_GE(periodic, 10u);
}

}  // namespace
