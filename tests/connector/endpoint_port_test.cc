// SPDX-License-Identifier: Apache-2.0
// endpoint_port_test.cc - NDKPI.md 6.1 through the C ABI: a listener's
// address:port stays reserved while connectors accepted through it live
// (even after the listener's close was requested and after their TCP
// connections ended), an explicit NdkConnect source port stays reserved
// until its connector closes, a shared endpoint's port likewise; the port
// is usable again once the last holder is closed.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "abi_util.h"

namespace connector_test {
namespace {

struct End {
  NDK_QP* qp = nullptr;
  NDK_CONNECTOR* conn = nullptr;
  Events ev;
};

class EndpointPortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    p.EngineThreads = 2;
    p.ConnectTimeoutMs = 3000;
    p.DisconnectTimeoutMs = 2000;
    ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a_), STATUS_SUCCESS);
    ASSERT_EQ(d()->NdkCreatePd(a_, nullptr, nullptr, &pd_), STATUS_SUCCESS);
    ASSERT_EQ(d()->NdkCreateCq(a_, 256, nullptr, nullptr, nullptr, nullptr, nullptr, &cq_),
              STATUS_SUCCESS);
  }
  void TearDown() override {
    if (a_ != nullptr) SoftNdkCloseAdapter(a_);
  }
  const NDK_ADAPTER_DISPATCH* d() { return a_->Dispatch; }

  // An active end gets its own connector; a passive one gets the
  // listener's.
  void make_end(End& e, bool active = true) {
    ASSERT_EQ(
        pd_->Dispatch->NdkCreateQp(pd_, cq_, cq_, &e, 16, 16, 1, 1, 0, nullptr, nullptr, &e.qp),
        STATUS_SUCCESS);
    if (active) {
      ASSERT_EQ(d()->NdkCreateConnector(a_, nullptr, nullptr, &e.conn), STATUS_SUCCESS);
    }
  }
  // NdkListen's status on ip:port with a fresh listener (closed again
  // unless it succeeded; then *out keeps it).
  NTSTATUS try_listen(Incoming& in, const char* ip, uint16_t port, NDK_LISTENER** out = nullptr) {
    NDK_LISTENER* l = nullptr;
    EXPECT_EQ(d()->NdkCreateListener(a_, &Incoming::cb, &in, nullptr, nullptr, &l), STATUS_SUCCESS);
    auto addr = v4(ip, port);
    Req r;
    NTSTATUS st = r.wait(l->Dispatch->NdkListen(l, sa(addr), sizeof addr, &Req::cb, &r));
    if (st == STATUS_SUCCESS && out != nullptr) {
      *out = l;
    } else {
      EXPECT_EQ(close_object(l), STATUS_SUCCESS);
    }
    return st;
  }
  uint16_t listener_port(NDK_LISTENER* l) {
    sockaddr_in got{};
    ULONG len = sizeof got;
    EXPECT_EQ(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<SOCKADDR*>(&got), &len),
              STATUS_SUCCESS);
    return ntohs(got.sin_port);
  }
  NTSTATUS try_shared_endpoint(uint16_t port) {
    NDK_SHARED_ENDPOINT* se = nullptr;
    auto addr = v4("127.0.0.1", port);
    NTSTATUS st = d()->NdkCreateSharedEndpoint(a_, sa(addr), sizeof addr, nullptr, nullptr, &se);
    if (st == STATUS_SUCCESS) {
      EXPECT_EQ(close_object(se), STATUS_SUCCESS);
    }
    return st;
  }
  // c connects (from src_port, 0 = ephemeral) to port; s is the accepted end.
  void establish(End& c, End& s, Incoming& in, uint16_t port, uint16_t src_port = 0) {
    auto src = v4("127.0.0.1", src_port);
    auto dst = v4("127.0.0.1", port);
    Req cr;
    ASSERT_EQ(c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa(src), sizeof src, sa(dst), sizeof dst,
                                           4, 4, nullptr, 0, &Req::cb, &cr),
              STATUS_PENDING);
    s.conn = in.next();
    ASSERT_NE(s.conn, nullptr);
    Req ar;
    NTSTATUS as = s.conn->Dispatch->NdkAccept(s.conn, s.qp, 4, 4, nullptr, 0, &Events::cb, &s.ev,
                                              &Req::cb, &ar);
    ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    Req cc;
    ASSERT_EQ(
        cc.wait(c.conn->Dispatch->NdkCompleteConnect(c.conn, &Events::cb, &c.ev, &Req::cb, &cc)),
        STATUS_SUCCESS);
    ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  }
  // Graceful disconnect from c; s answers after its disconnect event. (c,
  // the side that closes first, keeps its port in TIME_WAIT.)
  void disconnect(End& c, End& s) {
    Req dr;
    NTSTATUS st = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &dr);
    ASSERT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
    Req sr;
    EXPECT_EQ(sr.wait(s.conn->Dispatch->NdkDisconnect(s.conn, &Req::cb, &sr)), STATUS_SUCCESS);
    EXPECT_EQ(dr.wait(st), STATUS_SUCCESS);
  }
  // The kernel alone would let an SO_REUSEADDR listener onto the port now
  // (the premise that makes the provider's own reservation necessary).
  static bool kernel_would_allow_listen(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    auto a = v4("127.0.0.1", port);
    bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd, 1) == 0;
    ::close(fd);
    return ok;
  }

  NDK_ADAPTER* a_ = nullptr;
  NDK_PD* pd_ = nullptr;
  NDK_CQ* cq_ = nullptr;
};

TEST_F(EndpointPortTest, ListenerPortHeldUntilTheLastAcceptedConnectorCloses) {
  Incoming in, in2;
  NDK_LISTENER* l = nullptr;
  ASSERT_EQ(try_listen(in, "127.0.0.1", 0, &l), STATUS_SUCCESS);
  const uint16_t port = listener_port(l);
  NDK_LISTENER* other = nullptr;
  ASSERT_EQ(try_listen(in2, "127.0.0.1", 0, &other), STATUS_SUCCESS);
  const uint16_t other_port = listener_port(other);
  End c1, s1, c2, s2, c3;
  for (End* e : {&c1, &c2, &c3}) make_end(*e);
  for (End* e : {&s1, &s2}) make_end(*e, false);
  establish(c1, s1, in, port);
  establish(c2, s2, in, port);

  // Closing the listener pends on its two connectors; new requests are
  // refused at once.
  CloseWait lw;
  ASSERT_EQ(l->Dispatch->NdkCloseListener(&l->Header, &CloseWait::cb, &lw), STATUS_PENDING);
  {
    auto src = v4("127.0.0.1", 0);
    auto dst = v4("127.0.0.1", port);
    Req r;
    ASSERT_EQ(c3.conn->Dispatch->NdkConnect(c3.conn, c3.qp, sa(src), sizeof src, sa(dst),
                                            sizeof dst, 4, 4, nullptr, 0, &Req::cb, &r),
              STATUS_PENDING);
    EXPECT_EQ(r.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  }
  EXPECT_EQ(in.next(50ms), nullptr);

  // Every way of taking the address is refused while they live.
  auto refused_everywhere = [&] {
    EXPECT_EQ(try_listen(in2, "127.0.0.1", port), STATUS_SHARING_VIOLATION);
    EXPECT_EQ(try_listen(in2, "0.0.0.0", port), STATUS_SHARING_VIOLATION);
    EXPECT_EQ(try_shared_endpoint(port), STATUS_SHARING_VIOLATION);
    auto src = v4("127.0.0.1", port);
    auto dst = v4("127.0.0.1", other_port);
    Req r;
    EXPECT_EQ(c3.conn->Dispatch->NdkConnect(c3.conn, c3.qp, sa(src), sizeof src, sa(dst),
                                            sizeof dst, 4, 4, nullptr, 0, &Req::cb, &r),
              STATUS_SHARING_VIOLATION);
    EXPECT_EQ(r.calls, 0);
  };
  refused_everywhere();

  // End both TCP connections: from now on only the provider holds the port
  // (the kernel would let a listener onto it), and still refuses it.
  disconnect(c1, s1);
  disconnect(c2, s2);
  EXPECT_TRUE(eventually([&] { return kernel_would_allow_listen(port); }, 3000ms));
  refused_everywhere();
  EXPECT_EQ(close_object(c1.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(c2.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(s1.conn), STATUS_SUCCESS);
  refused_everywhere();  // s2 still holds a reference
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(lw.calls.load(), 0);

  // The last accepted connector closes: the listener's close completes and
  // the port is free for a new listener, which works.
  EXPECT_EQ(close_object(s2.conn), STATUS_SUCCESS);
  EXPECT_TRUE(eventually([&] { return lw.calls.load() == 1; }));
  Incoming in3;
  NDK_LISTENER* again = nullptr;
  ASSERT_EQ(try_listen(in3, "127.0.0.1", port, &again), STATUS_SUCCESS);
  End c4, s4;
  make_end(c4);
  make_end(s4, false);
  establish(c4, s4, in3, port);
  EXPECT_EQ(close_object(c4.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(s4.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(again), STATUS_SUCCESS);
  EXPECT_EQ(close_object(c3.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(other), STATUS_SUCCESS);
  EXPECT_EQ(lw.calls.load(), 1);
}

TEST_F(EndpointPortTest, ListenerWithoutConnectionsFreesItsPortOnClose) {
  Incoming in;
  NDK_LISTENER* l = nullptr;
  ASSERT_EQ(try_listen(in, "127.0.0.1", 0, &l), STATUS_SUCCESS);
  const uint16_t port = listener_port(l);
  EXPECT_EQ(try_listen(in, "0.0.0.0", port), STATUS_SHARING_VIOLATION);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
  ASSERT_EQ(try_listen(in, "127.0.0.1", port, &l), STATUS_SUCCESS);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
}

TEST_F(EndpointPortTest, ExplicitConnectSourcePortHeldUntilItsConnectorCloses) {
  Incoming in, in2;
  NDK_LISTENER* l = nullptr;
  ASSERT_EQ(try_listen(in, "127.0.0.1", 0, &l), STATUS_SUCCESS);
  const uint16_t port = listener_port(l);
  End c, s, c2;
  make_end(c);
  make_end(s, false);
  make_end(c2);
  const uint16_t src_port = free_port();
  establish(c, s, in, port, src_port);
  sockaddr_in la{};
  ULONG len = sizeof la;
  ASSERT_EQ(c.conn->Dispatch->NdkGetLocalAddress(c.conn, reinterpret_cast<SOCKADDR*>(&la), &len),
            STATUS_SUCCESS);
  EXPECT_EQ(ntohs(la.sin_port), src_port);

  auto refused = [&] {
    EXPECT_EQ(try_listen(in2, "127.0.0.1", src_port), STATUS_SHARING_VIOLATION);
    EXPECT_EQ(try_shared_endpoint(src_port), STATUS_SHARING_VIOLATION);
    auto src = v4("127.0.0.1", src_port);
    auto dst = v4("127.0.0.1", port);
    Req r;
    EXPECT_EQ(c2.conn->Dispatch->NdkConnect(c2.conn, c2.qp, sa(src), sizeof src, sa(dst),
                                            sizeof dst, 4, 4, nullptr, 0, &Req::cb, &r),
              STATUS_SHARING_VIOLATION);
  };
  refused();
  disconnect(s, c);  // TIME_WAIT stays on the listener's side, not on src_port
  EXPECT_TRUE(eventually([&] { return kernel_would_allow_listen(src_port); }, 3000ms));
  refused();  // disconnected, not closed: the connector still holds it
  EXPECT_EQ(close_object(c.conn), STATUS_SUCCESS);
  NDK_LISTENER* l2 = nullptr;
  EXPECT_EQ(try_listen(in2, "127.0.0.1", src_port, &l2), STATUS_SUCCESS);
  if (l2 != nullptr) {
    EXPECT_EQ(close_object(l2), STATUS_SUCCESS);
  }
  EXPECT_EQ(close_object(s.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(c2.conn), STATUS_SUCCESS);
  EXPECT_EQ(close_object(l), STATUS_SUCCESS);
}

TEST_F(EndpointPortTest, SharedEndpointPortHeldUntilItCloses) {
  NDK_SHARED_ENDPOINT* se = nullptr;
  auto addr = v4("127.0.0.1", 0);
  ASSERT_EQ(d()->NdkCreateSharedEndpoint(a_, sa(addr), sizeof addr, nullptr, nullptr, &se),
            STATUS_SUCCESS);
  sockaddr_in got{};
  ULONG len = sizeof got;
  ASSERT_EQ(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_SUCCESS);
  const uint16_t port = ntohs(got.sin_port);
  Incoming in;
  EXPECT_EQ(try_listen(in, "127.0.0.1", port), STATUS_SHARING_VIOLATION);
  EXPECT_EQ(try_listen(in, "0.0.0.0", port), STATUS_SHARING_VIOLATION);
  EXPECT_EQ(close_object(se), STATUS_SUCCESS);
  NDK_LISTENER* l = nullptr;
  EXPECT_EQ(try_listen(in, "127.0.0.1", port, &l), STATUS_SUCCESS);
  if (l != nullptr) {
    EXPECT_EQ(close_object(l), STATUS_SUCCESS);
  }
}

TEST_F(EndpointPortTest, Ipv6ListenerPortHeldLikewise) {
  auto v6 = [](const char* ip, uint16_t port) {
    sockaddr_in6 s{};
    s.sin6_family = AF_INET6;
    s.sin6_port = htons(port);
    inet_pton(AF_INET6, ip, &s.sin6_addr);
    return s;
  };
  auto sa6 = [](const sockaddr_in6& s) { return reinterpret_cast<const SOCKADDR*>(&s); };
  auto listen6 = [&](Incoming& in, const char* ip, uint16_t port, NDK_LISTENER** keep) {
    NDK_LISTENER* l = nullptr;
    EXPECT_EQ(d()->NdkCreateListener(a_, &Incoming::cb, &in, nullptr, nullptr, &l), STATUS_SUCCESS);
    auto at = v6(ip, port);
    NTSTATUS st = l->Dispatch->NdkListen(l, sa6(at), sizeof at, nullptr, nullptr);
    if (st == STATUS_SUCCESS && keep != nullptr) {
      *keep = l;
    } else {
      EXPECT_EQ(close_object(l), STATUS_SUCCESS);
    }
    return st;
  };
  Incoming in, in2;
  NDK_LISTENER* l = nullptr;
  NTSTATUS st = listen6(in, "::1", 0, &l);
  if (st == STATUS_INVALID_ADDRESS) GTEST_SKIP() << "no ::1 on lo";
  ASSERT_EQ(st, STATUS_SUCCESS);
  sockaddr_in6 got{};
  ULONG len = sizeof got;
  ASSERT_EQ(l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_SUCCESS);
  const uint16_t port = ntohs(got.sin6_port);
  End c, s;
  make_end(c);
  make_end(s, false);
  auto src = v6("::1", 0);
  auto dst = v6("::1", port);
  Req cr;
  ASSERT_EQ(c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa6(src), sizeof src, sa6(dst), sizeof dst,
                                         4, 4, nullptr, 0, &Req::cb, &cr),
            STATUS_PENDING);
  s.conn = in.next();
  ASSERT_NE(s.conn, nullptr);
  Req ar;
  NTSTATUS as = s.conn->Dispatch->NdkAccept(s.conn, s.qp, 4, 4, nullptr, 0, &Events::cb, &s.ev,
                                            &Req::cb, &ar);
  ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
  Req cc;
  ASSERT_EQ(
      cc.wait(c.conn->Dispatch->NdkCompleteConnect(c.conn, &Events::cb, &c.ev, &Req::cb, &cc)),
      STATUS_SUCCESS);
  ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);

  CloseWait lw;
  ASSERT_EQ(l->Dispatch->NdkCloseListener(&l->Header, &CloseWait::cb, &lw), STATUS_PENDING);
  EXPECT_EQ(listen6(in2, "::1", port, nullptr), STATUS_SHARING_VIOLATION);
  EXPECT_EQ(listen6(in2, "::", port, nullptr), STATUS_SHARING_VIOLATION);
  EXPECT_EQ(close_object(c.conn), STATUS_SUCCESS);
  EXPECT_EQ(listen6(in2, "::1", port, nullptr), STATUS_SHARING_VIOLATION);
  EXPECT_EQ(close_object(s.conn), STATUS_SUCCESS);
  EXPECT_TRUE(eventually([&] { return lw.calls.load() == 1; }));
  NDK_LISTENER* again = nullptr;
  EXPECT_EQ(listen6(in2, "::1", port, &again), STATUS_SUCCESS);
  if (again != nullptr) {
    EXPECT_EQ(close_object(again), STATUS_SUCCESS);
  }
}

}  // namespace
}  // namespace connector_test
