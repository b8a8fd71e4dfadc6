// SPDX-License-Identifier: Apache-2.0
// instances_test.cc - several opens of one interface act as one RNIC
// (issue 16 item 1): a QP of one adapter instance is accepted through
// another instance's listener, connected through another's connector or
// shared endpoint, and uses another's CQs; objects of another interface
// (here: lo of another network namespace) are still refused. Data moves
// both ways over 127.0.0.1, and the instances close in either order.
#include <cstdlib>

#include "../util/netns.h"
#include "ends.h"

namespace {

using namespace std::chrono_literals;
using namespace connector_test;

class Instances : public EndsTest {
 protected:
  // The listener on `la`, c's connector on `ka` (c and s already made):
  // connects, through `se` if given, and moves data both ways. Returns the
  // listener.
  NDK_LISTENER* connect_through(NDK_ADAPTER* la, NDK_ADAPTER* ka, End& c, End& s,
                                NDK_SHARED_ENDPOINT* se = nullptr) {
    uint16_t port = 0;
    NDK_LISTENER* l = listen(la, in_, &port);
    c.conn = connector(ka);
    establish(c, s, in_, port, se);
    if (!HasFatalFailure()) exchange(c, s);
    if (!HasFatalFailure()) exchange(s, c);
    return l;
  }
  Incoming in_;
};

// A listener's connect event on instance 1, NdkAccept with a QP (and PD,
// MR, CQ) of instance 2; then every object closed and the instances closed
// listener's first.
TEST_F(Instances, AcceptWithAQpOfAnotherInstance) {
  NDK_ADAPTER* a1 = open();
  NDK_ADAPTER* a2 = open();
  End c, s;
  make(c, a1, a1);
  make(s, a2, a2);
  NDK_LISTENER* l = connect_through(a1, a1, c, s);
  ASSERT_FALSE(HasFatalFailure());
  close_end(s);
  close_end(c);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
  close_adapter(a1);
  close_adapter(a2);
}

// NdkConnect on instance 1's connector with a QP of instance 2, whose CQ
// is instance 3's; closed the other way round (QP's instance first).
TEST_F(Instances, ConnectWithAQpOfAnotherInstance) {
  NDK_ADAPTER* a1 = open();
  NDK_ADAPTER* a2 = open();
  NDK_ADAPTER* a3 = open();
  End c, s;
  make(c, a2, a3);
  make(s, a1, a1);
  NDK_LISTENER* l = connect_through(a1, a1, c, s);
  ASSERT_FALSE(HasFatalFailure());
  close_end(c);
  close_end(s);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
  close_adapter(a3);
  close_adapter(a2);
  close_adapter(a1);
}

// NdkConnectWithSharedEndpoint: the shared endpoint of instance 1, the
// connector of instance 2, the QP of instance 3.
TEST_F(Instances, ConnectWithSharedEndpointOfAnotherInstance) {
  NDK_ADAPTER* a1 = open();
  NDK_ADAPTER* a2 = open();
  NDK_ADAPTER* a3 = open();
  End c, s;
  make(c, a3, a3);
  make(s, a1, a2);
  NDK_SHARED_ENDPOINT* se = nullptr;
  auto local = v4("127.0.0.1", 0);
  ASSERT_EQ(
      a1->Dispatch->NdkCreateSharedEndpoint(a1, sa(local), sizeof local, nullptr, nullptr, &se),
      STATUS_SUCCESS);
  NDK_LISTENER* l = connect_through(a2, a2, c, s, se);
  ASSERT_FALSE(HasFatalFailure());
  close_end(c);
  close_end(s);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
  EXPECT_EQ(close_object(se), STATUS_SUCCESS);
}

// The listener's instance closes (with its listener and connector still
// open) while the connection it carries runs a QP of instance 2: the QP
// learns of it (disconnect event, flushed receive), and instance 2 closes
// cleanly afterwards.
TEST_F(Instances, ClosingTheListenersInstanceEndsTheOtherInstancesQp) {
  NDK_ADAPTER* a1 = open();
  NDK_ADAPTER* a2 = open();
  NDK_ADAPTER* a3 = open();
  End c, s;
  make(c, a3, a3);
  make(s, a2, a2);
  connect_through(a1, a3, c, s);
  ASSERT_FALSE(HasFatalFailure());
  NDK_SGE r = s.sge(0, 64);
  ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, (void*)0x5, &r, 1), STATUS_SUCCESS);
  close_adapter(a1);  // the listener and s's connector go with it
  auto x = poll(s.cq, 1);
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(x[0].RequestContext, (void*)0x5);
  EXPECT_EQ(x[0].Status, STATUS_CANCELLED);
  // The peer sees the connection end.
  EXPECT_TRUE(eventually([&] { return c.ev.n.load() == 1; }));
  NDK_SGE snd = s.sge(0, 8);
  EXPECT_NE(s.qp->Dispatch->NdkSend(s.qp, nullptr, &snd, 1, 0), STATUS_SUCCESS);
  s.conn = nullptr;  // closed with a1
  close_end(s);
  close_end(c);
  close_adapter(a2);
}

// Issue 28 hang 1: the listener on instance L, the client's objects all on
// C, the accepted connector's QP on a second instance B. After connect and
// accept complete, closing C (its objects still open) returns, and so do
// B's and L's closes. Each close runs in a thread and must end within 10 s.
TEST_F(Instances, ClosingTheClientsInstanceAfterAcceptOnAThirdInstanceReturns) {
  NDK_ADAPTER* l_ad = open();
  NDK_ADAPTER* c_ad = open();
  NDK_ADAPTER* b_ad = open();
  End c, s;
  make(c, c_ad, c_ad);
  make(s, b_ad, b_ad);
  Incoming in;
  uint16_t port = 0;
  NDK_LISTENER* l = listen(l_ad, in, &port);
  c.conn = connector(c_ad);
  establish(c, s, in, port);
  ASSERT_FALSE(HasFatalFailure());
  auto bounded_close = [&](NDK_ADAPTER* a, const char* what) {
    for (auto& x : adapters_)
      if (x == a) x = nullptr;
    std::atomic<bool> done{false};
    testing::internal::CaptureStderr();
    std::thread t([&] {
      SoftNdkCloseAdapter(a);
      done = true;
    });
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    if (!done) {
      ADD_FAILURE() << "SoftNdkCloseAdapter(" << what << ") did not return within 10 s";
      t.detach();  // the process ends with the failure
      std::_Exit(1);
    }
    t.join();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(err.find("gave up"), std::string::npos) << what << ": " << err;
  };
  bounded_close(c_ad, "C, the client's instance");
  // The server side sees the connection end.
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  // B's QP is held by the accepted connector, which belongs to L and is
  // still open: B's close makes it let go (that connector's connection
  // ends) instead of waiting for the consumer to close it.
  bounded_close(b_ad, "B, the accepted QP's instance");
  // The connector and listener on L still work as handles and close.
  EXPECT_EQ(close_object(s.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
  bounded_close(l_ad, "L, the listener's instance");
}

// SoftNdkCloseAdapter's wait is bounded (DisconnectTimeoutMs + 5 s): C's
// CQ serves a QP of instance B that the consumer keeps open, so C's CQ
// cannot finish closing. The close returns after the bound and names what
// it waited for on stderr; B's QP still works as a handle and closes.
TEST_F(Instances, ClosingAnInstanceWhoseCqAnotherInstancesQpUsesIsBounded) {
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  p.DisconnectTimeoutMs = 100;
  NDK_ADAPTER* c_ad = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &c_ad), STATUS_SUCCESS);
  NDK_ADAPTER* b_ad = open();
  End e;
  make(e, b_ad, c_ad);
  ASSERT_FALSE(HasFatalFailure());
  testing::internal::CaptureStderr();
  auto t0 = std::chrono::steady_clock::now();
  SoftNdkCloseAdapter(c_ad);
  auto took = std::chrono::steady_clock::now() - t0;
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_GE(took, 5000ms);
  EXPECT_LT(took, 9000ms);
  EXPECT_NE(err.find("SoftNdkCloseAdapter(lo): gave up after 5100 ms waiting for 1 object(s)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("CQ "), std::string::npos) << err;
  EXPECT_NE(err.find("closing"), std::string::npos) << err;
  e.cq = nullptr;  // closed with C (its last reference is B's QP)
  close_end(e);
  close_adapter(b_ad);
}

// Another interface (lo of another network namespace) is a different RNIC:
// its QPs, CQs and shared endpoints are refused with
// STATUS_INVALID_PARAMETER.
TEST_F(Instances, ObjectsOfAnotherInterfaceAreRefused) {
  if (!softndk::test::netns::available()) GTEST_SKIP() << "no network namespaces here";
  softndk::test::netns::NetNs ns;
  ASSERT_TRUE(ns.ok());
  NDK_ADAPTER* a1 = open();
  NDK_ADAPTER* other = nullptr;
  ASSERT_TRUE(ns.run([&] {
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &other), STATUS_SUCCESS);
  }));
  ASSERT_NE(other, nullptr);
  adapters_.push_back(other);
  End c, mixed;
  make(c, other, other);
  // A QP on a1's PD with the other interface's CQ.
  ASSERT_EQ(a1->Dispatch->NdkCreatePd(a1, nullptr, nullptr, &mixed.pd), STATUS_SUCCESS);
  NDK_QP* q = nullptr;
  EXPECT_EQ(mixed.pd->Dispatch->NdkCreateQp(mixed.pd, c.cq, c.cq, nullptr, 8, 8, 1, 1, 0, nullptr,
                                            nullptr, &q),
            STATUS_INVALID_PARAMETER);
  // a1's connector with the other interface's QP: Connect and Accept.
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(a1, in, &port);
  NDK_CONNECTOR* k = connector(a1);
  auto src = v4("127.0.0.1", 0), dst = v4("127.0.0.1", port);
  Req r;
  EXPECT_EQ(k->Dispatch->NdkConnect(k, c.qp, sa(src), sizeof src, sa(dst), sizeof dst, 4, 4,
                                    nullptr, 0, &Req::cb, &r),
            STATUS_INVALID_PARAMETER);
  End a;
  make(a, a1, a1);
  a.conn = k;
  End s;
  make(s, a1, a1);
  Req cr;
  ASSERT_EQ(k->Dispatch->NdkConnect(k, a.qp, sa(src), sizeof src, sa(dst), sizeof dst, 4, 4,
                                    nullptr, 0, &Req::cb, &cr),
            STATUS_PENDING);
  NDK_CONNECTOR* incoming = in.next();
  ASSERT_NE(incoming, nullptr);
  EXPECT_EQ(incoming->Dispatch->NdkAcceptEx(incoming, c.qp, 4, 4, nullptr, 0, &Events::cb_ex, &s.ev,
                                            &Req::cb, &r),
            STATUS_INVALID_PARAMETER);
  // ... while a QP of this interface is still accepted on it.
  Req ar;
  NTSTATUS as = incoming->Dispatch->NdkAcceptEx(incoming, s.qp, 4, 4, nullptr, 0, &Events::cb_ex,
                                                &s.ev, &Req::cb, &ar);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
  Req cc;
  EXPECT_EQ(cc.wait(k->Dispatch->NdkCompleteConnect(k, &Events::cb, &a.ev, &Req::cb, &cc)),
            STATUS_SUCCESS);
  EXPECT_EQ(ar.wait(as), STATUS_SUCCESS);
  // A shared endpoint of the other interface.
  NDK_SHARED_ENDPOINT* se = nullptr;
  auto any = v4("127.0.0.1", 0);
  ASSERT_EQ(
      other->Dispatch->NdkCreateSharedEndpoint(other, sa(any), sizeof any, nullptr, nullptr, &se),
      STATUS_SUCCESS);
  NDK_CONNECTOR* k2 = connector(a1);
  End d;
  make(d, a1, a1);
  EXPECT_EQ(k2->Dispatch->NdkConnectWithSharedEndpoint(k2, d.qp, se, sa(dst), sizeof dst, 4, 4,
                                                       nullptr, 0, &Req::cb, &r),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(close_object(k2), STATUS_SUCCESS);
  EXPECT_EQ(close_object(se), STATUS_SUCCESS);
  s.conn = incoming;
  close_end(s);
  close_end(a);
  close_end(d);
  close_end(c);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
  close_adapter(other);  // before its namespace goes
}

}  // namespace
