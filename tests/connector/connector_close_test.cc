// SPDX-License-Identifier: Apache-2.0
// connector_close_test.cc - how connections end and what they report,
// through the public C ABI on 127.0.0.1: disconnect, close at awkward
// moments (mid-connect, incoming, mid-accept, mid-transfer), a reset fault
// and the queries after it, TCP info, peer-to-peer RTRs, CRC, a peer that
// never closes, the passive QP closed after its connector.
#include <gtest/gtest.h>

#include "conn_fixture.h"

namespace {

using namespace std::chrono_literals;
using namespace connector_test;  // ConnTest, Side, Req, Events, Incoming, CloseWait, v4, sa

TEST_F(ConnTest, DisconnectCompletesPeerEventOnceAndFlushes) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port);
  send_and_check(c, s, 100);
  // Receives outstanding on both sides.
  for (int i = 0; i < 3; ++i) {
    NDK_SGE rs = s.sge(0, 100);
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &s, &rs, 1), STATUS_SUCCESS);
    NDK_SGE cs = c.sge(0, 100);
    ASSERT_EQ(c.qp->Dispatch->NdkReceive(c.qp, &c, &cs, 1), STATUS_SUCCESS);
  }
  Req dr;
  NTSTATUS st = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &dr);
  // The peer's event, then its own Disconnect completes the handshake.
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  EXPECT_EQ(s.ev.reason.load(), 0u);  // graceful
  Req sdr;
  EXPECT_EQ(sdr.wait(s.conn->Dispatch->NdkDisconnect(s.conn, &Req::cb, &sdr)), STATUS_SUCCESS);
  EXPECT_EQ(dr.wait(st), STATUS_SUCCESS);
  auto cf = poll(c.cq, 3, 2000ms);
  ASSERT_EQ(cf.size(), 3u);
  for (auto& r : cf) EXPECT_EQ(r.Status, STATUS_CANCELLED);
  auto sf = poll(s.cq, 3, 2000ms);
  ASSERT_EQ(sf.size(), 3u);
  for (auto& r : sf) EXPECT_EQ(r.Status, STATUS_CANCELLED);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(s.ev.n.load(), 1);
  EXPECT_EQ(c.ev.n.load(), 0);  // no event after our own Disconnect
  // Not reusable.
  Req again;
  EXPECT_EQ(c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &again), STATUS_CONNECTION_INVALID);
  NDK_SGE ss = c.sge(0, 1);
  EXPECT_NE(c.qp->Dispatch->NdkSend(c.qp, &c, &ss, 1, 0), STATUS_SUCCESS);
  SOFTNDK_COUNTERS k{};
  SoftNdkQueryAdapterCounters(a_, &k);
  EXPECT_EQ(k.ActiveConnection, 0u);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, CloseMidConnectCancels) {
  open();
  Side c;
  make_side(c);
  // A raw TCP listener that never answers the MPA Request.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  auto a = v4("127.0.0.1", 0);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t al = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &al);
  Req cr;
  ASSERT_EQ(start_connect(c, ntohs(a.sin_port), cr), STATUS_PENDING);
  std::this_thread::sleep_for(50ms);
  CloseWait w;
  NTSTATUS st = c.conn->Dispatch->NdkCloseConnector(&c.conn->Header, &CloseWait::cb, &w);
  if (st == STATUS_PENDING) {
    EXPECT_TRUE(eventually([&] { return w.calls.load() == 1; }));
  }
  // The request completed (cancelled) before the close did.
  EXPECT_EQ(cr.calls, 1);
  EXPECT_EQ(cr.st, STATUS_CANCELLED);
  ::close(fd);
}

TEST_F(ConnTest, CloseIncomingAndMidAccept) {
  open();
  Side c, c2, s2;
  make_side(c);
  make_side(c2);
  make_side(s2);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  // Closing an incoming connector refuses it.
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr), STATUS_PENDING);
  NDK_CONNECTOR* sc = in.next();
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(close(sc), STATUS_SUCCESS);
  NTSTATUS st = cr.wait(STATUS_PENDING);
  EXPECT_NE(st, STATUS_SUCCESS);
  EXPECT_NE(st, STATUS_PENDING);
  // P2P off: Accept completes after the Reply; close right after Accept.
  Req cr2;
  ASSERT_EQ(start_connect(c2, port, cr2), STATUS_PENDING);
  s2.conn = in.next();
  ASSERT_NE(s2.conn, nullptr);
  Req ar;
  NTSTATUS as = accept(s2, 8, 8, "", &ar);
  EXPECT_EQ(close(s2.conn), STATUS_SUCCESS);
  EXPECT_EQ(ar.calls, 1);  // completed before the close did
  (void)as;
  cr2.wait(STATUS_PENDING);
  close(c2.conn);
  close(c.conn);
  close(l);
}

TEST_F(ConnTest, CloseMidTransferIsSafe) {
  open(0, 2);
  Side c, s;
  make_side(c, 4 << 20);
  make_side(s, 4 << 20);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    while (!stop.load()) {
      NDK_SGE ws = c.sge(0, 1 << 20);
      NTSTATUS st = c.qp->Dispatch->NdkWrite(c.qp, nullptr, &ws, 1,
                                             reinterpret_cast<uintptr_t>(s.mem.data()), s.token, 0);
      if (st != STATUS_SUCCESS && st != STATUS_INSUFFICIENT_RESOURCES) break;
      NDK_RESULT r[16];
      c.cq->Dispatch->NdkGetCqResults(c.cq, r, 16);
    }
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(close(s.conn), STATUS_SUCCESS);  // RST under load
  EXPECT_TRUE(eventually([&] { return c.ev.n.load() == 1; }));
  stop = true;
  writer.join();
  EXPECT_EQ(close(c.conn), STATUS_SUCCESS);
  close(l);
}

TEST_F(ConnTest, ResetFaultAndQueryInfo) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port);
  SOFTNDK_FAULT f{};
  f.Type = SoftNdkFaultDelayTx;  // DelayMs 0: nothing to delay by
  EXPECT_EQ(SoftNdkInjectConnectionFault(c.conn, &f), STATUS_INVALID_PARAMETER);
  const uint32_t bogus = 99;  // what a C caller can store; not an enumerator
  std::memcpy(&f.Type, &bogus, sizeof bogus);
  EXPECT_EQ(SoftNdkInjectConnectionFault(c.conn, &f), STATUS_INVALID_PARAMETER);
  f.Type = SoftNdkFaultResetConnection;
  EXPECT_EQ(SoftNdkInjectConnectionFault(c.conn, &f), STATUS_SUCCESS);
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  EXPECT_EQ(s.ev.reason.load(), static_cast<ULONG>(STATUS_CONNECTION_RESET));
  EXPECT_EQ(SoftNdkInjectConnectionFault(c.conn, &f), STATUS_CONNECTION_INVALID);
  SOFTNDK_COUNTERS qc{};
  EXPECT_EQ(SoftNdkQueryQpCounters(c.qp, &qc), STATUS_SUCCESS);
  EXPECT_EQ(qc.Connect, 1u);
  EXPECT_EQ(qc.Accept, 0u);
  EXPECT_EQ(qc.ActiveConnection, 0u);  // reset: no longer established
  close(c.conn);
  close(s.conn);
  close(l);
}

// SoftNdkQueryConnectionTcpInfo: the socket's TCP state through the ABI.
// On loopback the automatic congestion rule gives cubic at both ends
// (tests/conn/netns_test.cc covers the rule itself); the byte counts follow
// what crossed; a short Size and a connector without a connection fail.
TEST_F(ConnTest, TcpInfoReportsTheSocketsState) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  NDK_CONNECTOR* idle = make_connector();
  SOFTNDK_TCP_INFO t{};
  t.Size = sizeof t;
  EXPECT_EQ(SoftNdkQueryConnectionTcpInfo(idle, &t), STATUS_CONNECTION_INVALID);
  close(idle);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  send_and_check(c, s, 200000);
  SOFTNDK_TCP_INFO ct{}, st{};
  ct.Size = st.Size = sizeof ct;
  ASSERT_EQ(SoftNdkQueryConnectionTcpInfo(c.conn, &ct), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryConnectionTcpInfo(s.conn, &st), STATUS_SUCCESS);
  EXPECT_EQ(ct.Size, sizeof ct);
  const bool auto_rule = std::getenv("SOFTNDK_TCP_CONGESTION") == nullptr;
  if (auto_rule) {
    EXPECT_STREQ(ct.CongestionControl, "cubic");
    EXPECT_STREQ(st.CongestionControl, "cubic");
  }
  // The Send's 200,000 bytes plus the MPA exchange went one way (with
  // SOFTNDK_SAMEHOST=on the stream may have moved to the same-host ring,
  // docs/samehost.md section 4: then the ring carried them) ...
  SOFTNDK_PATH_INFO pi{};
  pi.Size = sizeof pi;
  ASSERT_EQ(SoftNdkQueryConnectionPath(c.conn, &pi), STATUS_SUCCESS);
  const uint64_t ring = pi.RingOut ? pi.RingOutOctets : 0;
  EXPECT_GE(ct.BytesSent + ring, 200000u);
  EXPECT_GE(st.BytesReceived + ring, 200000u);
  EXPECT_LT(st.BytesSent, 10000u);  // ... and little more than the Reply came back
  EXPECT_GT(ct.SendMss, 0u);
  EXPECT_GT(ct.SendCwnd, 0u);
  SOFTNDK_TCP_INFO small{};
  small.Size = sizeof small - 1;
  EXPECT_EQ(SoftNdkQueryConnectionTcpInfo(c.conn, &small), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(small.BytesSent, 0u);
  EXPECT_EQ(SoftNdkQueryConnectionTcpInfo(c.conn, nullptr), STATUS_INVALID_PARAMETER);
  close(c.conn);
  close(s.conn);
  close(l);
}

class P2pTest : public ConnTest, public ::testing::WithParamInterface<ULONG> {};

TEST_P(P2pTest, RtrThenData) {
  open(SOFTNDK_MPA_PEER_TO_PEER | GetParam());
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port);
  SOFTNDK_CONNECTION_INFO ci{}, si{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
  EXPECT_TRUE(ci.PeerToPeer);
  EXPECT_TRUE(si.PeerToPeer);
  EXPECT_EQ(ci.RtrType, GetParam() >> 4);
  EXPECT_EQ(si.RtrType, GetParam() >> 4);
  send_and_check(s, c, 500);  // responder first: the RTR went ahead
  send_and_check(c, s, 500);
  // An RDMA Read works after a Read RTR took (and returned) an ORD slot.
  for (size_t i = 0; i < 1000; ++i) s.mem[8192 + i] = static_cast<uint8_t>(i * 13);
  NDK_SGE rs = c.sge(8192, 1000);
  ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, &c, &rs, 1,
                                    reinterpret_cast<uintptr_t>(s.mem.data()) + 8192, s.token, 0),
            STATUS_SUCCESS);
  auto r = poll(c.cq, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(std::memcmp(c.mem.data() + 8192, s.mem.data() + 8192, 1000), 0);
  EXPECT_EQ(ci.LastTerminateReceived, 0xFFFFFFFFu);
  close(c.conn);
  close(s.conn);
  close(l);
}
INSTANTIATE_TEST_SUITE_P(Rtr, P2pTest,
                         ::testing::Values(SOFTNDK_MPA_RTR_WRITE, SOFTNDK_MPA_RTR_READ));

TEST_F(ConnTest, CrcRequired) {
  open(SOFTNDK_MPA_CRC_REQUIRED | SOFTNDK_MPA_RTR_WRITE | SOFTNDK_MPA_RTR_READ);
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port);
  SOFTNDK_CONNECTION_INFO ci{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  EXPECT_TRUE(ci.Crc);
  send_and_check(c, s, 100000);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, DisconnectTimesOutWhenThePeerNeverCloses) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port);
  Req dr;
  auto t0 = std::chrono::steady_clock::now();
  NTSTATUS st = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &dr);
  EXPECT_EQ(dr.wait(st, 6000ms), STATUS_IO_TIMEOUT);  // DisconnectTimeoutMs = 2000
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4000ms);
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, PassiveQpClosesAfterItsConnector) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port);
  send_and_check(c, s, 10);
  Req dr;
  NTSTATUS st = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &dr);
  ASSERT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  Req sdr;
  EXPECT_EQ(sdr.wait(s.conn->Dispatch->NdkDisconnect(s.conn, &Req::cb, &sdr)), STATUS_SUCCESS);
  EXPECT_EQ(dr.wait(st), STATUS_SUCCESS);
  EXPECT_EQ(close(s.conn), STATUS_SUCCESS);
  EXPECT_EQ(close(s.qp), STATUS_SUCCESS);
  EXPECT_EQ(close(c.conn), STATUS_SUCCESS);
  EXPECT_EQ(close(c.qp), STATUS_SUCCESS);
  close(l);
}

}  // namespace
