// raw_peer_test.cc - the receiver against a hand-driven peer (raw_peer.h):
// a refused remote invalidation (STag 0 like any other refused STag), and
// the completion order when NdkFlush or the QP's close cancels a receive
// that a Send was landing in.
#include "raw_peer.h"

namespace dptest {
namespace {

constexpr uint32_t code(int layer, int etype, int c) {
  return static_cast<uint32_t>(layer << 16 | etype << 8 | c);
}
// RDMAP remote operation "STag cannot be invalidated" (RFC 5040, IWARP.md 4.6).
constexpr uint32_t kCannotInvalidate = code(0, 2, 0x09);

class RawSend : public DpTest {
 protected:
  void SetUp() override {
    DpTest::SetUp();
    make_side(B);
    auto c = connect_raw(B);
    ASSERT_TRUE(c);
    peer = RawPeer::attach(c);
    rb = reg(B.pd, 3 * 4096, kAll, 0x5A);
  }
  // Receives 1..n of 4096 bytes each (context = index).
  void post_receives(int n) {
    for (int i = 0; i < n; ++i) {
      NDK_SGE s = rb.sge(static_cast<size_t>(i) * 4096, 4096);
      ASSERT_EQ(B.d()->NdkReceive(B.qp, reinterpret_cast<void*>(uintptr_t(i + 1)), &s, 1),
                STATUS_SUCCESS);
    }
  }
  // A Send with Invalidate of `stag` (`segments` FPDUs of 100 bytes) into
  // receives 1..3: the Terminate 0x09 reaches the peer, receive 1 completes
  // with STATUS_ACCESS_VIOLATION, then 2 and 3 are flushed, in that order.
  void expect_refused_invalidation(uint32_t stag, wire::Opcode op, int segments = 1) {
    post_receives(3);
    std::vector<uint8_t> pay(100, 0xC3);
    for (int i = 0; i < segments; ++i)
      ASSERT_TRUE(
          peer->send_segment(op, 1, static_cast<uint32_t>(i) * 100, i == segments - 1, pay, stag));
    auto t = peer->wait_terminate();
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(*t, kCannotInvalidate) << std::hex << *t;
    EXPECT_EQ(B.stream->last_terminate_sent(), kCannotInvalidate);
    auto r = poll(B.cq, 3);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].RequestContext, (void*)1);
    EXPECT_EQ(r[0].Status, STATUS_ACCESS_VIOLATION);
    EXPECT_EQ(r[0].Type, NdkOperationTypeReceive);  // nothing was invalidated
    for (int i = 1; i < 3; ++i) {
      EXPECT_EQ(r[i].RequestContext, reinterpret_cast<void*>(uintptr_t(i + 1)));
      EXPECT_EQ(r[i].Status, STATUS_CANCELLED);
    }
    EXPECT_EQ(B.q->state(), ndk::QpState::kError);
    EXPECT_TRUE(drain(B.cq).empty());
    EXPECT_TRUE(eventually([&] { return peer->eof(); }));  // FIN follows the Terminate
  }

  Side B;
  std::shared_ptr<RawPeer> peer;
  Buf rb;
};

// STag 0 is refused by the parser at the header; the receive it was for
// completes exactly as for any other STag that cannot be invalidated.
TEST_F(RawSend, SendInvalidateOfStagZeroRefusedLikeAnyBadStag) {
  expect_refused_invalidation(0, wire::Opcode::kSendInvalidate);
  // The refused header placed nothing.
  EXPECT_TRUE(std::all_of(rb.mem.begin(), rb.mem.end(), [](uint8_t x) { return x == 0x5A; }));
}

TEST_F(RawSend, SendSolicitedInvalidateOfStagZeroRefusedLikeAnyBadStag) {
  expect_refused_invalidation(0, wire::Opcode::kSendSolicitedInvalidate);
}

TEST_F(RawSend, MultiSegmentSendInvalidateOfStagZero) {
  expect_refused_invalidation(0, wire::Opcode::kSendInvalidate, 3);
}

// The same outcome for STags that are nonzero: unknown, and a registered
// MR (never remotely invalidatable).
TEST_F(RawSend, SendInvalidateOfUnknownStag) {
  expect_refused_invalidation(0x00ABCD01u, wire::Opcode::kSendInvalidate);
}

TEST_F(RawSend, SendInvalidateOfRegisteredMr) {
  expect_refused_invalidation(rb.token, wire::Opcode::kSendInvalidate);
}

// NdkFlush or the QP's close while a Send is half landed: the receive it
// was landing in left the RQ ring, yet it completes first - a queue's
// completions appear in posting order (NDKPI).
class FlushOrder : public RawSend {
 protected:
  // Receives 1..3, and the first 1000 bytes of a 3000-byte Send landed in
  // receive 1; the rest never comes.
  void half_a_send() {
    post_receives(3);
    std::vector<uint8_t> pay(1000, 0xC3);
    ASSERT_TRUE(peer->send_segment(wire::Opcode::kSend, 1, 0, false, pay));
    // Read under the receive lock: the engine may still be placing them.
    ASSERT_TRUE(eventually([&] {
      bool landed = false;
      B.stream->with_rx_locked([&] {
        landed =
            std::all_of(rb.mem.begin(), rb.mem.begin() + 1000, [](uint8_t x) { return x == 0xC3; });
      });
      return landed;
    }));
    EXPECT_TRUE(drain(B.cq, 50ms).empty());
  }
  void expect_cancelled_in_order() {
    auto r = poll(B.cq, 3);
    ASSERT_EQ(r.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(r[i].RequestContext, reinterpret_cast<void*>(uintptr_t(i + 1))) << i;
      EXPECT_EQ(r[i].Status, STATUS_CANCELLED);
    }
    EXPECT_TRUE(drain(B.cq).empty());
  }
};

TEST_F(FlushOrder, NdkFlushCompletesThePartlyLandedReceiveFirst) {
  half_a_send();
  B.d()->NdkFlush(B.qp);
  expect_cancelled_in_order();
}

TEST_F(FlushOrder, QpCloseCompletesThePartlyLandedReceiveFirst) {
  half_a_send();
  struct Closed {
    std::atomic<int> n{0};
    static void cb(void* ctx) { static_cast<Closed*>(ctx)->n.fetch_add(1); }
  };
  auto& w = keep<Closed>();
  NTSTATUS st = B.d()->NdkCloseQp(&B.qp->Header, &Closed::cb, &w);
  ASSERT_TRUE(st == STATUS_SUCCESS || st == STATUS_PENDING) << std::hex << st;
  expect_cancelled_in_order();
  if (st == STATUS_PENDING) {
    EXPECT_TRUE(eventually([&] { return w.n.load() == 1; }));
  }
}

}  // namespace
}  // namespace dptest
