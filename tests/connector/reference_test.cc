// SPDX-License-Identifier: Apache-2.0
// reference_test.cc - rules of the NDKPI reference pages for connectors
// that the broader connector tests do not assert, through the public C ABI
// on 127.0.0.1: a close from inside a failed connect's completion (object
// lifetime page), the peer's disconnect event flushes nothing
// (NdkDisconnectEventCallback), NdkCompleteConnect on a connector that is
// not connecting (its page). docs/compatibility.md, "Conformance to the
// NDKPI reference".
#include <gtest/gtest.h>

#include <vector>

#include "abi_util.h"

namespace {

using namespace connector_test;

struct End {
  NDK_PD* pd = nullptr;
  NDK_CQ* cq = nullptr;
  NDK_QP* qp = nullptr;
  NDK_CONNECTOR* conn = nullptr;
  Events ev;
  std::vector<uint8_t> mem = std::vector<uint8_t>(4096);
  NDK_MR* mr = nullptr;
  NDK_SGE sge{};
};

class RefRules : public ::testing::Test {
 protected:
  void SetUp() override {
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    p.EngineThreads = 2;
    p.ConnectTimeoutMs = 3000;
    p.DisconnectTimeoutMs = 2000;
    ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a_), STATUS_SUCCESS);
  }
  void TearDown() override {
    if (a_ != nullptr) SoftNdkCloseAdapter(a_);
  }
  void make(End& e) {
    const NDK_ADAPTER_DISPATCH* d = a_->Dispatch;
    ASSERT_EQ(d->NdkCreatePd(a_, nullptr, nullptr, &e.pd), STATUS_SUCCESS);
    ASSERT_EQ(d->NdkCreateCq(a_, 64, nullptr, nullptr, nullptr, nullptr, nullptr, &e.cq),
              STATUS_SUCCESS);
    ASSERT_EQ(
        e.pd->Dispatch->NdkCreateQp(e.pd, e.cq, e.cq, &e, 8, 8, 1, 1, 0, nullptr, nullptr, &e.qp),
        STATUS_SUCCESS);
    ASSERT_EQ(d->NdkCreateConnector(a_, nullptr, nullptr, &e.conn), STATUS_SUCCESS);
    ASSERT_EQ(e.pd->Dispatch->NdkCreateMr(e.pd, FALSE, nullptr, nullptr, &e.mr), STATUS_SUCCESS);
    MDL mdl{};
    mdl.VirtualAddress = e.mem.data();
    mdl.ByteCount = static_cast<ULONG>(e.mem.size());
    ASSERT_EQ(e.mr->Dispatch->NdkRegisterMr(e.mr, &mdl, e.mem.size(), NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                                            nullptr, nullptr),
              STATUS_SUCCESS);
    e.sge.VirtualAddress = e.mem.data();
    e.sge.Length = 64;
    e.sge.MemoryRegionToken = e.mr->Dispatch->NdkGetLocalTokenFromMr(e.mr);
  }
  // A listener on 127.0.0.1, port chosen by the kernel.
  NDK_LISTENER* listen(Incoming& in, uint16_t* port) {
    NDK_LISTENER* l = listen_on(a_, in, port);
    EXPECT_NE(l, nullptr);
    return l;
  }
  NTSTATUS connect(End& c, uint16_t port, Req* r) {
    auto src = v4("127.0.0.1", 0);
    auto dst = v4("127.0.0.1", port);
    return c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa(src), sizeof src, sa(dst), sizeof dst, 4,
                                        4, nullptr, 0, &Req::cb, r);
  }
  // c connects to s through a fresh listener; both ends established.
  void establish(End& c, End& s, Incoming& in) {
    uint16_t port = 0;
    l_ = listen(in, &port);
    Req cr;
    ASSERT_EQ(connect(c, port, &cr), STATUS_PENDING);
    NDK_CONNECTOR* incoming = in.next();
    ASSERT_NE(incoming, nullptr);
    ASSERT_EQ(close_object(s.conn), STATUS_SUCCESS);  // the passive end uses the incoming one
    s.conn = incoming;
    Req ar;
    NTSTATUS as = s.conn->Dispatch->NdkAcceptEx(s.conn, s.qp, 4, 4, nullptr, 0, &Events::cb_ex,
                                                &s.ev, &Req::cb, &ar);
    ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    Req cc;
    ASSERT_EQ(cc.wait(c.conn->Dispatch->NdkCompleteConnectEx(c.conn, &Events::cb_ex, &c.ev,
                                                             &Req::cb, &cc)),
              STATUS_SUCCESS);
    ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  }
  // Results that arrive within t.
  static std::vector<NDK_RESULT> drain(NDK_CQ* cq, size_t n, std::chrono::milliseconds t) {
    std::vector<NDK_RESULT> out;
    auto deadline = std::chrono::steady_clock::now() + t;
    NDK_RESULT r[8];
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      ULONG k = cq->Dispatch->NdkGetCqResults(cq, r, 8);
      out.insert(out.end(), r, r + k);
      if (k == 0) std::this_thread::sleep_for(200us);
    }
    return out;
  }

  NDK_ADAPTER* a_ = nullptr;
  NDK_LISTENER* l_ = nullptr;
};

// Object lifetime page, its example: NdkConnect fails, the consumer closes
// the connector from inside the completion; the provider must not touch it
// afterwards (no hang, no second callback, the close completes).
TEST_F(RefRules, CloseFromInsideAFailedConnectsCompletion) {
  End c;
  ASSERT_NO_FATAL_FAILURE(make(c));
  // A bound port nobody listens on: the SYN is answered with RST.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  auto a = v4("127.0.0.1", 0);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t al = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &al);
  struct Ctx {
    NDK_CONNECTOR* conn;
    std::atomic<int> calls{0};
    std::atomic<NTSTATUS> status{STATUS_PENDING};
    std::atomic<NTSTATUS> close_ret{STATUS_PENDING};
    CloseWait closed;
  } ctx;
  ctx.conn = c.conn;
  auto src = v4("127.0.0.1", 0);
  NTSTATUS st = c.conn->Dispatch->NdkConnect(
      c.conn, c.qp, sa(src), sizeof src, sa(a), sizeof a, 4, 4, nullptr, 0,
      [](PVOID p, NTSTATUS s) {
        auto* x = static_cast<Ctx*>(p);
        x->status = s;
        x->close_ret =
            x->conn->Dispatch->NdkCloseConnector(&x->conn->Header, &CloseWait::cb, &x->closed);
        x->calls++;
      },
      &ctx);
  ASSERT_EQ(st, STATUS_PENDING);
  ASSERT_TRUE(eventually([&] { return ctx.calls.load() == 1; }));
  EXPECT_EQ(ctx.status.load(), STATUS_CONNECTION_REFUSED);
  const NTSTATUS cr = ctx.close_ret.load();
  EXPECT_TRUE(cr == STATUS_SUCCESS || cr == STATUS_PENDING) << std::hex << cr;
  if (cr == STATUS_PENDING) {
    EXPECT_TRUE(eventually([&] { return ctx.closed.calls.load() == 1; }));
  }
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ctx.calls.load(), 1);
  ::close(fd);
  // The QP, no longer behind a connector, closes at once.
  EXPECT_EQ(close_object(c.qp), STATUS_SUCCESS);
}

// NdkDisconnectEventCallback: "the provider should not flush outstanding
// work requests when it indicates a disconnect event" - the receives stay
// queued until the consumer's own NdkDisconnect, which flushes them.
TEST_F(RefRules, PeersDisconnectEventFlushesNothing) {
  End c, s;
  ASSERT_NO_FATAL_FAILURE(make(c));
  ASSERT_NO_FATAL_FAILURE(make(s));
  Incoming in;
  ASSERT_NO_FATAL_FAILURE(establish(c, s, in));
  for (uintptr_t i = 1; i <= 3; ++i)
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, (void*)i, &s.sge, 1), STATUS_SUCCESS);
  Req cd;
  NTSTATUS cst = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &cd);
  ASSERT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  EXPECT_EQ(s.ev.reason.load(), 0u);  // graceful
  EXPECT_TRUE(drain(s.cq, 1, 200ms).empty()) << "the event flushed the receives";
  Req sd;
  EXPECT_EQ(sd.wait(s.conn->Dispatch->NdkDisconnect(s.conn, &Req::cb, &sd)), STATUS_SUCCESS);
  EXPECT_EQ(cd.wait(cst), STATUS_SUCCESS);
  auto r = drain(s.cq, 3, 2000ms);
  ASSERT_EQ(r.size(), 3u);
  for (uintptr_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].Status, STATUS_CANCELLED);
    EXPECT_EQ(r[i].RequestContext, (void*)(i + 1));
  }
  EXPECT_EQ(close_object(c.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(s.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(l_), STATUS_SUCCESS);
}

// NdkCompleteConnect: STATUS_CONNECTION_INVALID when the connector is not
// connecting - before any NdkConnect, on the passive side, and a second
// time after the connection was completed.
TEST_F(RefRules, CompleteConnectOnAConnectorNotConnectingIsConnectionInvalid) {
  End c, s;
  ASSERT_NO_FATAL_FAILURE(make(c));
  ASSERT_NO_FATAL_FAILURE(make(s));
  Req r0;
  EXPECT_EQ(c.conn->Dispatch->NdkCompleteConnect(c.conn, nullptr, nullptr, &Req::cb, &r0),
            STATUS_CONNECTION_INVALID);
  Incoming in;
  ASSERT_NO_FATAL_FAILURE(establish(c, s, in));
  Req r1, r2;
  EXPECT_EQ(s.conn->Dispatch->NdkCompleteConnect(s.conn, nullptr, nullptr, &Req::cb, &r1),
            STATUS_CONNECTION_INVALID);
  EXPECT_EQ(c.conn->Dispatch->NdkCompleteConnect(c.conn, nullptr, nullptr, &Req::cb, &r2),
            STATUS_CONNECTION_INVALID);
  EXPECT_EQ(r0.calls + r1.calls + r2.calls, 0);
  EXPECT_EQ(close_object(c.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(s.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(l_), STATUS_SUCCESS);
}

}  // namespace
