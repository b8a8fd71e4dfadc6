// SPDX-License-Identifier: Apache-2.0
// ops_test.cc - every work request end to end with byte-by-byte integrity.
#include "dp_fixture.h"

namespace dptest {
namespace {

class Ops : public DpTest {
 protected:
  void SetUp() override {
    DpTest::SetUp();
    make_side(A);
    make_side(B);
    connect(A, B);
  }
  Side A, B;
};

// Send/Receive across SGLs of several entries, sizes 0 B .. 4 MiB.
TEST_F(Ops, SendReceiveSizesAndSgls) {
  const size_t sizes[] = {0, 1, 7, 64, 4095, 4096, 65516, 65517, 200000, 1 << 20, 4 << 20};
  for (size_t n : sizes) {
    for (int nsge : {1, 3, 16}) {
      Buf src = reg(A.pd, n, kAll), dst = reg(B.pd, n + 64, kAll, 0xEE);
      fill_pattern(src.data(), n, static_cast<uint32_t>(n + nsge));
      // Receive SGL: uneven pieces covering n bytes, plus a spare entry.
      std::vector<NDK_SGE> rs, ss;
      size_t off = 0;
      for (int i = 0; i < nsge; ++i) {
        size_t len =
            (i == nsge - 1) ? n - off : std::min(n - off, n / nsge + static_cast<size_t>(i));
        rs.push_back(dst.sge(off, len));
        off += len;
      }
      ASSERT_EQ(B.d()->NdkReceive(B.qp, &dst, rs.data(), static_cast<ULONG>(rs.size())),
                STATUS_SUCCESS);
      off = 0;
      for (int i = 0; i < nsge; ++i) {
        size_t len = (i == nsge - 1) ? n - off : std::min(n - off, (n + i) / nsge);
        ss.push_back(src.sge(off, len));
        off += len;
      }
      ASSERT_EQ(A.d()->NdkSend(A.qp, &src, ss.data(), static_cast<ULONG>(ss.size()), 0),
                STATUS_SUCCESS);
      auto r = poll(B.cq, 1);
      ASSERT_EQ(r.size(), 1u) << n << " " << nsge;
      EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
      EXPECT_EQ(r[0].BytesTransferred, n);
      EXPECT_EQ(r[0].RequestContext, &dst);
      EXPECT_EQ(r[0].Type, NdkOperationTypeReceive);
      EXPECT_EQ(r[0].QPContext, &B);
      auto s = poll(A.cq, 1);
      ASSERT_EQ(s.size(), 1u);
      EXPECT_EQ(s[0].Status, STATUS_SUCCESS);
      EXPECT_EQ(s[0].Type, NdkOperationTypeSend);
      EXPECT_EQ(s[0].BytesTransferred, n);
      ASSERT_EQ(std::memcmp(src.data(), dst.data(), n), 0) << n << " " << nsge;
      for (size_t i = n; i < n + 64; ++i) ASSERT_EQ(dst.mem[i], 0xEE);
    }
  }
}

TEST_F(Ops, WriteSizesAndSgls) {
  Buf dst = reg(B.pd, (4 << 20) + 128, kAll, 0xEE);
  for (size_t n : {size_t{0}, size_t{1}, size_t{13}, size_t{65520}, size_t{65521}, size_t{300001},
                   size_t{4 << 20}}) {
    Buf src = reg(A.pd, n, kAll);
    fill_pattern(src.data(), n, static_cast<uint32_t>(n));
    std::memset(dst.data(), 0xEE, dst.mem.size());
    NDK_SGE sg[3];
    size_t a = n / 3, b = n / 2;
    sg[0] = src.sge(0, a);
    sg[1] = src.sge(a, b - a);
    sg[2] = src.sge(b, n - b);
    ASSERT_EQ(A.d()->NdkWrite(A.qp, &src, sg, 3, dst.addr() + 64, dst.token, 0), STATUS_SUCCESS);
    auto s = poll1(A.cq);
    EXPECT_EQ(s.Status, STATUS_SUCCESS);
    EXPECT_EQ(s.Type, NdkOperationTypeWrite);
    EXPECT_EQ(s.BytesTransferred, n);
    // A Send behind the Write arrives after it: its receive proves placement.
    Buf ping = reg(A.pd, 8, kAll), pong = reg(B.pd, 8, kAll);
    NDK_SGE rs = pong.sge(0, 8), ps = ping.sge(0, 8);
    ASSERT_EQ(B.d()->NdkReceive(B.qp, nullptr, &rs, 1), STATUS_SUCCESS);
    ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &ps, 1, 0), STATUS_SUCCESS);
    ASSERT_EQ(poll(B.cq, 1).size(), 1u);
    ASSERT_EQ(poll(A.cq, 1).size(), 1u);
    ASSERT_EQ(std::memcmp(src.data(), dst.data() + 64, n), 0) << n;
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(dst.mem[i], 0xEE);
    for (size_t i = 64 + n; i < dst.mem.size(); ++i) ASSERT_EQ(dst.mem[i], 0xEE) << n;
  }
}

TEST_F(Ops, ReadSizes) {
  Buf src = reg(B.pd, (4 << 20) + 64, kAll);
  fill_pattern(src.data(), src.mem.size(), 9);
  for (size_t n : {size_t{0}, size_t{1}, size_t{100}, size_t{65520}, size_t{65521}, size_t{1 << 20},
                   size_t{4 << 20}}) {
    Buf sink = reg(A.pd, n + 32, kAll, 0xEE);
    NDK_SGE sg = sink.sge(16, n);
    ASSERT_EQ(A.d()->NdkRead(A.qp, &sink, &sg, 1, src.addr() + 64, src.token, 0), STATUS_SUCCESS);
    auto r = poll1(A.cq);
    EXPECT_EQ(r.Status, STATUS_SUCCESS);
    EXPECT_EQ(r.Type, NdkOperationTypeRead);
    EXPECT_EQ(r.BytesTransferred, n);
    EXPECT_EQ(r.RequestContext, &sink);
    ASSERT_EQ(std::memcmp(sink.data() + 16, src.data() + 64, n), 0) << n;
    for (size_t i = 0; i < 16; ++i) ASSERT_EQ(sink.mem[i], 0xEE);
    for (size_t i = 16 + n; i < n + 32; ++i) ASSERT_EQ(sink.mem[i], 0xEE);
  }
}

TEST_F(Ops, InlineSendAndWriteBufferReusableOnReturn) {
  Buf dst = reg(B.pd, 256, kAll, 0);
  Buf rb = reg(B.pd, 256, kAll, 0);
  uint8_t tmp[200];
  fill_pattern(tmp, sizeof tmp, 5);
  uint8_t expect[200];
  std::memcpy(expect, tmp, sizeof tmp);
  NDK_SGE s{};
  s.VirtualAddress = tmp;
  s.Length = sizeof tmp;  // no token needed for inline data
  NDK_SGE rs = rb.sge(0, 256);
  ASSERT_EQ(B.d()->NdkReceive(B.qp, nullptr, &rs, 1), STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, nullptr, &s, 1, dst.addr(), dst.token, NDK_OP_FLAG_INLINE),
            STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkSend(A.qp, nullptr, &s, 1, NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
  std::memset(tmp, 0, sizeof tmp);  // reusable at once
  auto r = poll1(B.cq);
  EXPECT_EQ(r.BytesTransferred, sizeof tmp);
  EXPECT_EQ(poll(A.cq, 2).size(), 2u);
  EXPECT_EQ(std::memcmp(rb.data(), expect, sizeof expect), 0);
  EXPECT_EQ(std::memcmp(dst.data(), expect, sizeof expect), 0);
  // Larger than InlineDataSize: refused inline.
  std::vector<uint8_t> big(300);
  s.VirtualAddress = big.data();
  s.Length = 300;
  EXPECT_NE(A.d()->NdkSend(A.qp, nullptr, &s, 1, NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
}

// Small inline Writes and Sends go out from the posting thread (direct
// sends, docs/datapath.md), most of them without an SQ ring slot. Each
// Write lands byte-exact at its offset before the Send behind it completes
// on the target, every post completes once with its own type and context,
// in posting order - with CRC off and on (the FPDU and its CRC are built
// from the caller's SGL).
TEST_F(Ops, DirectInlineWritesAndSendsInOrder) {
  for (bool crc : {false, true}) {
    Side& C = new_side();
    Side& D = new_side();
    connect(C, D, 8, 8, crc);
    ASSERT_EQ(C.conn->params().crc, crc);
    constexpr int kRounds = 200;
    Buf dst = reg(D.pd, 64 * 1024, kAll, 0);
    Buf rb = reg(D.pd, 256, kAll, 0);
    std::vector<uint8_t> pay(256), want(64 * 1024, 0);
    size_t off = 0;
    for (int i = 0; i < kRounds; ++i) {
      const ULONG len = 1 + static_cast<ULONG>(i * 53) % 256;
      fill_pattern(pay.data(), len, static_cast<uint32_t>(i + 100));
      std::memcpy(want.data() + off, pay.data(), len);
      NDK_SGE s[2];
      const ULONG nsge = sgl_of(pay.data(), len, i % 2 == 1, s);
      NDK_SGE rs = rb.sge(0, 256);
      ASSERT_EQ(D.d()->NdkReceive(D.qp, nullptr, &rs, 1), STATUS_SUCCESS);
      void* wctx = reinterpret_cast<void*>(uintptr_t(2 * i + 1));
      void* sctx = reinterpret_cast<void*>(uintptr_t(2 * i + 2));
      ASSERT_EQ(
          C.d()->NdkWrite(C.qp, wctx, s, nsge, dst.addr() + off, dst.token, NDK_OP_FLAG_INLINE),
          STATUS_SUCCESS);
      ASSERT_EQ(C.d()->NdkSend(C.qp, sctx, s, nsge, NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
      auto c = poll(C.cq, 2);
      ASSERT_EQ(c.size(), 2u);
      EXPECT_EQ(c[0].RequestContext, wctx);
      EXPECT_EQ(c[0].Type, NdkOperationTypeWrite);
      EXPECT_EQ(c[0].BytesTransferred, len);
      EXPECT_EQ(c[1].RequestContext, sctx);
      EXPECT_EQ(c[1].Type, NdkOperationTypeSend);
      auto r = poll1(D.cq);
      ASSERT_EQ(r.Status, STATUS_SUCCESS);
      ASSERT_EQ(r.BytesTransferred, len);
      ASSERT_EQ(std::memcmp(rb.data(), pay.data(), len), 0) << i;
      // The Write went first: its bytes are in place once the Send is.
      ASSERT_EQ(std::memcmp(dst.data(), want.data(), want.size()), 0) << i;
      off = (off + len + 7) % (64 * 1024 - 256);
    }
    EXPECT_EQ(C.stream->last_terminate_received(), 0xFFFFFFFFu);
    EXPECT_EQ(D.stream->last_terminate_sent(), 0xFFFFFFFFu);
  }
}

TEST_F(Ops, CrcNegotiatedEndToEnd) {
  Side& C = new_side();
  Side& D = new_side();
  connect(C, D, 8, 8, /*crc=*/true);
  ASSERT_TRUE(C.conn->params().crc);
  size_t n = 3 << 20;
  Buf src = reg(C.pd, n, kAll), dst = reg(D.pd, n, kAll), sink = reg(C.pd, n, kAll);
  fill_pattern(src.data(), n, 77);
  NDK_SGE s = src.sge(0, n), rs = dst.sge(0, n), ks = sink.sge(0, n);
  ASSERT_EQ(D.d()->NdkReceive(D.qp, nullptr, &rs, 1), STATUS_SUCCESS);
  ASSERT_EQ(C.d()->NdkSend(C.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
  ASSERT_EQ(poll(D.cq, 1).size(), 1u);
  ASSERT_EQ(C.d()->NdkRead(C.qp, nullptr, &ks, 1, dst.addr(), dst.token, 0), STATUS_SUCCESS);
  auto r = poll(C.cq, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].Status, STATUS_SUCCESS);
  EXPECT_EQ(std::memcmp(sink.data(), src.data(), n), 0);
  EXPECT_EQ(C.stream->last_terminate_received(), 0xFFFFFFFFu);
}

TEST_F(Ops, SolicitedSendAndDeferredChain) {
  Buf rb = reg(B.pd, 64, kAll), sb = reg(A.pd, 64, kAll);
  NDK_SGE rs = rb.sge(0, 64), ss = sb.sge(0, 16);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(B.d()->NdkReceive(B.qp, nullptr, &rs, 1), STATUS_SUCCESS);
  // Deferred posts wait for the next non-deferred one.
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)1, &ss, 1, NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)2, &ss, 1, NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
  EXPECT_TRUE(drain(B.cq, 50ms).empty());
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)3, &ss, 1, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT),
            STATUS_SUCCESS);
  auto r = poll(B.cq, 3);
  ASSERT_EQ(r.size(), 3u);
  auto s = poll(A.cq, 3);
  ASSERT_EQ(s.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s[i].RequestContext, (void*)(uintptr_t)(i + 1));
  // An inline failure kicks deferred work (NDKPI 7).
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)4, &ss, 1, NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
  NDK_SGE bad[17];
  for (auto& b : bad) b = ss;
  EXPECT_NE(A.d()->NdkSend(A.qp, (void*)5, bad, 17, 0), STATUS_SUCCESS);
  s = poll(A.cq, 1);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].RequestContext, (void*)4);
  EXPECT_EQ(poll(B.cq, 1).size(), 1u);
}

// The deferred-processing rule holds for every inline failure of an
// initiator call, also one refused before the request reaches the queue (a
// missing MW, MR or invalidation target): the deferred Send still goes out.
TEST_F(Ops, FailureOnABadHandleStartsDeferredWork) {
  Buf rb = reg(B.pd, 64, kAll), sb = reg(A.pd, 64, kAll);
  NDK_SGE rs = rb.sge(0, 64), ss = sb.sge(0, 16);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(B.d()->NdkReceive(B.qp, nullptr, &rs, 1), STATUS_SUCCESS);
  NDK_LOGICAL_ADDRESS page{};
  for (uintptr_t i = 1; i <= 3; ++i) {
    ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)i, &ss, 1, NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
    NTSTATUS s = STATUS_SUCCESS;
    if (i == 1) s = A.d()->NdkInvalidate(A.qp, nullptr, nullptr, 0);
    if (i == 2) s = A.d()->NdkBind(A.qp, nullptr, sb.mr, nullptr, sb.data(), 8, 0);
    if (i == 3) s = A.d()->NdkFastRegister(A.qp, nullptr, nullptr, 1, &page, 0, 8, nullptr, 0);
    EXPECT_NE(s, STATUS_SUCCESS);
    // Only the peer's CQ is polled: polling A's own CQ would run its
    // transmitter and hide a missing kick.
    ASSERT_EQ(poll(B.cq, 1, 2000ms).size(), 1u) << "deferred Send " << i << " never left";
    auto c = poll(A.cq, 1);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].RequestContext, (void*)i);
    EXPECT_EQ(c[0].Status, STATUS_SUCCESS);
  }
}

TEST_F(Ops, SilentSuccessProducesNoCompletion) {
  Buf dst = reg(B.pd, 64, kAll), src = reg(A.pd, 64, kAll);
  NDK_SGE s = src.sge(0, 64);
  ASSERT_EQ(
      A.d()->NdkWrite(A.qp, (void*)1, &s, 1, dst.addr(), dst.token, NDK_OP_FLAG_SILENT_SUCCESS),
      STATUS_SUCCESS);
  ASSERT_EQ(
      A.d()->NdkRead(A.qp, (void*)2, &s, 1, dst.addr(), dst.token, NDK_OP_FLAG_SILENT_SUCCESS),
      STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkWrite(A.qp, (void*)3, &s, 1, dst.addr(), dst.token, 0), STATUS_SUCCESS);
  auto r = poll(A.cq, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].RequestContext, (void*)3);
  EXPECT_TRUE(drain(A.cq).empty());
}

// Send-queue CQEs appear in posting order even when a Send finishes behind
// an outstanding Read.
TEST_F(Ops, PostingOrderAcrossRead) {
  Buf big = reg(B.pd, 4 << 20, kAll), sink = reg(A.pd, 4 << 20, kAll);
  Buf dst = reg(B.pd, 64, kAll), src = reg(A.pd, 64, kAll);
  NDK_SGE ks = sink.sge(0, 4 << 20), s = src.sge(0, 64);
  ASSERT_EQ(A.d()->NdkRead(A.qp, (void*)1, &ks, 1, big.addr(), big.token, 0), STATUS_SUCCESS);
  for (uintptr_t i = 2; i < 10; ++i)
    ASSERT_EQ(A.d()->NdkWrite(A.qp, (void*)i, &s, 1, dst.addr(), dst.token, 0), STATUS_SUCCESS);
  auto r = poll(A.cq, 9);
  ASSERT_EQ(r.size(), 9u);
  for (uintptr_t i = 0; i < 9; ++i) EXPECT_EQ(r[i].RequestContext, (void*)(i + 1));
}

// READ_FENCE: a Send with the fence goes out only after the Read's data
// landed, so the peer sees the read-back value it depends on.
TEST_F(Ops, ReadFenceOrdering) {
  Buf remote = reg(B.pd, 1 << 20, kAll), sink = reg(A.pd, 1 << 20, kAll);
  Buf rb = reg(B.pd, 8, kAll), sb = reg(A.pd, 8, kAll);
  NDK_SGE ks = sink.sge(0, 1 << 20), ss = sb.sge(0, 8), rs = rb.sge(0, 8);
  ASSERT_EQ(B.d()->NdkReceive(B.qp, nullptr, &rs, 1), STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkRead(A.qp, (void*)1, &ks, 1, remote.addr(), remote.token, 0), STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)2, &ss, 1, NDK_OP_FLAG_READ_FENCE), STATUS_SUCCESS);
  auto r = poll(A.cq, 2);
  ASSERT_EQ(r.size(), 2u);
  ASSERT_EQ(poll(B.cq, 1).size(), 1u);
  // The fenced Send left only once the Read's response had been placed:
  // the Read was already out of the ORQ when the Send was segmented.
  EXPECT_EQ(r[0].RequestContext, (void*)1);
  EXPECT_EQ(r[1].RequestContext, (void*)2);
}

TEST_F(Ops, ManyOutstandingReadsBeyondOrdQueueUp) {
  Side& C = new_side();
  Side& D = new_side();
  connect(C, D, /*ird=*/2, /*ord=*/2);
  EXPECT_EQ(C.conn->params().ord, 2);
  Buf remote = reg(D.pd, 64 * 1024, kAll), sink = reg(C.pd, 64 * 1024, kAll);
  fill_pattern(remote.data(), remote.mem.size(), 3);
  for (uintptr_t i = 0; i < 32; ++i) {
    NDK_SGE ks = sink.sge(i * 2048, 2048);
    ASSERT_EQ(C.d()->NdkRead(C.qp, (void*)i, &ks, 1, remote.addr() + i * 2048, remote.token, 0),
              STATUS_SUCCESS);
  }
  auto r = poll(C.cq, 32);
  ASSERT_EQ(r.size(), 32u);
  for (uintptr_t i = 0; i < 32; ++i) {
    EXPECT_EQ(r[i].Status, STATUS_SUCCESS);
    EXPECT_EQ(r[i].RequestContext, (void*)i);
  }
  EXPECT_EQ(std::memcmp(sink.data(), remote.data(), 64 * 1024), 0);
  EXPECT_EQ(D.stream->last_terminate_sent(), 0xFFFFFFFFu);  // IRD never exceeded
}

TEST_F(Ops, SrqSharedBySeveralQps) {
  NDK_PD* pd = make_pd();
  NDK_SRQ* srq = make_srq(pd, 64);
  SideConfig rc;
  rc.pd = pd;
  rc.srq = srq;
  Side& R1 = new_side(rc);
  Side& R2 = new_side(rc);
  Side& R3 = new_side(rc);
  Side& S1 = new_side();
  Side& S2 = new_side();
  Side& S3 = new_side();
  connect(S1, R1);
  connect(S2, R2);
  connect(S3, R3);
  std::vector<Buf> bufs;
  for (int i = 0; i < 12; ++i) bufs.push_back(reg(pd, 128, kAll));
  for (auto& b : bufs) {
    NDK_SGE s = b.sge(0, 128);
    ASSERT_EQ(srq->Dispatch->NdkSrqReceive(srq, &b, &s, 1), STATUS_SUCCESS);
  }
  Side* senders[] = {&S1, &S2, &S3};
  // Each sender's own PD buffer.
  std::vector<Buf> src;
  for (int k = 0; k < 3; ++k) {
    src.push_back(reg(senders[k]->pd, 100, kAll, static_cast<uint8_t>(k + 1)));
    NDK_SGE s = src.back().sge(0, 100);
    for (int j = 0; j < 4; ++j)
      ASSERT_EQ(senders[k]->d()->NdkSend(senders[k]->qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
  }
  int got[3] = {0, 0, 0};
  Side* recvs[] = {&R1, &R2, &R3};
  for (int k = 0; k < 3; ++k) {
    auto r = poll(recvs[k]->cq, 4);
    ASSERT_EQ(r.size(), 4u);
    for (auto& e : r) {
      EXPECT_EQ(e.QPContext, recvs[k]);
      EXPECT_EQ(e.BytesTransferred, 100u);
      auto* b = static_cast<Buf*>(e.RequestContext);
      EXPECT_EQ(b->mem[0], k + 1);
      got[k]++;
    }
  }
  EXPECT_EQ(got[0] + got[1] + got[2], 12);
}

}  // namespace
}  // namespace dptest
