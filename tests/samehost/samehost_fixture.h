// SPDX-License-Identifier: Apache-2.0
// samehost_fixture.h - two QPs of this process linked with the same-host
// fast path on or off on each side (samehost_test.cc, shared_memory_test.cc,
// ring_test.cc).
#pragma once

#include <functional>
#include <string>

#include "../datapath/dp_fixture.h"
#include "util/netns.h"

namespace dptest {

namespace ns = softndk::test::netns;
using softndk::rdmap::SamehostStats;
using softndk::samehost::SamehostReason;

struct NsRoute {
  const ns::NetNs* listen_ns = nullptr;  // listener's namespace (null: ours)
  const ns::NetNs* connect_ns = nullptr;
  std::string listen_ip = "127.0.0.1";
  // The port to connect to, given the listener's (a relay's port).
  std::function<uint16_t(uint16_t)> via;
};

class Samehost : public DpTest {
 protected:
  // a (initiator) to b (responder), each with its own SOFTNDK_SAMEHOST.
  void link(Side& a, Side& b, bool a_on, bool b_on, const NsRoute& r = NsRoute()) {
    auto in = [](const ns::NetNs* n) -> std::function<void(const std::function<void()>&)> {
      if (n == nullptr) return nullptr;
      return [n](const std::function<void()>& f) { ASSERT_TRUE(n->run(f)); };
    };
    DpTest::Route route;
    route.listen_in = in(r.listen_ns);
    route.connect_in = in(r.connect_ns);
    route.listen_ip = r.listen_ip.c_str();
    route.via = r.via;
    establish(&a.conn, &b.conn, 16, 16, false, 0, 0, route);
    ASSERT_TRUE(a.conn && b.conn);
    rdmap::StreamOptions ao, bo;
    ao.samehost = a_on ? 1 : 0;
    bo.samehost = b_on ? 1 : 0;
    a.stream = rdmap::start_stream(a.q, a.conn, ao);
    b.stream = rdmap::start_stream(b.q, b.conn, bo);
    ASSERT_TRUE(a.stream && b.stream);
    wait_connected(a);
    wait_connected(b);
  }

  // Whether the rendezvous reached a verdict (it gives up after 2 s).
  bool verdict(Side& s) {
    return eventually([&] { return !s.stream->samehost_stats().probing; }, 4000ms);
  }

  // The rendezvous' verdict, once it has one.
  SamehostStats settled(Side& s) {
    EXPECT_TRUE(verdict(s));
    return s.stream->samehost_stats();
  }

  // link(), returning once both sides have a verdict.
  void link_settled(Side& a, Side& b, bool a_on = true, bool b_on = true) {
    ASSERT_NO_FATAL_FAILURE(link(a, b, a_on, b_on));
    ASSERT_TRUE(verdict(a));
    ASSERT_TRUE(verdict(b));
  }

  // link() with the fast path on at both ends, which both take both ways.
  void link_fast(Side& a, Side& b) {
    ASSERT_NO_FATAL_FAILURE(link_settled(a, b));
    SamehostStats sa = a.stream->samehost_stats(), sb = b.stream->samehost_stats();
    ASSERT_TRUE(sa.rx && sa.tx && sb.rx && sb.tx);
  }

  // A Send a -> b behind earlier Writes: b's receive completion says they
  // are in place, and orders b's placement before this thread's reads of
  // b's memory (polling that memory while b writes it is a data race).
  void fence(Side& a, Side& b) {
    Buf rbuf = reg(b.pd, 64, kAll), sbuf = reg(a.pd, 64, kAll, 0x5a);
    NDK_SGE rs = rbuf.sge(0, 64), ss = sbuf.sge(0, 64);
    ASSERT_EQ(b.d()->NdkReceive(b.qp, &rbuf, &rs, 1), STATUS_SUCCESS);
    ASSERT_EQ(a.d()->NdkSend(a.qp, &sbuf, &ss, 1, 0), STATUS_SUCCESS);
    EXPECT_EQ(poll1(a.icq).Status, STATUS_SUCCESS);
    ASSERT_EQ(poll1(b.cq).Status, STATUS_SUCCESS);
  }

  // One Write a -> b of `len` bytes (pattern `seed`): it completes, and is
  // in place once a Send behind it arrived.
  void write_one(Side& a, Side& b, size_t len, uint32_t seed) {
    Buf src = reg(a.pd, len, kAll), dst = reg(b.pd, len, kAll);
    fill_pattern(src.data(), len, seed);
    NDK_SGE s = src.sge(0, len);
    ASSERT_EQ(a.d()->NdkWrite(a.qp, nullptr, &s, 1, dst.addr(), dst.token, 0), STATUS_SUCCESS);
    EXPECT_EQ(poll1(a.icq).Status, STATUS_SUCCESS);
    fence(a, b);
    ASSERT_EQ(std::memcmp(src.data(), dst.data(), len), 0);
  }

  // A 64 KiB Write of a's to b's region, at `offset` into it with its token
  // XOR `token_xor`, that b must refuse: b sends Terminate `code`, the Write
  // completes once (flushed: it was never pulled), and no byte lands.
  void refused_write(uint64_t offset, uint32_t token_xor, uint32_t code) {
    Side& a = new_side();
    Side& b = new_side();
    ASSERT_NO_FATAL_FAILURE(link_fast(a, b));
    constexpr size_t kLen = 64 * 1024;
    Buf src = reg(a.pd, kLen, kAll, 0xEE), dst = reg(b.pd, kLen, kAll, 0x11);
    NDK_SGE s = src.sge(0, kLen);
    ASSERT_EQ(a.d()->NdkWrite(a.qp, &src, &s, 1, dst.addr() + offset, dst.token ^ token_xor, 0),
              STATUS_SUCCESS);
    ASSERT_TRUE(eventually([&] { return b.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
    EXPECT_EQ(b.stream->last_terminate_sent(), code);
    NDK_RESULT_EX w = poll1(a.icq);
    EXPECT_EQ(w.RequestContext, &src);
    EXPECT_EQ(w.Status, STATUS_CANCELLED);
    EXPECT_TRUE(drain(a.icq, 50ms).empty());
    for (size_t i = 0; i < kLen; ++i) ASSERT_EQ(dst.data()[i], 0x11) << i;
    EXPECT_EQ(b.stream->samehost_stats().pulled_octets, 0u);
  }

  // A 1 MiB Write a -> b (two SGEs) and a 1 MiB Read of b's memory into a:
  // both arrive intact and complete once.
  void write_and_read(Side& a, Side& b) {
    constexpr size_t kLen = 1 << 20;
    Buf src = reg(a.pd, kLen, kAll), dst = reg(b.pd, kLen, kAll);
    fill_pattern(src.data(), kLen, 7);
    NDK_SGE sg[2] = {src.sge(0, kLen / 4), src.sge(kLen / 4, kLen - kLen / 4)};
    ASSERT_EQ(a.d()->NdkWrite(a.qp, &src, sg, 2, dst.addr(), dst.token, 0), STATUS_SUCCESS);
    NDK_RESULT_EX w = poll1(a.icq);
    EXPECT_EQ(w.Status, STATUS_SUCCESS);
    EXPECT_EQ(w.BytesTransferred, kLen);
    EXPECT_EQ(w.RequestContext, &src);
    // The Write's completion means TCP took it (or, on the fast path, that
    // the target pulled it); a Send behind it lands after it, so b's receive
    // completion says the Write is in place (and orders b's placement before
    // this thread's read of dst: polling dst while b writes it is a race).
    fence(a, b);
    ASSERT_EQ(std::memcmp(src.data(), dst.data(), kLen), 0);

    Buf rsrc = reg(b.pd, kLen, kAll), sink = reg(a.pd, kLen, kAll);
    fill_pattern(rsrc.data(), kLen, 9);
    NDK_SGE s = sink.sge(0, kLen);
    ASSERT_EQ(a.d()->NdkRead(a.qp, &sink, &s, 1, rsrc.addr(), rsrc.token, 0), STATUS_SUCCESS);
    NDK_RESULT_EX r = poll1(a.icq);
    EXPECT_EQ(r.Status, STATUS_SUCCESS);
    EXPECT_EQ(r.BytesTransferred, kLen);
    EXPECT_EQ(0, std::memcmp(rsrc.data(), sink.data(), kLen));
    EXPECT_TRUE(drain(a.icq, 20ms).empty());
  }
};

}  // namespace dptest
