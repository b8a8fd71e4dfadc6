// SPDX-License-Identifier: Apache-2.0
// ifapi_test.cc - NET_IFINDEX / NET_LUID / alias conversions (netioapi.h).
#include <gtest/gtest.h>
#include <net/if.h>
#include <netioapi.h>
#include <ntddk.h>

namespace {

class Ifapi : public ::testing::Test {
 protected:
  void SetUp() override {
    SoftNdkWdkSetCheckMode(SoftNdkWdkCheckQuiet);
    SoftNdkWdkCheckReset();
    lo_ = if_nametoindex("lo");
    ASSERT_NE(lo_, 0u);
  }
  void TearDown() override { SoftNdkWdkSetCheckMode(SoftNdkWdkCheckReport); }
  NET_IFINDEX lo_ = 0;
};

TEST_F(Ifapi, LoopbackIndexToLuid) {
  NET_LUID luid{};
  ASSERT_EQ(ConvertInterfaceIndexToLuid(lo_, &luid), STATUS_SUCCESS);
  EXPECT_EQ(luid.Info.IfType, static_cast<ULONG64>(IF_TYPE_SOFTWARE_LOOPBACK));
  EXPECT_EQ(luid.Info.NetLuidIndex, static_cast<ULONG64>(lo_));
  EXPECT_EQ(luid.Info.Reserved, 0u);
}

TEST_F(Ifapi, RoundTrips) {
  NET_LUID luid{}, back{};
  NET_IFINDEX index = 0;
  WCHAR alias[IF_MAX_STRING_SIZE];
  ASSERT_EQ(ConvertInterfaceIndexToLuid(lo_, &luid), STATUS_SUCCESS);
  ASSERT_EQ(ConvertInterfaceLuidToIndex(&luid, &index), STATUS_SUCCESS);
  EXPECT_EQ(index, lo_);
  ASSERT_EQ(ConvertInterfaceLuidToAlias(&luid, alias, IF_MAX_STRING_SIZE), STATUS_SUCCESS);
  EXPECT_EQ(std::wstring(alias), L"lo");
  ASSERT_EQ(ConvertInterfaceAliasToLuid(L"lo", &back), STATUS_SUCCESS);
  EXPECT_EQ(back.Value, luid.Value);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

TEST_F(Ifapi, AliasBufferMustHoldTheNameAndNul) {
  NET_LUID luid{};
  WCHAR alias[3] = {L'x', L'x', L'x'};
  ASSERT_EQ(ConvertInterfaceIndexToLuid(lo_, &luid), STATUS_SUCCESS);
  EXPECT_EQ(ConvertInterfaceLuidToAlias(&luid, alias, 2), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(ConvertInterfaceLuidToAlias(&luid, alias, 3), STATUS_SUCCESS);
  EXPECT_EQ(alias[2], L'\0');
}

TEST_F(Ifapi, BadInputIsRefused) {
  NET_LUID luid{};
  NET_IFINDEX index = 0;
  WCHAR alias[16];
  EXPECT_EQ(ConvertInterfaceIndexToLuid(0, &luid), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(ConvertInterfaceIndexToLuid(lo_, nullptr), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(ConvertInterfaceIndexToLuid(0x7ffff0, &luid), STATUS_NOT_FOUND);
  EXPECT_EQ(ConvertInterfaceAliasToLuid(L"nosuchif0", &luid), STATUS_NOT_FOUND);
  EXPECT_EQ(ConvertInterfaceAliasToLuid(L"", &luid), STATUS_NOT_FOUND);
  EXPECT_EQ(ConvertInterfaceAliasToLuid(L"a-very-long-interface-name", &luid), STATUS_NOT_FOUND);
  ASSERT_EQ(ConvertInterfaceIndexToLuid(lo_, &luid), STATUS_SUCCESS);
  NET_LUID wrong_type = luid;
  wrong_type.Info.IfType = IF_TYPE_ETHERNET_CSMACD;
  EXPECT_EQ(ConvertInterfaceLuidToIndex(&wrong_type, &index), STATUS_NOT_FOUND);
  NET_LUID reserved = luid;
  reserved.Info.Reserved = 1;
  EXPECT_EQ(ConvertInterfaceLuidToIndex(&reserved, &index), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(ConvertInterfaceLuidToAlias(&reserved, alias, 16), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

TEST_F(Ifapi, AboveItsIrqlIsReported) {
  NET_LUID luid{};
  KIRQL old;
  KeRaiseIrql(DISPATCH_LEVEL, &old);
  NTSTATUS st = ConvertInterfaceIndexToLuid(lo_, &luid);
  KeLowerIrql(old);
  EXPECT_EQ(st, STATUS_SUCCESS);  // report and continue
  EXPECT_EQ(SoftNdkWdkCheckCount(SoftNdkWdkRuleIrqlTooHigh), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "ConvertInterfaceIndexToLuid");
}

}  // namespace
