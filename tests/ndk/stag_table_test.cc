// SPDX-License-Identifier: Apache-2.0
// stag_table_test.cc - the STag table the data path uses for access checks.
#include <thread>

#include "ndk/provider_names.h"
#include "ndk_fixture.h"

namespace ndktest {
namespace {

using softndk::ndk::StagInfo;
using softndk::ndk::StagKind;
using softndk::ndk::StagTable;

TEST(StagTable, AllocateValidateCheckFree) {
  StagTable t;
  int pd;
  uint32_t s = t.allocate(StagKind::kMr, &pd, nullptr);
  ASSERT_NE(s, 0u);
  EXPECT_EQ(t.check(s, &pd, 0x1000, 1, softndk::ndk::kAccessLocalRead),
            STATUS_ACCESS_VIOLATION);  // not valid yet
  ASSERT_TRUE(t.validate(s, 0x1000, 0x100,
                         softndk::ndk::kAccessLocalRead | softndk::ndk::kAccessRemoteRead));
  EXPECT_EQ(t.check(s, &pd, 0x1000, 0x100, softndk::ndk::kAccessRemoteRead), STATUS_SUCCESS);
  EXPECT_EQ(t.check(s, &pd, 0x10ff, 2, softndk::ndk::kAccessRemoteRead),
            STATUS_ACCESS_VIOLATION);  // beyond the end
  EXPECT_EQ(t.check(s, &pd, 0x1000, 1, softndk::ndk::kAccessRemoteWrite),
            STATUS_ACCESS_VIOLATION);  // right not granted
  int other;
  EXPECT_EQ(t.check(s, &other, 0x1000, 1, softndk::ndk::kAccessRemoteRead),
            STATUS_ACCESS_VIOLATION);  // other PD
  t.free(s);
  StagInfo i;
  EXPECT_FALSE(t.lookup(s, &i));
  uint32_t s2 = t.allocate(StagKind::kMr, &pd, nullptr);
  EXPECT_EQ(s2 >> 8, s >> 8);  // index reused ...
  EXPECT_NE(s2, s);            // ... with another key
}

TEST(StagTable, ConcurrentLookupsWhileRekeying) {
  StagTable t;
  int pd;
  uint32_t s = t.allocate(StagKind::kMw, &pd, nullptr);
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    StagInfo i;
    while (!stop) {
      if (t.lookup(s, &i)) {
        EXPECT_EQ(i.stag, s);
      }
    }
  });
  uint32_t cur = s;
  for (int k = 0; k < 2000; ++k) {
    cur = t.rekey(cur);
    t.validate(cur, 0x1000, 0x10, softndk::ndk::kAccessRemoteRead);
  }
  stop = true;
  reader.join();
  StagInfo i;
  EXPECT_TRUE(t.lookup(cur, &i));
}

}  // namespace
}  // namespace ndktest
