// SPDX-License-Identifier: Apache-2.0
// plugin_test.cc - the verbs backend as a plugin (src/verbs/plugin.h):
// libsoftndk loads the built libsoftndk-verbs.so, checks that it comes from
// the same build, and SOFTNDK_BACKEND=verbs then reaches the device lookup
// (this host has no RDMA device: STATUS_NO_SUCH_DEVICE with the reason).
// The plugin serving a device is proven in the interop VM (group verbs).
#include "verbs/plugin.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "softndk/softndk.h"

namespace {

const NDK_VERSION kVersion{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};

class PluginEnv : public ::testing::Environment {
 public:
  // Points the loader at this build's plugin before anything loads it (the
  // loader decides once per process). The test binary links libsoftndk
  // statically, so "the folder of libsoftndk" is the test's own.
  void SetUp() override { ::setenv("SOFTNDK_VERBS_PLUGIN", SOFTNDK_TEST_VERBS_PLUGIN, 1); }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new PluginEnv);

TEST(VerbsPlugin, LoadsFromTheSameBuild) {
  std::string why;
  const softndk::verbs::Plugin* p = softndk::verbs::load_plugin(&why);
  ASSERT_NE(p, nullptr) << why;
  EXPECT_EQ(p->interface_version, softndk::provider::kInterfaceVersion);
  ASSERT_NE(p->device_of, nullptr);
  ASSERT_NE(p->open, nullptr);
  // No RDMA device on the loopback interface (nor, here, on the host).
  softndk::verbs::RdmaDeviceFacts f = p->device_of("lo");
  EXPECT_TRUE(f.probed);
  EXPECT_FALSE(f.present);
}

TEST(VerbsPlugin, VerbsOnAnInterfaceWithoutDeviceIsNoSuchDevice) {
  NDK_ADAPTER* a = nullptr;
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  p.Backend = SOFTNDK_BACKEND_VERBS;
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_NO_SUCH_DEVICE);
  EXPECT_EQ(a, nullptr);
}

TEST(VerbsPlugin, SoftwareAdapterReportsItsBackendAndWhy) {
  NDK_ADAPTER* a = nullptr;
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  p.Backend = SOFTNDK_BACKEND_IWARP_SW;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_SUCCESS);
  SOFTNDK_BACKEND_INFO info{};
  info.Size = sizeof info;
  ASSERT_EQ(SoftNdkQueryBackend(a, &info), STATUS_SUCCESS);
  EXPECT_EQ(info.Backend, SOFTNDK_BACKEND_IWARP_SW);
  EXPECT_STREQ(info.Device, "");
  EXPECT_NE(std::strstr(info.Reason, "iwarp-sw (open parameters)"), nullptr) << info.Reason;
  // The software engine's fast register: one token for the MR's life.
  EXPECT_EQ(std::strncmp(info.FastRegister, "software:", 9), 0) << info.FastRegister;
  // A caller structure shorter than Backend: refused.
  SOFTNDK_BACKEND_INFO tiny{};
  tiny.Size = 4;
  EXPECT_EQ(SoftNdkQueryBackend(a, &tiny), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkQueryBackend(a, nullptr), STATUS_INVALID_PARAMETER);
  // Only the bytes the caller's Size covers are written.
  unsigned char buf[sizeof(SOFTNDK_BACKEND_INFO) + 8];
  std::memset(buf, 0xAB, sizeof buf);
  auto* part = reinterpret_cast<SOFTNDK_BACKEND_INFO*>(buf);
  part->Size = 8;
  ASSERT_EQ(SoftNdkQueryBackend(a, part), STATUS_SUCCESS);
  EXPECT_EQ(part->Size, 8u);
  EXPECT_EQ(part->Backend, SOFTNDK_BACKEND_IWARP_SW);
  EXPECT_EQ(buf[8], 0xAB);
  SoftNdkCloseAdapter(a);
}

TEST(VerbsPlugin, AutoWithoutAnyRdmaDeviceStaysSoftware) {
  if (softndk::verbs::any_rdma_device()) GTEST_SKIP() << "this host has an RDMA device";
  NDK_ADAPTER* a = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_SUCCESS);
  SOFTNDK_BACKEND_INFO info{};
  info.Size = sizeof info;
  ASSERT_EQ(SoftNdkQueryBackend(a, &info), STATUS_SUCCESS);
  EXPECT_EQ(info.Backend, SOFTNDK_BACKEND_IWARP_SW);
  EXPECT_NE(std::strstr(info.Reason, "software iWARP"), nullptr) << info.Reason;
  SoftNdkCloseAdapter(a);
}

}  // namespace
