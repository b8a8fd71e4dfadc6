// SPDX-License-Identifier: Apache-2.0
// connector_refuse_test.cc - connections that are refused or cannot be
// made, through the public C ABI on 127.0.0.1: reject (with private data,
// and by the active side after the connect), nothing listening,
// pause/resume, listener close, listen address checks, shared endpoints and
// duplicate tuples.
#include <gtest/gtest.h>

#include "conn_fixture.h"

namespace {

using namespace std::chrono_literals;
using namespace connector_test;  // ConnTest, Side, Req, Events, Incoming, CloseWait, v4, sa

TEST_F(ConnTest, RejectWithPrivateDataIsRefused) {
  open();
  Side c;
  make_side(c);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr, 8, 8, "hello"), STATUS_PENDING);
  NDK_CONNECTOR* sc = in.next();
  ASSERT_NE(sc, nullptr);
  char no[] = "go away";
  EXPECT_EQ(sc->Dispatch->NdkReject(sc, no, 7), STATUS_SUCCESS);
  EXPECT_EQ(sc->Dispatch->NdkReject(sc, no, 7), STATUS_CONNECTION_INVALID);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  char buf[64] = {};
  ULONG len = sizeof buf;
  ASSERT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, nullptr, nullptr, buf, &len),
            STATUS_SUCCESS);
  EXPECT_EQ(std::string(buf, len), "go away");
  SOFTNDK_COUNTERS k{};
  SoftNdkQueryAdapterCounters(a_, &k);
  EXPECT_EQ(k.ConnectFailure, 1u);
  EXPECT_EQ(close(sc), STATUS_SUCCESS);
  EXPECT_EQ(close(c.conn), STATUS_SUCCESS);
  EXPECT_EQ(close(l), STATUS_SUCCESS);
}

TEST_F(ConnTest, ActiveRejectAfterConnectResetsTheConnection) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port, false);
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr), STATUS_PENDING);
  s.conn = in.next();
  ASSERT_NE(s.conn, nullptr);
  Req ar;
  NTSTATUS as = accept(s, 8, 8, "", &ar);
  ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
  EXPECT_EQ(c.conn->Dispatch->NdkReject(c.conn, nullptr, 0), STATUS_SUCCESS);
  // Without P2P the Accept completes once the Reply is out, so it may have
  // succeeded; then the reset reaches the server as a disconnect event.
  NTSTATUS st = ar.wait(as);
  if (st == STATUS_SUCCESS) {
    EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  } else {
    EXPECT_TRUE(st == STATUS_CONNECTION_ABORTED || st == STATUS_CONNECTION_RESET) << std::hex << st;
  }
  EXPECT_EQ(complete_connect(c), STATUS_CONNECTION_INVALID);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, NothingListeningIsRefused) {
  open();
  Side c;
  make_side(c);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  auto a = v4("127.0.0.1", 0);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t l = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &l);
  Req cr;
  ASSERT_EQ(start_connect(c, ntohs(a.sin_port), cr), STATUS_PENDING);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  ::close(fd);
  // A failed connector may try again; the second attempt fails the same way.
  Req cr2;
  ASSERT_EQ(start_connect(c, ntohs(a.sin_port), cr2), STATUS_PENDING);
  EXPECT_EQ(cr2.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
}

TEST_F(ConnTest, PauseRefusesResumeAccepts) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port, false);
  l->Dispatch->NdkControlConnectEvents(l, TRUE);
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr), STATUS_PENDING);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(in.next(100ms), nullptr);
  l->Dispatch->NdkControlConnectEvents(l, FALSE);
  establish(c, s, in, port);
  send_and_check(c, s, 100);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, ListenerCloseStopsAcceptingAndWaitsForItsConnectors) {
  open();
  Side c, s, c2;
  make_side(c);
  make_side(s);
  make_side(c2);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  CloseWait lw;
  EXPECT_EQ(l->Dispatch->NdkCloseListener(&l->Header, &CloseWait::cb, &lw), STATUS_PENDING);
  Req cr;
  ASSERT_EQ(start_connect(c2, port, cr), STATUS_PENDING);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(in.next(100ms), nullptr);
  send_and_check(c, s, 100);  // the delivered connection lives on
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(lw.calls.load(), 0);  // its connector is still open
  EXPECT_EQ(close(s.conn), STATUS_SUCCESS);
  EXPECT_TRUE(eventually([&] { return lw.calls.load() == 1; }));
  close(c.conn);
}

TEST_F(ConnTest, ListenAddressChecks) {
  open();
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  NDK_LISTENER* l2 = nullptr;
  ASSERT_EQ(d()->NdkCreateListener(a_, &Incoming::cb, &in, nullptr, nullptr, &l2), STATUS_SUCCESS);
  sockaddr_in got{};
  ULONG len = 0;
  EXPECT_EQ(l2->Dispatch->NdkGetLocalAddress(l2, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_INVALID_DEVICE_REQUEST);
  auto same = v4("127.0.0.1", port);
  EXPECT_EQ(l2->Dispatch->NdkListen(l2, sa(same), sizeof same, nullptr, nullptr),
            STATUS_SHARING_VIOLATION);
  auto foreign = v4("192.0.2.1", 0);
  EXPECT_EQ(l2->Dispatch->NdkListen(l2, sa(foreign), sizeof foreign, nullptr, nullptr),
            STATUS_INVALID_ADDRESS);
  auto ok = v4("127.0.0.1", 0);
  EXPECT_EQ(l2->Dispatch->NdkListen(l2, sa(ok), sizeof ok, nullptr, nullptr), STATUS_SUCCESS);
  len = 4;
  EXPECT_EQ(l2->Dispatch->NdkGetLocalAddress(l2, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, sizeof got);
  EXPECT_EQ(l2->Dispatch->NdkListen(l2, sa(ok), sizeof ok, nullptr, nullptr),
            STATUS_INVALID_DEVICE_REQUEST);
  close(l2);
  close(l);
}

TEST_F(ConnTest, SharedEndpointToSeveralListenersAndDuplicateTuple) {
  open();
  Incoming in1, in2;
  uint16_t p1, p2;
  NDK_LISTENER* l1 = listen(in1, &p1);
  NDK_LISTENER* l2 = listen(in2, &p2);
  NDK_SHARED_ENDPOINT* se = nullptr;
  auto local = v4("127.0.0.1", 0);
  ASSERT_EQ(d()->NdkCreateSharedEndpoint(a_, sa(local), sizeof local, nullptr, nullptr, &se),
            STATUS_SUCCESS);
  sockaddr_in sel{};
  ULONG len = sizeof sel;
  ASSERT_EQ(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<SOCKADDR*>(&sel), &len),
            STATUS_SUCCESS);
  // A second endpoint on the same port is refused (one reservation).
  NDK_SHARED_ENDPOINT* se2 = nullptr;
  EXPECT_EQ(d()->NdkCreateSharedEndpoint(a_, sa(sel), sizeof sel, nullptr, nullptr, &se2),
            STATUS_SHARING_VIOLATION);

  Side c1, c2, c3, s1, s2;
  for (Side* x : {&c1, &c2, &c3, &s1, &s2}) make_side(*x, 4096);
  auto via_se = [&](Side& c, uint16_t port, Req& r) {
    c.conn = make_connector();
    auto dst = v4("127.0.0.1", port);
    return c.conn->Dispatch->NdkConnectWithSharedEndpoint(c.conn, c.qp, se, sa(dst), sizeof dst, 4,
                                                          4, nullptr, 0, &Req::cb, &r);
  };
  Req r1, r2, r3;
  ASSERT_EQ(via_se(c1, p1, r1), STATUS_PENDING);
  ASSERT_EQ(via_se(c2, p2, r2), STATUS_PENDING);
  s1.conn = in1.next();
  s2.conn = in2.next();
  ASSERT_TRUE(s1.conn && s2.conn);
  EXPECT_EQ(via_se(c3, p1, r3), STATUS_ADDRESS_ALREADY_EXISTS);
  Req a1, a2;
  NTSTATUS as1 = accept(s1, 4, 4, "", &a1), as2 = accept(s2, 4, 4, "", &a2);
  ASSERT_EQ(r1.wait(STATUS_PENDING), STATUS_SUCCESS);
  ASSERT_EQ(r2.wait(STATUS_PENDING), STATUS_SUCCESS);
  for (Side* c : {&c1, &c2}) {
    sockaddr_in la{};
    len = sizeof la;
    ASSERT_EQ(
        c->conn->Dispatch->NdkGetLocalAddress(c->conn, reinterpret_cast<SOCKADDR*>(&la), &len),
        STATUS_SUCCESS);
    EXPECT_EQ(la.sin_port, sel.sin_port);
    ASSERT_EQ(complete_connect(*c), STATUS_SUCCESS);
  }
  ASSERT_EQ(a1.wait(as1), STATUS_SUCCESS);
  ASSERT_EQ(a2.wait(as2), STATUS_SUCCESS);
  send_and_check(c1, s1, 64);
  send_and_check(c2, s2, 64);
  // The endpoint's close waits for the connectors over it.
  CloseWait sw;
  EXPECT_EQ(se->Dispatch->NdkCloseSharedEndpoint(&se->Header, &CloseWait::cb, &sw), STATUS_PENDING);
  close(c1.conn);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(sw.calls.load(), 0);
  close(c2.conn);
  close(c3.conn);
  EXPECT_TRUE(eventually([&] { return sw.calls.load() == 1; }));
  close(s1.conn);
  close(s2.conn);
  close(l1);
  close(l2);
}

}  // namespace
