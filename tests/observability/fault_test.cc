// SPDX-License-Identifier: Apache-2.0
// fault_test.cc - SoftNdkInjectConnectionFault DropTx / DelayTx / CorruptTx
// end to end through the C ABI: what the peer observes, the Terminates, and
// that every posted request still completes exactly once.
#include "obs_fixture.h"
#include "util/samehost_env.h"

namespace obstest {
namespace {

constexpr uint32_t code(int layer, int etype, int c) {
  return static_cast<uint32_t>(layer << 16 | etype << 8 | c);
}
constexpr uint32_t kLlpCrcError = code(2, 0, 0x02);  // RFC 5044 / siw
constexpr uint32_t kDdpMsnRange = code(1, 2, 0x03);  // RFC 5041 untagged MSN range

class Faults : public ObsTest {
 protected:
  // Faults hit bytes on the wire, and a sender already on the same-host
  // ring refuses them (docs/samehost.md): whether the first messages moved
  // there depends on when the rendezvous ended (CountersCountOnly... failed
  // 6 times in 20 beside a CPU hog with the fast path on). These adapters
  // keep the TCP path.
  void prepare(ULONG mpa_flags = 0) {
    softndk_test::SamehostEnv tcp_only("off");
    ObsTest::prepare(mpa_flags);
  }
  NTSTATUS inject(Side& s, SOFTNDK_FAULT_TYPE t, ULONG count = 1, ULONG delay_ms = 0) {
    SOFTNDK_FAULT f{};
    f.Type = t;
    f.Count = count;
    f.DelayMs = delay_ms;
    return SoftNdkInjectConnectionFault(s.conn, &f);
  }
  void post_recv(Side& s, size_t off, size_t len, void* ctx) {
    NDK_SGE r = s.sge(off, len);
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, ctx, &r, 1), STATUS_SUCCESS);
  }
  void post_send(Side& s, size_t off, size_t len, void* ctx) {
    NDK_SGE x = s.sge(off, len);
    ASSERT_EQ(s.qp->Dispatch->NdkSend(s.qp, ctx, &x, 1, 0), STATUS_SUCCESS);
  }
};

TEST_F(Faults, CorruptTxWithCrcEndsInTerminateAndFlush) {
  prepare(SOFTNDK_MPA_CRC_REQUIRED);
  connect();
  send_ok(c_, s_, 100);  // the connection works
  post_recv(s_, 0, 4096, (void*)0xB1);
  post_recv(s_, 4096, 4096, (void*)0xB2);
  post_recv(c_, 8192, 4096, (void*)0xA1);
  ASSERT_EQ(inject(c_, SoftNdkFaultCorruptTx), STATUS_SUCCESS);
  fill(c_, 0, 3000, 5);
  post_send(c_, 0, 3000, (void*)0xA2);
  // The server finds the CRC wrong and answers with the LLP CRC Terminate.
  ASSERT_TRUE(eventually([&] { return s_.info().LastTerminateSent != kNoTerminate; }));
  EXPECT_EQ(s_.info().LastTerminateSent, kLlpCrcError);
  ASSERT_TRUE(eventually([&] { return c_.info().LastTerminateReceived != kNoTerminate; }));
  EXPECT_EQ(c_.info().LastTerminateReceived, kLlpCrcError);
  // Server: both receives flushed (the one the corrupt Send was landing in too).
  auto b = poll(s_.cq, 2);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].RequestContext, (void*)0xB1);
  EXPECT_EQ(b[1].RequestContext, (void*)0xB2);
  for (auto& r : b) EXPECT_EQ(r.Status, STATUS_CANCELLED);
  // Client: the Send completed locally when TCP took it; its receive flushed.
  auto a = poll(c_.cq, 2);
  ASSERT_EQ(a.size(), 2u);
  for (auto& r : a)
    EXPECT_EQ(r.Status, r.RequestContext == (void*)0xA2 ? STATUS_SUCCESS : STATUS_CANCELLED);
  // Both QPs are in error: posts fail inline; both ends saw the disconnect.
  NDK_SGE x = c_.sge(0, 8);
  EXPECT_EQ(c_.qp->Dispatch->NdkSend(c_.qp, nullptr, &x, 1, 0), STATUS_CONNECTION_INVALID);
  EXPECT_EQ(s_.qp->Dispatch->NdkSend(s_.qp, nullptr, &x, 1, 0), STATUS_CONNECTION_INVALID);
  EXPECT_TRUE(eventually([&] { return c_.ev.n.load() == 1 && s_.ev.n.load() == 1; }));
  EXPECT_EQ(s_.qp_counters().TerminatesSent, 1u);
  EXPECT_EQ(c_.qp_counters().TerminatesReceived, 1u);
  // Nothing completes twice.
  EXPECT_TRUE(drain(c_.cq).empty());
  EXPECT_TRUE(drain(s_.cq).empty());
}

TEST_F(Faults, CorruptTxWithoutCrcFlipsOneBitOfThePayload) {
  prepare();
  connect();
  ASSERT_EQ(inject(c_, SoftNdkFaultCorruptTx), STATUS_SUCCESS);
  fill(c_, 0, 1000, 9);
  post_recv(s_, 0, 1000, (void*)0xB1);
  post_send(c_, 0, 1000, (void*)0xA1);
  auto b = poll(s_.cq, 1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].Status, STATUS_SUCCESS);  // nothing can notice without CRC
  EXPECT_EQ(std::memcmp(c_.mem.data(), s_.mem.data(), 999), 0);
  EXPECT_EQ(s_.mem[999], c_.mem[999] ^ 0x01) << "the last payload byte, lowest bit";
  // One FPDU only: the next Send arrives intact.
  send_ok(c_, s_, 1000, 77);
}

TEST_F(Faults, DropTxLosesTheSendThenTheMsnGapTerminates) {
  prepare();
  connect();
  post_recv(s_, 0, 4096, (void*)0xB1);
  post_recv(s_, 4096, 4096, (void*)0xB2);
  post_recv(c_, 8192, 4096, (void*)0xA0);
  // What the connection carried before (the P2P RTR of NdkCompleteConnect).
  ASSERT_TRUE(
      eventually([&] { return s_.qp_counters().RDMAInFrames == c_.qp_counters().RDMAOutFrames; }));
  const SOFTNDK_COUNTERS s0 = s_.qp_counters(), c0 = c_.qp_counters();
  ASSERT_EQ(inject(c_, SoftNdkFaultDropTx, 1), STATUS_SUCCESS);
  post_send(c_, 0, 500, (void*)0xA1);
  auto a = poll(c_.cq, 1);  // completes locally: TCP (the fault) took it
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].RequestContext, (void*)0xA1);
  EXPECT_EQ(a[0].Status, STATUS_SUCCESS);
  // The receiver never sees it.
  EXPECT_TRUE(drain(s_.cq, 300ms).empty());
  EXPECT_EQ(s_.qp_counters().RDMAInFrames, s0.RDMAInFrames);
  // Nothing reached the socket: the dropped FPDU is in no counter.
  EXPECT_EQ(c_.qp_counters().RDMAOutFrames, c0.RDMAOutFrames);
  EXPECT_EQ(c_.qp_counters().RDMAOutOctets, c0.RDMAOutOctets);
  // The next Send carries MSN 2 where 1 is expected: DDP MSN-range Terminate.
  post_send(c_, 0, 500, (void*)0xA2);
  ASSERT_TRUE(eventually([&] { return c_.info().LastTerminateReceived != kNoTerminate; }));
  EXPECT_EQ(c_.info().LastTerminateReceived, kDdpMsnRange);
  EXPECT_EQ(s_.info().LastTerminateSent, kDdpMsnRange);
  auto b = poll(s_.cq, 2);
  ASSERT_EQ(b.size(), 2u);
  for (auto& r : b) EXPECT_EQ(r.Status, STATUS_CANCELLED);
  a = poll(c_.cq, 2);
  ASSERT_EQ(a.size(), 2u);
  for (auto& r : a)
    EXPECT_EQ(r.Status, r.RequestContext == (void*)0xA2 ? STATUS_SUCCESS : STATUS_CANCELLED);
  // Disconnecting the dead connection completes nothing more.
  disconnect_both(true);
  EXPECT_TRUE(drain(c_.cq).empty());
  EXPECT_TRUE(drain(s_.cq).empty());
}

TEST_F(Faults, DropTxThenDisconnectFlushesEachReceiveOnce) {
  prepare();
  connect();
  for (uintptr_t i = 1; i <= 3; ++i) post_recv(s_, i * 4096, 4096, (void*)i);
  ASSERT_EQ(inject(c_, SoftNdkFaultDropTx, 3), STATUS_SUCCESS);
  post_send(c_, 0, 100, (void*)0xA1);
  post_send(c_, 0, 100000, (void*)0xA2);  // two FPDUs: all three are dropped
  auto a = poll(c_.cq, 2);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_TRUE(drain(s_.cq, 200ms).empty());
  disconnect_both();
  auto b = poll(s_.cq, 3);
  ASSERT_EQ(b.size(), 3u);
  for (uintptr_t i = 0; i < 3; ++i) {
    EXPECT_EQ(b[i].Status, STATUS_CANCELLED);
    EXPECT_EQ(b[i].RequestContext, (void*)(i + 1));
  }
  EXPECT_TRUE(drain(s_.cq).empty());
  EXPECT_TRUE(drain(c_.cq).empty());
}

TEST_F(Faults, DelayTxHoldsDataThenDeliversInOrder) {
  prepare(SOFTNDK_MPA_CRC_REQUIRED);
  connect();
  // Long enough that "did not wait for the delay" below (local completions,
  // the direct path afterwards) holds on a busy 2-core host under ASan,
  // where 300 ms was within reach of one preemption.
  constexpr auto kDelay = 1000ms;
  post_recv(s_, 100000, 2000, (void*)0xB1);
  post_recv(s_, 200000, 2000, (void*)0xB2);
  ASSERT_EQ(inject(c_, SoftNdkFaultDelayTx, 1, 1000), STATUS_SUCCESS);
  fill(c_, 0, 4000, 3);
  const auto t0 = std::chrono::steady_clock::now();
  post_send(c_, 0, 2000, (void*)0xA1);
  post_send(c_, 2000, 2000, (void*)0xA2);
  // Local completions do not wait: TCP (the fault queue) took the bytes.
  auto a = poll(c_.cq, 2);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, kDelay);
  auto b = poll(s_.cq, 2);
  const auto arrived = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(b.size(), 2u);
  EXPECT_GE(arrived, kDelay) << "the receive completed before the delay";
  EXPECT_LT(arrived, kDelay + 5000ms);          // held, not lost
  EXPECT_EQ(b[0].RequestContext, (void*)0xB1);  // in order: the second Send waited behind
  EXPECT_EQ(b[1].RequestContext, (void*)0xB2);
  for (auto& r : b) EXPECT_EQ(r.Status, STATUS_SUCCESS);
  EXPECT_EQ(std::memcmp(c_.mem.data(), s_.mem.data() + 100000, 2000), 0);
  EXPECT_EQ(std::memcmp(c_.mem.data() + 2000, s_.mem.data() + 200000, 2000), 0);
  // Afterwards the data path is direct again.
  const auto t1 = std::chrono::steady_clock::now();
  send_ok(c_, s_, 100);
  EXPECT_LT(std::chrono::steady_clock::now() - t1, kDelay);
}

// RDMAOut* count what reached the socket: dropped FPDUs never, held ones
// once released. So the sender's out counters equal the receiver's in
// counters whatever the faults did, and adapter equals QP (one connection
// per adapter here).
TEST_F(Faults, CountersCountOnlyWhatReachedTheSocket) {
  prepare();
  connect();
  send_ok(c_, s_, 100);
  // The sender counts an FPDU when its sendmsg returns, which can be after
  // the peer completed the Send (below too): wait for both views to agree.
  // A wake-up (Side::wake_ups) before the faults is one more frame.
  ASSERT_TRUE(eventually([&] {
    return c_.qp_counters().RDMAOutFrames == 2 + c_.wake_ups() &&
           c_.qp_counters().RDMAOutOctets == s_.qp_counters().RDMAInOctets;
  })) << "the P2P RTR and the Send, counted by both ends";
  const SOFTNDK_COUNTERS c0 = c_.qp_counters();
  EXPECT_EQ(c0.RDMAOutFrames, 2u + c_.wake_ups());  // the P2P RTR and the Send
  EXPECT_EQ(c0.RDMAOutOctets, s_.qp_counters().RDMAInOctets);
  // Two Writes dropped (lost silently): nothing more counted.
  ASSERT_EQ(inject(c_, SoftNdkFaultDropTx, 2), STATUS_SUCCESS);
  for (uintptr_t i = 1; i <= 2; ++i) {
    NDK_SGE x = c_.sge(0, 1000);
    ASSERT_EQ(c_.qp->Dispatch->NdkWrite(c_.qp, (void*)i, &x, 1, s_.addr(8192), s_.token, 0),
              STATUS_SUCCESS);
  }
  auto a = poll(c_.cq, 2);
  ASSERT_EQ(a.size(), 2u);
  for (auto& r : a) EXPECT_EQ(r.Status, STATUS_SUCCESS);  // taken, as TCP would have
  SOFTNDK_COUNTERS c1 = c_.qp_counters();
  EXPECT_EQ(c1.RDMAOutFrames, c0.RDMAOutFrames);
  EXPECT_EQ(c1.RDMAOutOctets, c0.RDMAOutOctets);
  // A Write held for a while, a Send behind it: counted when released
  // (held 1.5 s: the check that nothing is counted before must not meet
  // the release on a busy host).
  ASSERT_EQ(inject(c_, SoftNdkFaultDelayTx, 1, 1500), STATUS_SUCCESS);
  post_recv(s_, 4096, 64, (void*)0xB1);
  NDK_SGE w = c_.sge(0, 1000);
  ASSERT_EQ(c_.qp->Dispatch->NdkWrite(c_.qp, (void*)3, &w, 1, s_.addr(8192), s_.token, 0),
            STATUS_SUCCESS);
  post_send(c_, 2000, 16, (void*)4);
  a = poll(c_.cq, 2);
  ASSERT_EQ(a.size(), 2u);
  c1 = c_.qp_counters();
  EXPECT_EQ(c1.RDMAOutFrames, c0.RDMAOutFrames) << "held FPDUs counted before they were sent";
  EXPECT_EQ(c1.RDMAOutOctets, c0.RDMAOutOctets);
  auto b = poll(s_.cq, 1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].Status, STATUS_SUCCESS);
  // The sender counts a released FPDU when its sendmsg returns, which can
  // be after the peer has already completed the Send (a preempted
  // transmitter; seen under ASan): wait for the count rather than race it.
  EXPECT_TRUE(eventually([&] { return c_.qp_counters().RDMAOutFrames >= c0.RDMAOutFrames + 2; }));
  const SOFTNDK_COUNTERS c2 = c_.qp_counters(), s2 = s_.qp_counters();
  EXPECT_EQ(c2.RDMAOutFrames, c0.RDMAOutFrames + 2);
  // Write: MPA 2 + DDP/RDMAP 14 + 1000 + CRC field 4; Send: 2 + 18 + 16 + 4.
  EXPECT_EQ(c2.RDMAOutOctets, c0.RDMAOutOctets + 1020 + 40);
  EXPECT_EQ(c2.RDMAOutFrames, s2.RDMAInFrames);
  EXPECT_EQ(c2.RDMAOutOctets, s2.RDMAInOctets);
  const SOFTNDK_COUNTERS ca = c_.adapter_counters();
  EXPECT_EQ(ca.RDMAOutFrames, c2.RDMAOutFrames);
  EXPECT_EQ(ca.RDMAOutOctets, c2.RDMAOutOctets);
}

TEST_F(Faults, BadFaultsAndStates) {
  prepare();
  SOFTNDK_FAULT f{};
  f.Type = SoftNdkFaultDropTx;
  ASSERT_EQ(c_.a->Dispatch->NdkCreateConnector(c_.a, nullptr, nullptr, &c_.conn), STATUS_SUCCESS);
  EXPECT_EQ(SoftNdkInjectConnectionFault(c_.conn, &f), STATUS_CONNECTION_INVALID);  // not connected
  EXPECT_EQ(SoftNdkInjectConnectionFault(c_.conn, nullptr), STATUS_INVALID_PARAMETER);
  close(c_.conn);
  c_.conn = nullptr;
  connect();
  EXPECT_EQ(inject(c_, SoftNdkFaultDelayTx, 1, 0), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(inject(c_, SoftNdkFaultDelayTx, 1, 600000), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(inject(c_, SoftNdkFaultFatalAdapterError), STATUS_INVALID_PARAMETER);
  disconnect_both();
  EXPECT_EQ(inject(c_, SoftNdkFaultCorruptTx), STATUS_CONNECTION_INVALID);
}

}  // namespace
}  // namespace obstest
