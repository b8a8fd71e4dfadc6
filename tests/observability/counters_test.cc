// SPDX-License-Identifier: Apache-2.0
// counters_test.cc - SoftNdkQueryQpCounters: a QP's own traffic, Terminates,
// CQ errors and connection outcome, and its agreement with the adapter's
// counters (one connection per adapter instance here, so they must match).
#include "obs_fixture.h"

namespace obstest {
namespace {

void expect_same(const SOFTNDK_COUNTERS& q, const SOFTNDK_COUNTERS& a) {
  EXPECT_EQ(q.Connect, a.Connect);
  EXPECT_EQ(q.Accept, a.Accept);
  EXPECT_EQ(q.ConnectFailure, a.ConnectFailure);
  EXPECT_EQ(q.ConnectionError, a.ConnectionError);
  EXPECT_EQ(q.ActiveConnection, a.ActiveConnection);
  EXPECT_EQ(q.CQError, a.CQError);
  EXPECT_EQ(q.RDMAInOctets, a.RDMAInOctets);
  EXPECT_EQ(q.RDMAOutOctets, a.RDMAOutOctets);
  EXPECT_EQ(q.RDMAInFrames, a.RDMAInFrames);
  EXPECT_EQ(q.RDMAOutFrames, a.RDMAOutFrames);
  EXPECT_EQ(q.TerminatesSent, a.TerminatesSent);
  EXPECT_EQ(q.TerminatesReceived, a.TerminatesReceived);
}

class Counters : public ObsTest {};

TEST_F(Counters, TrafficOfOneQpMatchesItsAdapterAndThePeer) {
  prepare();
  SOFTNDK_COUNTERS z = c_.qp_counters();
  EXPECT_EQ(z.Connect + z.RDMAOutOctets + z.ActiveConnection, 0u);  // nothing yet
  connect();
  send_ok(c_, s_, 1000);
  write_ok(c_, s_, 200000, 4096);  // several FPDUs
  read_ok(c_, s_, 70000, 300000, 500000);
  send_ok(s_, c_, 10);
  // The peer's last bytes may still be in flight: wait for both views to settle.
  ASSERT_TRUE(eventually([&] {
    auto c = c_.qp_counters(), s = s_.qp_counters();
    return c.RDMAOutOctets == s.RDMAInOctets && s.RDMAOutOctets == c.RDMAInOctets &&
           c.RDMAOutFrames == s.RDMAInFrames && s.RDMAOutFrames == c.RDMAInFrames;
  })) << "octets and frames sent by one end are those received by the other";
  SOFTNDK_COUNTERS c = c_.qp_counters(), s = s_.qp_counters();
  EXPECT_EQ(c.Connect, 1u);
  EXPECT_EQ(c.Accept, 0u);
  EXPECT_EQ(s.Connect, 0u);
  EXPECT_EQ(s.Accept, 1u);
  EXPECT_EQ(c.ActiveConnection, 1u);
  EXPECT_EQ(s.ActiveConnection, 1u);
  // Payload plus framing: at least the payload, at most 10% more.
  const uint64_t c_payload = 1000 + 200000 + 0, s_payload = 70000 + 10;
  EXPECT_GE(c.RDMAOutOctets, c_payload);
  EXPECT_LE(c.RDMAOutOctets, c_payload + c_payload / 10 + 1000);
  EXPECT_GE(s.RDMAOutOctets, s_payload);
  // Write 200000 B is 4 FPDUs of at most 65520 B, plus Send, Read Request.
  // With SOFTNDK_SAMEHOST=on (docs/samehost.md) the Write and the Read
  // Response may each be one descriptor FPDU instead; the octets still
  // count their payload.
  SOFTNDK_PATH_INFO path{};
  path.Size = sizeof path;
  ASSERT_EQ(SoftNdkQueryConnectionPath(c_.conn, &path), STATUS_SUCCESS);
  const bool fast = path.DescriptorsSent != 0 || path.PulledMessages != 0;
  EXPECT_GE(c.RDMAOutFrames, fast ? 3u : 6u);
  EXPECT_GE(s.RDMAOutFrames, fast ? 2u : 3u);  // Read Response (2 FPDUs) + Send
  EXPECT_EQ(c.CQError + s.CQError, 0u);
  EXPECT_EQ(c.TerminatesSent + c.TerminatesReceived, 0u);
  expect_same(c, c_.adapter_counters());
  expect_same(s, s_.adapter_counters());

  // Disconnect: the level drops, flushed receives are CQ errors of their QP.
  NDK_SGE rs = s_.sge(0, 64);
  ASSERT_EQ(s_.qp->Dispatch->NdkReceive(s_.qp, &s_, &rs, 1), STATUS_SUCCESS);
  disconnect_both();
  auto f = poll(s_.cq, 1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].Status, STATUS_CANCELLED);
  s = s_.qp_counters();
  EXPECT_EQ(s.ActiveConnection, 0u);
  EXPECT_EQ(s.CQError, 1u);
  EXPECT_EQ(c_.qp_counters().CQError, 0u);
  EXPECT_EQ(c_.qp_counters().ActiveConnection, 0u);
  expect_same(c_.qp_counters(), c_.adapter_counters());
  expect_same(s, s_.adapter_counters());
}

TEST_F(Counters, TerminateAndErrorsAreCountedOnTheRightQp) {
  prepare();
  connect();
  NDK_SGE rs = c_.sge(0, 64);
  ASSERT_EQ(c_.qp->Dispatch->NdkReceive(c_.qp, &c_, &rs, 1), STATUS_SUCCESS);
  // A Write with a token the server never issued: the server sends a
  // Terminate, both QPs go to error.
  NDK_SGE ss = c_.sge(4096, 100);
  ASSERT_EQ(c_.qp->Dispatch->NdkWrite(c_.qp, &c_, &ss, 1, s_.addr(0), s_.token ^ 0x00ABCD00, 0),
            STATUS_SUCCESS);
  auto r = poll(c_.cq, 2);
  ASSERT_EQ(r.size(), 2u);  // the Write (success: local completion) and the flushed receive
  // Both ends tear their connection down on their own threads: the level
  // (ActiveConnection) and the error count settle after the completions
  // arrive, and the adapter's counter moves a moment before its QP's. Wait
  // for the settled state before comparing the two views.
  ASSERT_TRUE(eventually([&] {
    auto c = c_.qp_counters(), s = s_.qp_counters();
    auto ca = c_.adapter_counters(), sv = s_.adapter_counters();
    return c.TerminatesReceived == 1 && c.ActiveConnection == 0 && s.ActiveConnection == 0 &&
           ca.ActiveConnection == 0 && sv.ActiveConnection == 0 && c.ConnectionError == 1 &&
           s.ConnectionError == 1;
  })) << "both connections end in error and leave the active level";
  SOFTNDK_COUNTERS c = c_.qp_counters(), s = s_.qp_counters();
  EXPECT_EQ(s.TerminatesSent, 1u);
  EXPECT_EQ(s.TerminatesReceived, 0u);
  EXPECT_EQ(c.TerminatesSent, 0u);
  EXPECT_EQ(c.ConnectionError, 1u);
  EXPECT_EQ(s.ConnectionError, 1u);
  EXPECT_EQ(c.CQError, 1u);  // the flushed receive
  expect_same(c, c_.adapter_counters());
  expect_same(s, s_.adapter_counters());
}

TEST_F(Counters, RefusedConnectIsAConnectFailureOfThatQp) {
  prepare();
  // A port nobody listens on: bind one, keep it closed.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  auto any = v4("127.0.0.1", 0);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&any), sizeof any), 0);
  sockaddr_in got{};
  socklen_t len = sizeof got;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&got), &len);
  ASSERT_EQ(c_.a->Dispatch->NdkCreateConnector(c_.a, nullptr, nullptr, &c_.conn), STATUS_SUCCESS);
  Req cr;
  auto src = v4("127.0.0.1", 0);
  NTSTATUS st = c_.conn->Dispatch->NdkConnect(c_.conn, c_.qp, sa(src), sizeof src, sa(got),
                                              sizeof got, 8, 8, nullptr, 0, &Req::cb, &cr);
  EXPECT_EQ(cr.wait(st), STATUS_CONNECTION_REFUSED);
  ::close(fd);
  SOFTNDK_COUNTERS c = c_.qp_counters();
  EXPECT_EQ(c.ConnectFailure, 1u);
  EXPECT_EQ(c.Connect, 0u);
  EXPECT_EQ(s_.qp_counters().ConnectFailure, 0u);
  expect_same(c, c_.adapter_counters());
}

TEST_F(Counters, BadArgumentsAndResetKeepsQpCounters) {
  prepare();
  SOFTNDK_COUNTERS k{};
  EXPECT_EQ(SoftNdkQueryQpCounters(c_.qp, nullptr), STATUS_INVALID_PARAMETER);
  EXPECT_NE(SoftNdkQueryQpCounters(reinterpret_cast<NDK_QP*>(c_.cq), &k), STATUS_SUCCESS);
  connect();
  send_ok(c_, s_, 100);
  SOFTNDK_REQUEST req{};
  ASSERT_EQ(SoftNdkModifyAdapter(c_.a, SOFTNDK_MODIFY_ADAPTER_COUNTERS_RESET, nullptr, &req),
            STATUS_SUCCESS);
  EXPECT_EQ(c_.adapter_counters().RDMAOutOctets, 0u);
  EXPECT_EQ(c_.adapter_counters().ActiveConnection, 1u);  // a level, kept
  EXPECT_GT(c_.qp_counters().RDMAOutOctets, 100u);        // the QP's are not reset
}

}  // namespace
}  // namespace obstest
