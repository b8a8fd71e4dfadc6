// SPDX-License-Identifier: Apache-2.0
// adapter_test.cc - SoftNdkOpenAdapter/Enumerate, NdkQueryAdapterInfo, caps.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ndk_fixture.h"

namespace ndktest {
namespace {

TEST(AdapterOpen, ByNameSucceedsAndReportsHighestMinor) {
  NDK_ADAPTER* a = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", NDK_VERSION{2, 0}, nullptr, &a), STATUS_SUCCESS);
  EXPECT_EQ(a->Header.ObjectType, NdkObjectTypeAdapter);
  EXPECT_EQ(a->Header.Version.Major, 2);
  EXPECT_EQ(a->Header.Version.Minor, NDK_VERSION_MINOR);
  NDK_ADAPTER_INFO info{};
  ULONG size = sizeof info;
  ASSERT_EQ(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size), STATUS_SUCCESS);
  EXPECT_EQ(info.Version.Minor, NDK_VERSION_MINOR);
  SoftNdkCloseAdapter(a);
}

TEST(AdapterOpen, ByAddress) {
  NDK_ADAPTER* a = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("127.0.0.1", kVersion, nullptr, &a), STATUS_SUCCESS);
  SoftNdkCloseAdapter(a);
}

TEST(AdapterOpen, Major1RunsAtMinor2EverywhereIncludingObjects) {
  NDK_ADAPTER* a = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", NDK_VERSION{1, 0}, nullptr, &a), STATUS_SUCCESS);
  EXPECT_EQ(a->Header.Version.Major, 1);
  EXPECT_EQ(a->Header.Version.Minor, 2);
  NDK_PD* pd = nullptr;
  ASSERT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
  EXPECT_EQ(pd->Header.Version.Major, 1);
  EXPECT_EQ(pd->Header.Version.Minor, 2);
  SoftNdkCloseAdapter(a);  // closes the PD too
}

TEST(AdapterOpen, BadVersion) {
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(SoftNdkOpenAdapter("lo", NDK_VERSION{3, 0}, nullptr, &a), NDIS_STATUS_BAD_VERSION);
  EXPECT_EQ(SoftNdkOpenAdapter("lo", NDK_VERSION{0, 1}, nullptr, &a), NDIS_STATUS_BAD_VERSION);
  EXPECT_EQ(SoftNdkOpenAdapter("lo", NDK_VERSION{2, 2}, nullptr, &a), NDIS_STATUS_BAD_VERSION);
  EXPECT_EQ(SoftNdkOpenAdapter("lo", NDK_VERSION{1, 3}, nullptr, &a), NDIS_STATUS_BAD_VERSION);
  EXPECT_EQ(a, nullptr);
}

TEST(AdapterOpen, NoSuchDevice) {
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(SoftNdkOpenAdapter("nosuchif0", kVersion, nullptr, &a), STATUS_NO_SUCH_DEVICE);
  EXPECT_EQ(SoftNdkOpenAdapter("192.0.2.77", kVersion, nullptr, &a), STATUS_NO_SUCH_DEVICE);
}

// SOFTNDK_TCP_CONGESTION names the TCP congestion control of the adapter's
// connections; a name this kernel refuses fails the open, not every
// connection later (tests/conn/netns_test.cc checks the sockets).
TEST(AdapterOpen, CongestionControlFromTheEnvironmentIsChecked) {
  NDK_ADAPTER* a = nullptr;
  ::setenv("SOFTNDK_TCP_CONGESTION", "no-such-algorithm", 1);
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(a, nullptr);
  for (const char* ok : {"reno", "system", ""}) {
    ::setenv("SOFTNDK_TCP_CONGESTION", ok, 1);
    EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_SUCCESS) << ok;
    if (a != nullptr) SoftNdkCloseAdapter(a);
    a = nullptr;
  }
  ::unsetenv("SOFTNDK_TCP_CONGESTION");
}

// Issue 28: a SOFTNDK_* variable with a value the open cannot use fails
// it with STATUS_INVALID_PARAMETER and one stderr line naming the variable
// and its value (SOFTNDK_MPA_REVISION=abc was silently ignored); unset,
// empty and 0 mean the default.
TEST(AdapterOpen, BadEnvironmentValuesFailTheOpenAndAreNamed) {
  struct Case {
    const char* name;
    const char* value;
  };
  for (Case c : {Case{"SOFTNDK_MPA_REVISION", "abc"}, Case{"SOFTNDK_MPA_REVISION", "3"},
                 Case{"SOFTNDK_CONNECT_TIMEOUT_MS", "-5"},
                 Case{"SOFTNDK_MAX_QP_COUNT", "99999999999"}, Case{"SOFTNDK_ENGINE_THREADS", "65"},
                 Case{"SOFTNDK_MPA_HOLDOFF_MS", "10ms"}, Case{"SOFTNDK_SAMEHOST", "maybe"}}) {
    ::setenv(c.name, c.value, 1);
    NDK_ADAPTER* a = nullptr;
    testing::internal::CaptureStderr();
    EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_INVALID_PARAMETER)
        << c.name << "=" << c.value;
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(std::string(c.name) + "=" + c.value + " is not valid"), std::string::npos)
        << err;
    EXPECT_EQ(a, nullptr);
    for (const char* ok : {"", "0"}) {
      if (std::string(c.name) == "SOFTNDK_SAMEHOST") ok = *ok ? "off" : "";
      ::setenv(c.name, ok, 1);
      EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_SUCCESS)
          << c.name << "=" << ok;
      if (a != nullptr) SoftNdkCloseAdapter(a);
      a = nullptr;
    }
    ::unsetenv(c.name);
  }
  ::setenv("SOFTNDK_MPA_FLAGS", "0x3", 1);  // hex allowed for the flag word
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_SUCCESS);
  if (a != nullptr) SoftNdkCloseAdapter(a);
  ::unsetenv("SOFTNDK_MPA_FLAGS");
}

TEST(AdapterOpen, InvalidParameter) {
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(SoftNdkOpenAdapter(nullptr, kVersion, nullptr, &a), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, nullptr), STATUS_INVALID_PARAMETER);
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = 4;  // too small
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_INVALID_PARAMETER);
}

// A caller built against softndk 0.1 passes the smaller parameter block
// (no Backend): it opens as before and the appended field takes its default.
TEST(AdapterOpen, OpenParametersOfTheFirstLayoutStillWork) {
  NDK_ADAPTER* a = nullptr;
  SOFTNDK_OPEN_PARAMETERS p{};
  std::memset(&p, 0xff, sizeof p);  // bytes beyond Size must not be read
  std::memset(&p, 0, SOFTNDK_OPEN_PARAMETERS_V1_SIZE);
  p.Size = SOFTNDK_OPEN_PARAMETERS_V1_SIZE;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_SUCCESS);
  SoftNdkCloseAdapter(a);
  a = nullptr;
  p.Size = SOFTNDK_OPEN_PARAMETERS_V1_SIZE - 4;
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(a, nullptr);
}

// The backend rule (docs/verbs.md, "Choosing the backend"): the software
// engine by default, on request and for auto; verbs is refused with
// STATUS_NOT_SUPPORTED while this build's verbs backend serves no
// adapters; unknown values are parameter errors. The parameter wins over
// SOFTNDK_BACKEND.
TEST(AdapterOpen, BackendChoice) {
  NDK_ADAPTER* a = nullptr;
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  for (ULONG b : {SOFTNDK_BACKEND_DEFAULT, SOFTNDK_BACKEND_AUTO, SOFTNDK_BACKEND_IWARP_SW}) {
    p.Backend = b;
    ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_SUCCESS) << b;
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    ASSERT_EQ(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size), STATUS_SUCCESS);
    EXPECT_EQ(info.RdmaTechnology, NdkiWarp);
    SoftNdkCloseAdapter(a);
    a = nullptr;
  }
  // verbs: lo has no RDMA device (STATUS_NO_SUCH_DEVICE) where the verbs
  // plugin loads; where it is not installed, STATUS_NOT_SUPPORTED.
  auto refused = [](NTSTATUS st) {
    return st == STATUS_NOT_SUPPORTED || st == STATUS_NO_SUCH_DEVICE;
  };
  p.Backend = SOFTNDK_BACKEND_VERBS;
  EXPECT_PRED1(refused, SoftNdkOpenAdapter("lo", kVersion, &p, &a));
  p.Backend = 77;
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(a, nullptr);

  ::setenv("SOFTNDK_BACKEND", "verbs", 1);
  EXPECT_PRED1(refused, SoftNdkOpenAdapter("lo", kVersion, nullptr, &a));
  p.Backend = SOFTNDK_BACKEND_IWARP_SW;  // the parameter wins
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_SUCCESS);
  SoftNdkCloseAdapter(a);
  a = nullptr;
  ::setenv("SOFTNDK_BACKEND", "rdma", 1);
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_INVALID_PARAMETER);
  for (const char* ok : {"auto", "iwarp-sw", ""}) {
    ::setenv("SOFTNDK_BACKEND", ok, 1);
    ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_SUCCESS) << ok;
    SoftNdkCloseAdapter(a);
    a = nullptr;
  }
  ::unsetenv("SOFTNDK_BACKEND");
}

TEST(AdapterOpen, TwoOpensAreIndependent) {
  NDK_ADAPTER* a = nullptr;
  NDK_ADAPTER* b = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &a), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, nullptr, &b), STATUS_SUCCESS);
  EXPECT_NE(a, b);
  SoftNdkCloseAdapter(a);
  NDK_PD* pd = nullptr;
  EXPECT_EQ(b->Dispatch->NdkCreatePd(b, nullptr, nullptr, &pd), STATUS_SUCCESS);
  SoftNdkCloseAdapter(b);
}

TEST(AdapterEnumerate, BufferTooSmallThenSuccessListsLo) {
  ULONG n = 0;
  ASSERT_EQ(SoftNdkEnumerateAdapters(nullptr, &n), STATUS_BUFFER_TOO_SMALL);
  ASSERT_GE(n, 1u);
  std::vector<SOFTNDK_ADAPTER_DESC> d(n);
  ASSERT_EQ(SoftNdkEnumerateAdapters(d.data(), &n), STATUS_SUCCESS);
  bool lo = false;
  for (ULONG i = 0; i < n; ++i) lo |= std::strcmp(d[i].IfName, "lo") == 0 && d[i].AddressCount > 0;
  EXPECT_TRUE(lo);
  EXPECT_EQ(SoftNdkEnumerateAdapters(d.data(), nullptr), STATUS_INVALID_PARAMETER);
}

using AdapterInfo = NdkTest;

TEST_F(AdapterInfo, BufferTooSmallReportsSize) {
  NDK_ADAPTER_INFO info{};
  ULONG size = 8;
  EXPECT_EQ(a_->Dispatch->NdkQueryAdapterInfo(a_, &info, &size), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(size, sizeof(NDK_ADAPTER_INFO));
  size = 0;
  EXPECT_EQ(a_->Dispatch->NdkQueryAdapterInfo(a_, nullptr, &size), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(size, sizeof(NDK_ADAPTER_INFO));
}

TEST_F(AdapterInfo, HonestLimitsAndFlags) {
  NDK_ADAPTER_INFO info{};
  ULONG size = sizeof info + 16;
  ASSERT_EQ(a_->Dispatch->NdkQueryAdapterInfo(a_, &info, &size), STATUS_SUCCESS);
  EXPECT_EQ(size, sizeof info);
  EXPECT_EQ(info.RdmaTechnology, NdkiWarp);
  EXPECT_GE(info.FRMRPageCount, 16u);
  EXPECT_EQ(info.MaxReadRequestSge, 1u);
  EXPECT_EQ(info.MaxInitiatorRequestSge, 16u);
  EXPECT_EQ(info.MaxInlineDataSize, 256u);
  EXPECT_EQ(info.MaxInboundReadLimit, 128u);
  EXPECT_EQ(info.MaxCallerData, 252u);
  EXPECT_EQ(info.MaxCqDepth, 65536u);
  EXPECT_GT(info.MaxSrqDepth, 0u);
  EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED);
  EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED);
  EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED);
  EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED);
  EXPECT_FALSE(info.AdapterFlags & NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED);
}

TEST(AdapterInfoEngines, MultiEngineOnlyWithSeveralThreads) {
  auto p = params();
  p.EngineThreads = 2;
  NDK_ADAPTER* a = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_SUCCESS);
  NDK_ADAPTER_INFO info{};
  ULONG size = sizeof info;
  ASSERT_EQ(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size), STATUS_SUCCESS);
  EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED);
  SoftNdkCloseAdapter(a);
}

TEST(AdapterCaps, ResourceCapGivesInsufficientResources) {
  auto p = params();
  p.MaxPdCount = 1;
  p.MaxCqCount = 1;
  NDK_ADAPTER* a = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_SUCCESS);
  NDK_PD* pd1 = nullptr;
  NDK_PD* pd2 = nullptr;
  ASSERT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd1), STATUS_SUCCESS);
  EXPECT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd2), STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(pd2, nullptr);
  // Closing frees the slot.
  EXPECT_EQ(softndk::close_and_wait(pd1), STATUS_SUCCESS);
  EXPECT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd2), STATUS_SUCCESS);
  NDK_CQ* c1 = nullptr;
  NDK_CQ* c2 = nullptr;
  ASSERT_EQ(a->Dispatch->NdkCreateCq(a, 4, nullptr, nullptr, nullptr, nullptr, nullptr, &c1),
            STATUS_SUCCESS);
  EXPECT_EQ(a->Dispatch->NdkCreateCq(a, 4, nullptr, nullptr, nullptr, nullptr, nullptr, &c2),
            STATUS_INSUFFICIENT_RESOURCES);
  SoftNdkCloseAdapter(a);
}

TEST_F(AdapterInfo, QueryExtensionNotSupportedEverywhere) {
  GUID g{};
  NDK_EXTENSION_INTERFACE ext{};
  EXPECT_EQ(a_->Dispatch->NdkQueryExtension(&a_->Header, &g, kVersion, &ext), STATUS_NOT_SUPPORTED);
  NDK_PD* p = pd();
  EXPECT_EQ(p->Dispatch->NdkQueryExtension(&p->Header, &g, kVersion, &ext), STATUS_NOT_SUPPORTED);
  NDK_CQ* c = cq();
  EXPECT_EQ(c->Dispatch->NdkQueryExtension(&c->Header, &g, kVersion, &ext), STATUS_NOT_SUPPORTED);
  EXPECT_EQ(a_->Dispatch->NdkQueryExtension(nullptr, &g, kVersion, &ext), STATUS_INVALID_HANDLE);
}

TEST(StatusName, KnownAndUnknown) {
  EXPECT_STREQ(SoftNdkStatusName(STATUS_CANCELLED), "STATUS_CANCELLED");
  EXPECT_STREQ(SoftNdkStatusName(NDIS_STATUS_BAD_VERSION), "NDIS_STATUS_BAD_VERSION");
  EXPECT_EQ(SoftNdkStatusName(0x12345678), nullptr);
  EXPECT_EQ(softndk::status_name(0x12345678), "0x12345678");
}

// SOFTNDK_CONNECTION_INFO's Terminate encoding, named for the tools.
TEST(TerminateName, KnownAndUnknown) {
  EXPECT_STREQ(SoftNdkTerminateName(0x00020002), "MPA CRC error");
  EXPECT_STREQ(SoftNdkTerminateName(0x00010203), "invalid MSN - MSN range");
  EXPECT_STREQ(SoftNdkTerminateName(0x00000100), "invalid STag");
  EXPECT_EQ(SoftNdkTerminateName(0xFFFFFFFF), nullptr);  // none
  EXPECT_EQ(SoftNdkTerminateName(0x00020009), nullptr);  // LLP code 9 is not defined
  EXPECT_EQ(SoftNdkTerminateName(0x00030000), nullptr);  // no layer 3
}

}  // namespace
}  // namespace ndktest
