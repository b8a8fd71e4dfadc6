// SPDX-License-Identifier: Apache-2.0
// kit_fixture.h - a WSK client of the kit with the NDK NPI captured, the
// way a consumer driver starts, plus small synchronous helpers for tests.
//
// The checker runs in quiet mode (count only) and is reset per test, so a
// test asserts the exact number of reports its consumer code provokes.
#pragma once

#include <gtest/gtest.h>
#include <ndkpi.h>
#include <net/if.h>
#include <ntddk.h>
#include <stdlib.h>
#include <wsk.h>
#include <wskndk.h>

#include <chrono>
#include <thread>
#include <vector>

namespace wdknet {

inline const WSK_CLIENT_DISPATCH kClientDispatch = {MAKE_WSK_VERSION(1, 0), 0, nullptr};

// Polls `pred` for up to `ms` milliseconds.
template <typename P>
bool eventually(P pred, int ms = 5000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

class KitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SoftNdkWdkSetCheckMode(SoftNdkWdkCheckQuiet);
    SoftNdkWdkCheckReset();
    WSK_CLIENT_NPI npi{nullptr, &kClientDispatch};
    ASSERT_EQ(WskRegister(&npi, &reg_), STATUS_SUCCESS);
    ASSERT_EQ(WskCaptureProviderNPI(&reg_, WSK_NO_WAIT, &prov_), STATUS_SUCCESS);
    ASSERT_EQ(prov_.Dispatch->WskControlClient(prov_.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH,
                                               0, nullptr, sizeof ndk_, &ndk_, nullptr, nullptr),
              STATUS_SUCCESS);
    lo_ = if_nametoindex("lo");
    ASSERT_NE(lo_, 0u);
  }

  void TearDown() override {
    for (NDK_ADAPTER* a : adapters_) ndk_.WskCloseNdkAdapter(prov_.Client, a);
    adapters_.clear();
    if (prov_.Client != nullptr) WskReleaseProviderNPI(&reg_);
    if (reg_.ReservedRegistrationContext != nullptr) WskDeregister(&reg_);
    SoftNdkWdkSetCheckMode(SoftNdkWdkCheckReport);
  }

  // Opens the loopback adapter (closed in TearDown unless `keep` is false).
  // open_flags: SOFTNDK_OPEN_FLAG_* through SOFTNDK_WDK_OPEN_FLAGS.
  NDK_ADAPTER* open_lo(unsigned open_flags = 0, bool track = true) {
    if (open_flags != 0) setenv("SOFTNDK_WDK_OPEN_FLAGS", std::to_string(open_flags).c_str(), 1);
    NDK_ADAPTER* a = nullptr;
    NTSTATUS st = ndk_.WskOpenNdkAdapter(prov_.Client, NDK_VERSION{2, 0}, lo_, &a);
    unsetenv("SOFTNDK_WDK_OPEN_FLAGS");
    EXPECT_EQ(st, STATUS_SUCCESS);
    if (a != nullptr && track) adapters_.push_back(a);
    return a;
  }
  void close_adapter(NDK_ADAPTER* a) {
    std::erase(adapters_, a);
    ndk_.WskCloseNdkAdapter(prov_.Client, a);
  }

  // Synchronous creates (adapters opened without async flags).
  static NDK_CQ* make_cq(NDK_ADAPTER* a, NDK_FN_CQ_NOTIFICATION_CALLBACK fn = nullptr,
                         void* ctx = nullptr) {
    NDK_CQ* cq = nullptr;
    EXPECT_EQ(a->Dispatch->NdkCreateCq(a, 32, fn, ctx, nullptr, nullptr, nullptr, &cq),
              STATUS_SUCCESS);
    return cq;
  }
  static NDK_PD* make_pd(NDK_ADAPTER* a) {
    NDK_PD* pd = nullptr;
    EXPECT_EQ(a->Dispatch->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
    return pd;
  }
  static NDK_QP* make_qp(NDK_PD* pd, NDK_CQ* cq) {
    NDK_QP* qp = nullptr;
    EXPECT_EQ(pd->Dispatch->NdkCreateQp(pd, cq, cq, nullptr, 8, 8, 1, 1, 0, nullptr, nullptr, &qp),
              STATUS_SUCCESS);
    return qp;
  }
  // Closes and waits: a close may pend while a callback still runs.
  template <typename T>
  static void close(T* obj) {
    // Every dispatch table starts with its close function.
    auto fn = *reinterpret_cast<NDK_FN_CLOSE_OBJECT const*>(obj->Dispatch);
    KEVENT closed;
    KeInitializeEvent(&closed, NotificationEvent, FALSE);
    NTSTATUS st = fn(
        &obj->Header, [](PVOID ctx) { KeSetEvent(static_cast<PKEVENT>(ctx), 0, FALSE); }, &closed);
    if (st == STATUS_PENDING) {
      LARGE_INTEGER timeout;
      timeout.QuadPart = -10000LL * 5000;
      st = KeWaitForSingleObject(&closed, Executive, KernelMode, FALSE, &timeout);
    }
    EXPECT_EQ(st, STATUS_SUCCESS);
  }

  static ULONG reports(SOFTNDK_WDK_RULE rule) { return SoftNdkWdkCheckCount(rule); }

  WSK_REGISTRATION reg_{};
  WSK_PROVIDER_NPI prov_{};
  WSK_PROVIDER_NDK_DISPATCH ndk_{};
  NET_IFINDEX lo_ = 0;
  std::vector<NDK_ADAPTER*> adapters_;
};

}  // namespace wdknet
