// SPDX-License-Identifier: Apache-2.0
// logical_address_test.cc - see logical_address.c.
#include <gtest/gtest.h>

extern "C" int LogicalAddressShapeOk(void);
extern "C" int NetNamesOk(void);

TEST(NdkLogicalAddress, HasThePhysicalAddressShape) { EXPECT_EQ(LogicalAddressShapeOk(), 1); }

TEST(WdkNetNames, SocketAddressesAndInterfaceIdsHaveTheirWindowsNames) {
  EXPECT_EQ(NetNamesOk(), 1);
}
