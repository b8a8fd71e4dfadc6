// SPDX-License-Identifier: Apache-2.0
// srq_test.cc - NdkCreateSrq/ModifySrq/SrqReceive, threshold notification,
// QPs on an SRQ.
#include "ndk/srq.h"

#include "ndk_fixture.h"

namespace ndktest {
namespace {

struct SrqEvents {
  std::atomic<int> count{0};
  std::atomic<NTSTATUS> last{STATUS_PENDING};
  static void cb(PVOID ctx, NTSTATUS s) {
    auto* e = static_cast<SrqEvents*>(ctx);
    e->last = s;
    e->count++;
  }
};

class SrqTest : public NdkTest {
 protected:
  NDK_SRQ* srq(NDK_PD* p, ULONG depth, ULONG sge, ULONG threshold, SrqEvents* ev) {
    NDK_SRQ* s = nullptr;
    EXPECT_EQ(p->Dispatch->NdkCreateSrq(p, depth, sge, threshold, &SrqEvents::cb, ev, nullptr,
                                        nullptr, nullptr, &s),
              STATUS_SUCCESS);
    return s;
  }
  static softndk::ndk::Srq* srq_of(NDK_SRQ* s) {
    softndk::ndk::Srq* o;
    softndk::ndk::resolve(s, NdkObjectTypeSrq, &o);
    return o;
  }
};

TEST_F(SrqTest, CreateInvalid) {
  NDK_PD* p = pd();
  NDK_SRQ* s = nullptr;
  auto create = [&](ULONG d, ULONG g, ULONG t) {
    return p->Dispatch->NdkCreateSrq(p, d, g, t, nullptr, nullptr, nullptr, nullptr, nullptr, &s);
  };
  EXPECT_EQ(create(0, 1, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create(16385, 1, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create(16, 17, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create(16, 0, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create(16, 1, 17), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create(16, 1, 4), STATUS_SUCCESS);
}

TEST_F(SrqTest, ReceiveQueuesUpToDepth) {
  NDK_PD* p = pd();
  SrqEvents ev;
  NDK_SRQ* s = srq(p, 2, 1, 0, &ev);
  NDK_SGE sge[2]{};
  EXPECT_EQ(s->Dispatch->NdkSrqReceive(s, nullptr, sge, 2), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(s->Dispatch->NdkSrqReceive(s, nullptr, sge, 1), STATUS_SUCCESS);
  EXPECT_EQ(s->Dispatch->NdkSrqReceive(s, nullptr, sge, 1), STATUS_SUCCESS);
  EXPECT_EQ(s->Dispatch->NdkSrqReceive(s, nullptr, sge, 1), STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(srq_of(s)->queued(), 2u);
}

TEST_F(SrqTest, NotifiesOnceWhenBelowThreshold) {
  NDK_PD* p = pd();
  SrqEvents ev;
  NDK_SRQ* s = srq(p, 8, 1, 2, &ev);
  int ctx[3];
  NDK_SGE sge{};
  for (int& c : ctx) ASSERT_EQ(s->Dispatch->NdkSrqReceive(s, &c, &sge, 1), STATUS_SUCCESS);
  softndk::ndk::ReceiveRequest rr;
  ASSERT_TRUE(srq_of(s)->take(&rr));  // 2 left: not below 2
  EXPECT_EQ(rr.context, &ctx[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ev.count.load(), 0);
  ASSERT_TRUE(srq_of(s)->take(&rr));  // 1 left: below
  ASSERT_TRUE(eventually([&] { return ev.count.load() == 1; }));
  EXPECT_EQ(ev.last.load(), STATUS_SUCCESS);
  ASSERT_TRUE(srq_of(s)->take(&rr));  // disarmed: no second notification
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ev.count.load(), 1);
}

TEST_F(SrqTest, ModifyRearmsAndFiresAtOnceWhenBelow) {
  NDK_PD* p = pd();
  SrqEvents ev;
  NDK_SRQ* s = srq(p, 8, 1, 0, &ev);
  ASSERT_EQ(s->Dispatch->NdkModifySrq(s, 0, 1, nullptr, nullptr), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return ev.count.load() == 1; }));
  EXPECT_EQ(s->Dispatch->NdkModifySrq(s, 16, 0, nullptr, nullptr), STATUS_SUCCESS);
  EXPECT_EQ(srq_of(s)->depth(), 16u);
  EXPECT_EQ(s->Dispatch->NdkModifySrq(s, 16385, 0, nullptr, nullptr), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(s->Dispatch->NdkModifySrq(s, 0, 17, nullptr, nullptr), STATUS_INVALID_PARAMETER);
  NDK_SGE sge{};
  for (int i = 0; i < 3; ++i) ASSERT_EQ(s->Dispatch->NdkSrqReceive(s, nullptr, &sge, 1), 0);
  EXPECT_EQ(s->Dispatch->NdkModifySrq(s, 2, 0, nullptr, nullptr), STATUS_INVALID_PARAMETER);
}

TEST_F(SrqTest, ModifyPendsWithAsyncAdapter) {
  open(SOFTNDK_OPEN_FLAG_ASYNC_CREATE);
  NDK_PD* p = pd();
  NDK_SRQ* s = nullptr;
  ASSERT_EQ(softndk::create_and_wait<NDK_SRQ>(
                [&](auto cb, auto ctx, NDK_SRQ** o) {
                  return p->Dispatch->NdkCreateSrq(p, 4, 1, 0, nullptr, nullptr, nullptr, cb, ctx,
                                                   o);
                },
                &s),
            STATUS_SUCCESS);
  EXPECT_EQ(softndk::request_and_wait(
                [&](auto cb, auto ctx) { return s->Dispatch->NdkModifySrq(s, 8, 0, cb, ctx); }),
            STATUS_SUCCESS);
}

TEST_F(SrqTest, QpWithSrqTakesFromSrqAndRejectsNdkReceive) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  SrqEvents ev;
  NDK_SRQ* s = srq(p, 8, 1, 0, &ev);
  NDK_QP* q = nullptr;
  ASSERT_EQ(p->Dispatch->NdkCreateQpWithSrq(p, c, c, s, nullptr, 4, 2, 0, nullptr, nullptr, &q),
            STATUS_SUCCESS);
  NDK_SGE sge{};
  EXPECT_EQ(q->Dispatch->NdkReceive(q, nullptr, &sge, 0), STATUS_INVALID_DEVICE_REQUEST);
  int ctx;
  ASSERT_EQ(s->Dispatch->NdkSrqReceive(s, &ctx, &sge, 1), STATUS_SUCCESS);
  softndk::ndk::ReceiveRequest rr;
  ASSERT_TRUE(qp_of(q)->rq_take(&rr));
  EXPECT_EQ(rr.context, &ctx);
  // SRQ -> QP antecedent: the SRQ close waits for the QP.
  Waiter w;
  ASSERT_EQ(s->Dispatch->NdkCloseSrq(&s->Header, &Waiter::close_cb, &w), STATUS_PENDING);
  ASSERT_EQ(close(q), STATUS_SUCCESS);
  EXPECT_TRUE(w.wait());
}

TEST_F(SrqTest, QpWithSrqOfAnotherPdIsInvalid) {
  NDK_PD* p1 = pd();
  NDK_PD* p2 = pd();
  NDK_CQ* c = cq();
  NDK_SRQ* s = srq(p1, 8, 1, 0, nullptr);
  NDK_QP* q = nullptr;
  EXPECT_EQ(p2->Dispatch->NdkCreateQpWithSrq(p2, c, c, s, nullptr, 4, 2, 0, nullptr, nullptr, &q),
            STATUS_INVALID_PARAMETER);
}

}  // namespace
}  // namespace ndktest
