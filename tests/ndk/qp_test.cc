// SPDX-License-Identifier: Apache-2.0
// qp_test.cc - NdkCreateQp validation, posting rules, flush, data-path API.
#include <cstring>

#include "ndk_fixture.h"

namespace ndktest {
namespace {

using QpTest = NdkTest;
using softndk::ndk::QpState;

TEST_F(QpTest, CreateValidatesEveryLimit) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  NDK_QP* q = nullptr;
  EXPECT_EQ(create_qp(p, c, &q, 16385, 16, 4, 4, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create_qp(p, c, &q, 16, 16385, 4, 4, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create_qp(p, c, &q, 16, 16, 17, 4, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create_qp(p, c, &q, 16, 16, 4, 17, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(create_qp(p, c, &q, 16, 16, 4, 4, 257), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(q, nullptr);
  EXPECT_EQ(create_qp(p, c, &q, 16384, 16384, 16, 16, 256), STATUS_SUCCESS);
}

TEST_F(QpTest, CreateWithWrongKindOrNullCq) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  NDK_QP* q = nullptr;
  EXPECT_EQ(p->Dispatch->NdkCreateQp(p, nullptr, c, nullptr, 1, 1, 1, 1, 0, nullptr, nullptr, &q),
            STATUS_INVALID_HANDLE);
  EXPECT_EQ(p->Dispatch->NdkCreateQp(p, c, reinterpret_cast<NDK_CQ*>(p), nullptr, 1, 1, 1, 1, 0,
                                     nullptr, nullptr, &q),
            STATUS_OBJECT_TYPE_MISMATCH);
}

TEST_F(QpTest, QpCap) {
  auto pp = params();
  pp.MaxQpCount = 1;
  SoftNdkCloseAdapter(a_);
  ASSERT_EQ(SoftNdkOpenAdapter(test_adapter(), kVersion, &pp, &a_), STATUS_SUCCESS);
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  qp(p, c);
  NDK_QP* q = nullptr;
  EXPECT_EQ(create_qp(p, c, &q), STATUS_INSUFFICIENT_RESOURCES);
}

TEST_F(QpTest, ReceiveBeforeConnectAndItsLimits) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  NDK_QP* q = nullptr;
  ASSERT_EQ(create_qp(p, c, &q, 2, 2, 2, 2, 0), STATUS_SUCCESS);
  char buf[16];
  NDK_SGE sge[3] = {{{buf}, 8, 0}, {{buf + 8}, 8, 0}, {{buf}, 1, 0}};
  EXPECT_EQ(q->Dispatch->NdkReceive(q, nullptr, sge, 3), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(q->Dispatch->NdkReceive(q, nullptr, nullptr, 1), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(q->Dispatch->NdkReceive(q, nullptr, sge, 2), STATUS_SUCCESS);
  EXPECT_EQ(q->Dispatch->NdkReceive(q, nullptr, sge, 0), STATUS_SUCCESS);
  EXPECT_EQ(q->Dispatch->NdkReceive(q, nullptr, sge, 1), STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(qp_of(q)->rq_pending(), 2u);
}

TEST_F(QpTest, InitiatorRequestsOnUnconnectedQp) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  NDK_QP* q = qp(p, c);
  NDK_MR* m = mr(p);
  NDK_MR* f = mr(p, true);
  NDK_MW* w = nullptr;
  ASSERT_EQ(p->Dispatch->NdkCreateMw(p, nullptr, nullptr, &w), STATUS_SUCCESS);
  char buf[8];
  NDK_SGE sge{{buf}, 8, 0};
  NDK_LOGICAL_ADDRESS page{};
  EXPECT_EQ(q->Dispatch->NdkSend(q, nullptr, &sge, 1, 0), STATUS_CONNECTION_INVALID);
  EXPECT_EQ(q->Dispatch->NdkSendAndInvalidate(q, nullptr, &sge, 1, 0, 1),
            STATUS_CONNECTION_INVALID);
  EXPECT_EQ(q->Dispatch->NdkWrite(q, nullptr, &sge, 1, 0x1000, 1, 0), STATUS_CONNECTION_INVALID);
  EXPECT_EQ(q->Dispatch->NdkRead(q, nullptr, &sge, 1, 0x1000, 1, 0), STATUS_CONNECTION_INVALID);
  EXPECT_EQ(q->Dispatch->NdkBind(q, nullptr, m, w, buf, 8, 0), STATUS_CONNECTION_INVALID);
  EXPECT_EQ(q->Dispatch->NdkFastRegister(q, nullptr, f, 1, &page, 0, 8, nullptr, 0),
            STATUS_CONNECTION_INVALID);
  EXPECT_EQ(q->Dispatch->NdkInvalidate(q, nullptr, &f->Header, 0), STATUS_CONNECTION_INVALID);
  NDK_RESULT_EX r[4];
  EXPECT_EQ(c->Dispatch->NdkGetCqResultsEx(c, r, 4), 0u);  // failures produce no CQE
}

TEST_F(QpTest, FlushCancelsEverythingInPostingOrder) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64);
  int qpctx;
  NDK_QP* q = qp(p, c, &qpctx);
  qp_of(q)->set_state(QpState::kConnected);
  int ctx[6];
  NDK_SGE sge{};
  ASSERT_EQ(q->Dispatch->NdkReceive(q, &ctx[0], &sge, 0), STATUS_SUCCESS);
  ASSERT_EQ(q->Dispatch->NdkSend(q, &ctx[1], &sge, 0, NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
  ASSERT_EQ(q->Dispatch->NdkWrite(q, &ctx[2], &sge, 0, 0x1000, 7, 0), STATUS_SUCCESS);
  ASSERT_EQ(q->Dispatch->NdkReceive(q, &ctx[3], &sge, 0), STATUS_SUCCESS);
  ASSERT_EQ(q->Dispatch->NdkRead(q, &ctx[4], &sge, 0, 0x1000, 7, 0), STATUS_SUCCESS);
  q->Dispatch->NdkFlush(q);
  NDK_RESULT_EX r[8];
  ULONG n = c->Dispatch->NdkGetCqResultsEx(c, r, 8);
  ASSERT_EQ(n, 5u);
  // Initiator queue first (in order), then the receive queue (in order).
  void* want[5] = {&ctx[1], &ctx[2], &ctx[4], &ctx[0], &ctx[3]};
  NDK_OPERATION_TYPE types[5] = {NdkOperationTypeSend, NdkOperationTypeWrite, NdkOperationTypeRead,
                                 NdkOperationTypeReceive, NdkOperationTypeReceive};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r[i].Status, STATUS_CANCELLED);
    EXPECT_EQ(r[i].RequestContext, want[i]);
    EXPECT_EQ(r[i].QPContext, &qpctx);
    EXPECT_EQ(r[i].Type, types[i]);
  }
  EXPECT_EQ(qp_of(q)->sq_pending(), 0u);
}

TEST_F(QpTest, CloseFlushesPendingRequests) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64);
  NDK_QP* q = qp(p, c);
  int ctx;
  NDK_SGE sge{};
  ASSERT_EQ(q->Dispatch->NdkReceive(q, &ctx, &sge, 0), STATUS_SUCCESS);
  ASSERT_EQ(close(q), STATUS_SUCCESS);
  NDK_RESULT r[2];
  ASSERT_EQ(c->Dispatch->NdkGetCqResults(c, r, 2), 1u);
  EXPECT_EQ(r[0].Status, STATUS_CANCELLED);
  EXPECT_EQ(r[0].RequestContext, &ctx);
}

TEST_F(QpTest, ConnectedPostingValidation) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64);
  NDK_QP* q = nullptr;
  ASSERT_EQ(create_qp(p, c, &q, 4, 2, 2, 2, 16), STATUS_SUCCESS);
  qp_of(q)->set_state(QpState::kConnected);
  char buf[64];
  std::memset(buf, 'x', sizeof buf);
  NDK_SGE three[3] = {{{buf}, 8, 0}, {{buf + 8}, 8, 0}, {{buf + 16}, 8, 0}};
  EXPECT_EQ(q->Dispatch->NdkSend(q, nullptr, three, 3, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(q->Dispatch->NdkSend(q, nullptr, three, 1, 0x80000000u), STATUS_INVALID_PARAMETER);
  // Inline: the SGE count may exceed the SGE limit, the bytes may not exceed InlineDataSize.
  EXPECT_EQ(q->Dispatch->NdkSend(q, nullptr, three, 3, NDK_OP_FLAG_INLINE),
            STATUS_INVALID_PARAMETER);  // 24 > 16
  EXPECT_EQ(q->Dispatch->NdkSend(q, nullptr, three, 2, NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
  // Read: one sink SGE (MaxReadRequestSge).
  EXPECT_EQ(q->Dispatch->NdkRead(q, nullptr, three, 2, 0x1000, 1, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(q->Dispatch->NdkRead(q, nullptr, three, 1, 0x1000, 1, NDK_OP_FLAG_INLINE),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(q->Dispatch->NdkRead(q, nullptr, three, 1, 0x1000, 1, 0), STATUS_SUCCESS);
  // SQ depth 2: full now.
  EXPECT_EQ(q->Dispatch->NdkWrite(q, nullptr, three, 1, 0x1000, 1, 0),
            STATUS_INSUFFICIENT_RESOURCES);
  // The data path sees the inline copy.
  softndk::ndk::WorkRequest wr;
  uint64_t seq;
  ASSERT_TRUE(qp_of(q)->sq_start(&wr, &seq));
  EXPECT_EQ(wr.length, 16u);
  ASSERT_NE(wr.inline_data, nullptr);
  EXPECT_EQ(std::memcmp(wr.inline_data, buf, 16), 0);
}

TEST_F(QpTest, DataPathCompletesInOrderAndSilentSuccessIsSilent) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64);
  NDK_QP* q = qp(p, c);
  auto* impl = qp_of(q);
  impl->set_state(QpState::kConnected);
  int ctx[3];
  NDK_SGE sge{};
  ASSERT_EQ(q->Dispatch->NdkSend(q, &ctx[0], &sge, 0, NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
  ASSERT_EQ(q->Dispatch->NdkSend(q, &ctx[1], &sge, 0, NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
  ASSERT_EQ(q->Dispatch->NdkSend(q, &ctx[2], &sge, 0, 0), STATUS_SUCCESS);
  softndk::ndk::WorkRequest wr;
  uint64_t s0, s1, s2;
  ASSERT_TRUE(impl->sq_start(&wr, &s0));
  ASSERT_TRUE(impl->sq_start(&wr, &s1));
  ASSERT_TRUE(impl->sq_start(&wr, &s2));
  EXPECT_FALSE(impl->sq_start(&wr, &s2 + 0));
  // Out of order completion: CQEs still in posting order.
  EXPECT_TRUE(impl->sq_complete(s2, STATUS_SUCCESS, 0));
  EXPECT_TRUE(impl->sq_complete(s1, STATUS_DATA_ERROR, 0));  // failed silent: CQE
  EXPECT_TRUE(impl->sq_complete(s0, STATUS_SUCCESS, 0));     // silent success: none
  NDK_RESULT_EX r[4];
  ASSERT_EQ(c->Dispatch->NdkGetCqResultsEx(c, r, 4), 2u);
  EXPECT_EQ(r[0].RequestContext, &ctx[1]);
  EXPECT_EQ(r[0].Status, STATUS_DATA_ERROR);
  EXPECT_EQ(r[1].RequestContext, &ctx[2]);
  EXPECT_EQ(r[1].Status, STATUS_SUCCESS);
}

TEST_F(QpTest, ReceiveTakeAndComplete) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64);
  NDK_QP* q = qp(p, c);
  int ctx;
  char buf[32];
  NDK_SGE sge{{buf}, 32, 5};
  ASSERT_EQ(q->Dispatch->NdkReceive(q, &ctx, &sge, 1), STATUS_SUCCESS);
  softndk::ndk::ReceiveRequest rr;
  ASSERT_TRUE(qp_of(q)->rq_take(&rr));
  EXPECT_EQ(rr.context, &ctx);
  EXPECT_EQ(rr.length, 32u);
  EXPECT_EQ(rr.sge[0].MemoryRegionToken, 5u);
  qp_of(q)->complete_receive(rr, STATUS_SUCCESS, 12, false, 0x1234);
  NDK_RESULT_EX r[1];
  ASSERT_EQ(c->Dispatch->NdkGetCqResultsEx(c, r, 1), 1u);
  EXPECT_EQ(r[0].BytesTransferred, 12u);
  EXPECT_EQ(r[0].Type, NdkOperationTypeReceiveAndInvalidate);
  EXPECT_EQ(r[0].TypeSpecificCompletionOutput, 0x1234u);
}

// A backend's own code for a failure (provider interface v5: the verbs
// backend's work-completion status) reaches NDK_RESULT_EX.ProviderErrorCode
// of that request only; successes carry 0.
TEST_F(QpTest, ProviderErrorCodeOfAFailureReachesTheResult) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64);
  NDK_QP* q = qp(p, c);
  auto* impl = qp_of(q);
  impl->set_state(QpState::kConnected);
  int ctx[2];
  NDK_SGE sge{};
  ASSERT_EQ(q->Dispatch->NdkSend(q, &ctx[0], &sge, 0, 0), STATUS_SUCCESS);
  ASSERT_EQ(q->Dispatch->NdkSend(q, &ctx[1], &sge, 0, 0), STATUS_SUCCESS);
  softndk::ndk::WorkRequest wr;
  uint64_t s0, s1;
  ASSERT_TRUE(impl->sq_start(&wr, &s0));
  ASSERT_TRUE(impl->sq_start(&wr, &s1));
  EXPECT_TRUE(impl->sq_complete(s1, STATUS_INVALID_PARAMETER, 0, 0, 0x06));
  EXPECT_TRUE(impl->sq_complete(s0, STATUS_SUCCESS, 0, 0, 0x77));
  NDK_RESULT_EX r[2];
  ASSERT_EQ(c->Dispatch->NdkGetCqResultsEx(c, r, 2), 2u);
  EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(r[0].ProviderErrorCode, 0u);
  EXPECT_EQ(r[1].Status, STATUS_INVALID_PARAMETER);
  EXPECT_EQ(r[1].ProviderErrorCode, 0x06u);
  int rctx;
  char buf[8];
  NDK_SGE rs{{buf}, 8, 5};
  ASSERT_EQ(q->Dispatch->NdkReceive(q, &rctx, &rs, 1), STATUS_SUCCESS);
  softndk::ndk::ReceiveRequest rr;
  ASSERT_TRUE(impl->rq_take(&rr));
  impl->complete_receive(rr, STATUS_BUFFER_OVERFLOW, 0, false, 0, 0x01);
  ASSERT_EQ(c->Dispatch->NdkGetCqResultsEx(c, r, 1), 1u);
  EXPECT_EQ(r[0].Status, STATUS_BUFFER_OVERFLOW);
  EXPECT_EQ(r[0].ProviderErrorCode, 0x01u);
}

TEST_F(QpTest, BindAndFastRegisterPostTimeChecks) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64);
  NDK_QP* q = qp(p, c);
  qp_of(q)->set_state(QpState::kConnected);
  char buf[8192];
  NDK_MR* m = mr(p);
  MDL mdl{nullptr, buf, sizeof buf};
  ASSERT_EQ(m->Dispatch->NdkRegisterMr(m, &mdl, sizeof buf, NDK_MR_FLAG_ALLOW_REMOTE_READ, nullptr,
                                       nullptr),
            STATUS_SUCCESS);
  NDK_MW* w = nullptr;
  ASSERT_EQ(p->Dispatch->NdkCreateMw(p, nullptr, nullptr, &w), STATUS_SUCCESS);
  UINT32 before = w->Dispatch->NdkGetRemoteTokenFromMw(w);
  // Remote write needs local write on the MR.
  EXPECT_EQ(q->Dispatch->NdkBind(q, nullptr, m, w, buf, 64, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
            STATUS_ACCESS_VIOLATION);
  EXPECT_EQ(q->Dispatch->NdkBind(q, nullptr, m, w, buf + 8190, 64, NDK_OP_FLAG_ALLOW_REMOTE_READ),
            STATUS_INVALID_PARAMETER);  // outside the MR
  ASSERT_EQ(q->Dispatch->NdkBind(q, nullptr, m, w, buf, 64, NDK_OP_FLAG_ALLOW_REMOTE_READ),
            STATUS_SUCCESS);
  EXPECT_NE(w->Dispatch->NdkGetRemoteTokenFromMw(w), before);  // valid once NdkBind returned
  NDK_MR* f = mr(p, true);
  ASSERT_EQ(f->Dispatch->NdkInitializeFastRegisterMr(f, 4, FALSE, nullptr, nullptr),
            STATUS_SUCCESS);
  NDK_LOGICAL_ADDRESS pages[2];
  pages[0].QuadPart = 0x10000;
  pages[1].QuadPart = 0x11000;
  EXPECT_EQ(
      q->Dispatch->NdkFastRegister(q, nullptr, f, 2, pages, 0, 8192,
                                   reinterpret_cast<PVOID>(0x10000), NDK_OP_FLAG_ALLOW_REMOTE_READ),
      STATUS_ACCESS_VIOLATION);  // initialised without remote access
  EXPECT_EQ(q->Dispatch->NdkFastRegister(q, nullptr, f, 8, pages, 0, 8192,
                                         reinterpret_cast<PVOID>(0x10000), 0),
            STATUS_INVALID_PARAMETER);  // beyond the page budget
  EXPECT_EQ(q->Dispatch->NdkFastRegister(q, nullptr, f, 2, pages, 0, 8193,
                                         reinterpret_cast<PVOID>(0x10000), 0),
            STATUS_INVALID_PARAMETER);  // longer than the pages
  UINT32 t0 = f->Dispatch->NdkGetRemoteTokenFromMr(f);
  ASSERT_EQ(
      q->Dispatch->NdkFastRegister(q, nullptr, f, 2, pages, 0, 8192,
                                   reinterpret_cast<PVOID>(0x10000), NDK_OP_FLAG_ALLOW_LOCAL_WRITE),
      STATUS_SUCCESS);
  // One token for the MR's lifetime (read once after initialisation).
  EXPECT_EQ(f->Dispatch->NdkGetRemoteTokenFromMr(f), t0);
  // Invalidate takes FR MRs and MWs, never normal MRs.
  EXPECT_EQ(q->Dispatch->NdkInvalidate(q, nullptr, &m->Header, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(q->Dispatch->NdkInvalidate(q, nullptr, &w->Header, 0), STATUS_SUCCESS);
  EXPECT_EQ(q->Dispatch->NdkInvalidate(q, nullptr, &p->Header, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(qp_of(q)->sq_pending(), 3u);
}

TEST_F(QpTest, CqClosedBeforeQpPends) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq();
  NDK_QP* q = qp(p, c);
  Waiter w;
  ASSERT_EQ(c->Dispatch->NdkCloseCq(&c->Header, &Waiter::close_cb, &w), STATUS_PENDING);
  EXPECT_FALSE(w.wait(std::chrono::milliseconds(30)));
  ASSERT_EQ(close(q), STATUS_SUCCESS);
  ASSERT_TRUE(w.wait());
}

}  // namespace
}  // namespace ndktest

namespace ndktest {
namespace {

// Provider interface v2 (provider.h): receives a device engine took for a
// connection that then failed go back to the front of the queue in their
// order (QpHost::rq_untake), and a queue with no room refuses them.
TEST_F(QpTest, ReceivesTakenAndGivenBackKeepTheirOrder) {
  NDK_PD* p = pd();
  NDK_CQ* c = cq(64);
  NDK_QP* q = nullptr;
  ASSERT_EQ(create_qp(p, c, &q, 4, 4, 2, 2, 0), STATUS_SUCCESS);
  int ctx[5];
  char buf[8];
  NDK_SGE sge[2] = {};
  sge[0].VirtualAddress = buf;
  sge[0].Length = 4;
  sge[1].VirtualAddress = buf + 4;
  sge[1].Length = 4;
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(q->Dispatch->NdkReceive(q, &ctx[i], sge, 2), STATUS_SUCCESS);
  softndk::provider::QpHost* host = qp_of(q);
  softndk::provider::ReceiveRequest taken[2];
  ASSERT_TRUE(host->rq_take(&taken[0]));
  ASSERT_TRUE(host->rq_take(&taken[1]));
  EXPECT_EQ(taken[0].context, &ctx[0]);
  EXPECT_EQ(taken[1].context, &ctx[1]);
  // Meanwhile the consumer posts one more: the ring holds ctx[2], ctx[3].
  ASSERT_EQ(q->Dispatch->NdkReceive(q, &ctx[3], sge, 1), STATUS_SUCCESS);
  EXPECT_TRUE(host->rq_untake(taken[1]));  // last taken first
  EXPECT_TRUE(host->rq_untake(taken[0]));
  EXPECT_EQ(qp_of(q)->rq_pending(), 4u);
  // Full (depth 4): a fifth is refused.
  EXPECT_FALSE(host->rq_untake(taken[0]));
  softndk::provider::ReceiveRequest again;
  ASSERT_TRUE(host->rq_take(&again));
  EXPECT_EQ(again.context, &ctx[0]);
  EXPECT_EQ(again.nsge, 2u);
  EXPECT_EQ(again.sge[1].VirtualAddress, buf + 4);
  EXPECT_EQ(again.length, 8u);
  ASSERT_TRUE(host->rq_untake(again));
  q->Dispatch->NdkFlush(q);
  NDK_RESULT_EX r[8];
  ASSERT_EQ(c->Dispatch->NdkGetCqResultsEx(c, r, 8), 4u);
  void* want[4] = {&ctx[0], &ctx[1], &ctx[2], &ctx[3]};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r[i].Status, STATUS_CANCELLED);
    EXPECT_EQ(r[i].RequestContext, want[i]) << i;
  }
  close(q);
  close(c);
  close(p);
}

}  // namespace
}  // namespace ndktest
