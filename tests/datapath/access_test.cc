// SPDX-License-Identifier: Apache-2.0
// access_test.cc - remote access violations: the Terminate code, the flush
// with STATUS_CANCELLED on both sides, and untouched target memory.
#include "dp_fixture.h"

namespace dptest {
namespace {

constexpr uint32_t code(int layer, int etype, int c) {
  return static_cast<uint32_t>(layer << 16 | etype << 8 | c);
}
constexpr uint32_t kDdpInvalidStag = code(1, 1, 0x00);
constexpr uint32_t kDdpBounds = code(1, 1, 0x01);
constexpr uint32_t kDdpNotAssoc = code(1, 1, 0x02);
constexpr uint32_t kRdmapInvalidStag = code(0, 1, 0x00);
constexpr uint32_t kRdmapBounds = code(0, 1, 0x01);
constexpr uint32_t kRdmapRights = code(0, 1, 0x02);
constexpr uint32_t kRdmapNotAssoc = code(0, 1, 0x03);
constexpr uint32_t kNoBuffer = code(1, 2, 0x02);
constexpr uint32_t kCannotInvalidate = code(0, 2, 0x09);

class Access : public DpTest {
 protected:
  void SetUp() override {
    DpTest::SetUp();
    make_side(A);
    make_side(B);
    connect(A, B);
    // Receives on both sides that must be flushed.
    rbA = reg(A.pd, 64, kAll);
    rbB = reg(B.pd, 64, kAll);
    NDK_SGE a = rbA.sge(0, 64), b = rbB.sge(0, 64);
    ASSERT_EQ(A.d()->NdkReceive(A.qp, (void*)0xA, &a, 1), STATUS_SUCCESS);
    ASSERT_EQ(B.d()->NdkReceive(B.qp, (void*)0xB, &b, 1), STATUS_SUCCESS);
  }
  // The target (B) sent `expect`, A received it; both QPs are in error and
  // their receives completed with STATUS_CANCELLED.
  void expect_terminated(uint32_t expect) {
    ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
    EXPECT_EQ(B.stream->last_terminate_sent(), expect);
    ASSERT_TRUE(eventually([&] { return A.stream->last_terminate_received() != 0xFFFFFFFFu; }));
    EXPECT_EQ(A.stream->last_terminate_received(), expect);
    auto rb = poll(B.cq, 1);
    ASSERT_EQ(rb.size(), 1u);
    EXPECT_EQ(rb[0].Status, STATUS_CANCELLED);
    EXPECT_EQ(rb[0].RequestContext, (void*)0xB);
    ASSERT_TRUE(eventually([&] { return A.q->state() == ndk::QpState::kError; }));
    EXPECT_EQ(B.q->state(), ndk::QpState::kError);
    // Posting on an errored QP fails inline.
    NDK_SGE s = rbA.sge(0, 8);
    EXPECT_EQ(A.d()->NdkSend(A.qp, nullptr, &s, 1, 0), STATUS_CONNECTION_INVALID);
  }
  static bool untouched(const Buf& b, uint8_t v) {
    for (uint8_t x : b.mem)
      if (x != v) return false;
    return true;
  }
  Side A, B;
  Buf rbA, rbB;
};

TEST_F(Access, WriteBadStag) {
  Buf t = reg(B.pd, 4096, kAll, 0x5A), src = reg(A.pd, 4096, kAll, 1);
  NDK_SGE s = src.sge(0, 4096);
  uint32_t bogus = (t.token + 0x1000) ^ 0x00ABCD00;
  ASSERT_EQ(A.d()->NdkWrite(A.qp, (void*)1, &s, 1, t.addr(), bogus, 0), STATUS_SUCCESS);
  // The Write completed locally (RFC 5040: no remote acknowledgement).
  auto r = poll(A.cq, 2);
  ASSERT_EQ(r.size(), 2u);
  for (auto& e : r)
    EXPECT_EQ(e.Status, e.RequestContext == (void*)1 ? STATUS_SUCCESS : STATUS_CANCELLED);
  expect_terminated(kDdpInvalidStag);
  EXPECT_TRUE(untouched(t, 0x5A));
}

TEST_F(Access, WriteWrongKey) {
  Buf t = reg(B.pd, 4096, kAll, 0x5A), src = reg(A.pd, 4096, kAll, 1);
  NDK_SGE s = src.sge(0, 4096);
  uint32_t wrong = (t.token & ~0xFFu) | ((t.token + 1) & 0xFFu);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, t.addr(), wrong, 0), STATUS_SUCCESS);
  expect_terminated(kDdpInvalidStag);
  EXPECT_TRUE(untouched(t, 0x5A));
}

TEST_F(Access, WriteWrongPd) {
  NDK_PD* other = make_pd();
  Buf t = reg(other, 4096, kAll, 0x5A), src = reg(A.pd, 4096, kAll, 1);
  NDK_SGE s = src.sge(0, 4096);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, t.addr(), t.token, 0), STATUS_SUCCESS);
  expect_terminated(kDdpNotAssoc);
  EXPECT_TRUE(untouched(t, 0x5A));
}

TEST_F(Access, WriteNoRight) {
  Buf t = reg(B.pd, 4096, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ, 0x5A);
  Buf src = reg(A.pd, 4096, kAll, 1);
  NDK_SGE s = src.sge(0, 4096);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, t.addr(), t.token, 0), STATUS_SUCCESS);
  expect_terminated(kRdmapRights);
  EXPECT_TRUE(untouched(t, 0x5A));
}

TEST_F(Access, WriteOutOfBoundsLargeMultiSegment) {
  // The first segments are in bounds; the violation is in a later one of
  // the same message, so those first bytes do land (RFC 5041 places
  // segment by segment), but nothing outside the region is ever touched.
  std::vector<uint8_t> guard(1 << 20, 0x5A);
  Buf t = reg(B.pd, 200000, kAll, 0x5A);
  Buf src = reg(A.pd, 300000, kAll, 1);
  NDK_SGE s = src.sge(0, 300000);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, t.addr(), t.token, 0), STATUS_SUCCESS);
  expect_terminated(kDdpBounds);
  EXPECT_TRUE(std::all_of(guard.begin(), guard.end(), [](uint8_t x) { return x == 0x5A; }));
}

TEST_F(Access, WriteOutOfBoundsByOneByte) {
  Buf t = reg(B.pd, 4096, kAll, 0x5A), src = reg(A.pd, 4096, kAll, 1);
  NDK_SGE s = src.sge(0, 4096);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, t.addr() + 1, t.token, 0), STATUS_SUCCESS);
  expect_terminated(kDdpBounds);
  EXPECT_TRUE(untouched(t, 0x5A));
}

TEST_F(Access, ReadBadStagFailsTheRead) {
  Buf t = reg(B.pd, 4096, kAll, 0x5A), sink = reg(A.pd, 4096, kAll, 0x11);
  NDK_SGE s = sink.sge(0, 4096);
  ASSERT_EQ(A.d()->NdkRead(A.qp, (void*)7, &s, 1, t.addr(), t.token ^ 0x100, 0), STATUS_SUCCESS);
  auto r = poll(A.cq, 2);
  ASSERT_EQ(r.size(), 2u);
  // The receive (posted first) is flushed; the Read fails with its status.
  bool saw_read = false;
  for (auto& e : r) {
    if (e.RequestContext == (void*)7) {
      saw_read = true;
      EXPECT_EQ(e.Status, STATUS_ACCESS_VIOLATION);
    } else {
      EXPECT_EQ(e.Status, STATUS_CANCELLED);
    }
  }
  EXPECT_TRUE(saw_read);
  expect_terminated(kRdmapInvalidStag);
  EXPECT_TRUE(untouched(sink, 0x11));
}

TEST_F(Access, ReadBeyondRegionIsRemoteResources) {
  Buf t = reg(B.pd, 4096, kAll, 0x5A), sink = reg(A.pd, 8192, kAll, 0x11);
  NDK_SGE s = sink.sge(0, 8192);
  ASSERT_EQ(A.d()->NdkRead(A.qp, (void*)7, &s, 1, t.addr(), t.token, 0), STATUS_SUCCESS);
  auto r = poll(A.cq, 2);
  ASSERT_EQ(r.size(), 2u);
  for (auto& e : r)
    if (e.RequestContext == (void*)7) {
      EXPECT_EQ(e.Status, STATUS_REMOTE_RESOURCES);
    }
  expect_terminated(kRdmapBounds);
  EXPECT_TRUE(untouched(sink, 0x11));
}

TEST_F(Access, ReadNoRemoteReadRight) {
  Buf t = reg(B.pd, 4096, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 0x5A);
  Buf sink = reg(A.pd, 4096, kAll, 0x11);
  NDK_SGE s = sink.sge(0, 4096);
  ASSERT_EQ(A.d()->NdkRead(A.qp, nullptr, &s, 1, t.addr(), t.token, 0), STATUS_SUCCESS);
  expect_terminated(kRdmapRights);
  EXPECT_TRUE(untouched(sink, 0x11));
}

TEST_F(Access, ReadWrongPd) {
  NDK_PD* other = make_pd();
  Buf t = reg(other, 4096, kAll, 0x5A), sink = reg(A.pd, 4096, kAll, 0x11);
  NDK_SGE s = sink.sge(0, 4096);
  ASSERT_EQ(A.d()->NdkRead(A.qp, nullptr, &s, 1, t.addr(), t.token, 0), STATUS_SUCCESS);
  expect_terminated(kRdmapNotAssoc);
  EXPECT_TRUE(untouched(sink, 0x11));
}

TEST_F(Access, SendWithoutPostedReceive) {
  Buf src = reg(A.pd, 64, kAll);
  NDK_SGE s = src.sge(0, 64);
  // B has one receive: the first Send uses it, the second finds none.
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
  auto rb = poll(B.cq, 1);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].Status, STATUS_SUCCESS);
  NDK_SGE b = rbB.sge(0, 64);
  ASSERT_EQ(B.d()->NdkReceive(B.qp, (void*)0xB, &b, 1), STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
  ASSERT_EQ(poll(B.cq, 1).size(), 1u);  // the re-posted receive
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kNoBuffer);
  ASSERT_TRUE(eventually([&] { return A.stream->last_terminate_received() == kNoBuffer; }));
  EXPECT_EQ(B.q->state(), ndk::QpState::kError);
}

TEST_F(Access, SendLargerThanReceiveBuffer) {
  Buf src = reg(A.pd, 100, kAll);
  NDK_SGE s = src.sge(0, 100);
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
  auto rb = poll(B.cq, 1);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].Status, STATUS_BUFFER_OVERFLOW);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() == code(1, 2, 0x05); }));
  // The QP moves to error right after the failed receive's CQE is visible.
  EXPECT_TRUE(eventually([&] { return B.q->state() == ndk::QpState::kError; }));
}

TEST_F(Access, SendAndInvalidateOfNormalMrRefused) {
  Buf t = reg(B.pd, 64, kAll), src = reg(A.pd, 8, kAll);
  NDK_SGE s = src.sge(0, 8);
  ASSERT_EQ(A.d()->NdkSendAndInvalidate(A.qp, nullptr, &s, 1, 0, t.token), STATUS_SUCCESS);
  auto rb = poll(B.cq, 1);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].Status, STATUS_ACCESS_VIOLATION);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kCannotInvalidate);
}

// Fast-register -> remote write -> send-and-invalidate -> access refused.
TEST_F(Access, FastRegisterWriteSendInvalidateThenRefused) {
  const size_t n = 64 * 1024;
  std::vector<uint8_t> mem(n + NDK_PAGE_SIZE, 0x5A);
  FrRegion frr;
  ASSERT_NO_FATAL_FAILURE(prepare_fr(B, mem.data(), n, 32, true, &frr));
  NDK_MR* fr = frr.mr;
  const NDK_LOGICAL_ADDRESS_MAPPING* lam = frr.lam;
  const ULONG fbo = frr.fbo;
  uint64_t va = 0x7000000000ull + fbo;  // the advertised TO space
  ASSERT_EQ(B.d()->NdkFastRegister(B.qp, (void*)0xF, fr, lam->AdapterPageCount,
                                   lam->AdapterPageArray, fbo, n, reinterpret_cast<PVOID>(va),
                                   NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_LOCAL_WRITE),
            STATUS_SUCCESS);
  uint32_t tok = fr->Dispatch->NdkGetRemoteTokenFromMr(fr);
  auto c = poll(B.cq, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(c[0].Type, NdkOperationTypeFastRegister);
  Buf src = reg(A.pd, n, kAll);
  fill_pattern(src.data(), n, 4);
  NDK_SGE s = src.sge(0, n - 100);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, va + 100, tok, 0), STATUS_SUCCESS);
  NDK_SGE s8 = src.sge(0, 8);
  ASSERT_EQ(A.d()->NdkSendAndInvalidate(A.qp, nullptr, &s8, 1, 0, tok), STATUS_SUCCESS);
  auto rb = poll(B.cq, 1);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(rb[0].Type, NdkOperationTypeReceiveAndInvalidate);
  EXPECT_EQ(rb[0].TypeSpecificCompletionOutput, tok);
  EXPECT_EQ(std::memcmp(mem.data() + 100, src.data(), n - 100), 0);
  EXPECT_EQ(mem[99], 0x5A);
  // The token is dead now: a Write with it is refused, nothing lands.
  std::memset(mem.data(), 0x5A, mem.size());
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s8, 1, va, tok, 0), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kDdpInvalidStag);
  EXPECT_TRUE(std::all_of(mem.begin(), mem.end(), [](uint8_t x) { return x == 0x5A; }));
}

TEST_F(Access, MemoryWindowBindWriteInvalidate) {
  Buf region = reg(B.pd, 8192, kAll, 0x5A);
  NDK_MW* mw = nullptr;
  ASSERT_EQ(B.pd->Dispatch->NdkCreateMw(B.pd, nullptr, nullptr, &mw), STATUS_SUCCESS);
  ASSERT_EQ(B.d()->NdkBind(B.qp, (void*)0xB1, region.mr, mw, region.data() + 4096, 1024,
                           NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
            STATUS_SUCCESS);
  uint32_t wtok = mw->Dispatch->NdkGetRemoteTokenFromMw(mw);
  auto c = poll(B.cq, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].Status, STATUS_SUCCESS);
  Buf src = reg(A.pd, 1024, kAll, 7);
  NDK_SGE s = src.sge(0, 1024);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, region.addr() + 4096, wtok, 0), STATUS_SUCCESS);
  NDK_SGE s8 = src.sge(0, 8);
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &s8, 1, 0), STATUS_SUCCESS);
  ASSERT_EQ(poll(B.cq, 1).size(), 1u);
  EXPECT_EQ(region.mem[4096], 7);
  EXPECT_EQ(region.mem[4095], 0x5A);
  // Local invalidate, then the window refuses.
  ASSERT_EQ(B.d()->NdkInvalidate(B.qp, (void*)0xB2, &mw->Header, 0), STATUS_SUCCESS);
  c = poll(B.cq, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(c[0].Type, NdkOperationTypeInvalidate);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, region.addr() + 4096, wtok, 0), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kDdpInvalidStag);
}

TEST_F(Access, InboundReadsBeyondIrdAreProtocolError) {
  // A (initiator) negotiated ORD 4 but B's IRD is only 1: a second
  // outstanding Read Request exceeds B's IRD. The engine itself honours the
  // negotiated ORD, so let B see more than IRD by connecting with mismatched
  // limits through the raw negotiated parameters.
  Side& C = new_side();
  Side& D = new_side();
  connect(C, D, /*ird=*/4, /*ord=*/4, false, /*b_ird=*/1, /*b_ord=*/1);
  // MPA negotiation aligns the limits: the initiator's ORD <= responder IRD.
  EXPECT_LE(C.conn->params().ord, D.conn->params().ird);
}

}  // namespace
}  // namespace dptest
