// SPDX-License-Identifier: Apache-2.0
// fr_token_test.cc - a fast-register MR keeps one token for its lifetime
// (NDKPI consumers read it once after NdkInitializeFastRegisterMr), and
// stale access is refused because the STag is invalid between an
// invalidate and the next fast register; an invalid token cannot be
// invalidated again. Over real sockets (127.0.0.1), checked on the target.
#include "dp_fixture.h"

namespace dptest {
namespace {

constexpr uint32_t kDdpInvalidStag = 1u << 16 | 1u << 8 | 0x00;    // DDP tagged, invalid STag
constexpr uint32_t kRdmapInvalidStag = 0u << 16 | 1u << 8 | 0x00;  // RDMAP protection, invalid STag
constexpr uint32_t kLocalCatastrophic = 0u << 16 | 0u << 8 | 0x00;  // RDMAP local catastrophic

class FrToken : public DpTest {
 protected:
  void start(ULONG flags = 0) {
    if (flags != 0) {
      SoftNdkCloseAdapter(a_);
      a_ = nullptr;
      open(1, flags);
    }
    make_side(A);
    make_side(B);
    connect(A, B);
    // Two page-aligned windows of one buffer, fast-registered in turn.
    mem_.assign(kN * 2 + NDK_PAGE_SIZE, 0x5A);
    uint8_t* base = mem_.data();
    base += (NDK_PAGE_SIZE - reinterpret_cast<uintptr_t>(base) % NDK_PAGE_SIZE) % NDK_PAGE_SIZE;
    win_[0] = base;
    win_[1] = base + kN;
    ASSERT_NO_FATAL_FAILURE(prepare_fr(B, win_[0], kN, kN / NDK_PAGE_SIZE, true, &fr_[0]));
    // The second window's pages, for the same MR (its own LAM).
    FrRegion other;
    ASSERT_NO_FATAL_FAILURE(prepare_fr(B, win_[1], kN, kN / NDK_PAGE_SIZE, true, &other));
    fr_[1].lam_buf = other.lam_buf;
    fr_[1].lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(fr_[1].lam_buf.data());
    fr_[1].fbo = other.fbo;
    fr_[1].mr = fr_[0].mr;
    mr_ = fr_[0].mr;
  }
  // Fast-registers window w of the one MR at the advertised address va(w).
  NTSTATUS fast_register(int w, void* ctx) {
    const FrRegion& r = fr_[w];
    return B.d()->NdkFastRegister(B.qp, ctx, mr_, r.lam->AdapterPageCount, r.lam->AdapterPageArray,
                                  r.fbo, kN, reinterpret_cast<PVOID>(va(w)),
                                  NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
                                      NDK_OP_FLAG_ALLOW_LOCAL_WRITE);
  }
  // Each registration advertises its own tagged-offset space.
  static uint64_t va(int w) { return 0x7100000000ull + static_cast<uint64_t>(w) * 0x100000000ull; }
  NDK_RESULT_EX expect_one(NDK_CQ* cq, NDK_OPERATION_TYPE type, NTSTATUS st) {
    auto c = poll(cq, 1);
    EXPECT_EQ(c.size(), 1u);
    if (c.empty()) return {};
    EXPECT_EQ(c[0].Type, type);
    EXPECT_EQ(c[0].Status, st);
    return c[0];
  }
  bool window_is(int w, uint8_t v) const {
    return std::all_of(win_[w], win_[w] + kN, [v](uint8_t x) { return x == v; });
  }

  static constexpr size_t kN = 4 * NDK_PAGE_SIZE;
  Side A, B;
  std::vector<uint8_t> mem_;
  uint8_t* win_[2] = {nullptr, nullptr};
  FrRegion fr_[2];
  NDK_MR* mr_ = nullptr;
};

// The token read after NdkInitializeFastRegisterMr is the token of every
// later registration; a Write and a Read with it land in (and come from)
// the current range only.
TEST_F(FrToken, OneTokenAcrossFastRegisters) {
  ASSERT_NO_FATAL_FAILURE(start());
  const uint32_t tok = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
  ASSERT_NE(tok, 0u);
  EXPECT_EQ(mr_->Dispatch->NdkGetLocalTokenFromMr(mr_), tok);
  Buf src = reg(A.pd, kN, kAll), sink = reg(A.pd, kN, kAll);
  for (int i = 0; i < 6; ++i) {
    const int w = i % 2;
    std::fill(mem_.begin(), mem_.end(), 0x5A);
    ASSERT_EQ(fast_register(w, (void*)0xF), STATUS_SUCCESS);
    expect_one(B.cq, NdkOperationTypeFastRegister, STATUS_SUCCESS);
    EXPECT_EQ(mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_), tok) << "registration " << i;
    EXPECT_EQ(mr_->Dispatch->NdkGetLocalTokenFromMr(mr_), tok);
    // A writes with the token it was given once, at this registration's VA.
    fill_pattern(src.data(), kN, 100 + i);
    NDK_SGE s = src.sge(0, kN - 64);
    ASSERT_EQ(A.d()->NdkWrite(A.qp, (void*)1, &s, 1, va(w) + 64, tok, 0), STATUS_SUCCESS);
    expect_one(A.cq, NdkOperationTypeWrite, STATUS_SUCCESS);
    // ... and reads it back (the Read Response follows the placed Write).
    NDK_SGE d = sink.sge(0, kN - 64);
    ASSERT_EQ(A.d()->NdkRead(A.qp, (void*)2, &d, 1, va(w) + 64, tok, 0), STATUS_SUCCESS);
    expect_one(A.cq, NdkOperationTypeRead, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(win_[w] + 64, src.data(), kN - 64), 0) << "registration " << i;
    EXPECT_EQ(std::memcmp(sink.data(), src.data(), kN - 64), 0);
    EXPECT_EQ(win_[w][63], 0x5A);
    EXPECT_TRUE(window_is(1 - w, 0x5A)) << "the other range was touched";
    ASSERT_EQ(B.d()->NdkInvalidate(B.qp, (void*)0x1, &mr_->Header, 0), STATUS_SUCCESS);
    expect_one(B.cq, NdkOperationTypeInvalidate, STATUS_SUCCESS);
  }
  // Invalidated: the same token is refused with the RFC's Terminate and
  // nothing lands anywhere.
  std::fill(mem_.begin(), mem_.end(), 0x5A);
  NDK_SGE s = src.sge(0, 64);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, va(0), tok, 0), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kDdpInvalidStag);
  EXPECT_TRUE(window_is(0, 0x5A));
  EXPECT_TRUE(window_is(1, 0x5A));
}

// After the peer's Send with Invalidate the token is dead: a Read with it
// is refused (RDMAP invalid STag) until the next fast register.
TEST_F(FrToken, RemotelyInvalidatedTokenRefusesReads) {
  ASSERT_NO_FATAL_FAILURE(start());
  const uint32_t tok = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
  ASSERT_EQ(fast_register(0, nullptr), STATUS_SUCCESS);
  expect_one(B.cq, NdkOperationTypeFastRegister, STATUS_SUCCESS);
  Buf rb = reg(B.pd, 64, kAll), src = reg(A.pd, 64, kAll), sink = reg(A.pd, 64, kAll);
  NDK_SGE r = rb.sge(0, 64);
  ASSERT_EQ(B.d()->NdkReceive(B.qp, (void*)0xB, &r, 1), STATUS_SUCCESS);
  NDK_SGE s = src.sge(0, 8);
  ASSERT_EQ(A.d()->NdkSendAndInvalidate(A.qp, nullptr, &s, 1, 0, tok), STATUS_SUCCESS);
  expect_one(A.cq, NdkOperationTypeSend, STATUS_SUCCESS);
  auto c = expect_one(B.cq, NdkOperationTypeReceiveAndInvalidate, STATUS_SUCCESS);
  EXPECT_EQ(c.TypeSpecificCompletionOutput, tok);
  EXPECT_EQ(mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_), tok);  // still the MR's token
  NDK_SGE d = sink.sge(0, 64);
  ASSERT_EQ(A.d()->NdkRead(A.qp, (void*)2, &d, 1, va(0), tok, 0), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kRdmapInvalidStag);
  auto rd = poll(A.cq, 1);
  ASSERT_EQ(rd.size(), 1u);
  EXPECT_NE(rd[0].Status, STATUS_SUCCESS);
}

// NDKPI's completion-handling page: after the peer's NdkSendAndInvalidate a
// later NdkInvalidate of the same token fails. The failed request
// completes with an error, like every failed local operation (the QP then
// goes to error, as on an RNIC).
TEST_F(FrToken, InvalidateAfterRemoteInvalidateFails) {
  ASSERT_NO_FATAL_FAILURE(start());
  const uint32_t tok = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
  ASSERT_EQ(fast_register(0, nullptr), STATUS_SUCCESS);
  expect_one(B.cq, NdkOperationTypeFastRegister, STATUS_SUCCESS);
  Buf rb = reg(B.pd, 64, kAll), src = reg(A.pd, 64, kAll);
  NDK_SGE r = rb.sge(0, 64);
  ASSERT_EQ(B.d()->NdkReceive(B.qp, (void*)0xB, &r, 1), STATUS_SUCCESS);
  NDK_SGE s = src.sge(0, 8);
  ASSERT_EQ(A.d()->NdkSendAndInvalidate(A.qp, nullptr, &s, 1, 0, tok), STATUS_SUCCESS);
  expect_one(B.cq, NdkOperationTypeReceiveAndInvalidate, STATUS_SUCCESS);
  ASSERT_EQ(B.d()->NdkInvalidate(B.qp, (void*)0x11, &mr_->Header, 0), STATUS_SUCCESS);
  auto c = expect_one(B.cq, NdkOperationTypeInvalidate, STATUS_INVALID_PARAMETER);
  EXPECT_EQ(c.RequestContext, (void*)0x11);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kLocalCatastrophic);
}

// The same page: the receive that consumed a Send with Invalidate is also
// retrievable with the plain NdkGetCqResults (NDK_RESULT has no Type); the
// token is invalidated all the same.
TEST_F(FrToken, ReceiveAndInvalidateThroughPlainGetCqResults) {
  ASSERT_NO_FATAL_FAILURE(start());
  const uint32_t tok = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
  ASSERT_EQ(fast_register(0, nullptr), STATUS_SUCCESS);
  expect_one(B.cq, NdkOperationTypeFastRegister, STATUS_SUCCESS);
  Buf rb = reg(B.pd, 64, kAll), src = reg(A.pd, 64, kAll);
  NDK_SGE r = rb.sge(0, 64);
  ASSERT_EQ(B.d()->NdkReceive(B.qp, (void*)0xB, &r, 1), STATUS_SUCCESS);
  NDK_SGE s = src.sge(0, 8);
  ASSERT_EQ(A.d()->NdkSendAndInvalidate(A.qp, nullptr, &s, 1, 0, tok), STATUS_SUCCESS);
  NDK_RESULT plain{};
  ASSERT_TRUE(eventually([&] { return B.cq->Dispatch->NdkGetCqResults(B.cq, &plain, 1) == 1; }));
  EXPECT_EQ(plain.Status, STATUS_SUCCESS);
  EXPECT_EQ(plain.RequestContext, (void*)0xB);
  EXPECT_EQ(plain.BytesTransferred, 8u);
  ASSERT_EQ(B.d()->NdkInvalidate(B.qp, (void*)0x12, &mr_->Header, 0), STATUS_SUCCESS);
  expect_one(B.cq, NdkOperationTypeInvalidate, STATUS_INVALID_PARAMETER);
}

// The same for a second local NdkInvalidate, and for one of an MR that was
// never fast-registered.
TEST_F(FrToken, SecondLocalInvalidateFails) {
  ASSERT_NO_FATAL_FAILURE(start());
  ASSERT_EQ(fast_register(0, nullptr), STATUS_SUCCESS);
  ASSERT_EQ(B.d()->NdkInvalidate(B.qp, (void*)0x21, &mr_->Header, 0), STATUS_SUCCESS);
  ASSERT_EQ(B.d()->NdkInvalidate(B.qp, (void*)0x22, &mr_->Header, 0), STATUS_SUCCESS);
  auto c = poll(B.cq, 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].Type, NdkOperationTypeFastRegister);
  EXPECT_EQ(c[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(c[1].RequestContext, (void*)0x21);
  EXPECT_EQ(c[1].Status, STATUS_SUCCESS);
  EXPECT_EQ(c[2].RequestContext, (void*)0x22);
  EXPECT_EQ(c[2].Status, STATUS_INVALID_PARAMETER);
}

TEST_F(FrToken, InvalidateOfNeverRegisteredMrFails) {
  ASSERT_NO_FATAL_FAILURE(start());
  ASSERT_EQ(B.d()->NdkInvalidate(B.qp, (void*)0x31, &mr_->Header, 0), STATUS_SUCCESS);
  auto c = expect_one(B.cq, NdkOperationTypeInvalidate, STATUS_INVALID_PARAMETER);
  EXPECT_EQ(c.RequestContext, (void*)0x31);
}

// NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE (the adapter reports
// RDMA_READ_LOCAL_INVALIDATE_SUPPORTED): a successful Read invalidates the
// token of its first SGE, here the fast-registered sink. Without the flag
// the token stays valid (the Invalidate after it succeeds); with it, the
// Invalidate after it finds the token already invalid.
TEST_F(FrToken, ReadWithLocalInvalidateInvalidatesTheSink) {
  ASSERT_NO_FATAL_FAILURE(start());
  const uint32_t tok = mr_->Dispatch->NdkGetLocalTokenFromMr(mr_);
  Buf src = reg(A.pd, kN, kAll, 0x33);
  NDK_SGE sink{};
  sink.VirtualAddress = reinterpret_cast<void*>(va(0));
  sink.Length = kN;
  sink.MemoryRegionToken = tok;
  for (ULONG flags : {0u, static_cast<ULONG>(NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE)}) {
    std::fill(mem_.begin(), mem_.end(), 0x5A);
    // A read sink: RDMA_READ_SINK is accepted (and not needed: the adapter
    // reports RDMA_READ_SINK_NOT_REQUIRED).
    const FrRegion& r = fr_[0];
    ASSERT_EQ(
        B.d()->NdkFastRegister(B.qp, nullptr, mr_, r.lam->AdapterPageCount, r.lam->AdapterPageArray,
                               r.fbo, kN, reinterpret_cast<PVOID>(va(0)),
                               NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK),
        STATUS_SUCCESS);
    expect_one(B.cq, NdkOperationTypeFastRegister, STATUS_SUCCESS);
    ASSERT_EQ(B.d()->NdkRead(B.qp, (void*)0x41, &sink, 1, src.addr(), src.token, flags),
              STATUS_SUCCESS);
    expect_one(B.cq, NdkOperationTypeRead, STATUS_SUCCESS);
    EXPECT_TRUE(window_is(0, 0x33));
    ASSERT_EQ(B.d()->NdkInvalidate(B.qp, (void*)0x42, &mr_->Header, 0), STATUS_SUCCESS);
    expect_one(B.cq, NdkOperationTypeInvalidate,
               flags == 0 ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER);
  }
}

// Each NdkFastRegister carries its own page array. Two registrations of
// one MR queued before the first one runs (one deferred chain: FR, Write
// from it, Invalidate, FR of the other window, Write from that, Send) each
// map their own pages: the first Write reads window 0, the second window 1.
TEST_F(FrToken, QueuedFastRegistersKeepTheirOwnPages) {
  ASSERT_NO_FATAL_FAILURE(start());
  const uint32_t tok = mr_->Dispatch->NdkGetLocalTokenFromMr(mr_);
  std::fill(win_[0], win_[0] + kN, 0x11);
  std::fill(win_[1], win_[1] + kN, 0x22);
  Buf dst = reg(A.pd, 2 * kN, kAll, 0), rb = reg(A.pd, 64, kAll), sb = reg(B.pd, 64, kAll);
  NDK_SGE r = rb.sge(0, 64), note = sb.sge(0, 8);
  ASSERT_EQ(A.d()->NdkReceive(A.qp, (void*)0xA, &r, 1), STATUS_SUCCESS);
  const auto fr = [&](int w) {
    const FrRegion& f = fr_[w];
    return B.d()->NdkFastRegister(
        B.qp, nullptr, mr_, f.lam->AdapterPageCount, f.lam->AdapterPageArray, f.fbo, kN,
        reinterpret_cast<PVOID>(va(w)), NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_DEFER);
  };
  NDK_SGE from[2] = {};
  for (int w = 0; w < 2; ++w) {
    from[w].VirtualAddress = reinterpret_cast<void*>(va(w));
    from[w].Length = kN;
    from[w].MemoryRegionToken = tok;
  }
  ASSERT_EQ(fr(0), STATUS_SUCCESS);
  ASSERT_EQ(B.d()->NdkWrite(B.qp, nullptr, &from[0], 1, dst.addr(), dst.token, NDK_OP_FLAG_DEFER),
            STATUS_SUCCESS);
  ASSERT_EQ(B.d()->NdkInvalidate(B.qp, nullptr, &mr_->Header, NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
  ASSERT_EQ(fr(1), STATUS_SUCCESS);
  ASSERT_EQ(
      B.d()->NdkWrite(B.qp, nullptr, &from[1], 1, dst.addr() + kN, dst.token, NDK_OP_FLAG_DEFER),
      STATUS_SUCCESS);
  ASSERT_EQ(B.d()->NdkSend(B.qp, nullptr, &note, 1, 0), STATUS_SUCCESS);
  auto c = poll(B.cq, 6);
  ASSERT_EQ(c.size(), 6u);
  for (const auto& e : c) EXPECT_EQ(e.Status, STATUS_SUCCESS) << "type " << e.Type;
  ASSERT_EQ(poll(A.cq, 1).size(), 1u);  // the Send: both Writes were placed before it
  EXPECT_TRUE(std::all_of(dst.data(), dst.data() + kN, [](uint8_t x) { return x == 0x11; }));
  EXPECT_TRUE(
      std::all_of(dst.data() + kN, dst.data() + 2 * kN, [](uint8_t x) { return x == 0x22; }));
}

// SOFTNDK_OPEN_FLAG_FR_REKEY keeps the old behaviour: a new token per fast
// register, and the previous one misses.
TEST_F(FrToken, RekeyFlagGivesANewTokenPerRegistration) {
  ASSERT_NO_FATAL_FAILURE(start(SOFTNDK_OPEN_FLAG_FR_REKEY));
  const uint32_t t0 = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
  ASSERT_EQ(fast_register(0, nullptr), STATUS_SUCCESS);
  expect_one(B.cq, NdkOperationTypeFastRegister, STATUS_SUCCESS);
  const uint32_t t1 = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
  EXPECT_NE(t1, t0);
  EXPECT_EQ(t1 >> 8, t0 >> 8);  // same STag index, new key
  Buf src = reg(A.pd, 64, kAll, 7);
  NDK_SGE s = src.sge(0, 64);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, va(0), t1, 0), STATUS_SUCCESS);
  expect_one(A.cq, NdkOperationTypeWrite, STATUS_SUCCESS);
  // Read back: the Read Response follows the placed Write (no polling of
  // memory the peer is writing).
  Buf sink = reg(A.pd, 64, kAll);
  NDK_SGE d = sink.sge(0, 64);
  ASSERT_EQ(A.d()->NdkRead(A.qp, nullptr, &d, 1, va(0), t1, 0), STATUS_SUCCESS);
  expect_one(A.cq, NdkOperationTypeRead, STATUS_SUCCESS);
  EXPECT_EQ(win_[0][0], 7);
  EXPECT_EQ(sink.data()[0], 7);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, va(0), t0, 0), STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kDdpInvalidStag);
}

}  // namespace
}  // namespace dptest
