// SPDX-License-Identifier: Apache-2.0
// wsk_test.cc - WSK registration and the NDK NPI (wsk.h, wskndk.h).
#include <cstring>
#include <string>

#include "kit_fixture.h"

namespace wdknet {
namespace {

using WskNpi = KitTest;

TEST_F(WskNpi, ControlClientFillsTheNdkDispatch) {
  WSK_PROVIDER_NDK_DISPATCH table{};
  SIZE_T returned = 0;
  EXPECT_EQ(prov_.Dispatch->WskControlClient(prov_.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0,
                                             nullptr, sizeof table, &table, &returned, nullptr),
            STATUS_SUCCESS);
  EXPECT_EQ(returned, sizeof table);
  EXPECT_NE(table.WskOpenNdkAdapter, nullptr);
  EXPECT_NE(table.WskCloseNdkAdapter, nullptr);
  EXPECT_EQ(WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0x4E444B44u);  // 'NDKD' as MSVC packs it
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

TEST_F(WskNpi, ControlClientWantsRoomForTheTable) {
  UCHAR small[8];
  SIZE_T returned = 0;
  EXPECT_EQ(prov_.Dispatch->WskControlClient(prov_.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0,
                                             nullptr, sizeof small, small, &returned, nullptr),
            STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(returned, sizeof(WSK_PROVIDER_NDK_DISPATCH));
  EXPECT_EQ(prov_.Dispatch->WskControlClient(prov_.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0,
                                             nullptr, 16, nullptr, nullptr, nullptr),
            STATUS_INVALID_PARAMETER);
}

TEST_F(WskNpi, WhatIsNotEmulatedFailsLoudly) {
  EXPECT_EQ(prov_.Dispatch->WskControlClient(prov_.Client, WSK_TDI_BEHAVIOR, 0, nullptr, 0, nullptr,
                                             nullptr, nullptr),
            STATUS_NOT_SUPPORTED);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "WskControlClient");
  EXPECT_EQ(prov_.Dispatch->WskSocket(prov_.Client, AF_INET, SOCK_STREAM, IPPROTO_TCP, 0, nullptr,
                                      nullptr, nullptr, nullptr, nullptr, nullptr),
            STATUS_NOT_SUPPORTED);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "WskSocket");
  EXPECT_EQ(reports(SoftNdkWdkRuleInvalidParameter), 2u);
}

TEST_F(WskNpi, OpensTheAdapterOfAnInterfaceIndex) {
  NDK_ADAPTER* a = open_lo();
  ASSERT_NE(a, nullptr);
  NDK_ADAPTER_INFO info{};
  ULONG size = sizeof info;
  EXPECT_EQ(a->Dispatch->NdkQueryAdapterInfo(a, &info, &size), STATUS_SUCCESS);
  EXPECT_EQ(info.RdmaTechnology, NdkiWarp);
  EXPECT_EQ(info.Version.Major, 2);
  EXPECT_EQ(a->Header.ObjectType, NdkObjectTypeAdapter);
  close_adapter(a);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
}

TEST_F(WskNpi, UnknownInterfaceIndexIsNoSuchDevice) {
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(ndk_.WskOpenNdkAdapter(prov_.Client, NDK_VERSION{2, 0}, 0x7ffff0, &a),
            STATUS_NO_SUCH_DEVICE);
  EXPECT_EQ(ndk_.WskOpenNdkAdapter(prov_.Client, NDK_VERSION{2, 0}, 0, &a), STATUS_NO_SUCH_DEVICE);
  EXPECT_EQ(ndk_.WskOpenNdkAdapter(prov_.Client, NDK_VERSION{9, 0}, lo_, &a),
            NDIS_STATUS_BAD_VERSION);
  EXPECT_EQ(a, nullptr);
}

TEST_F(WskNpi, ForeignClientIsReported) {
  int not_a_client = 0;
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(ndk_.WskOpenNdkAdapter(&not_a_client, NDK_VERSION{2, 0}, lo_, &a),
            STATUS_INVALID_PARAMETER);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "WskOpenNdkAdapter");
  EXPECT_EQ(reports(SoftNdkWdkRuleInvalidParameter), 1u);
}

TEST_F(WskNpi, SecondCloseIsReportedNotFollowed) {
  NDK_ADAPTER* a = open_lo(0, false);
  ASSERT_NE(a, nullptr);
  ndk_.WskCloseNdkAdapter(prov_.Client, a);
  EXPECT_EQ(SoftNdkWdkCheckTotal(), 0u);
  ndk_.WskCloseNdkAdapter(prov_.Client, a);
  EXPECT_EQ(reports(SoftNdkWdkRuleInvalidParameter), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "WskCloseNdkAdapter");
}

// What the unload leak check finds besides the fixture's own registration.
ULONG leaks_beyond(ULONG baseline) {
  ULONG n = SoftNdkWdkCheckLeaks();
  return n - baseline;
}

TEST_F(WskNpi, ClosingWithObjectsOpenIsALeak) {
  const ULONG base = SoftNdkWdkCheckLeaks();
  SoftNdkWdkCheckReset();
  NDK_ADAPTER* a = open_lo(0, false);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(make_cq(a), nullptr);
  ASSERT_NE(make_pd(a), nullptr);
  ndk_.WskCloseNdkAdapter(prov_.Client, a);  // softndk closes them; the kit reports
  EXPECT_EQ(reports(SoftNdkWdkRuleLeak), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "WskCloseNdkAdapter");
  EXPECT_EQ(leaks_beyond(base), 0u);  // nothing left behind
}

TEST_F(WskNpi, DeregisterClosesWhatTheClientLeftOpen) {
  const ULONG base = SoftNdkWdkCheckLeaks();
  SoftNdkWdkCheckReset();
  WSK_REGISTRATION reg{};
  WSK_PROVIDER_NPI prov{};
  WSK_CLIENT_NPI npi{nullptr, &kClientDispatch};
  ASSERT_EQ(WskRegister(&npi, &reg), STATUS_SUCCESS);
  ASSERT_EQ(WskCaptureProviderNPI(&reg, WSK_INFINITE_WAIT, &prov), STATUS_SUCCESS);
  NDK_ADAPTER* a = nullptr;
  ASSERT_EQ(ndk_.WskOpenNdkAdapter(prov.Client, NDK_VERSION{2, 0}, lo_, &a), STATUS_SUCCESS);
  EXPECT_EQ(leaks_beyond(base), 2u);  // the registration and the adapter, were this unload
  SoftNdkWdkCheckReset();
  WskReleaseProviderNPI(&reg);
  WskDeregister(&reg);
  EXPECT_EQ(reports(SoftNdkWdkRuleLeak), 1u);
  EXPECT_STREQ(SoftNdkWdkLastReportCall(), "WskDeregister");
  EXPECT_EQ(leaks_beyond(base), 0u);
  SoftNdkWdkCheckReset();
  WskDeregister(&reg);  // twice
  EXPECT_EQ(reports(SoftNdkWdkRuleInvalidParameter), 1u);
  EXPECT_EQ(WskCaptureProviderNPI(&reg, WSK_NO_WAIT, &prov), STATUS_INVALID_PARAMETER);
}

TEST_F(WskNpi, RegistrationArgumentsAreChecked) {
  WSK_REGISTRATION reg{};
  WSK_CLIENT_NPI npi{nullptr, nullptr};
  EXPECT_EQ(WskRegister(&npi, &reg), STATUS_INVALID_PARAMETER);
  WSK_CLIENT_DISPATCH v2{MAKE_WSK_VERSION(2, 0), 0, nullptr};
  npi.Dispatch = &v2;
  EXPECT_EQ(WskRegister(&npi, &reg), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(WskRegister(nullptr, &reg), STATUS_INVALID_PARAMETER);
  WskReleaseProviderNPI(&reg);  // never registered
  EXPECT_EQ(reports(SoftNdkWdkRuleInvalidParameter), 1u);
}

}  // namespace
}  // namespace wdknet
