// SPDX-License-Identifier: Apache-2.0
// samehost_test.cc - same-host detection and the fast path on two QPs of
// this process (docs/samehost.md): a loopback pair finds itself and moves
// RDMA Write and Read Response payloads by process_vm_readv; a switch on
// either side, a relay on 127.0.0.1 or two network namespaces keep the
// connection on TCP; remote access checks still come before any byte lands.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include "relay.h"
#include "samehost_fixture.h"
#include "tcp/tcp_stats.h"
#include "util/netns.h"

namespace dptest {
namespace {

TEST_F(Samehost, LoopbackPairMovesWritesAndReadsByCopy) {
  Side& a = new_side();
  Side& b = new_side();
  link_fast(a, b);
  SamehostStats sa = a.stream->samehost_stats();
  EXPECT_EQ(sa.reason, SamehostReason::kNone);
  EXPECT_EQ(sa.peer_pid, static_cast<uint32_t>(::getpid()));
  write_and_read(a, b);
  sa = a.stream->samehost_stats();
  SamehostStats sb = b.stream->samehost_stats();
  // Write: two descriptors (one per SGE) pulled by b; Read: one descriptor
  // sent by b, pulled by a.
  EXPECT_EQ(sa.descriptors_sent, 2u);
  EXPECT_EQ(sb.pulled_octets, 1u << 20);
  EXPECT_EQ(sb.pulled_messages, 1u);
  EXPECT_EQ(sb.descriptors_sent, 1u);
  EXPECT_EQ(sa.pulled_octets, 1u << 20);
  // Plain (heap) memory is no shared segment: every pull was process_vm_readv.
  EXPECT_EQ(sa.mapped_descriptors + sb.mapped_descriptors, 0u);
  EXPECT_EQ(sa.segment_descriptors_sent + sb.segment_descriptors_sent, 0u);
  EXPECT_EQ(sa.cma_fallbacks + sb.cma_fallbacks, 0u);
  // The RDMA octet counters count the payload moved ...
  SOFTNDK_COUNTERS c{};
  ASSERT_EQ(SoftNdkQueryQpCounters(a.qp, &c), STATUS_SUCCESS);
  EXPECT_GE(c.RDMAOutOctets, 1u << 20);
  EXPECT_GE(c.RDMAInOctets, 1u << 20);
  // ... but only headers and descriptors crossed TCP.
  tcp::TcpStats t;
  ASSERT_TRUE(a.conn->tcp_stats(&t));
  EXPECT_LT(t.bytes_sent + t.bytes_received, 4096u);
}

TEST_F(Samehost, SmallMessagesAndSendsStayPayloadAndKeepTheirOrder) {
  Side& a = new_side();
  Side& b = new_side();
  link(a, b, true, true);
  ASSERT_TRUE(settled(a).tx);
  // A large Write, a small Write and a Send: the Send's receive completion
  // at b comes after both Writes are in place (RDMAP ordering).
  constexpr size_t kBig = 256 * 1024, kSmall = 1000;
  Buf src = reg(a.pd, kBig, kAll), dst = reg(b.pd, kBig + kSmall, kAll);
  Buf rbuf = reg(b.pd, 64, kAll), sbuf = reg(a.pd, 64, kAll, 0x5a);
  fill_pattern(src.data(), kBig, 3);
  NDK_SGE rs = rbuf.sge(0, 64);
  ASSERT_EQ(b.d()->NdkReceive(b.qp, &rbuf, &rs, 1), STATUS_SUCCESS);
  for (int round = 0; round < 20; ++round) {
    src.data()[0] = static_cast<uint8_t>(round);
    NDK_SGE big = src.sge(0, kBig), small = src.sge(0, kSmall), s = sbuf.sge(0, 64);
    ASSERT_EQ(a.d()->NdkWrite(a.qp, nullptr, &big, 1, dst.addr(), dst.token, 0), STATUS_SUCCESS);
    ASSERT_EQ(a.d()->NdkWrite(a.qp, nullptr, &small, 1, dst.addr() + kBig, dst.token, 0),
              STATUS_SUCCESS);
    ASSERT_EQ(a.d()->NdkSend(a.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
    auto done = poll(a.icq, 3);
    ASSERT_EQ(done.size(), 3u);
    for (auto& d : done) EXPECT_EQ(d.Status, STATUS_SUCCESS);
    NDK_RESULT_EX r = poll1(b.cq);
    ASSERT_EQ(r.Status, STATUS_SUCCESS);
    b.stream->with_rx_locked([&] {
      EXPECT_EQ(dst.data()[0], round);
      EXPECT_EQ(0, std::memcmp(dst.data() + 1, src.data() + 1, kBig - 1));
      EXPECT_EQ(0, std::memcmp(dst.data() + kBig, src.data(), kSmall));
    });
    ASSERT_EQ(b.d()->NdkReceive(b.qp, &rbuf, &rs, 1), STATUS_SUCCESS);
  }
  SamehostStats sb = b.stream->samehost_stats();
  EXPECT_EQ(sb.pulled_messages, 20u);  // the large Writes only
  EXPECT_EQ(sb.pulled_octets, 20u * kBig);
}

TEST_F(Samehost, ATraceOnTheSenderKeepsItsPayloadOnTheWire) {
  Side& a = new_side();
  Side& b = new_side();
  link(a, b, true, true);
  ASSERT_TRUE(settled(a).tx);
  char path[] = "/tmp/samehost-trace-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  ASSERT_EQ(SoftNdkTraceQp(a.qp, path), STATUS_SUCCESS);
  constexpr size_t kLen = 256 * 1024;
  write_one(a, b, kLen, 11);
  EXPECT_EQ(b.stream->samehost_stats().pulled_octets, 0u);  // it crossed TCP
  ASSERT_EQ(SoftNdkTraceQp(a.qp, nullptr), STATUS_SUCCESS);
  struct stat st {};
  ASSERT_EQ(::stat(path, &st), 0);
  EXPECT_GT(st.st_size, static_cast<off_t>(kLen));  // the payload is in the trace
  ::unlink(path);
  // Trace off: the next large Write takes the fast path again.
  write_one(a, b, kLen, 12);
  EXPECT_EQ(b.stream->samehost_stats().pulled_octets, kLen);
}

TEST_F(Samehost, ATraceFromBeforeTheConnectionTakesNoDescriptors) {
  Side& a = new_side();
  Side& b = new_side();
  char path[] = "/tmp/samehost-trace-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  ASSERT_EQ(SoftNdkTraceQp(b.qp, path), STATUS_SUCCESS);  // the receiver traces
  link(a, b, true, true);
  SamehostStats sa = settled(a), sb = settled(b);
  EXPECT_FALSE(sb.rx);  // b declined: its trace wants the payload
  EXPECT_EQ(sb.reason, SamehostReason::kHooked);
  EXPECT_FALSE(sa.tx);
  EXPECT_TRUE(sa.rx);  // b's own messages may still go as descriptors
  write_one(a, b, 256 * 1024, 13);
  EXPECT_EQ(a.stream->samehost_stats().descriptors_sent, 0u);
  ASSERT_EQ(SoftNdkTraceQp(b.qp, nullptr), STATUS_SUCCESS);
  ::unlink(path);
}

struct Modes {
  bool a, b;
};
class SamehostSwitch : public Samehost, public ::testing::WithParamInterface<Modes> {};

TEST_P(SamehostSwitch, OffOnEitherSideKeepsTcp) {
  Side& a = new_side();
  Side& b = new_side();
  link(a, b, GetParam().a, GetParam().b);
  SamehostStats sa = settled(a), sb = settled(b);
  EXPECT_FALSE(sa.rx || sa.tx || sb.rx || sb.tx);
  EXPECT_EQ(sa.reason, GetParam().a ? SamehostReason::kNoPeer : SamehostReason::kDisabled);
  EXPECT_EQ(sb.reason, GetParam().b ? SamehostReason::kNoPeer : SamehostReason::kDisabled);
  write_and_read(a, b);
  EXPECT_EQ(a.stream->samehost_stats().pulled_octets + b.stream->samehost_stats().pulled_octets,
            0u);
  EXPECT_EQ(a.stream->samehost_stats().descriptors_sent, 0u);
}
INSTANTIATE_TEST_SUITE_P(Sides, SamehostSwitch,
                         ::testing::Values(Modes{true, false}, Modes{false, true},
                                           Modes{false, false}));

TEST_F(Samehost, RelayOnLoopbackKeepsTcp) {
  Side& a = new_side();
  Side& b = new_side();
  std::unique_ptr<samehost_test::Relay> relay;
  NsRoute r;
  r.via = [&](uint16_t port) {
    relay = std::make_unique<samehost_test::Relay>(port);
    return relay->port();
  };
  link(a, b, true, true, r);
  ASSERT_TRUE(relay);
  SamehostStats sa = settled(a), sb = settled(b);
  EXPECT_FALSE(sa.rx || sa.tx || sb.rx || sb.tx);
  EXPECT_EQ(sa.reason, SamehostReason::kNoPeer);
  EXPECT_EQ(sb.reason, SamehostReason::kNoPeer);
  write_and_read(a, b);
  EXPECT_GT(relay->bytes(), 2u << 20);  // every payload byte went through it
  teardown_side(a);
  teardown_side(b);
}

TEST_F(Samehost, TwoNetworkNamespacesKeepTcp) {
  if (!ns::available()) GTEST_SKIP() << "needs root/CAP_NET_ADMIN, ip and tc";
  ns::NetNs na, nb;
  ns::Veth v(na, nb);
  const std::string net = "10." + std::to_string(100 + ::getpid() % 100) + ".7.";
  ASSERT_TRUE(na.ok() && nb.ok() && v.ok() && v.addr_a(net + "1/24") && v.addr_b(net + "2/24"));
  Side& a = new_side();
  Side& b = new_side();
  NsRoute r;
  r.listen_ns = &nb;
  r.connect_ns = &na;
  r.listen_ip = net + "2";
  link(a, b, true, true, r);
  SamehostStats sa = settled(a), sb = settled(b);
  EXPECT_FALSE(sa.rx || sa.tx || sb.rx || sb.tx);
  write_and_read(a, b);
  teardown_side(a);
  teardown_side(b);
}

// Descriptors b must refuse before any byte lands (remote access checks):
// a bad STag, and a range past the region's end.
TEST_F(Samehost, BadStagOnADescriptorIsRefusedBeforeAnyByteLands) {
  refused_write(0, 0x100, 0x00010100u);  // DDP tagged, invalid STag
}

TEST_F(Samehost, DescriptorBeyondTheRegionIsRefused) {
  refused_write(16, 0, 0x00010101u);  // DDP tagged, base or bounds
}

}  // namespace
}  // namespace dptest
