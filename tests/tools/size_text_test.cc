// SPDX-License-Identifier: Apache-2.0
// size_text_test.cc - the tools' one size parser (ndkapp/size_text.h) and
// that ndkperf -s, ndk-nvmet --ns ram: and ndk-nvme --bs take the same
// suffixes (issue 28: `T` and `KB` differed between the tools).
#include "ndkapp/size_text.h"

#include <gtest/gtest.h>

#include "proc.h"

using softndk::tools::parse_size;

TEST(SizeText, SuffixesArePowersOf1024InAnyCaseWithOptionalB) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("512B"), 512u);
  for (const char* s : {"64K", "64k", "64KB", "64kb", "64KiB", "64kib"})
    EXPECT_EQ(parse_size(s), 65536u) << s;
  EXPECT_EQ(parse_size("3M"), 3u << 20);
  EXPECT_EQ(parse_size("2GiB"), 2ull << 30);
  EXPECT_EQ(parse_size("1T"), 1ull << 40);
  EXPECT_EQ(parse_size("1TB"), 1ull << 40);
  EXPECT_EQ(parse_size("0"), 0u);
}

TEST(SizeText, RefusesWhatIsNotASize) {
  std::string why;
  EXPECT_FALSE(parse_size("12X", &why));
  EXPECT_NE(why.find("bad size suffix in '12X'"), std::string::npos) << why;
  for (const char* s : {"", "K", "-1", "+4", " 4", "4 K", "1.5M", "4iB", "4KK", "4KBB", "0x10"})
    EXPECT_FALSE(parse_size(s)) << s;
  EXPECT_FALSE(parse_size("99999999999999999999", &why));
  EXPECT_NE(why.find("too large"), std::string::npos) << why;
  EXPECT_FALSE(parse_size("17000000T", &why));  // past 2^64 once shifted
  EXPECT_NE(why.find("too large"), std::string::npos) << why;
}

// ndkperf -s goes through it: KB and T are understood (T then out of -s's
// range), a bad suffix is a usage error naming it.
TEST(SizeText, NdkperfSizeOption) {
  auto r =
      tools_test::run({NDKPERF_BIN, "write_bw", "-s", "4KB", "-n", "5", "--json", "--quiet"}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"size\": 4096"), std::string::npos) << r.out;
  r = tools_test::run({NDKPERF_BIN, "write_bw", "-s", "12X"}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bad size suffix in '12X'"), std::string::npos) << r.err;
  r = tools_test::run({NDKPERF_BIN, "write_bw", "-s", "1T"}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
}
