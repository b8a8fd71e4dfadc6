// SPDX-License-Identifier: Apache-2.0
// ndk_semantics_test.cc - NDK connection establishment as NdkAccept's page
// describes it (issue 16 items 3 and 4), over 127.0.0.1 through the C ABI:
// by default an accept completes only after the active side's
// NdkCompleteConnect (RFC 6581 peer-to-peer mode carries it), fails with
// STATUS_IO_TIMEOUT within ConnectTimeoutMs if it never comes, and either
// side may send first. With an initiator that does not offer P2P (stock
// siw; SOFTNDK_MPA_NO_PEER_TO_PEER here) the documented fallback holds:
// the accept completes at the MPA Reply and the passive side's first FPDU
// waits for the initiator's - but local requests never wait.
#include <chrono>

#include "ends.h"

namespace {

using namespace std::chrono_literals;
using namespace connector_test;
using Clock = std::chrono::steady_clock;

class NdkSemantics : public EndsTest {
 protected:
  // c connected (Connect completed) to s, s's accept started; returns the
  // accept's inline status.
  NTSTATUS half_open(NDK_ADAPTER* ca, NDK_ADAPTER* sa_, End& c, End& s, Req& ar) {
    make(c, ca, ca);
    make(s, sa_, sa_);
    l_ = listen(sa_, in_, &port_);
    c.conn = connector(ca);
    Req cr;
    EXPECT_EQ(start_connect(c, port_, cr), STATUS_PENDING);
    NTSTATUS as = start_accept(s, in_, ar);
    EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    return as;
  }
  static bool done(Req& r) {
    std::lock_guard lk(r.mu);
    return r.calls > 0;
  }
  Incoming in_;
  uint16_t port_ = 0;
  NDK_LISTENER* l_ = nullptr;
};

// The accept stays pending while the active side has not called
// NdkCompleteConnect, and completes once it has.
TEST_F(NdkSemantics, AcceptCompletesOnlyAfterCompleteConnect) {
  NDK_ADAPTER* a = open();
  End c, s;
  Req ar;
  NTSTATUS as = half_open(a, a, c, s, ar);
  ASSERT_EQ(as, STATUS_PENDING);
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(done(ar)) << "NdkAccept completed before the peer's NdkCompleteConnect";
  ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
  EXPECT_EQ(ar.wait(as), STATUS_SUCCESS);
  SOFTNDK_CONNECTION_INFO ci{}, si{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
  EXPECT_TRUE(ci.PeerToPeer);
  EXPECT_TRUE(si.PeerToPeer);
  close_end(c);
  close_end(s);
}

// No NdkCompleteConnect: NdkAccept fails with STATUS_IO_TIMEOUT after
// ConnectTimeoutMs (1.5 s here), not after a fixed 10 s.
TEST_F(NdkSemantics, AcceptTimesOutWithinConnectTimeoutWithoutCompleteConnect) {
  NDK_ADAPTER* a = open(0, 1500);
  End c, s;
  Req ar;
  auto t0 = Clock::now();
  NTSTATUS as = half_open(a, a, c, s, ar);
  ASSERT_EQ(as, STATUS_PENDING);
  EXPECT_EQ(ar.wait(as, 8000ms), STATUS_IO_TIMEOUT);
  auto took = Clock::now() - t0;
  EXPECT_GE(took, 1400ms);
  EXPECT_LT(took, 5000ms);
  // The active side learns that its connection is gone.
  EXPECT_NE(complete_connect(c), STATUS_SUCCESS);
  close_end(c);
  close_end(s);
}

// Once both sides completed, the passive side may send first.
TEST_F(NdkSemantics, PassiveSideMaySendFirst) {
  NDK_ADAPTER* a = open();
  End c, s;
  make(c, a, a);
  make(s, a, a);
  l_ = listen(a, in_, &port_);
  c.conn = connector(a);
  ASSERT_NO_FATAL_FAILURE(establish(c, s, in_, port_));
  NDK_SGE r = c.sge(0, 256), snd = s.sge(0, 256);
  for (size_t i = 0; i < 256; ++i) s.mem[i] = static_cast<uint8_t>(i + 9);
  ASSERT_EQ(c.qp->Dispatch->NdkReceive(c.qp, nullptr, &r, 1), STATUS_SUCCESS);
  ASSERT_EQ(s.qp->Dispatch->NdkSend(s.qp, nullptr, &snd, 1, 0), STATUS_SUCCESS);
  auto x = poll(c.cq, 1);
  ASSERT_EQ(x.size(), 1u) << "the passive side's first Send did not arrive";
  EXPECT_EQ(x[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(std::memcmp(c.mem.data(), s.mem.data(), 256), 0);
  close_end(c);
  close_end(s);
}

// The fallback: an initiator that does not offer P2P. The accept completes
// without NdkCompleteConnect; the passive side's Send waits for the
// initiator's first FPDU; local requests posted meanwhile (Bind,
// Invalidate, FastRegister) complete on their own.
TEST_F(NdkSemantics, FallbackWithoutP2pHoldsOnlyWireRequests) {
  NDK_ADAPTER* ca = open(SOFTNDK_MPA_NO_PEER_TO_PEER);
  NDK_ADAPTER* sa_ = open();
  End c, s;
  Req ar;
  NTSTATUS as = half_open(ca, sa_, c, s, ar);
  EXPECT_EQ(ar.wait(as), STATUS_SUCCESS);  // no CompleteConnect yet
  SOFTNDK_CONNECTION_INFO si{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
  EXPECT_FALSE(si.PeerToPeer);

  // Local requests on the passive side before the initiator said anything.
  NDK_MW* mw = nullptr;
  ASSERT_EQ(s.pd->Dispatch->NdkCreateMw(s.pd, nullptr, nullptr, &mw), STATUS_SUCCESS);
  NDK_MR* fr = nullptr;
  ASSERT_EQ(s.pd->Dispatch->NdkCreateMr(s.pd, TRUE, nullptr, nullptr, &fr), STATUS_SUCCESS);
  ASSERT_EQ(fr->Dispatch->NdkInitializeFastRegisterMr(fr, 4, TRUE, nullptr, nullptr),
            STATUS_SUCCESS);
  std::vector<uint8_t> frmem(5 * NDK_PAGE_SIZE);
  MDL mdl{};
  mdl.VirtualAddress = frmem.data();
  mdl.ByteCount = 2 * NDK_PAGE_SIZE;
  std::vector<uint8_t> lam_buf(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) +
                               8 * sizeof(NDK_LOGICAL_ADDRESS));
  auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_buf.data());
  ULONG lam_size = static_cast<ULONG>(lam_buf.size()), fbo = 0;
  ASSERT_EQ(
      sa_->Dispatch->NdkBuildLAM(sa_, &mdl, mdl.ByteCount, nullptr, nullptr, lam, &lam_size, &fbo),
      STATUS_SUCCESS);
  const ULONG kw = NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_LOCAL_WRITE;
  ASSERT_EQ(s.qp->Dispatch->NdkBind(s.qp, (void*)1, s.mr, mw, s.mem.data(), 4096, kw),
            STATUS_SUCCESS);
  ASSERT_EQ(s.qp->Dispatch->NdkInvalidate(s.qp, (void*)2, &mw->Header, 0), STATUS_SUCCESS);
  ASSERT_EQ(s.qp->Dispatch->NdkFastRegister(s.qp, (void*)3, fr, lam->AdapterPageCount,
                                            lam->AdapterPageArray, fbo, mdl.ByteCount,
                                            reinterpret_cast<PVOID>(0x100000ull + fbo), kw),
            STATUS_SUCCESS);
  auto local = poll(s.cq, 3);
  ASSERT_EQ(local.size(), 3u) << "local requests waited for the peer's first FPDU";
  for (size_t i = 0; i < local.size(); ++i) {
    EXPECT_EQ(local[i].RequestContext, reinterpret_cast<void*>(i + 1));
    EXPECT_EQ(local[i].Status, STATUS_SUCCESS);
  }

  // A wire request is held until the initiator's first FPDU (RFC 5044
  // 7.1.2), and what follows it in the SQ stays behind it.
  NDK_SGE cr = c.sge(0, 64), sr = s.sge(1024, 64), snd = s.sge(0, 64);
  ASSERT_EQ(c.qp->Dispatch->NdkReceive(c.qp, (void*)0xC, &cr, 1), STATUS_SUCCESS);
  ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, (void*)0xD, &sr, 1), STATUS_SUCCESS);
  ASSERT_EQ(s.qp->Dispatch->NdkSend(s.qp, (void*)4, &snd, 1, 0), STATUS_SUCCESS);
  ASSERT_EQ(s.qp->Dispatch->NdkInvalidate(s.qp, (void*)5, &fr->Header, 0), STATUS_SUCCESS);
  std::this_thread::sleep_for(200ms);
  NDK_RESULT early[4];
  EXPECT_EQ(s.cq->Dispatch->NdkGetCqResults(s.cq, early, 4), 0u);
  ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
  NDK_SGE csnd = c.sge(2048, 64);
  ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, (void*)0xE, &csnd, 1, 0), STATUS_SUCCESS);
  auto cres = poll(c.cq, 2);
  auto sres = poll(s.cq, 3);
  ASSERT_EQ(cres.size(), 2u);
  ASSERT_EQ(sres.size(), 3u);
  for (auto& e : cres) EXPECT_EQ(e.Status, STATUS_SUCCESS);
  for (auto& e : sres) EXPECT_EQ(e.Status, STATUS_SUCCESS);
  EXPECT_EQ(close_object(mw), STATUS_SUCCESS);
  EXPECT_EQ(close_object(fr), STATUS_SUCCESS);
  close_end(c);
  close_end(s);
}

// The opt-out and the opt-in flag together make no sense.
TEST_F(NdkSemantics, BothP2pFlagsAreRefused) {
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  p.MpaFlags = SOFTNDK_MPA_PEER_TO_PEER | SOFTNDK_MPA_NO_PEER_TO_PEER;
  NDK_ADAPTER* a = nullptr;
  EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(a, nullptr);
}

}  // namespace
