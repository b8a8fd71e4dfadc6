// SPDX-License-Identifier: Apache-2.0
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

// Small inline Sends leave softndk gathered into one piece per batch
// (docs/datapath.md "Transmit"). A peer that stops reading makes those
// sends come back short, in the middle of a gathered batch; the rest must
// follow from where TCP stopped. Every message arrives once, in order, with
// its bytes, and every post completes once.
// Chains of 16 (15 DEFERred, then a kick) are gathered batches; chains of 1
// are direct sends (docs/datapath.md "Direct sends"), which meet the full
// socket in the posting thread. Every third message is split over two SGEs.
class RawWire : public DpTest {};
class RawWireChains : public RawWire, public ::testing::WithParamInterface<uint32_t> {};
INSTANTIATE_TEST_SUITE_P(Chain, RawWireChains, ::testing::Values(16u, 1u),
                         [](const auto& info) { return "Of" + std::to_string(info.param); });
TEST_P(RawWireChains, SmallSendsGatheredAcrossAFullSocketArriveIntact) {
  const uint32_t chain = GetParam();
  Side& B = new_side();
  auto c = connect_raw(B);
  ASSERT_TRUE(c);
  auto peer = RawPeer::attach(c);
  peer->pause(true);

  auto size_of = [](uint32_t i) { return size_t{1} + (i * 37u) % 256u; };
  std::vector<uint8_t> pay(256);
  uint32_t posted = 0, completed = 0;
  NDK_RESULT_EX r[64];
  auto reap = [&] {
    ULONG k = B.cq->Dispatch->NdkGetCqResultsEx(B.cq, r, 64);
    for (ULONG i = 0; i < k; ++i) {
      EXPECT_EQ(r[i].Status, STATUS_SUCCESS);
      EXPECT_EQ(r[i].Type, NdkOperationTypeSend);
      EXPECT_EQ(r[i].RequestContext, reinterpret_cast<void*>(uintptr_t(completed + 1)));
      ++completed;
    }
    return k;
  };
  // Posts up to `until` messages in chains (all but the last deferred).
  auto post = [&](uint32_t until) {
    while (posted < until && posted - completed < 240) {
      const uint32_t i = posted + 1;
      const ULONG len = static_cast<ULONG>(size_of(i));
      fill_pattern(pay.data(), len, i);
      NDK_SGE s[2];
      const ULONG nsge = sgl_of(pay.data(), len, i % 3 == 0, s);
      ULONG f = NDK_OP_FLAG_INLINE | (i % chain != 0 && i != until ? NDK_OP_FLAG_DEFER : 0);
      ASSERT_EQ(B.d()->NdkSend(B.qp, reinterpret_cast<void*>(uintptr_t(i)), s, nsge, f),
                STATUS_SUCCESS);
      ++posted;
    }
  };

  // Phase 1: the peer reads nothing until the SQ stops draining (the
  // socket buffers are full) - or the cap says it never did.
  constexpr uint32_t kCap = 400000;
  auto last_progress = std::chrono::steady_clock::now();
  bool stalled = false;
  auto give_up = last_progress + 20s;
  while (!stalled && posted < kCap && std::chrono::steady_clock::now() < give_up) {
    post(kCap);
    if (reap() > 0) {
      last_progress = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - last_progress > 200ms) {
      stalled = posted > completed;
    }
  }
  ASSERT_TRUE(stalled) << "the socket never filled: " << posted << " sends, " << peer->received()
                       << " bytes read";

  // Phase 2: the peer reads again; 1,000 more messages follow.
  peer->pause(false);
  const uint32_t total = posted + 1000;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (completed < total && std::chrono::steady_clock::now() < deadline) {
    post(total);
    if (reap() == 0) std::this_thread::yield();
  }
  ASSERT_EQ(completed, total);
  uint64_t wire_bytes = 0;
  for (uint32_t i = 1; i <= total; ++i)
    wire_bytes += 2 + 18 + size_of(i) + (4 - (20 + size_of(i)) % 4) % 4 + 4;
  ASSERT_TRUE(eventually([&] { return peer->received() >= wire_bytes; }, 20s))
      << peer->received() << " of " << wire_bytes << " bytes";

  auto got = peer->sends();
  ASSERT_TRUE(got.ok);
  ASSERT_EQ(got.msgs.size(), total);
  std::vector<uint8_t> want(256);
  for (uint32_t i = 1; i <= total; ++i) {
    const auto& [msn, bytes] = got.msgs[i - 1];
    ASSERT_EQ(msn, i);
    fill_pattern(want.data(), size_of(i), i);
    ASSERT_EQ(bytes,
              std::vector<uint8_t>(want.begin(), want.begin() + static_cast<long>(size_of(i))))
        << "message " << i;
  }
  EXPECT_EQ(peer->received(), wire_bytes);  // nothing more, nothing twice
}

// A Read Response from a hand-driven peer, with CRC, in one burst of full
// segments whose fifth FPDU carries a damaged payload byte. The receiver
// takes such a burst many FPDUs per read (response_recv) and must still
// check every FPDU's CRC: it answers with the LLP CRC Terminate, its Read
// fails and the QP goes to error.
TEST_F(RawWire, ReadResponseBurstWithABadCrcIsRefused) {
  Side& B = new_side();
  auto c = connect_raw(B, true);
  ASSERT_TRUE(c);
  auto peer = RawPeer::attach(c);
  // The initiator speaks first (a zero-length Write: nothing is placed).
  std::vector<uint8_t> f(64);
  size_t n = wire::encode_fpdu(wire::DdpHeader::tagged_hdr(wire::Opcode::kWrite, true, 1, 0), {},
                               {}, true, f);
  ASSERT_NE(n, 0u);
  ASSERT_TRUE(peer->send_bytes({f.data(), n}));

  constexpr size_t kLen = 3 << 20;
  Buf sink = reg(B.pd, kLen, kAll, 0xEE);
  NDK_SGE sg = sink.sge(0, kLen);
  ASSERT_EQ(B.d()->NdkRead(B.qp, reinterpret_cast<void*>(9), &sg, 1, 0x10000, 0x1234, 0),
            STATUS_SUCCESS);
  auto rr = peer->wait_read_request();
  ASSERT_TRUE(rr.has_value());
  ASSERT_EQ(rr->size, kLen);

  // Full segments of one size, the last one short (as siw cuts them).
  constexpr size_t kSeg = 65520;
  std::vector<uint8_t> pay(kLen);
  fill_pattern(pay.data(), kLen, 31);
  std::vector<uint8_t> wire_bytes;
  int index = 0;
  for (size_t off = 0; off < kLen; off += kSeg, ++index) {
    const size_t len = std::min(kSeg, kLen - off);
    auto h = wire::DdpHeader::tagged_hdr(wire::Opcode::kReadResponse, off + len == kLen,
                                         rr->sink_stag, rr->sink_to + off);
    std::vector<uint8_t> one(len + 64);
    size_t k = wire::encode_fpdu(h, {}, {pay.data() + off, len}, true, one);
    ASSERT_NE(k, 0u);
    if (index == 4) one[2 + wire::kTaggedHeaderSize + 100] ^= 0x40;  // after its CRC was taken
    wire_bytes.insert(wire_bytes.end(), one.begin(), one.begin() + static_cast<long>(k));
  }
  ASSERT_TRUE(peer->send_bytes(wire_bytes));

  auto r = poll1(B.cq);
  EXPECT_EQ(r.RequestContext, reinterpret_cast<void*>(9));
  EXPECT_NE(r.Status, STATUS_SUCCESS);
  constexpr uint32_t kLlpCrcError = code(2, 0, 0x02);  // RFC 5044 / siw
  auto t = peer->wait_terminate();
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(*t, kLlpCrcError) << std::hex << *t;
  EXPECT_EQ(B.stream->last_terminate_sent(), kLlpCrcError);
  EXPECT_EQ(B.q->state(), ndk::QpState::kError);
  // The FPDUs before the damaged one landed in place.
  EXPECT_EQ(std::memcmp(sink.data(), pay.data(), 4 * kSeg), 0);
}

// A large Write segment whose last bytes arrive late: the receiver has
// landed all but a few hundred bytes of the payload when the socket runs
// empty. The remainder is read straight into the target like the rest of
// the segment, together with the trailer and the next header - not through
// the staging buffer in 64-byte reads (which cost a 1 MiB Write ~26 extra
// recv calls on loopback, where a read often stops just short of a
// payload's end). Both Writes land byte-exact.
TEST_F(RawWire, LateTailOfALargeWriteSegmentTakesOneRead) {
  Side& B = new_side();
  auto c = connect_raw(B);
  ASSERT_TRUE(c);
  auto peer = RawPeer::attach(c);
  constexpr size_t kSeg = 60000, kTail = 1000, kSmall = 100;
  Buf dst = reg(B.pd, kSeg + kSmall, kAll, 0xEE);
  std::vector<uint8_t> pay(kSeg + kSmall);
  fill_pattern(pay.data(), pay.size(), 41);
  std::vector<uint8_t> wire_bytes(kSeg + kSmall + 256);
  size_t n = wire::encode_fpdu(
      wire::DdpHeader::tagged_hdr(wire::Opcode::kWrite, true, dst.token, dst.addr()), {},
      {pay.data(), kSeg}, false, wire_bytes);
  ASSERT_NE(n, 0u);
  size_t m = wire::encode_fpdu(
      wire::DdpHeader::tagged_hdr(wire::Opcode::kWrite, true, dst.token, dst.addr() + kSeg), {},
      {pay.data() + kSeg, kSmall}, false, std::span(wire_bytes).subspan(n));
  ASSERT_NE(m, 0u);
  const size_t head = n - 4 - kTail;  // everything but the payload's last kTail bytes and trailer
  ASSERT_TRUE(peer->send_bytes({wire_bytes.data(), head}));
  auto landed = [&](size_t len) {
    bool same = false;
    B.stream->with_rx_locked([&] { same = std::memcmp(dst.data(), pay.data(), len) == 0; });
    return same;
  };
  ASSERT_TRUE(eventually([&] { return landed(kSeg - kTail); }));
  const uint64_t before = B.stream->rx_reads();
  ASSERT_TRUE(peer->send_bytes({wire_bytes.data() + head, n + m - head}));
  ASSERT_TRUE(eventually([&] { return landed(kSeg + kSmall); }));
  // The tail with the next header, then (at most) the rest of the small
  // segment and a read that finds the socket empty.
  EXPECT_LE(B.stream->rx_reads() - before, 3u);
  EXPECT_EQ(B.q->state(), ndk::QpState::kConnected);
}

// An inline Send posted on an SQ with nothing outstanding is sent by the
// posting thread without an SQ ring slot (docs/datapath.md "Direct
// sends"). When TCP takes only part of it (the peer stopped reading), it
// stays outstanding: it counts against the SQ depth, the Sends posted
// behind it queue in the ring, and NdkFlush completes it first - once,
// with STATUS_CANCELLED - then the queued ones in posting order.
// The same for inline Writes, which take the same path.
class RawWireDirect : public RawWire, public ::testing::WithParamInterface<NDK_OPERATION_TYPE> {};
INSTANTIATE_TEST_SUITE_P(Op, RawWireDirect,
                         ::testing::Values(NdkOperationTypeSend, NdkOperationTypeWrite),
                         [](const auto& info) {
                           return info.param == NdkOperationTypeSend ? "Send" : "Write";
                         });
TEST_P(RawWireDirect, SlotlessDirectSendStuckInAFullSocketIsFlushedFirst) {
  const NDK_OPERATION_TYPE op = GetParam();
  SideConfig cfg;
  cfg.sq = 8;
  Side& B = new_side(cfg);
  auto c = connect_raw(B);
  ASSERT_TRUE(c);
  auto peer = RawPeer::attach(c);
  peer->pause(true);
  std::vector<uint8_t> pay(256, 0x6B);
  NDK_SGE s{{pay.data()}, 256, 0};
  NDK_RESULT_EX r[16];
  // The peer never looks at the Writes' STag: nothing it reads arrives.
  auto post = [&](uintptr_t ctx) {
    void* c = reinterpret_cast<void*>(ctx);
    return op == NdkOperationTypeSend
               ? B.d()->NdkSend(B.qp, c, &s, 1, NDK_OP_FLAG_INLINE)
               : B.d()->NdkWrite(B.qp, c, &s, 1, 0x1000, 0x4321, NDK_OP_FLAG_INLINE);
  };
  // One Send at a time, each completing in its post, until one does not
  // for half a second of polling: the socket is full (the peer's receive
  // window closed) and that Send is the slotless one, half sent. One that
  // completes late (TCP found a little room) only means: go on filling.
  uintptr_t stuck = 0;
  for (uintptr_t i = 1; i <= 200000 && stuck == 0; ++i) {
    ASSERT_EQ(post(i), STATUS_SUCCESS);
    ULONG k = B.cq->Dispatch->NdkGetCqResultsEx(B.cq, r, 16);
    for (auto until = std::chrono::steady_clock::now() + 500ms;
         k == 0 && std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(10ms);
      k = B.cq->Dispatch->NdkGetCqResultsEx(B.cq, r, 16);
    }
    if (k == 0) stuck = i;
    for (ULONG j = 0; j < k; ++j) {
      ASSERT_EQ(r[j].Status, STATUS_SUCCESS);
      ASSERT_EQ(r[j].RequestContext, reinterpret_cast<void*>(i));
    }
  }
  ASSERT_NE(stuck, 0u) << "the socket never filled";
  // It holds one of the 8 SQ entries: 7 more fit, the 8th does not.
  for (uintptr_t i = 1; i <= 7; ++i) ASSERT_EQ(post(stuck + i), STATUS_SUCCESS) << i;
  EXPECT_EQ(post(stuck + 8), STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(B.q->sq_pending(), 8u);
  EXPECT_EQ(B.cq->Dispatch->NdkGetCqResultsEx(B.cq, r, 16), 0u);

  B.d()->NdkFlush(B.qp);
  auto got = poll(B.cq, 8);
  ASSERT_EQ(got.size(), 8u);
  for (uintptr_t i = 0; i < 8; ++i) {
    EXPECT_EQ(got[i].RequestContext, reinterpret_cast<void*>(stuck + i)) << i;
    EXPECT_EQ(got[i].Status, STATUS_CANCELLED) << i;
    EXPECT_EQ(got[i].Type, op) << i;
  }
  // Nothing twice, also once the peer reads again and the stream ends.
  peer->pause(false);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(B.cq->Dispatch->NdkGetCqResultsEx(B.cq, r, 16), 0u);
  EXPECT_EQ(B.q->sq_pending(), 0u);
}

}  // namespace
}  // namespace dptest

namespace dptest {
namespace {

// A peer that ignores the negotiated limits: B's effective IRD is 2 (its
// own limit, not raised to the initiator's ORD of 16), and a third Read
// Request while two are still being answered is the RFC's protocol error
// (RDMAP remote operation, catastrophic: siw's answer too). The responses
// are large and the peer does not read, so none of them can finish first.
TEST_F(RawWire, ReadRequestBeyondTheIrdIsTerminated) {
  Side& B = new_side();
  auto c = connect_raw(B, false, /*b_ird=*/2);
  ASSERT_TRUE(c);
  EXPECT_EQ(B.conn->params().ird, 2);
  EXPECT_EQ(c->params().ord, 2);  // what a well-behaved initiator would keep to
  auto peer = RawPeer::attach(c);
  peer->pause(true);
  constexpr size_t kLen = 32 << 20;
  Buf src = reg(B.pd, kLen, kAll, 0x11);
  std::vector<uint8_t> burst;
  for (uint32_t i = 0; i < 3; ++i) {
    wire::ReadRequestBody rr;
    rr.sink_stag = 0x100 + i;
    rr.sink_to = 0;
    rr.size = static_cast<uint32_t>(kLen);
    rr.source_stag = src.token;
    rr.source_to = src.addr();
    uint8_t body[wire::kReadRequestBodySize];
    wire::encode_read_request(rr, body);
    auto h = wire::DdpHeader::untagged_hdr(wire::Opcode::kReadRequest, true, wire::kQnReadRequest,
                                           i + 1, 0, 0);
    std::vector<uint8_t> f(sizeof body + 64);
    size_t n = wire::encode_fpdu(h, {}, {body, sizeof body}, false, f);
    ASSERT_NE(n, 0u);
    burst.insert(burst.end(), f.begin(), f.begin() + static_cast<long>(n));
  }
  ASSERT_TRUE(peer->send_bytes(burst));
  constexpr uint32_t kCatastrophic = code(0, 2, 0x07);
  ASSERT_TRUE(eventually([&] { return B.stream->last_terminate_sent() != 0xFFFFFFFFu; }));
  EXPECT_EQ(B.stream->last_terminate_sent(), kCatastrophic);
  EXPECT_TRUE(eventually([&] { return B.q->state() == ndk::QpState::kError; }));
  peer->pause(false);
}

}  // namespace
}  // namespace dptest
