// SPDX-License-Identifier: Apache-2.0
// silent_peer_test.cc - issue 32 through the public C ABI: an initiator
// whose peer accepts (MPA Reply) and then never sends a byte gets zero-length
// RDMA Writes ("wake-ups", what cures Linux siw 6.1's unread first FPDU),
// SoftNdkQueryPeerActivity says the peer is silent, SOFTNDK_MPA_HOLDOFF_MS=0
// turns the wake-ups off, and a failed NdkConnect says whether it failed
// before or after the MPA exchange. The peer is a raw TCP socket playing the
// MPA responder by hand, so every byte softndk sends is seen.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "ends.h"

namespace connector_test {
namespace {

using Bytes = std::vector<uint8_t>;

// A listening raw socket on 127.0.0.1 and the one connection it accepts.
struct RawPeer {
  int lfd = -1, fd = -1;
  uint16_t port = 0;
  RawPeer() {
    lfd = ::socket(AF_INET, SOCK_STREAM, 0);
    auto a = v4("127.0.0.1", 0);
    EXPECT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(lfd, 4), 0);
    socklen_t al = sizeof a;
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &al);
    port = ntohs(a.sin_port);
  }
  ~RawPeer() {
    if (fd >= 0) ::close(fd);
    if (lfd >= 0) ::close(lfd);
  }
  // Bytes that arrive within `ms` (all of them, up to `max`).
  Bytes read_for(int ms, size_t max = 4096) {
    Bytes out;
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (out.size() < max) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      end - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) break;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      uint8_t buf[1024];
      ssize_t n = ::recv(fd, buf, std::min(sizeof buf, max - out.size()), 0);
      if (n <= 0) break;
      out.insert(out.end(), buf, buf + n);
    }
    return out;
  }
  // Accepts, reads the MPA Request whole; false if it did not come.
  bool take_request() {
    pollfd p{lfd, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) return false;
    fd = ::accept(lfd, nullptr, nullptr);
    Bytes hdr = read_exact(20);
    if (hdr.size() != 20) return false;
    size_t pd = size_t(hdr[18]) << 8 | hdr[19];
    return read_exact(pd).size() == pd;
  }
  Bytes read_exact(size_t n) {
    Bytes out;
    while (out.size() < n) {
      Bytes b = read_for(5000, n - out.size());
      if (b.empty()) break;
      out.insert(out.end(), b.begin(), b.end());
    }
    return out;
  }
  // An MPA rev 2 Reply as siw sends it: enhanced, RFC 6581 words for
  // IRD/ORD 1 with P2P and the zero-length Write RTR, no ULP data.
  void reply() {
    const char* key = "MPA ID Rep Frame";
    Bytes r(key, key + 16);
    for (uint8_t b : {0x10, 0x02, 0x00, 0x04, 0x80, 0x01, 0x80, 0x01}) r.push_back(b);
    ASSERT_EQ(::send(fd, r.data(), r.size(), MSG_NOSIGNAL), static_cast<ssize_t>(r.size()));
  }
};

// The 20-byte zero-length RDMA Write (STag 1, TO 0, no CRC): the Write RTR
// and every wake-up.
const Bytes kZeroWrite = {0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                          0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

size_t count_zero_writes(const Bytes& b) {
  size_t n = 0;
  for (size_t at = 0; at + kZeroWrite.size() <= b.size(); at += kZeroWrite.size())
    if (std::equal(kZeroWrite.begin(), kZeroWrite.end(), b.begin() + at)) ++n;
  return n;
}

class SilentPeer : public EndsTest {
 protected:
  void TearDown() override {
    unsetenv("SOFTNDK_MPA_HOLDOFF_MS");
    EndsTest::TearDown();
  }
  // Connects c to the raw peer, sends the 16-byte Send that wants an
  // answer; returns what the peer received after the MPA Request up to
  // the Send's end (RTR + Send).
  // Connects c to the raw peer (siw's Reply) and reads the Write RTR.
  void connect_rtr(End& c, RawPeer& p) {
    Req cr;
    ASSERT_EQ(start_connect(c, p.port, cr), STATUS_PENDING);
    ASSERT_TRUE(p.take_request());
    p.reply();
    ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
    ASSERT_EQ(p.read_exact(20), kZeroWrite);  // the Write RTR
  }
  void connect_and_send(End& c, RawPeer& p) {
    ASSERT_NO_FATAL_FAILURE(connect_rtr(c, p));
    NDK_SGE s = c.sge(0, 16);
    ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
    ASSERT_EQ(p.read_exact(40).size(), 40u);  // MPA 2 + DDP/RDMAP 18 + 16 + CRC field 4
  }
  SOFTNDK_PEER_ACTIVITY activity(End& c) {
    SOFTNDK_PEER_ACTIVITY a{};
    a.Size = sizeof a;
    EXPECT_EQ(SoftNdkQueryPeerActivity(c.conn, &a), STATUS_SUCCESS);
    return a;
  }
};

TEST_F(SilentPeer, GetsZeroLengthWritesAndIsReportedSilent) {
  NDK_ADAPTER* a = open();
  End c;
  make(c, a, a);
  c.conn = connector(a);
  RawPeer p;
  connect_and_send(c, p);
  // The first comes once the same-host rendezvous has had its 300 ms, the
  // others at doubling intervals: all six within ~4 s at the 20 ms floor.
  Bytes more = p.read_for(5000);
  const size_t wakes = count_zero_writes(more);
  EXPECT_GE(wakes, 1u);
  EXPECT_LE(wakes, static_cast<size_t>(SOFTNDK_MAX_WAKE_UPS));
  EXPECT_EQ(more.size(), wakes * kZeroWrite.size()) << "only wake-ups follow the Send";
  SOFTNDK_PEER_ACTIVITY act = activity(c);
  EXPECT_TRUE(act.Established);
  EXPECT_TRUE(act.SentFpdu);
  EXPECT_FALSE(act.PeerSpoke);
  EXPECT_EQ(act.WakeUpsSent, wakes);
  EXPECT_GE(act.WakeAfterMs, 20u);
  EXPECT_GT(act.MpaRoundTripUs, 0u);
  EXPECT_EQ(act.SetupPhase, static_cast<ULONG>(SOFTNDK_SETUP_NONE));
  // The peer speaks at last (a zero-length Write of its own).
  ASSERT_EQ(::send(p.fd, kZeroWrite.data(), kZeroWrite.size(), MSG_NOSIGNAL), 20);
  EXPECT_TRUE(eventually([&] { return activity(c).PeerSpoke == TRUE; }));
  close_end(c);
}

TEST_F(SilentPeer, AnIdleConnectionAndAnOffSwitchSendNone) {
  // Only the Write RTR went out: nobody owes us an answer.
  NDK_ADAPTER* a = open();
  End c;
  make(c, a, a);
  c.conn = connector(a);
  RawPeer p;
  ASSERT_NO_FATAL_FAILURE(connect_rtr(c, p));
  EXPECT_TRUE(p.read_for(1500).empty());  // nothing after the RTR
  EXPECT_FALSE(activity(c).SentFpdu);
  close_end(c);

  // SOFTNDK_MPA_HOLDOFF_MS=0: every siw workaround off.
  setenv("SOFTNDK_MPA_HOLDOFF_MS", "0", 1);
  NDK_ADAPTER* off = open();
  End d;
  make(d, off, off);
  d.conn = connector(off);
  RawPeer q;
  connect_and_send(d, q);
  EXPECT_TRUE(q.read_for(1500).empty());
  SOFTNDK_PEER_ACTIVITY act = activity(d);
  EXPECT_EQ(act.WakeAfterMs, 0u);
  EXPECT_EQ(act.WakeUpsSent, 0u);
  EXPECT_FALSE(act.PeerSpoke);
  close_end(d);
}

// True once the raw peer's socket reads end of stream (our FIN), within ms.
bool fin_within(RawPeer& p, int ms) {
  pollfd pf{p.fd, POLLIN, 0};
  if (::poll(&pf, 1, ms) != 1) return false;
  char b;
  return ::recv(p.fd, &b, 1, MSG_DONTWAIT) == 0;
}

TEST_F(SilentPeer, ADisconnectAfterOnlyTheRtrWakesThePeerBeforeTheFin) {
  // Linux siw 6.1 may not have read the RTR; our FIN would then crash its
  // kernel (stream_wake.cc): one wake-up goes first, acknowledged by TCP.
  NDK_ADAPTER* a = open();
  End c;
  make(c, a, a);
  c.conn = connector(a);
  RawPeer p;
  ASSERT_NO_FATAL_FAILURE(connect_rtr(c, p));
  Req d;
  NTSTATUS st = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &d);
  EXPECT_EQ(p.read_exact(20), kZeroWrite) << "a wake-up before the FIN";
  EXPECT_TRUE(fin_within(p, 5000)) << "then the FIN, nothing else";
  ::shutdown(p.fd, SHUT_WR);
  EXPECT_EQ(d.wait(st), STATUS_SUCCESS);
  EXPECT_EQ(activity(c).WakeUpsSent, 1u);
  close_end(c);

  // A peer that spoke has read our RTR: the FIN goes at once.
  End e;
  make(e, a, a);
  e.conn = connector(a);
  RawPeer q;
  ASSERT_NO_FATAL_FAILURE(connect_rtr(e, q));
  ASSERT_EQ(::send(q.fd, kZeroWrite.data(), kZeroWrite.size(), MSG_NOSIGNAL), 20);
  ASSERT_TRUE(eventually([&] { return activity(e).PeerSpoke == TRUE; }));
  Req ed;
  st = e.conn->Dispatch->NdkDisconnect(e.conn, &Req::cb, &ed);
  EXPECT_TRUE(fin_within(q, 5000)) << "the FIN with no wake-up before it";
  ::shutdown(q.fd, SHUT_WR);
  EXPECT_EQ(ed.wait(st), STATUS_SUCCESS);
  EXPECT_EQ(activity(e).WakeUpsSent, 0u);
  close_end(e);
}

TEST_F(SilentPeer, ResetBeforeTheReplyAndRefusedSynSayWhere) {
  NDK_ADAPTER* a = open();
  End c;
  make(c, a, a);
  c.conn = connector(a);
  {
    RawPeer p;
    Req cr;
    ASSERT_EQ(start_connect(c, p.port, cr), STATUS_PENDING);
    ASSERT_TRUE(p.take_request());
    linger lg{1, 0};  // close -> RST
    ::setsockopt(p.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    ::close(p.fd);
    p.fd = -1;
    NTSTATUS st = cr.wait(STATUS_PENDING);
    EXPECT_TRUE(st == STATUS_CONNECTION_RESET || st == STATUS_CONNECTION_ABORTED) << std::hex << st;
    EXPECT_EQ(activity(c).SetupPhase, static_cast<ULONG>(SOFTNDK_SETUP_MPA));
    EXPECT_FALSE(activity(c).Established);
  }
  close_end(c);
  // Nothing listens: the SYN is refused.
  End d;
  make(d, a, a);
  d.conn = connector(a);
  uint16_t port;
  {
    RawPeer gone;
    port = gone.port;
  }
  Req cr;
  ASSERT_EQ(start_connect(d, port, cr), STATUS_PENDING);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(activity(d).SetupPhase, static_cast<ULONG>(SOFTNDK_SETUP_TCP));
  SOFTNDK_PEER_ACTIVITY small{};
  small.Size = sizeof small - 1;
  EXPECT_EQ(SoftNdkQueryPeerActivity(d.conn, &small), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkQueryPeerActivity(d.conn, nullptr), STATUS_INVALID_PARAMETER);
  close_end(d);
}

}  // namespace
}  // namespace connector_test
