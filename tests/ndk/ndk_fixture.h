// SPDX-License-Identifier: Apache-2.0
// ndk_fixture.h - shared helpers for the ndk conformance tests: an adapter on
// "lo" and one-line creators for every object kind.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "ndk/adapter.h"
#include "ndk/cq.h"
#include "ndk/qp.h"
#include "softndk/softndk.hpp"

namespace ndktest {

using softndk::Waiter;

inline constexpr NDK_VERSION kVersion{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};

// The suite's adapter: "lo", or SOFTNDK_TEST_ADAPTER (the interop VM runs the
// suite on the verbs backend over the guest's siw0 / rxe0 that way:
// tests/interop/verbs_apps_cases.sh, docs/verbs.md).
inline const char* test_adapter() {
  const char* e = std::getenv("SOFTNDK_TEST_ADAPTER");
  return e != nullptr && *e != '\0' ? e : "lo";
}
// Its address: 127.0.0.1, or SOFTNDK_TEST_IP.
inline const char* test_ip() {
  const char* e = std::getenv("SOFTNDK_TEST_IP");
  return e != nullptr && *e != '\0' ? e : "127.0.0.1";
}

inline SOFTNDK_OPEN_PARAMETERS params(ULONG flags = 0) {
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  p.Flags = flags;
  return p;
}

// Polls `pred` for up to 5 s (completions arrive on engine threads).
template <typename P>
bool eventually(P pred) {
  for (int i = 0; i < 5000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

// Counts CQ notifications and remembers the last status.
struct CqEvents {
  std::atomic<int> count{0};
  std::atomic<NTSTATUS> last{STATUS_PENDING};
  static void cb(PVOID ctx, NTSTATUS s) {
    auto* e = static_cast<CqEvents*>(ctx);
    e->last = s;
    e->count++;
  }
};

class NdkTest : public ::testing::Test {
 protected:
  void SetUp() override { open(0); }
  void TearDown() override {
    if (a_ != nullptr) SoftNdkCloseAdapter(a_);
  }
  void open(ULONG flags) {
    if (a_ != nullptr) SoftNdkCloseAdapter(a_);
    a_ = nullptr;
    auto p = params(flags);
    ASSERT_EQ(SoftNdkOpenAdapter(test_adapter(), kVersion, &p, &a_), STATUS_SUCCESS);
  }
  softndk::ndk::Adapter* adapter() {
    softndk::ndk::Adapter* a;
    softndk::ndk::Adapter::from(a_, &a);
    return a;
  }
  NDK_PD* pd() {
    NDK_PD* p = nullptr;
    EXPECT_EQ(softndk::create_and_wait<NDK_PD>(
                  [&](auto cb, auto ctx, NDK_PD** o) {
                    return a_->Dispatch->NdkCreatePd(a_, cb, ctx, o);
                  },
                  &p),
              STATUS_SUCCESS);
    return p;
  }
  NDK_CQ* cq(ULONG depth = 64, CqEvents* ev = nullptr) {
    NDK_CQ* c = nullptr;
    EXPECT_EQ(softndk::create_and_wait<NDK_CQ>(
                  [&](auto cb, auto ctx, NDK_CQ** o) {
                    return a_->Dispatch->NdkCreateCq(a_, depth, ev ? &CqEvents::cb : nullptr, ev,
                                                     nullptr, cb, ctx, o);
                  },
                  &c),
              STATUS_SUCCESS);
    return c;
  }
  NTSTATUS create_qp(NDK_PD* p, NDK_CQ* c, NDK_QP** out, ULONG rq = 16, ULONG sq = 16,
                     ULONG rsge = 4, ULONG ssge = 4, ULONG inl = 64, void* qpctx = nullptr) {
    return p->Dispatch->NdkCreateQp(p, c, c, qpctx, rq, sq, rsge, ssge, inl, nullptr, nullptr, out);
  }
  NDK_QP* qp(NDK_PD* p, NDK_CQ* c, void* qpctx = nullptr) {
    NDK_QP* q = nullptr;
    EXPECT_EQ(create_qp(p, c, &q, 16, 16, 4, 4, 64, qpctx), STATUS_SUCCESS);
    return q;
  }
  NDK_MR* mr(NDK_PD* p, bool fast = false) {
    NDK_MR* m = nullptr;
    EXPECT_EQ(p->Dispatch->NdkCreateMr(p, fast, nullptr, nullptr, &m), STATUS_SUCCESS);
    return m;
  }
  template <typename T>
  static NTSTATUS close(T* o) {
    return softndk::close_and_wait(o);
  }
  static softndk::ndk::Cq* cq_of(NDK_CQ* c) {
    softndk::ndk::Cq* o;
    softndk::ndk::resolve(c, NdkObjectTypeCq, &o, true);
    return o;
  }
  static softndk::ndk::Qp* qp_of(NDK_QP* q) {
    softndk::ndk::Qp* o;
    softndk::ndk::resolve(q, NdkObjectTypeQp, &o, true);
    return o;
  }
  static NDK_RESULT_EX result(NTSTATUS s, void* ctx = nullptr) {
    NDK_RESULT_EX r{};
    r.Status = s;
    r.RequestContext = ctx;
    r.Type = NdkOperationTypeSend;
    return r;
  }

  NDK_ADAPTER* a_ = nullptr;
};

}  // namespace ndktest
