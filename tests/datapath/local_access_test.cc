// SPDX-License-Identifier: Apache-2.0
// local_access_test.cc - local keys (NDK_SGE.MemoryRegionToken) checked like
// an RNIC's lkeys when a request is processed, and failed local operations:
// the request completes with its error, the peer gets a Terminate, the QP
// goes to error and everything else is flushed (docs/datapath.md "Local
// access checks").
#include <algorithm>
#include <functional>
#include <map>

#include "dp_fixture.h"

namespace dptest {
namespace {

constexpr uint32_t code(int layer, int etype, int c) {
  return static_cast<uint32_t>(layer << 16 | etype << 8 | c);
}
constexpr uint32_t kRdmapLocalCatastrophic = code(0, 0, 0x00);
constexpr uint32_t kDdpLocalCatastrophic = code(1, 0, 0x00);

class LocalAccess : public DpTest {
 protected:
  void SetUp() override {
    DpTest::SetUp();
    make_side(A);
    make_side(B);
    connect(A, B);
    rbA = reg(A.pd, 64, kAll, 0x11);
    rbB = reg(B.pd, 64, kAll, 0x22);
    NDK_SGE a = rbA.sge(0, 64), b = rbB.sge(0, 64);
    ASSERT_EQ(A.d()->NdkReceive(A.qp, (void*)0xA, &a, 1), STATUS_SUCCESS);
    ASSERT_EQ(B.d()->NdkReceive(B.qp, (void*)0xB, &b, 1), STATUS_SUCCESS);
    src = reg(A.pd, 4096, kAll, 0x33);
  }
  // A's request `bad` failed with `status`; `cancelled` (posted behind it)
  // and A's receive were flushed; A sent the RDMAP local catastrophic
  // Terminate, B got it, B's receive was flushed untouched; both QPs are in
  // error and A refuses new posts inline.
  void expect_local_failure(void* bad, NTSTATUS status, void* cancelled) {
    std::vector<NDK_RESULT_EX> r = poll(A.cq, 3);
    ASSERT_EQ(r.size(), 3u);
    int seen = 0;
    for (auto& e : r) {
      if (e.RequestContext == bad) {
        EXPECT_EQ(e.Status, status);
        seen |= 1;
      } else if (e.RequestContext == cancelled) {
        EXPECT_EQ(e.Status, STATUS_CANCELLED);
        seen |= 2;
      } else {
        EXPECT_EQ(e.RequestContext, (void*)0xA);
        EXPECT_EQ(e.Status, STATUS_CANCELLED);
        seen |= 4;
      }
    }
    EXPECT_EQ(seen, 7);
    ASSERT_TRUE(eventually([&] { return A.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
    EXPECT_EQ(A.stream->last_terminate_sent(), kRdmapLocalCatastrophic);
    ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_received() != 0xFFFFFFFFu; }));
    EXPECT_EQ(B.stream->last_terminate_received(), kRdmapLocalCatastrophic);
    auto rb = poll(B.cq, 1);
    ASSERT_EQ(rb.size(), 1u);
    EXPECT_EQ(rb[0].Status, STATUS_CANCELLED);
    EXPECT_TRUE(untouched(rbB, 0x22));
    EXPECT_EQ(A.q->state(), ndk::QpState::kError);
    ASSERT_TRUE(eventually([&] { return B.q->state() == ndk::QpState::kError; }));
    NDK_SGE s = src.sge(0, 8);
    EXPECT_EQ(A.d()->NdkSend(A.qp, nullptr, &s, 1, 0), STATUS_CONNECTION_INVALID);
    EXPECT_TRUE(drain(A.cq).empty());  // exactly one completion each
  }
  // Posts `bad` with DEFER (so that it is processed only once the good Send
  // behind it is queued too), then that Send, which kicks both.
  void post_then_send(const std::function<NTSTATUS(ULONG)>& bad) {
    ASSERT_EQ(bad(NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
    NDK_SGE s = src.sge(0, 16);
    ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)2, &s, 1, 0), STATUS_SUCCESS);
  }
  static bool untouched(const Buf& b, uint8_t v) {
    for (uint8_t x : b.mem)
      if (x != v) return false;
    return true;
  }
  Side A, B;
  Buf rbA, rbB, src;
};

TEST_F(LocalAccess, SendWithUnknownTokenFailsAndErrorsQp) {
  NDK_SGE s = src.sge(0, 16);
  s.MemoryRegionToken = (src.token + 0x1000) ^ 0x00ABCD00;
  post_then_send([&](ULONG f) { return A.d()->NdkSend(A.qp, (void*)1, &s, 1, f); });
  expect_local_failure((void*)1, STATUS_ACCESS_VIOLATION, (void*)2);
}

TEST_F(LocalAccess, SendWithStaleKeyFails) {
  NDK_SGE s = src.sge(0, 16);
  s.MemoryRegionToken = src.token ^ 0x01;  // same entry, other key
  post_then_send([&](ULONG f) { return A.d()->NdkSend(A.qp, (void*)1, &s, 1, f); });
  expect_local_failure((void*)1, STATUS_ACCESS_VIOLATION, (void*)2);
}

TEST_F(LocalAccess, WriteSgeBeyondRegionFails) {
  Buf t = reg(B.pd, 8192, kAll, 0x5A);
  NDK_SGE s = src.sge(0, 4096);
  s.Length = 4097;  // one byte past the registered 4096
  post_then_send(
      [&](ULONG f) { return A.d()->NdkWrite(A.qp, (void*)1, &s, 1, t.addr(), t.token, f); });
  expect_local_failure((void*)1, STATUS_ACCESS_VIOLATION, (void*)2);
  EXPECT_TRUE(untouched(t, 0x5A));  // nothing of it went out
}

TEST_F(LocalAccess, TokenOfAnotherPdFails) {
  NDK_PD* other = make_pd();
  Buf o = reg(other, 4096, kAll, 0x44);
  NDK_SGE s = o.sge(0, 16);
  post_then_send([&](ULONG f) { return A.d()->NdkSend(A.qp, (void*)1, &s, 1, f); });
  expect_local_failure((void*)1, STATUS_ACCESS_VIOLATION, (void*)2);
}

TEST_F(LocalAccess, ReadSinkWithoutLocalWriteFails) {
  Buf source = reg(B.pd, 4096, kAll, 0x77);
  Buf sink = reg(A.pd, 4096, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0x66);  // no local write
  NDK_SGE k = sink.sge(0, 4096);
  post_then_send([&](ULONG f) {
    return A.d()->NdkRead(A.qp, (void*)1, &k, 1, source.addr(), source.token, f);
  });
  expect_local_failure((void*)1, STATUS_ACCESS_VIOLATION, (void*)2);
  EXPECT_TRUE(untouched(sink, 0x66));
}

TEST_F(LocalAccess, ReceiveWithoutLocalWriteFailsWhenConsumed) {
  // B's second receive names memory without local write: posting is fine
  // (the check belongs to the time it is used), the Send that lands there
  // completes it with STATUS_ACCESS_VIOLATION, nothing is written, and B
  // terminates with a DDP local catastrophic error.
  Buf ro = reg(B.pd, 64, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0x55);
  NDK_SGE rs = ro.sge(0, 64);
  ASSERT_EQ(B.d()->NdkReceive(B.qp, (void*)0xC, &rs, 1), STATUS_SUCCESS);
  NDK_SGE s = src.sge(0, 32);
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)1, &s, 1, 0), STATUS_SUCCESS);
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)2, &s, 1, 0), STATUS_SUCCESS);
  auto rb = poll(B.cq, 2);
  ASSERT_EQ(rb.size(), 2u);
  EXPECT_EQ(rb[0].RequestContext, (void*)0xB);
  EXPECT_EQ(rb[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(rb[1].RequestContext, (void*)0xC);
  EXPECT_EQ(rb[1].Status, STATUS_ACCESS_VIOLATION);
  EXPECT_TRUE(untouched(ro, 0x55));
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kDdpLocalCatastrophic);
  ASSERT_TRUE(eventually([&] { return A.stream->last_terminate_received() != 0xFFFFFFFFu; }));
  EXPECT_EQ(A.stream->last_terminate_received(), kDdpLocalCatastrophic);
  EXPECT_EQ(B.q->state(), ndk::QpState::kError);
  ASSERT_TRUE(eventually([&] { return A.q->state() == ndk::QpState::kError; }));
}

TEST_F(LocalAccess, InlineIgnoresTokens) {
  // NDKPI 2.3: with INLINE the token may be garbage and must be ignored.
  NDK_SGE s = src.sge(0, 32);
  s.MemoryRegionToken = 0xDEADBEEF;
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)1, &s, 1, NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
  auto r = poll1(A.cq);
  EXPECT_EQ(r.Status, STATUS_SUCCESS);
  auto rb = poll1(B.cq);
  EXPECT_EQ(rb.Status, STATUS_SUCCESS);
  EXPECT_EQ(rb.BytesTransferred, 32u);
  EXPECT_EQ(rbB.mem[0], 0x33);
}

TEST_F(LocalAccess, ZeroLengthSgeIsNotChecked) {
  NDK_SGE s[2] = {src.sge(0, 16), src.sge(0, 0)};
  s[1].MemoryRegionToken = 0;  // as siw: a zero-length SGE's key is not looked at
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)1, s, 2, 0), STATUS_SUCCESS);
  EXPECT_EQ(poll1(A.cq).Status, STATUS_SUCCESS);
  EXPECT_EQ(poll1(B.cq).Status, STATUS_SUCCESS);
}

TEST_F(LocalAccess, FailedFastRegisterErrorsQp) {
  // FR1 and FR2 on one MR, both deferred, no invalidate between them: FR2
  // finds the MR valid (the iWARP verbs rule, as siw and RNICs: a fast
  // register needs an invalid STag). FR2 fails with
  // STATUS_INVALID_PARAMETER and, as a local operation error on an RNIC,
  // takes the QP to error: the Send behind it is flushed.
  const size_t n = 4 * NDK_PAGE_SIZE;
  std::vector<uint8_t> mem(n + NDK_PAGE_SIZE, 0x5A);
  FrRegion frr;
  ASSERT_NO_FATAL_FAILURE(prepare_fr(A, mem.data(), n, 8, false, &frr));
  NDK_MR* fr = frr.mr;
  const NDK_LOGICAL_ADDRESS_MAPPING* lam = frr.lam;
  const ULONG fbo = frr.fbo;
  auto post_fr = [&](void* ctx) {
    return A.d()->NdkFastRegister(A.qp, ctx, fr, lam->AdapterPageCount, lam->AdapterPageArray, fbo,
                                  n, reinterpret_cast<PVOID>(0x7000000000ull + fbo),
                                  NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_DEFER);
  };
  ASSERT_EQ(post_fr((void*)1), STATUS_SUCCESS);
  ASSERT_EQ(post_fr((void*)3), STATUS_SUCCESS);
  NDK_SGE s = src.sge(0, 16);
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)2, &s, 1, 0), STATUS_SUCCESS);
  // FR1, FR2, the Send and A's flushed receive, each exactly once.
  std::vector<NDK_RESULT_EX> r = poll(A.cq, 4);
  ASSERT_EQ(r.size(), 4u);
  std::map<void*, NDK_RESULT_EX> by_ctx;
  for (auto& e : r) by_ctx[e.RequestContext] = e;
  ASSERT_EQ(by_ctx.size(), 4u);
  EXPECT_EQ(by_ctx[(void*)1].Status, STATUS_SUCCESS);
  EXPECT_EQ(by_ctx[(void*)3].Status, STATUS_INVALID_PARAMETER);
  EXPECT_EQ(by_ctx[(void*)3].Type, NdkOperationTypeFastRegister);
  EXPECT_EQ(by_ctx[(void*)2].Status, STATUS_CANCELLED);
  EXPECT_EQ(by_ctx[(void*)0xA].Status, STATUS_CANCELLED);
  EXPECT_EQ(A.q->state(), ndk::QpState::kError);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_received() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_received(), kRdmapLocalCatastrophic);
  EXPECT_TRUE(drain(A.cq).empty());
}

// A local SGE of a fast-registered MR is in the MR's registered address
// space (BaseVirtualAddress), not the process's, as on an RNIC: a Send
// from it and a receive into it use the right bytes.
// NDK_SGE with the PD's privileged token (NdkGetPrivilegedMemoryRegionToken):
// the address is a logical one from NdkBuildLAM and needs no registration.
// The token grants local access only: the peer's Write with it is refused
// like any invalid STag and nothing lands.
TEST_F(LocalAccess, PrivilegedTokenTakesLamAddressesLocallyOnly) {
  std::vector<uint8_t> mem(2 * NDK_PAGE_SIZE, 0x44);
  MDL mdl{};
  mdl.VirtualAddress = mem.data() + 100;
  mdl.ByteCount = 64;
  std::vector<uint8_t> lam_buf(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) +
                               4 * sizeof(NDK_LOGICAL_ADDRESS));
  auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_buf.data());
  ULONG lam_size = static_cast<ULONG>(lam_buf.size()), fbo = 0;
  ASSERT_EQ(a_->Dispatch->NdkBuildLAM(a_, &mdl, 64, nullptr, nullptr, lam, &lam_size, &fbo),
            STATUS_SUCCESS);
  UINT32 priv = 0;
  A.pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(A.pd, &priv);
  ASSERT_NE(priv, 0u);
  NDK_SGE s{};
  s.LogicalAddress.QuadPart = lam->AdapterPageArray[0].QuadPart + fbo;
  s.Length = 64;
  s.MemoryRegionToken = priv;
  ASSERT_EQ(A.d()->NdkSend(A.qp, (void*)1, &s, 1, 0), STATUS_SUCCESS);
  auto sent = poll(A.cq, 1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].Status, STATUS_SUCCESS);
  auto got = poll(B.cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(got[0].BytesTransferred, 64u);
  EXPECT_TRUE(std::all_of(rbB.mem.begin(), rbB.mem.end(), [](uint8_t x) { return x == 0x44; }));
  Buf from = reg(B.pd, 64, kAll, 0x55);
  NDK_SGE w = from.sge(0, 64);
  ASSERT_EQ(B.d()->NdkWrite(B.qp, nullptr, &w, 1, reinterpret_cast<uintptr_t>(mem.data()), priv, 0),
            STATUS_SUCCESS);
  ASSERT_TRUE(eventually([&] { return A.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_TRUE(std::all_of(mem.begin(), mem.end(), [](uint8_t x) { return x == 0x44; }));
}

TEST_F(LocalAccess, FastRegisteredSgeIsInTheRegisteredAddressSpace) {
  const size_t n = 4 * NDK_PAGE_SIZE;
  auto fast_register = [&](Side& s, std::vector<uint8_t>& mem, uint64_t base, uint32_t* ltok,
                           ULONG* out_fbo) {
    FrRegion frr;
    ASSERT_NO_FATAL_FAILURE(prepare_fr(s, mem.data(), n, 8, false, &frr));
    NDK_MR* fr = frr.mr;
    const NDK_LOGICAL_ADDRESS_MAPPING* lam = frr.lam;
    const ULONG fbo = frr.fbo;
    ASSERT_EQ(s.d()->NdkFastRegister(
                  s.qp, (void*)0xF, fr, lam->AdapterPageCount, lam->AdapterPageArray, fbo, n,
                  reinterpret_cast<PVOID>(base + fbo), NDK_OP_FLAG_ALLOW_LOCAL_WRITE),
              STATUS_SUCCESS);
    auto c = poll(s.icq, 1);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(c[0].Type, NdkOperationTypeFastRegister);
    *ltok = fr->Dispatch->NdkGetLocalTokenFromMr(fr);
    *out_fbo = fbo;
  };
  // The SetUp receives are in the way: a fresh pair.
  Side& a = new_side();
  Side& b = new_side();
  connect(a, b);
  std::vector<uint8_t> smem(n + NDK_PAGE_SIZE), rmem(n + NDK_PAGE_SIZE, 0x5A);
  fill_pattern(smem.data(), smem.size(), 7);
  const uint64_t sbase = 0x6000000000ull, rbase = 0x7100000000ull;
  uint32_t stok = 0, rtok = 0;
  ULONG sfbo = 0, rfbo = 0;
  fast_register(a, smem, sbase, &stok, &sfbo);
  fast_register(b, rmem, rbase, &rtok, &rfbo);
  // Receive at offset 300 of b's region, Send 1000 bytes from offset 100 of a's.
  NDK_SGE r{};
  r.VirtualAddress = reinterpret_cast<void*>(rbase + rfbo + 300);
  r.Length = 1000;
  r.MemoryRegionToken = rtok;
  ASSERT_EQ(b.d()->NdkReceive(b.qp, (void*)0xB, &r, 1), STATUS_SUCCESS);
  NDK_SGE x{};
  x.VirtualAddress = reinterpret_cast<void*>(sbase + sfbo + 100);
  x.Length = 1000;
  x.MemoryRegionToken = stok;
  ASSERT_EQ(a.d()->NdkSend(a.qp, (void*)0xA, &x, 1, 0), STATUS_SUCCESS);
  auto sa = poll(a.icq, 1);
  ASSERT_EQ(sa.size(), 1u);
  EXPECT_EQ(sa[0].Status, STATUS_SUCCESS);
  auto rb = poll(b.cq, 1);
  ASSERT_EQ(rb.size(), 1u);
  EXPECT_EQ(rb[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(rb[0].BytesTransferred, 1000u);
  EXPECT_EQ(std::memcmp(rmem.data() + 300, smem.data() + 100, 1000), 0);
  EXPECT_EQ(rmem[299], 0x5A);
  EXPECT_EQ(rmem[1300], 0x5A);
}

}  // namespace
}  // namespace dptest
