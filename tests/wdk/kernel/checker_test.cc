// SPDX-License-Identifier: Apache-2.0
// IRQL emulation and the checker itself: the IRQL rules, the report's
// content (call, call site, stack), fatal mode, and the internal API the
// networking half uses.
#include <cstdlib>
#include <string>
#include <thread>

#include "irql/irql.h"
#include "kit_test_util.h"

namespace softndk::wdk::test {
namespace {

class CheckerTest : public KitTest {};

TEST_F(CheckerTest, IrqlIsPerThreadAndRaisesAndLowers) {
  EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);
  KIRQL old;
  KeRaiseIrql(APC_LEVEL, &old);
  EXPECT_EQ(old, PASSIVE_LEVEL);
  KIRQL other = HIGH_LEVEL;
  std::thread([&] { other = KeGetCurrentIrql(); }).join();
  EXPECT_EQ(other, PASSIVE_LEVEL);
  EXPECT_EQ(KeRaiseIrqlToDpcLevel(), APC_LEVEL);
  EXPECT_EQ(KeGetCurrentIrql(), DISPATCH_LEVEL);
  KeLowerIrql(old);
  EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);
  ExpectNone();
  KeRaiseIrql(DISPATCH_LEVEL, &old);
  KeRaiseIrql(PASSIVE_LEVEL, &old);  // a "raise" downwards
  ExpectOnly(SoftNdkWdkRuleIrqlMismatch);
  KeLowerIrql(HIGH_LEVEL);  // a "lower" upwards
  ExpectOnly(SoftNdkWdkRuleIrqlMismatch);
  KeLowerIrql(PASSIVE_LEVEL);
}

// The checker: a wait with a non-zero timeout at DISPATCH_LEVEL; a zero
// timeout (a poll) is allowed.
TEST_F(CheckerTest, WaitingAtDispatchLevelIsReported) {
  KEVENT e;
  KeInitializeEvent(&e, NotificationEvent, TRUE);
  KIRQL old;
  KeRaiseIrql(DISPATCH_LEVEL, &old);
  LARGE_INTEGER zero{};
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &zero), STATUS_SUCCESS);
  ExpectNone();
  LARGE_INTEGER t = RelativeMs(10);
  EXPECT_EQ(KeWaitForSingleObject(&e, Executive, KernelMode, FALSE, &t), STATUS_SUCCESS);
  ExpectOnly(SoftNdkWdkRuleWaitAtDispatch);
  KeDelayExecutionThread(KernelMode, FALSE, &t);
  ExpectOnly(SoftNdkWdkRuleWaitAtDispatch);
  KeLowerIrql(old);
}

VOID PageableRoutine() { PAGED_CODE(); }

// The checker: PAGED_CODE() above APC_LEVEL, named by the function.
TEST_F(CheckerTest, PagedCodeAboveApcLevelIsReported) {
  PageableRoutine();
  KIRQL old;
  KeRaiseIrql(APC_LEVEL, &old);
  PageableRoutine();
  ExpectNone();
  KeRaiseIrql(DISPATCH_LEVEL, &old);
  PageableRoutine();
  ExpectOnly(SoftNdkWdkRulePagedCodeAtRaisedIrql);
  KeLowerIrql(PASSIVE_LEVEL);
}

TEST_F(CheckerTest, ReportNamesTheCallTheSiteAndTheStack) {
  SoftNdkWdkSetCheckMode(SoftNdkWdkCheckReport);
  ::testing::internal::CaptureStderr();
  KIRQL old;
  KeRaiseIrql(DISPATCH_LEVEL, &old);
  PageableRoutine();
  KeLowerIrql(old);
  std::string err = ::testing::internal::GetCapturedStderr();
  SoftNdkWdkSetCheckMode(SoftNdkWdkCheckQuiet);
  EXPECT_NE(err.find("softndk-wdk: CHECK paged-code-at-raised-irql: PageableRoutine: PAGED_CODE() "
                     "at DISPATCH_LEVEL"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("called from "), std::string::npos) << err;
  EXPECT_NE(err.find("    #0 "), std::string::npos) << err;  // the stack
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "PageableRoutine");
  ExpectOnly(SoftNdkWdkRulePagedCodeAtRaisedIrql);
}

TEST_F(CheckerTest, AssertionsReportAndContinue) {
  int x = 1;
  SoftNdkWdkSetCheckMode(SoftNdkWdkCheckReport);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(NT_ASSERT(x == 2));
  std::string err = ::testing::internal::GetCapturedStderr();
  SoftNdkWdkSetCheckMode(SoftNdkWdkCheckQuiet);
  EXPECT_NE(err.find("CHECK assertion: NT_ASSERT: x == 2 failed at "), std::string::npos) << err;
  EXPECT_NE(err.find("checker_test.cc:"), std::string::npos) << err;
  ExpectOnly(SoftNdkWdkRuleAssertion);
  EXPECT_TRUE(NT_VERIFY(x == 1));
  ExpectNone();
}

// The fatal switch: the first violation ends the process with a clear
// message (what CI uses).
TEST_F(CheckerTest, FatalModeAbortsAtTheFirstViolation) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the kit has threads
  EXPECT_DEATH(
      {
        SoftNdkWdkSetCheckMode(SoftNdkWdkCheckFatal);
        KSPIN_LOCK lock;
        KeInitializeSpinLock(&lock);
        KeReleaseSpinLock(&lock, PASSIVE_LEVEL);
      },
      "CHECK spin-lock-not-held: KeReleaseSpinLock(.|\n)*fatal checker");
}

// The checker: a bug check is reported with its code and ends the process,
// whatever the mode.
TEST_F(CheckerTest, BugCheckReportsAndEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        SoftNdkWdkSetCheckMode(SoftNdkWdkCheckReport);
        KeBugCheckEx(0xD1, 1, 2, 3, 4);  // DRIVER_IRQL_NOT_LESS_OR_EQUAL
      },
      "CHECK bugcheck: KeBugCheckEx: bug check 0x000000d1 \\(0x1, 0x2, 0x3, 0x4\\)");
}

// SOFTNDK_WDK_CHECK=fatal: the child of a threadsafe death test starts
// afresh with it in its environment (no fixture resets the mode there).
TEST(CheckerEnvTest, FatalModeFromTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("SOFTNDK_WDK_CHECK", "fatal", 1);
  EXPECT_DEATH(ExFreePool(reinterpret_cast<PVOID>(0x1000)),
               "CHECK double-free: ExFreePool(.|\n)*fatal checker");
  unsetenv("SOFTNDK_WDK_CHECK");
}

// The internal API of the networking half: callbacks at DISPATCH_LEVEL and
// "requires IRQL <= X" checks.
TEST_F(CheckerTest, IrqlScopeAndRequireIrqlAtMost) {
  {
    IrqlScope dispatch(DISPATCH_LEVEL);
    EXPECT_EQ(KeGetCurrentIrql(), DISPATCH_LEVEL);
    EXPECT_TRUE(RequireIrqlAtMost(DISPATCH_LEVEL, "NdkArmCq", nullptr));
    ExpectNone();
    EXPECT_FALSE(RequireIrqlAtMost(PASSIVE_LEVEL, "NdkCloseAdapter", nullptr));
    ExpectOnly(SoftNdkWdkRuleIrqlTooHigh);
    EXPECT_STREQ(SoftNdkWdkLastReportCall(), "");
  }
  EXPECT_EQ(KeGetCurrentIrql(), PASSIVE_LEVEL);
  EXPECT_STREQ(SoftNdkWdkRuleName(SoftNdkWdkRuleIrqlTooHigh), "irql-too-high");
}

}  // namespace
}  // namespace softndk::wdk::test
