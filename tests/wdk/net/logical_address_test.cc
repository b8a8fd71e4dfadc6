// logical_address_test.cc - see logical_address.c.
#include <gtest/gtest.h>

extern "C" int LogicalAddressShapeOk(void);

TEST(NdkLogicalAddress, HasThePhysicalAddressShape) { EXPECT_EQ(LogicalAddressShapeOk(), 1); }
