// SPDX-License-Identifier: Apache-2.0
// Shared by the kit's kernel tests: a fixture that counts checker reports
// quietly and checks that each test leaves nothing allocated.
#pragma once

#include <gtest/gtest.h>
#include <wdm.h>

#include <chrono>
#include <string>

namespace softndk::wdk::test {

class KitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SoftNdkWdkSetCheckMode(SoftNdkWdkCheckQuiet);
    SoftNdkWdkCheckReset();
  }
  void TearDown() override {
    // Whatever a test allocates it frees: the leak check finds nothing.
    ULONG before = SoftNdkWdkCheckTotal();
    EXPECT_EQ(SoftNdkWdkCheckLeaks(), 0u) << "the test leaked kit objects";
    SoftNdkWdkCheckReset();
    (void)before;
  }
  // Exactly `n` reports so far, all of `rule`; then starts counting afresh.
  static void ExpectOnly(SOFTNDK_WDK_RULE rule, ULONG n = 1) {
    EXPECT_EQ(SoftNdkWdkCheckCount(rule), n) << SoftNdkWdkRuleName(rule);
    EXPECT_EQ(SoftNdkWdkCheckTotal(), n) << "other rules reported too";
    SoftNdkWdkCheckReset();
  }
  static void ExpectNone() { EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u); }
};

// A relative timeout in 100 ns units.
inline LARGE_INTEGER RelativeMs(LONGLONG ms) {
  LARGE_INTEGER t;
  t.QuadPart = -ms * 10000;
  return t;
}

inline long long MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// Tag as written in driver source: 'tseT' reads "Test" in memory.
constexpr ULONG kTestTag = 0x74736554;

}  // namespace softndk::wdk::test
