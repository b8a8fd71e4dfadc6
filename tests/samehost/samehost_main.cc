// SPDX-License-Identifier: Apache-2.0
// samehost_main.cc - the test binary's main: the tests, or (with
// --samehost-child) the peer process of peer_death_test.cc.
#include <gtest/gtest.h>

#include <cstring>

namespace dptest {
int run_samehost_child(bool shm);
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--samehost-child") == 0)
    return dptest::run_samehost_child(argc == 3 && std::strcmp(argv[2], "shm") == 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
