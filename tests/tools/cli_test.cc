// SPDX-License-Identifier: Apache-2.0
// cli_test.cc - the binaries themselves on bad command lines: one line on
// stderr naming the cause, a non-zero exit, quickly; --help exits 0.
#include <gtest/gtest.h>

#include "proc.h"

namespace {

using tools_test::count_lines;
using tools_test::run;

TEST(Cli, NdkperfUnknownOption) {
  auto r = run({NDKPERF_BIN, "write_bw", "--no-such-option"}, 20);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--no-such-option"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("ndkperf: ", 0), 0u) << r.err;
}

TEST(Cli, NdkperfUnknownTest) {
  auto r = run({NDKPERF_BIN, "copy_bw"}, 20);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

TEST(Cli, NdkperfHelp) {
  auto r = run({NDKPERF_BIN, "--help"}, 20);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--report_gbits"), std::string::npos);
}

TEST(Cli, NdkpingUnknownOption) {
  auto r = run({NDKPING_BIN, "-s", "-z"}, 20);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("ndkping: ", 0), 0u) << r.err;
}

TEST(Cli, NdkpingClientNeedsAddress) {
  auto r = run({NDKPING_BIN, "-c", "-C", "1"}, 20);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-a"), std::string::npos) << r.err;
}

}  // namespace
