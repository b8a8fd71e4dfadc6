// SPDX-License-Identifier: Apache-2.0
// ping_options_test.cc - ndkping takes rping's flags, flag for flag.
#include "ndkping/ping_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace softndk::ndkping {
namespace {

int parse(std::vector<std::string> args, PingOptions& o, std::string& text) {
  args.insert(args.begin(), "ndkping");
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  return parse_ping_options(static_cast<int>(argv.size()), argv.data(), o, text);
}

TEST(PingOptions, RpingClientLine) {
  PingOptions o;
  std::string t;
  ASSERT_EQ(
      parse({"-c", "-a", "192.168.77.1", "-p", "7175", "-C", "3", "-S", "100000", "-v", "-V", "-d"},
            o, t),
      -1)
      << t;
  EXPECT_TRUE(o.client);
  EXPECT_FALSE(o.server);
  EXPECT_EQ(o.address, "192.168.77.1");
  EXPECT_EQ(o.port, 7175);
  EXPECT_EQ(o.count, 3u);
  EXPECT_EQ(o.size, 100000u);
  EXPECT_TRUE(o.verbose);
  EXPECT_TRUE(o.validate);
  EXPECT_TRUE(o.debug);
}

TEST(PingOptions, RpingServerLineAndDefaults) {
  PingOptions o;
  std::string t;
  ASSERT_EQ(parse({"-s", "-P", "-vV"}, o, t), -1) << t;  // grouped short flags, as getopt
  EXPECT_TRUE(o.server);
  EXPECT_TRUE(o.persistent);
  EXPECT_TRUE(o.verbose);
  EXPECT_TRUE(o.validate);
  EXPECT_EQ(o.port, 7174);
  EXPECT_EQ(o.size, 64u);
  EXPECT_EQ(o.count, 0u);  // forever, as rping
}

TEST(PingOptions, RefusedInputs) {
  const std::vector<std::vector<std::string>> bad = {
      {},                             // neither -s nor -c
      {"-s", "-c", "-a", "1.2.3.4"},  // both
      {"-c"},                         // client without -a
      {"-c", "-a", "h", "-P"},        // -P is for servers
      {"-s", "-S", "25"},             // below rping's minimum
      {"-s", "-S", "999999999"},      // above the maximum
      {"-s", "-q"},                   // unknown flag
      {"-s", "--bogus"},
      {"-s", "-C", "x"},
      {"-s", "-p", "70000"},
  };
  for (const auto& args : bad) {
    PingOptions o;
    std::string t;
    EXPECT_EQ(parse(args, o, t), 2) << "accepted: " << ::testing::PrintToString(args);
    EXPECT_EQ(t.find('\n'), std::string::npos) << t;
  }
}

}  // namespace
}  // namespace softndk::ndkping
