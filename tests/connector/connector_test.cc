// SPDX-License-Identifier: Apache-2.0
// connector_test.cc - establishing connections through the public C ABI on
// 127.0.0.1: listen/connect/accept/complete-connect, data, connection data
// (private data lengths both ways) and the IRD/ORD read limits.
#include <gtest/gtest.h>

#include "conn_fixture.h"

namespace {

using namespace std::chrono_literals;
using namespace connector_test;  // ConnTest, Side, Req, Events, Incoming, CloseWait, v4, sa

TEST_F(ConnTest, ConnectAcceptSendAndWrite) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port);
  send_and_check(c, s, 1000);
  send_and_check(s, c, 70000);

  // RDMA Write client -> server, then a Send to say it is there.
  const size_t n = 300000;
  for (size_t i = 0; i < n; ++i) c.mem[i] = static_cast<uint8_t>(i ^ 0x5a);
  NDK_SGE ws = c.sge(0, n);
  ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, &c, &ws, 1,
                                     reinterpret_cast<uintptr_t>(s.mem.data()) + 4096, s.token, 0),
            STATUS_SUCCESS);
  auto w = poll(c.cq, 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].Status, STATUS_SUCCESS);
  // A Send behind the Write: its receive completion says the Write landed
  // (and orders the check after the placement).
  NDK_SGE rs = s.sge(1 << 19, 8);
  ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &s, &rs, 1), STATUS_SUCCESS);
  NDK_SGE ss = c.sge(0, 8);
  ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, &c, &ss, 1, 0), STATUS_SUCCESS);
  ASSERT_EQ(poll(c.cq, 1).size(), 1u);
  auto rr = poll(s.cq, 1);
  ASSERT_EQ(rr.size(), 1u);
  EXPECT_EQ(rr[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(std::memcmp(c.mem.data(), s.mem.data() + 4096, n), 0);

  // Addresses and counters.
  sockaddr_in la{}, pa{};
  ULONG len = 2;
  EXPECT_EQ(c.conn->Dispatch->NdkGetLocalAddress(c.conn, reinterpret_cast<SOCKADDR*>(&la), &len),
            STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, sizeof la);
  ASSERT_EQ(c.conn->Dispatch->NdkGetLocalAddress(c.conn, reinterpret_cast<SOCKADDR*>(&la), &len),
            STATUS_SUCCESS);
  len = sizeof pa;
  ASSERT_EQ(s.conn->Dispatch->NdkGetPeerAddress(s.conn, reinterpret_cast<SOCKADDR*>(&pa), &len),
            STATUS_SUCCESS);
  EXPECT_EQ(la.sin_port, pa.sin_port);
  len = sizeof pa;
  ASSERT_EQ(c.conn->Dispatch->NdkGetPeerAddress(c.conn, reinterpret_cast<SOCKADDR*>(&pa), &len),
            STATUS_SUCCESS);
  EXPECT_EQ(ntohs(pa.sin_port), port);
  SOFTNDK_COUNTERS k{};
  ASSERT_EQ(SoftNdkQueryAdapterCounters(a_, &k), STATUS_SUCCESS);
  EXPECT_EQ(k.Connect, 1u);
  EXPECT_EQ(k.Accept, 1u);
  EXPECT_EQ(k.ActiveConnection, 2u);
  SOFTNDK_CONNECTION_INFO ci{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  EXPECT_EQ(ci.MpaRevision, 2u);
  EXPECT_FALSE(ci.Crc);
  EXPECT_FALSE(ci.Markers);
  EXPECT_TRUE(ci.PeerToPeer);  // the default: NDK connection semantics
  EXPECT_EQ(ci.LastTerminateSent, 0xFFFFFFFFu);
  // CompleteConnect twice, Accept again: wrong state.
  Req r;
  EXPECT_EQ(c.conn->Dispatch->NdkCompleteConnect(c.conn, nullptr, nullptr, &Req::cb, &r),
            STATUS_CONNECTION_INVALID);
  EXPECT_EQ(
      s.conn->Dispatch->NdkAccept(s.conn, s.qp, 1, 1, nullptr, 0, nullptr, nullptr, &Req::cb, &r),
      STATUS_CONNECTION_INVALID);

  // QP closes only after its connector.
  CloseWait qw;
  EXPECT_EQ(c.qp->Dispatch->NdkCloseQp(&c.qp->Header, &CloseWait::cb, &qw), STATUS_PENDING);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(qw.calls.load(), 0);
  EXPECT_EQ(close(c.conn), STATUS_SUCCESS);
  EXPECT_TRUE(eventually([&] { return qw.calls.load() == 1; }));
  // The server sees the connection end (closing the QP first let the data
  // path end the stream; the reason depends on who was first).
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  EXPECT_EQ(close(s.conn), STATUS_SUCCESS);
  EXPECT_EQ(close(l), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryAdapterCounters(a_, &k), STATUS_SUCCESS);
  EXPECT_EQ(k.ActiveConnection, 0u);
}

TEST_F(ConnTest, ConnectionDataLengthProtocolBothWays) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port, false);
  std::string cpd(40, 'c'), spd(30, 's');
  cpd[0] = 'C';
  spd[0] = 'S';
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr, 8, 8, cpd), STATUS_PENDING);
  s.conn = in.next();
  ASSERT_NE(s.conn, nullptr);
  auto* k = s.conn->Dispatch;
  ULONG len = 0;
  EXPECT_EQ(k->NdkGetConnectionData(s.conn, nullptr, nullptr, nullptr, &len), STATUS_SUCCESS);
  EXPECT_EQ(len, 40u);
  len = 5;
  EXPECT_EQ(k->NdkGetConnectionData(s.conn, nullptr, nullptr, nullptr, &len),
            STATUS_INVALID_PARAMETER);
  char buf[512] = {};
  len = 10;
  EXPECT_EQ(k->NdkGetConnectionData(s.conn, nullptr, nullptr, buf, &len), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, 40u);
  EXPECT_EQ(std::string(buf, 10), cpd.substr(0, 10));
  EXPECT_EQ(buf[10], 0);
  len = sizeof buf;
  ULONG ird = 0, ord = 0;
  EXPECT_EQ(k->NdkGetConnectionData(s.conn, &ird, &ord, buf, &len), STATUS_SUCCESS);
  EXPECT_EQ(len, 40u);
  EXPECT_EQ(std::string(buf, 40), cpd);
  EXPECT_EQ(ird, 8u);
  EXPECT_EQ(ord, 8u);
  // Callee data above MaxCalleeData.
  std::string big(300, 'x');
  Req r;
  EXPECT_EQ(k->NdkAccept(s.conn, s.qp, 8, 8, big.data(), 300, nullptr, nullptr, &Req::cb, &r),
            STATUS_INVALID_PARAMETER);
  Req ar;
  NTSTATUS as = accept(s, 8, 8, spd, &ar);
  ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
  len = 0;
  EXPECT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, nullptr, nullptr, nullptr, &len),
            STATUS_SUCCESS);
  EXPECT_EQ(len, 30u);
  len = sizeof buf;
  EXPECT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, &ird, &ord, buf, &len), STATUS_SUCCESS);
  EXPECT_EQ(std::string(buf, 30), spd);
  ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
  ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  send_and_check(c, s, 10);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, CallerDataLimit) {
  open();
  Side c;
  make_side(c);
  Req r;
  std::string big(253, 'x');
  EXPECT_EQ(start_connect(c, 9, r, 1, 1, big), STATUS_INVALID_PARAMETER);
  auto foreign = v4("192.0.2.1", 0);
  auto dst = v4("127.0.0.1", 9);
  EXPECT_EQ(c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa(foreign), sizeof foreign, sa(dst),
                                         sizeof dst, 1, 1, nullptr, 0, &Req::cb, &r),
            STATUS_INVALID_ADDRESS);
  EXPECT_EQ(c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa(foreign), 3, sa(dst), sizeof dst, 1, 1,
                                         nullptr, 0, &Req::cb, &r),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(r.calls, 0);
}

TEST_F(ConnTest, ReadLimitsAreClamped) {
  open();
  Side c, s;
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = pair_up(c, s, in, &port, false);
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr, 100000, 100000), STATUS_PENDING);
  s.conn = in.next();
  ASSERT_NE(s.conn, nullptr);
  ULONG ird = 0, ord = 0;
  ASSERT_EQ(s.conn->Dispatch->NdkGetConnectionData(s.conn, &ird, &ord, nullptr, nullptr),
            STATUS_SUCCESS);
  EXPECT_EQ(ird, 128u);  // capped at the adapter maximum
  EXPECT_EQ(ord, 128u);
  Req ar;
  NTSTATUS as = accept(s, 4, 2, "", &ar);
  ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
  ASSERT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, &ird, &ord, nullptr, nullptr),
            STATUS_SUCCESS);
  EXPECT_LE(ird, 128u);
  EXPECT_LE(ord, 128u);
  EXPECT_GE(ord, 1u);
  ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
  ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  SOFTNDK_CONNECTION_INFO ci{}, si{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
  EXPECT_EQ(ci.Ord, ord);
  EXPECT_LE(ci.Ord, si.Ird);  // never more reads in flight than the target serves
  EXPECT_LE(si.Ord, ci.Ird);
  close(c.conn);
  close(s.conn);
  close(l);
}

// NdkConnect/NdkAccept: each side's limits are clamped to the adapter's
// maxima, then a peer's lower limit becomes the effective one - effective
// ORD = min(own ORD, peer IRD), IRD = min(own IRD, peer ORD) - never raised.
// Both sides report the same pair (mirrored), and the active side keeps no
// more Reads in flight than its ORD: the passive side, which terminates a
// Read beyond its IRD, serves a burst of them.
TEST_F(ConnTest, ReadLimitsAreNegotiatedNeverRaised) {
  open();
  struct Case {
    ULONG c_ird, c_ord, s_ird, s_ord;
  };
  auto cap = [](ULONG v) { return std::min<ULONG>(v, 128); };
  for (Case k : {Case{0xFFFF, 0xFFFF, 3, 5}, Case{2, 7, 16, 16}, Case{100000, 1, 0, 0},
                 Case{8, 8, 8, 8}, Case{1, 128, 128, 1}, Case{0, 4, 2, 9}}) {
    SCOPED_TRACE(testing::Message() << "connect " << k.c_ird << "/" << k.c_ord << ", accept "
                                    << k.s_ird << "/" << k.s_ord);
    Side c, s;
    make_side(c);
    make_side(s);
    Incoming in;
    uint16_t port;
    NDK_LISTENER* l = listen(in, &port);
    Req cr;
    ASSERT_EQ(start_connect(c, port, cr, k.c_ird, k.c_ord), STATUS_PENDING);
    s.conn = in.next();
    ASSERT_NE(s.conn, nullptr);
    Req ar;
    NTSTATUS as = accept(s, k.s_ird, k.s_ord, "", &ar);
    ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    const ULONG s_ird = std::min(cap(k.s_ird), cap(k.c_ord));
    const ULONG s_ord = std::min(cap(k.s_ord), cap(k.c_ird));
    ULONG ird = 0, ord = 0;
    ASSERT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, &ird, &ord, nullptr, nullptr),
              STATUS_SUCCESS);
    EXPECT_EQ(ord, s_ird);
    EXPECT_EQ(ird, s_ord);
    ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
    ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
    SOFTNDK_CONNECTION_INFO ci{}, si{};
    ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
    ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
    EXPECT_EQ(si.Ird, s_ird);
    EXPECT_EQ(si.Ord, s_ord);
    EXPECT_EQ(ci.Ord, s_ird);
    EXPECT_EQ(ci.Ird, s_ord);
    // A burst of Reads beyond the ORD is queued, not sent: all complete and
    // the passive side never terminates the connection.
    if (ci.Ord > 0) {
      const int kReads = 24;
      for (int i = 0; i < kReads; ++i) {
        NDK_SGE d = c.sge(static_cast<size_t>(i) * 4096, 4096);
        ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, nullptr, &d, 1,
                                          reinterpret_cast<uintptr_t>(s.mem.data()) + i * 4096,
                                          s.token, 0),
                  STATUS_SUCCESS);
      }
      auto r = poll(c.cq, kReads);
      ASSERT_EQ(r.size(), static_cast<size_t>(kReads));
      for (auto& e : r) EXPECT_EQ(e.Status, STATUS_SUCCESS);
      ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
      EXPECT_EQ(si.LastTerminateSent, 0xFFFFFFFFu);
    }
    close(c.conn);
    close(s.conn);
    close(l);
    close(c.qp);
    close(s.qp);
  }
}

}  // namespace
