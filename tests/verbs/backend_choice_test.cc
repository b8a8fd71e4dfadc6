// SPDX-License-Identifier: Apache-2.0
// backend_choice_test.cc - SOFTNDK_BACKEND / SOFTNDK_OPEN_PARAMETERS.Backend
// and the auto rule (src/verbs/backend_choice.h, docs/verbs.md).
#include "verbs/backend_choice.h"

#include <gtest/gtest.h>

namespace softndk::verbs {
namespace {

TEST(BackendRequest, ParameterWinsOverEnvironment) {
  Backend b{};
  std::string src;
  ASSERT_EQ(requested_backend(SOFTNDK_BACKEND_IWARP_SW, "verbs", &b, &src), STATUS_SUCCESS);
  EXPECT_EQ(b, Backend::kIwarpSw);
  EXPECT_EQ(src, "open parameters");
  ASSERT_EQ(requested_backend(SOFTNDK_BACKEND_AUTO, "verbs", &b, &src), STATUS_SUCCESS);
  EXPECT_EQ(b, Backend::kAuto);
  ASSERT_EQ(requested_backend(SOFTNDK_BACKEND_DEFAULT, "verbs", &b, &src), STATUS_SUCCESS);
  EXPECT_EQ(b, Backend::kVerbs);
  EXPECT_EQ(src, "SOFTNDK_BACKEND");
}

TEST(BackendRequest, DefaultIsAutoAndUnknownIsAnError) {
  Backend b = Backend::kVerbs;
  std::string src;
  ASSERT_EQ(requested_backend(SOFTNDK_BACKEND_DEFAULT, nullptr, &b, &src), STATUS_SUCCESS);
  EXPECT_EQ(b, Backend::kAuto);
  EXPECT_EQ(src, "default");
  ASSERT_EQ(requested_backend(SOFTNDK_BACKEND_DEFAULT, "", &b, &src), STATUS_SUCCESS);
  EXPECT_EQ(b, Backend::kAuto);
  ASSERT_EQ(requested_backend(SOFTNDK_BACKEND_DEFAULT, "iwarp-sw", &b, &src), STATUS_SUCCESS);
  EXPECT_EQ(b, Backend::kIwarpSw);
  EXPECT_EQ(requested_backend(SOFTNDK_BACKEND_DEFAULT, "Verbs", &b, &src),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(requested_backend(SOFTNDK_BACKEND_DEFAULT, "siw", &b, &src), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(requested_backend(4, nullptr, &b, &src), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(requested_backend(0xffffffffu, nullptr, &b, &src), STATUS_INVALID_PARAMETER);
}

RdmaDeviceFacts dev(const char* name, const char* driver) {
  RdmaDeviceFacts d;
  d.probed = true;
  d.present = true;
  d.name = name;
  d.driver = driver;
  return d;
}

TEST(BackendChoice, AutoTakesHardwareOnly) {
  BackendChoice c =
      choose_backend(Backend::kAuto, "default", dev("mlx5_0", "mlx5_core"), true, "", "enp1s0");
  EXPECT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(c.backend, Backend::kVerbs);
  EXPECT_NE(c.why.find("mlx5_0"), std::string::npos) << c.why;
  for (const char* sw : {"siw", "rxe"}) {
    c = choose_backend(Backend::kAuto, "default", dev("x0", sw), true, "", "eth0");
    EXPECT_EQ(c.status, STATUS_SUCCESS);
    EXPECT_EQ(c.backend, Backend::kIwarpSw) << sw;
    EXPECT_NE(c.why.find("software device"), std::string::npos) << c.why;
  }
  c = choose_backend(Backend::kAuto, "default", RdmaDeviceFacts{}, true, "", "lo");
  EXPECT_EQ(c.backend, Backend::kIwarpSw);
  EXPECT_NE(c.why.find("no RDMA device serves lo"), std::string::npos) << c.why;
  c = choose_backend(Backend::kAuto, "default", dev("mlx5_0", "mlx5_core"), false, "not built",
                     "enp1s0");
  EXPECT_EQ(c.backend, Backend::kIwarpSw);
  EXPECT_NE(c.why.find("not built"), std::string::npos) << c.why;
}

TEST(BackendChoice, VerbsNeedsTheBackendAndADevice) {
  BackendChoice c =
      choose_backend(Backend::kVerbs, "SOFTNDK_BACKEND", dev("siw0", "siw"), true, "", "eth0");
  EXPECT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(c.backend, Backend::kVerbs);
  EXPECT_EQ(c.why, "verbs (SOFTNDK_BACKEND): siw0 [siw] on eth0");
  c = choose_backend(Backend::kVerbs, "SOFTNDK_BACKEND", RdmaDeviceFacts{}, true, "", "lo");
  EXPECT_EQ(c.status, STATUS_NO_SUCH_DEVICE);
  c = choose_backend(Backend::kVerbs, "open parameters", dev("siw0", "siw"), false,
                     "no libsoftndk-verbs", "eth0");
  EXPECT_EQ(c.status, STATUS_NOT_SUPPORTED);
  EXPECT_NE(c.why.find("no libsoftndk-verbs"), std::string::npos);
}

TEST(BackendChoice, SoftwareOnRequestWhateverTheDevice) {
  BackendChoice c = choose_backend(Backend::kIwarpSw, "open parameters", dev("mlx5_0", "mlx5_core"),
                                   true, "", "enp1s0");
  EXPECT_EQ(c.status, STATUS_SUCCESS);
  EXPECT_EQ(c.backend, Backend::kIwarpSw);
}

}  // namespace
}  // namespace softndk::verbs
