// SPDX-License-Identifier: Apache-2.0
// SeqTable (src/verbs/seq_table.h): the verbs connection's records of posted
// requests by sequence number, in place of a std::map.
#include "verbs/seq_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>
#include <vector>

namespace softndk::verbs {
namespace {

TEST(SeqTable, InsertFindEraseInPostingOrder) {
  SeqTable<int> t;
  EXPECT_EQ(t.find(0), nullptr);
  for (uint64_t s = 100; s < 110; ++s) t.insert(s) = static_cast<int>(s) * 2;
  EXPECT_EQ(t.size(), 10u);
  for (uint64_t s = 100; s < 110; ++s) {
    ASSERT_NE(t.find(s), nullptr);
    EXPECT_EQ(*t.find(s), static_cast<int>(s) * 2);
    EXPECT_TRUE(t.erase(s));
    EXPECT_EQ(t.find(s), nullptr);
    EXPECT_FALSE(t.erase(s));  // exactly once
  }
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.find(99), nullptr);
  EXPECT_EQ(t.find(110), nullptr);
}

TEST(SeqTable, StaysAtTheQueueDepthWhileNumbersRunOn) {
  // A queue of depth 32 posting and completing a million requests: the ring
  // never grows past the depth (no allocation per request).
  SeqTable<uint64_t> t;
  uint64_t next = 0, oldest = 0;
  for (int i = 0; i < 1000000; ++i) {
    while (next - oldest < 32) t.insert(next) = next, ++next;
    ASSERT_NE(t.find(oldest), nullptr);
    EXPECT_EQ(*t.find(oldest), oldest);
    ASSERT_TRUE(t.erase(oldest++));
  }
  EXPECT_EQ(t.capacity(), 32u);
  EXPECT_EQ(t.size(), 31u);
}

TEST(SeqTable, GapsOutOfOrderEraseAndGrowth) {
  SeqTable<int> t;
  // Numbers left out (requests completed at post time) and a window wider
  // than the first ring: it grows and keeps every record.
  for (uint64_t s = 0; s < 200; s += 3) t.insert(s) = static_cast<int>(s);
  EXPECT_GE(t.capacity(), 200u);
  EXPECT_EQ(t.find(1), nullptr);
  EXPECT_TRUE(t.erase(99));  // out of order
  EXPECT_EQ(t.find(99), nullptr);
  std::vector<uint64_t> seen;
  t.for_each([&](uint64_t s, int& v) {
    EXPECT_EQ(v, static_cast<int>(s));
    seen.push_back(s);
  });
  ASSERT_EQ(seen.size(), t.size());
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i - 1], seen[i]);  // oldest first
  std::vector<uint64_t> back;
  t.for_each_reverse([&](uint64_t s, int&) { back.push_back(s); });
  ASSERT_EQ(back.size(), seen.size());
  EXPECT_EQ(back.front(), seen.back());
  EXPECT_EQ(back.back(), seen.front());
  t.clear();
  EXPECT_TRUE(t.empty());
  int calls = 0;
  t.for_each([&](uint64_t, int&) { ++calls; });
  EXPECT_EQ(calls, 0);
  // Numbering goes on after a clear (a flush), also below the old window.
  t.insert(5) = 7;
  ASSERT_NE(t.find(5), nullptr);
  EXPECT_EQ(*t.find(5), 7);
}

TEST(SeqTable, InsertOfAFreedTopNumberAndBelowTheWindow) {
  SeqTable<int> t;
  t.insert(10) = 1;
  t.insert(11) = 2;
  EXPECT_TRUE(t.erase(11));  // the receive path: slot taken, queue empty
  t.insert(11) = 3;          // the same number again
  EXPECT_EQ(*t.find(11), 3);
  t.insert(4) = 4;  // below the window: kept too
  EXPECT_EQ(*t.find(4), 4);
  EXPECT_EQ(*t.find(10), 1);
  EXPECT_EQ(t.size(), 3u);
  int& again = t.insert(10);  // an existing record is returned, not reset
  EXPECT_EQ(again, 1);
  EXPECT_EQ(t.size(), 3u);
}

TEST(SeqTable, RetireBeforeTakesTheOlderRecordsInOrder) {
  // The send path with silent successes: 20..24 unsignaled, 23 completed at
  // post time (a gap), 25 signaled. Its CQE retires 20, 21, 22 and 24, oldest
  // first, each with its own record, and leaves 25 and what came after it.
  SeqTable<int> t;
  for (uint64_t s = 20; s < 28; ++s) t.insert(s) = static_cast<int>(s) * 10;
  EXPECT_TRUE(t.erase(23));
  std::vector<std::pair<uint64_t, int>> seen;
  auto note = [&seen](uint64_t q, const int& v) { seen.emplace_back(q, v); };
  t.retire_before(25, note);
  const std::vector<std::pair<uint64_t, int>> want{{20, 200}, {21, 210}, {22, 220}, {24, 240}};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.oldest(), 25u);
  ASSERT_NE(t.find(25), nullptr);
  EXPECT_EQ(*t.find(25), 250);
  // Nothing older than the oldest: nothing retired (a CQE for the oldest).
  seen.clear();
  t.retire_before(25, note);
  t.retire_before(3, note);
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(t.size(), 3u);
  // Past the newest: all of them, and the table is empty and reusable.
  t.retire_before(1000, note);
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_TRUE(t.empty());
  t.retire_before(2000, note);
  EXPECT_EQ(seen.size(), 3u);
  t.insert(2000) = 7;
  EXPECT_EQ(t.oldest(), 2000u);
  EXPECT_EQ(*t.find(2000), 7);
}

TEST(SeqTable, RetireBeforeLeavesTheRecordsThePredicateKeeps) {
  // siw's order: a signaled Read (10), then silent Writes (11, 12) and a
  // signaled Send (13) whose CQE comes before the Read's. The Send's CQE
  // retires 11 and 12 only; the Read waits for its own.
  SeqTable<bool> t;  // the value: signaled
  t.insert(10) = true;
  t.insert(11) = false;
  t.insert(12) = false;
  t.insert(13) = true;
  std::vector<uint64_t> seen;
  t.retire_before(
      13, [](const bool& signaled) { return !signaled; },
      [&seen](uint64_t q, const bool&) { seen.push_back(q); });
  EXPECT_EQ(seen, (std::vector<uint64_t>{11, 12}));
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.oldest(), 10u);
  EXPECT_NE(t.find(10), nullptr);
  EXPECT_NE(t.find(13), nullptr);
  EXPECT_TRUE(t.erase(13));
  EXPECT_TRUE(t.erase(10));
  EXPECT_TRUE(t.empty());
}

TEST(SeqTable, RetireBeforeAcrossRingWrapsAndGrowth) {
  // One signaled WQE in 100 through a ring that starts at 16 slots: the
  // window grows to 100 records, wraps many times, and each CQE retires
  // exactly the 99 before it.
  SeqTable<uint64_t> t;
  uint64_t retired = 0, next = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 100; ++i, ++next) t.insert(next) = next;
    const uint64_t signaled = next - 1;
    uint64_t expect = signaled - 99;
    t.retire_before(signaled, [&](uint64_t q, const uint64_t& v) {
      EXPECT_EQ(q, expect);
      EXPECT_EQ(v, expect);
      ++expect;
      ++retired;
    });
    EXPECT_EQ(expect, signaled);
    ASSERT_EQ(t.size(), 1u);
    EXPECT_TRUE(t.erase(signaled));
  }
  EXPECT_EQ(retired, 50u * 99u);
  EXPECT_LE(t.capacity(), 128u);
}

TEST(SeqTable, ClaimKeepsTheSlotsOldContentsInsertClears) {
  SeqTable<int> t;
  t.insert(0) = 41;
  EXPECT_TRUE(t.erase(0));
  // Ring of 16: number 16 lands in number 0's slot.
  EXPECT_EQ(t.claim(16), 41);  // not cleared: the caller overwrites it
  EXPECT_EQ(t.size(), 1u);
  EXPECT_TRUE(t.erase(16));
  EXPECT_EQ(t.insert(32), 0);  // cleared
  EXPECT_EQ(t.claim(32), 0);   // an existing record, as it is
  EXPECT_EQ(t.size(), 1u);
}

TEST(SeqTable, AgreesWithAMapUnderRandomUse) {
  std::mt19937_64 rng(42);
  SeqTable<uint64_t> t;
  std::map<uint64_t, uint64_t> m;
  uint64_t next = 1000;
  for (int i = 0; i < 200000; ++i) {
    const unsigned op = rng() % 10;
    if (op < 5) {
      next += 1 + rng() % 3;
      t.insert(next) = next ^ 0x5a;
      m[next] = next ^ 0x5a;
    } else if (!m.empty()) {
      // Mostly the oldest (in-order completion), sometimes any.
      auto it = m.begin();
      if (op == 9) std::advance(it, static_cast<long>(rng() % m.size()));
      ASSERT_NE(t.find(it->first), nullptr);
      EXPECT_EQ(*t.find(it->first), it->second);
      EXPECT_TRUE(t.erase(it->first));
      m.erase(it);
    }
    ASSERT_EQ(t.size(), m.size());
    if (op == 8) {
      EXPECT_EQ(t.find(next + 1), nullptr);
    }
  }
  std::vector<uint64_t> left;
  t.for_each([&](uint64_t s, uint64_t& v) {
    EXPECT_EQ(v, s ^ 0x5a);
    left.push_back(s);
  });
  std::vector<uint64_t> want;
  for (auto& [s, v] : m) want.push_back(s);
  EXPECT_EQ(left, want);
}

}  // namespace
}  // namespace softndk::verbs
