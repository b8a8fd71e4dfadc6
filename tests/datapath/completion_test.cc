// SPDX-License-Identifier: Apache-2.0
// completion_test.cc - completion rules: arming (solicited vs any, once per
// arm), CQ overrun, NdkFlush, a peer killed mid-transfer.
#include <set>

#include "dp_fixture.h"

namespace dptest {
namespace {

struct Events {
  std::atomic<int> n{0};
  std::atomic<NTSTATUS> last{STATUS_PENDING};
  static void cb(PVOID ctx, NTSTATUS s) {
    auto* e = static_cast<Events*>(ctx);
    e->last = s;
    e->n++;
  }
};

class Completion : public DpTest {};

TEST_F(Completion, SolicitedArmVersusAnyOncePerArm) {
  Events& ev = keep<Events>();  // notifications may outlive the body
  SideConfig bc;
  bc.notify = &Events::cb;
  bc.notify_ctx = &ev;
  Side& A = new_side();
  Side& B = new_side(bc);
  connect(A, B);
  Buf rb = reg(B.pd, 64, kAll), sb = reg(A.pd, 64, kAll);
  NDK_SGE rs = rb.sge(0, 64), ss = sb.sge(0, 8);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(B.d()->NdkReceive(B.qp, nullptr, &rs, 1), STATUS_SUCCESS);
  // Armed for SOLICITED: a plain Send does not notify (reactor-driven: no poll).
  B.cq->Dispatch->NdkArmCq(B.cq, NDK_CQ_NOTIFY_SOLICITED);
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &ss, 1, 0), STATUS_SUCCESS);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ev.n.load(), 0);
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &ss, 1, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT),
            STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return ev.n.load() == 1; }));
  // Once per arm: more completions without a new arm do not notify.
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &ss, 1, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT),
            STATUS_SUCCESS);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ev.n.load(), 1);
  // ANY: the next completion notifies; arming with unseen ones fires at once.
  B.cq->Dispatch->NdkArmCq(B.cq, NDK_CQ_NOTIFY_ANY);
  ASSERT_TRUE(eventually([&] { return ev.n.load() == 2; }));
  EXPECT_EQ(poll(B.cq, 3).size(), 3u);
  B.cq->Dispatch->NdkArmCq(B.cq, NDK_CQ_NOTIFY_ANY);
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &ss, 1, 0), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return ev.n.load() == 3; }));
  EXPECT_EQ(ev.last.load(), STATUS_SUCCESS);
}

TEST_F(Completion, CqOverrunIsBufferOverflow) {
  Events& ev = keep<Events>();  // notifications may outlive the body
  SideConfig bc;
  bc.cq_depth = 4;
  bc.notify = &Events::cb;
  bc.notify_ctx = &ev;
  Side& A = new_side();
  Side& B = new_side(bc);
  connect(A, B);
  Buf rb = reg(B.pd, 64, kAll), sb = reg(A.pd, 64, kAll);
  NDK_SGE rs = rb.sge(0, 64), ss = sb.sge(0, 8);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(B.d()->NdkReceive(B.qp, nullptr, &rs, 1), STATUS_SUCCESS);
  B.cq->Dispatch->NdkArmCq(B.cq, NDK_CQ_NOTIFY_ERRORS);
  for (int i = 0; i < 6; ++i) ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &ss, 1, 0), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return ev.n.load() >= 1; }));
  EXPECT_EQ(ev.last.load(), STATUS_BUFFER_OVERFLOW);
}

TEST_F(Completion, FlushCancelsEverythingOnce) {
  Side& A = new_side();
  Side& B = new_side();
  connect(A, B);
  Buf rb = reg(A.pd, 64, kAll), big = reg(A.pd, 8 << 20, kAll), dst = reg(B.pd, 8 << 20, kAll);
  NDK_SGE rs = rb.sge(0, 64), bs = big.sge(0, 8 << 20);
  for (uintptr_t i = 0; i < 10; ++i)
    ASSERT_EQ(A.d()->NdkReceive(A.qp, (void*)(100 + i), &rs, 1), STATUS_SUCCESS);
  for (uintptr_t i = 0; i < 20; ++i)
    ASSERT_EQ(A.d()->NdkWrite(A.qp, (void*)i, &bs, 1, dst.addr(), dst.token, 0), STATUS_SUCCESS);
  A.d()->NdkFlush(A.qp);
  auto r = poll(A.cq, 30);
  ASSERT_EQ(r.size(), 30u);
  std::set<void*> seen;
  for (auto& e : r) {
    EXPECT_TRUE(seen.insert(e.RequestContext).second) << "twice";
    if ((uintptr_t)e.RequestContext >= 100) {
      EXPECT_EQ(e.Status, STATUS_CANCELLED);
    }
  }
  EXPECT_TRUE(drain(A.cq).empty());
}

// The peer is reset mid-transfer: every outstanding request completes, none
// twice; the survivor's QP is in error.
TEST_F(Completion, PeerKilledMidTransfer) {
  Side& A = new_side();
  Side& B = new_side();
  connect(A, B);
  Buf big = reg(A.pd, 8 << 20, kAll), dst = reg(B.pd, 8 << 20, kAll), rb = reg(A.pd, 64, kAll);
  NDK_SGE bs = big.sge(0, 8 << 20), rs = rb.sge(0, 64);
  for (uintptr_t i = 0; i < 8; ++i)
    ASSERT_EQ(A.d()->NdkReceive(A.qp, (void*)(1000 + i), &rs, 1), STATUS_SUCCESS);
  uintptr_t posted = 0;
  for (; posted < 32; ++posted) {
    NTSTATUS s = posted % 4 == 3
                     ? A.d()->NdkRead(A.qp, (void*)posted, &bs, 1, dst.addr(), dst.token, 0)
                     : A.d()->NdkWrite(A.qp, (void*)posted, &bs, 1, dst.addr(), dst.token, 0);
    ASSERT_EQ(s, STATUS_SUCCESS);
  }
  std::this_thread::sleep_for(5ms);
  B.stream->stop();
  B.conn->abort();  // RST
  auto r = poll(A.cq, posted + 8, 10000ms);
  EXPECT_EQ(r.size(), posted + 8);
  std::set<void*> seen;
  for (auto& e : r) EXPECT_TRUE(seen.insert(e.RequestContext).second) << "twice";
  EXPECT_TRUE(drain(A.cq).empty());
  EXPECT_EQ(A.q->state(), ndk::QpState::kError);
}

}  // namespace
}  // namespace dptest
