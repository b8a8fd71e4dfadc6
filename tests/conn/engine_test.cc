// SPDX-License-Identifier: Apache-2.0
// engine_test.cc - the connection engine over real sockets on 127.0.0.1:
// connect/accept/MPA, every loopback-reachable outcome, misbehaving peers,
// shared endpoints, disconnect and reset detection.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "conn_test_util.h"
#include "tcp/status.h"
#include "transport/tcp/connector.h"
#include "transport/tcp/listener.h"

namespace softndk::tcp::test {
namespace {

#define EXPECT_STATUS(a, b) EXPECT_EQ(a, b) << status_name(a) << " vs " << status_name(b)

struct Accepted {
  NTSTATUS status;
  std::shared_ptr<Connection> conn;
};

class EngineTest : public ::testing::Test {
 protected:
  EngineTest() : engine_(2) {
    settings_.connect_timeout = 2000ms;
    settings_.request_timeout = 500ms;
    settings_.rtr_timeout = 1000ms;
    settings_.disconnect_timeout = 1000ms;
  }

  // A listener that accepts every request with (ird, ord, pd) and stores the
  // accepted connection in accepted_.
  std::shared_ptr<Listener> accepting_listener(uint16_t ird = 4, uint16_t ord = 4, Bytes pd = {}) {
    std::shared_ptr<Listener> l;
    NTSTATUS st = Listener::create(
        engine_, settings_, loopback(), 16,
        [this, ird, ord, pd](std::shared_ptr<PendingConnection> p) {
          requests_.add();
          last_request_.set(p->request());
          EXPECT_STATUS(p->accept(ird, ord, pd,
                                  [this](NTSTATUS s, std::shared_ptr<Connection> c) {
                                    accepted_.set({s, std::move(c)});
                                  }),
                        STATUS_PENDING);
        },
        &l);
    EXPECT_STATUS(st, STATUS_SUCCESS);
    return l;
  }

  ConnectResult connect(const SockAddr& dst, Bytes pd = {}, uint16_t ird = 4, uint16_t ord = 4,
                        std::shared_ptr<SharedEndpoint> ep = nullptr) {
    Slot<ConnectResult> done;
    ConnectArgs a;
    a.dst = dst;
    a.ird = ird;
    a.ord = ord;
    a.private_data = std::move(pd);
    a.shared = std::move(ep);
    NTSTATUS st = ActiveConnect::start(engine_.pick(), settings_, std::move(a),
                                       [&done](ConnectResult r) { done.set(std::move(r)); });
    if (st != STATUS_PENDING) {
      ConnectResult r;
      r.status = st;
      return r;
    }
    auto r = done.wait(10000ms);
    EXPECT_TRUE(r.has_value());
    return r ? std::move(*r) : ConnectResult{};
  }

  // A normal connect still works (the listener keeps serving others).
  void expect_listener_serves(const SockAddr& at) {
    int before = accepted_.sets();
    auto r = connect(at);
    EXPECT_STATUS(r.status, STATUS_SUCCESS);
    if (r.connection) r.connection->abort();
    // The responder's accept callback may still be on its way (it runs on
    // the engine after the Reply went out): wait for it, so it cannot touch
    // the fixture's slots while the test tears down (TSan).
    auto until = std::chrono::steady_clock::now() + 5s;
    while (accepted_.sets() == before && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(1ms);
  }

  Engine engine_;
  ConnSettings settings_;
  Counter requests_;
  Slot<mpa::PeerRequest> last_request_;
  Slot<Accepted> accepted_;
};

TEST_F(EngineTest, ConnectAcceptMpaAndGracefulDisconnect) {
  auto l = accepting_listener(8, 2, {0x53, 0x52, 0x56});
  ASSERT_NE(l->local().port(), 0);
  auto r = connect(l->local(), {1, 2, 3}, 4, 16);
  EXPECT_STATUS(r.status, STATUS_SUCCESS);
  ASSERT_TRUE(r.connection);
  auto acc = accepted_.wait();
  ASSERT_TRUE(acc);
  EXPECT_STATUS(acc->status, STATUS_SUCCESS);
  ASSERT_TRUE(acc->conn);
  auto req = last_request_.wait();
  ASSERT_TRUE(req);
  EXPECT_EQ(req->private_data, (Bytes{1, 2, 3}));
  EXPECT_EQ(req->ird, 4);
  EXPECT_EQ(req->ord, 16);

  auto& cp = r.connection->params();
  auto& sp = acc->conn->params();
  EXPECT_EQ(cp.revision, 2);
  EXPECT_TRUE(cp.enhanced);
  EXPECT_FALSE(cp.crc);
  EXPECT_FALSE(cp.markers);
  EXPECT_FALSE(cp.p2p);
  EXPECT_EQ(cp.peer_private_data, (Bytes{0x53, 0x52, 0x56}));
  // Responder: ORD min(2, 4) = 2, IRD min(8, 16) = 8 (never raised); the
  // initiator's ORD follows the Reply's IRD.
  EXPECT_EQ(sp.ord, 2);
  EXPECT_EQ(sp.ird, 8);
  EXPECT_EQ(cp.ird, 2);
  EXPECT_EQ(cp.ord, 8);
  EXPECT_EQ(r.connection->peer(), l->local());
  EXPECT_EQ(acc->conn->peer(), r.connection->local());
  EXPECT_EQ(r.connection->role(), Role::kInitiator);
  EXPECT_EQ(acc->conn->role(), Role::kResponder);

  // Client disconnects; the server sees the peer close exactly once, then
  // disconnects itself; both complete with SUCCESS.
  Slot<NTSTATUS> server_event, client_done, server_done;
  acc->conn->on_peer_close([&](NTSTATUS s) { server_event.set(s); });
  r.connection->on_peer_close([&](NTSTATUS s) { ADD_FAILURE() << "own disconnect " << s; });
  r.connection->disconnect([&](NTSTATUS s) { client_done.set(s); });
  auto ev = server_event.wait();
  ASSERT_TRUE(ev);
  EXPECT_STATUS(*ev, STATUS_CONNECTION_DISCONNECTED);
  acc->conn->disconnect([&](NTSTATUS s) { server_done.set(s); });
  EXPECT_STATUS(server_done.wait().value_or(-1), STATUS_SUCCESS);
  EXPECT_STATUS(client_done.wait().value_or(-1), STATUS_SUCCESS);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(server_event.sets(), 1);
  EXPECT_TRUE(r.connection->closed());
  EXPECT_TRUE(acc->conn->closed());
  // A second disconnect is invalid.
  Slot<NTSTATUS> again;
  r.connection->disconnect([&](NTSTATUS s) { again.set(s); });
  EXPECT_STATUS(again.wait().value_or(-1), STATUS_CONNECTION_INVALID);
}

TEST_F(EngineTest, NothingListeningIsConnectionRefused) {
  auto r = connect(loopback(free_port()));
  EXPECT_STATUS(r.status, STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(r.mpa, mpa::Status::kOk);
}

TEST_F(EngineTest, RejectWithPrivateData) {
  std::shared_ptr<Listener> l;
  ASSERT_EQ(Listener::create(
                engine_, settings_, loopback(), 16,
                [](std::shared_ptr<PendingConnection> p) {
                  Bytes pd = {0xde, 0xad, 0xbe, 0xef};
                  EXPECT_STATUS(p->reject(pd), STATUS_SUCCESS);
                  EXPECT_STATUS(p->reject(pd), STATUS_CONNECTION_INVALID);
                },
                &l),
            STATUS_SUCCESS);
  auto r = connect(l->local(), {7});
  EXPECT_STATUS(r.status, STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(r.mpa, mpa::Status::kRejected);
  EXPECT_EQ(r.peer_private_data, (Bytes{0xde, 0xad, 0xbe, 0xef}));
  EXPECT_FALSE(r.connection);
}

TEST_F(EngineTest, MpaReplyTimeoutIsIoTimeout) {
  RawListener silent;  // the kernel accepts; nobody ever answers
  settings_.connect_timeout = 300ms;
  auto t0 = std::chrono::steady_clock::now();
  auto r = connect(silent.addr());
  auto dt = std::chrono::steady_clock::now() - t0;
  EXPECT_STATUS(r.status, STATUS_IO_TIMEOUT);
  EXPECT_GE(dt, 250ms);
  EXPECT_LT(dt, 3000ms);
}

TEST_F(EngineTest, PrivateDataTooLongFailsInline) {
  ConnectArgs a;
  a.dst = loopback(free_port());
  a.private_data.assign(253, 0);
  EXPECT_STATUS(ActiveConnect::start(
                    engine_.pick(), settings_, a,
                    [](ConnectResult) { ADD_FAILURE() << "no callback after an inline failure"; }),
                STATUS_INVALID_PARAMETER);
}

TEST_F(EngineTest, CancelDeliversCancelledOnce) {
  RawListener silent;
  Slot<ConnectResult> done;
  ConnectArgs a;
  a.dst = silent.addr();
  std::shared_ptr<ActiveConnect> ac;
  ASSERT_EQ(
      ActiveConnect::start(
          engine_.pick(), settings_, a, [&](ConnectResult r) { done.set(std::move(r)); }, &ac),
      STATUS_PENDING);
  ac->cancel();
  ac->cancel();
  auto r = done.wait();
  ASSERT_TRUE(r);
  EXPECT_STATUS(r->status, STATUS_CANCELLED);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(done.sets(), 1);
}

// ---- misbehaving initiators against our listener ----

class BadInitiator : public EngineTest {
 protected:
  void SetUp() override { l_ = accepting_listener(); }
  // Sends `bytes`, expects the listener to close the connection without
  // presenting it, and to keep serving others.
  void expect_dropped(const Bytes& bytes) {
    auto s = RawSocket::connect_to(l_->local());
    ASSERT_TRUE(s.valid());
    ASSERT_TRUE(s.send(bytes));
    EXPECT_TRUE(s.wait_closed());
    EXPECT_EQ(requests_.get(), 0);
    expect_listener_serves(l_->local());
  }
  std::shared_ptr<Listener> l_;
};

TEST_F(BadInitiator, Garbage) {
  expect_dropped({0x5a, 0x5b, 0x58, 0x59, 0x5e, 0x5f, 0x5c, 0x5d, 0x52, 0x53,
                  0x50, 0x51, 0x56, 0x57, 0x54, 0x55, 0x4a, 0x4b, 0x48, 0x49});
  EXPECT_GE(l_->stats().dropped.load(), 1u);
}

TEST_F(BadInitiator, ReplyToARequestNeverSent) {
  expect_dropped(raw_frame(false, 0x10, 2, {0, 1, 0, 1}));
}

TEST_F(BadInitiator, WrongKey) {
  Bytes f = raw_frame(true, 0x10, 2, {0, 1, 0, 1});
  f[3] = 'X';
  expect_dropped(f);
}

TEST_F(BadInitiator, OversizedPrivateDataLength) {
  expect_dropped(raw_frame(true, 0x10, 2, Bytes(16, 0), 600));
}

TEST_F(BadInitiator, RevisionThree) { expect_dropped(raw_frame(true, 0x10, 3, {0, 1, 0, 1})); }

TEST_F(BadInitiator, DataBehindTheRequest) {
  Bytes f = raw_frame(true, 0x10, 2, {0, 1, 0, 1});
  f.insert(f.end(), {0x00, 0x0e, 0xc1, 0x40});  // an FPDU before our Reply
  expect_dropped(f);
}

TEST_F(BadInitiator, SilenceMidFrame) {
  auto s = RawSocket::connect_to(l_->local());
  Bytes f = raw_frame(true, 0x10, 2, {0, 1, 0, 1});
  ASSERT_TRUE(s.send(Bytes(f.begin(), f.begin() + 10)));
  EXPECT_TRUE(s.wait_closed(3000ms));  // request_timeout 500 ms
  EXPECT_EQ(l_->stats().timed_out.load(), 1u);
  EXPECT_EQ(requests_.get(), 0);
  expect_listener_serves(l_->local());
}

TEST_F(BadInitiator, MarkersGetMpaReject) {
  auto s = RawSocket::connect_to(l_->local());
  ASSERT_TRUE(s.send(raw_frame(true, 0x90, 2, {0, 1, 0, 1})));
  Bytes rep = s.recv_n(24);
  EXPECT_EQ(rep, raw_frame(false, 0x30, 2, {0, 0, 0, 0}));
  EXPECT_TRUE(s.wait_closed());
  EXPECT_EQ(l_->stats().refused.load(), 1u);
  EXPECT_EQ(requests_.get(), 0);
}

TEST_F(BadInitiator, Rev1RequestGetsRev1Reply) {
  auto s = RawSocket::connect_to(l_->local());
  ASSERT_TRUE(s.send(raw_frame(true, 0x00, 1, {})));
  EXPECT_EQ(s.recv_n(20), raw_frame(false, 0x00, 1, {}));
  auto acc = accepted_.wait();
  ASSERT_TRUE(acc);
  EXPECT_STATUS(acc->status, STATUS_SUCCESS);
  EXPECT_EQ(acc->conn->params().revision, 1);
}

TEST_F(BadInitiator, CrcRequestEchoed) {
  auto s = RawSocket::connect_to(l_->local());
  ASSERT_TRUE(s.send(raw_frame(true, 0x50, 2, {0, 2, 0, 8})));  // IRD 2, ORD 8
  // Our ULP asked 4/4: ORD min(4, 2) = 2, IRD min(4, 8) = 4 (never raised).
  EXPECT_EQ(s.recv_n(24), raw_frame(false, 0x50, 2, {0, 4, 0, 2}));
  auto acc = accepted_.wait();
  ASSERT_TRUE(acc && acc->conn);
  EXPECT_TRUE(acc->conn->params().crc);
}

// The initiator sends data after its Request while the ULP still decides:
// the accept fails with CONNECTION_ABORTED.
TEST_F(EngineTest, EarlyDataWhilePresentedAbortsAccept) {
  Slot<std::shared_ptr<PendingConnection>> pending;
  std::shared_ptr<Listener> l;
  ASSERT_EQ(Listener::create(
                engine_, settings_, loopback(), 16,
                [&](std::shared_ptr<PendingConnection> p) { pending.set(p); }, &l),
            STATUS_SUCCESS);
  auto s = RawSocket::connect_to(l->local());
  ASSERT_TRUE(s.send(raw_frame(true, 0x10, 2, {0, 1, 0, 1})));
  auto p = pending.wait();
  ASSERT_TRUE(p && *p);
  ASSERT_TRUE(s.send({1, 2, 3, 4}));
  EXPECT_TRUE(s.wait_closed());
  Slot<NTSTATUS> acc;
  NTSTATUS st = (*p)->accept(1, 1, {}, [&](NTSTATUS s2, auto) { acc.set(s2); });
  EXPECT_STATUS(st, STATUS_PENDING);
  EXPECT_STATUS(acc.wait().value_or(-1), STATUS_CONNECTION_ABORTED);
}

TEST_F(EngineTest, RejectAfterInitiatorLeftIsAborted) {
  Slot<std::shared_ptr<PendingConnection>> pending;
  std::shared_ptr<Listener> l;
  ASSERT_EQ(Listener::create(
                engine_, settings_, loopback(), 16,
                [&](std::shared_ptr<PendingConnection> p) { pending.set(p); }, &l),
            STATUS_SUCCESS);
  {
    auto s = RawSocket::connect_to(l->local());
    ASSERT_TRUE(s.send(raw_frame(true, 0x10, 2, {0, 1, 0, 1})));
    ASSERT_TRUE(pending.wait());
  }  // the initiator closes
  auto p = *pending.wait();
  // The engine sees the FIN (bounded; a fixed 200 ms was a guess that a
  // busy host can outlast).
  for (int i = 0; i < 1000 && !p->peer_gone(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(p->peer_gone()) << "the engine did not see the initiator leave within 10 s";
  EXPECT_STATUS(p->reject({}), STATUS_CONNECTION_ABORTED);
}

// ---- misbehaving responders against our initiator ----

class BadResponder : public EngineTest {
 protected:
  // Runs a connect against a raw listener whose accepted socket receives
  // the Request and then `reply` (or nothing).
  ConnectResult run(const Bytes& reply, bool close_after = false) {
    RawListener raw;
    Slot<bool> release;
    std::thread peer([&] {
      auto s = raw.accept();
      if (!s.valid()) return;
      Bytes req = s.recv_n(24);
      EXPECT_EQ(req.size(), 24u);
      if (!reply.empty()) s.send(reply);
      if (close_after) return;  // RawSocket closes: FIN
      release.wait(5000ms);     // hold the socket until the connect is over
    });
    auto r = connect(raw.addr());
    release.set(true);
    peer.join();
    return r;
  }
};

TEST_F(BadResponder, Garbage) {
  auto r = run(Bytes(24, 0x5a));
  EXPECT_STATUS(r.status, STATUS_DATA_ERROR);
  EXPECT_EQ(r.mpa, mpa::Status::kBadKey);
}

TEST_F(BadResponder, RequestKeyInsteadOfReply) {
  auto r = run(raw_frame(true, 0x10, 2, {0, 1, 0, 1}));
  EXPECT_EQ(r.mpa, mpa::Status::kBadKey);
}

TEST_F(BadResponder, MarkersInReply) {
  auto r = run(raw_frame(false, 0x90, 2, {0, 1, 0, 1}));
  EXPECT_STATUS(r.status, STATUS_NOT_SUPPORTED);
  EXPECT_EQ(r.mpa, mpa::Status::kMarkers);
}

TEST_F(BadResponder, Version1ReplyToEnhancedRequest) {
  auto r = run(raw_frame(false, 0x00, 1, {}));
  EXPECT_EQ(r.mpa, mpa::Status::kNotEnhanced);
}

TEST_F(BadResponder, OversizedPrivateDataLength) {
  auto r = run(raw_frame(false, 0x10, 2, Bytes(8, 0), 1000));
  EXPECT_STATUS(r.status, STATUS_DATA_ERROR);
  EXPECT_EQ(r.mpa, mpa::Status::kPrivateDataTooLong);
}

TEST_F(BadResponder, ClosesWithoutReply) {
  auto r = run({}, true);
  EXPECT_STATUS(r.status, STATUS_CONNECTION_ABORTED);
}

TEST_F(BadResponder, SilenceMidFrame) {
  settings_.connect_timeout = 400ms;
  Bytes f = raw_frame(false, 0x10, 2, {0, 1, 0, 1});
  auto r = run(Bytes(f.begin(), f.begin() + 22));
  EXPECT_STATUS(r.status, STATUS_IO_TIMEOUT);
}

TEST_F(BadResponder, FpdusBehindTheReplyAreKept) {  // IWARP.md 9.8 item 5
  Bytes f = raw_frame(false, 0x10, 2, {0, 4, 0, 4});
  Bytes rtr = {0x00, 0x0e, 0xc1, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xeb, 0xd3, 0x4c, 0x5f};
  f.insert(f.end(), rtr.begin(), rtr.end());
  auto r = run(f);
  EXPECT_STATUS(r.status, STATUS_SUCCESS);
  ASSERT_TRUE(r.connection);
  Slot<Bytes> left;
  r.connection->reactor().post([&] { left.set(r.connection->take_leftover()); });
  EXPECT_EQ(left.wait().value_or(Bytes{}), rtr);
  r.connection->abort();
}

// ---- P2P ----

TEST_F(EngineTest, PeerToPeerAcceptCompletesOnRtr) {
  auto l = accepting_listener();
  settings_.mpa.peer_to_peer = true;
  auto r = connect(l->local());
  ASSERT_TRUE(r.connection);
  EXPECT_TRUE(r.connection->params().p2p);
  EXPECT_EQ(r.connection->params().rtr, mpa::kRtrWrite);
  // No RTR yet: the accept has not completed.
  EXPECT_FALSE(accepted_.wait(200ms).has_value());
  Bytes rtr = {0x00, 0x0e, 0xc1, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_EQ(::send(r.connection->fd(), rtr.data(), rtr.size(), MSG_NOSIGNAL), 20);
  auto acc = accepted_.wait();
  ASSERT_TRUE(acc);
  EXPECT_STATUS(acc->status, STATUS_SUCCESS);
  ASSERT_TRUE(acc->conn);
  EXPECT_TRUE(acc->conn->params().p2p);
  // The RTR stays for the data path.
  Slot<Bytes> left;
  acc->conn->reactor().post([&] { left.set(acc->conn->take_leftover()); });
  auto got = left.wait();
  // It may still be in the socket or already buffered: wait for buffering.
  for (int i = 0; i < 50 && got && got->empty(); ++i) {
    std::this_thread::sleep_for(10ms);
    Slot<Bytes> again;
    acc->conn->reactor().post([&] { again.set(acc->conn->take_leftover()); });
    got = again.wait();
  }
  EXPECT_EQ(got.value_or(Bytes{}), rtr);
  r.connection->abort();
  acc->conn->abort();
}

TEST_F(EngineTest, PeerToPeerWithoutRtrTimesOut) {
  settings_.rtr_timeout = 300ms;
  auto l = accepting_listener();
  settings_.mpa.peer_to_peer = true;
  auto r = connect(l->local());
  ASSERT_TRUE(r.connection);
  auto acc = accepted_.wait(3000ms);
  ASSERT_TRUE(acc);
  EXPECT_STATUS(acc->status, STATUS_IO_TIMEOUT);
  EXPECT_FALSE(acc->conn);
}

// ---- listener control ----

TEST_F(EngineTest, PausedListenerRefusesAndResumes) {
  auto l = accepting_listener();
  const auto at = l->local();
  ASSERT_EQ(l->pause(true), STATUS_SUCCESS);
  EXPECT_STATUS(connect(at).status, STATUS_CONNECTION_REFUSED);
  ASSERT_EQ(l->pause(false), STATUS_SUCCESS);
  EXPECT_EQ(l->local().port(), at.port());
  expect_listener_serves(at);
}

TEST_F(EngineTest, ClosedListenerStopsAcceptingAtOnce) {
  auto l = accepting_listener();
  const auto at = l->local();
  expect_listener_serves(at);
  l->close();
  EXPECT_STATUS(connect(at).status, STATUS_CONNECTION_REFUSED);
}

TEST_F(EngineTest, ListenOnPortInUseIsSharingViolation) {
  auto l = accepting_listener();
  std::shared_ptr<Listener> l2;
  EXPECT_STATUS(Listener::create(
                    engine_, settings_, l->local(), 16, [](auto) {}, &l2),
                STATUS_SHARING_VIOLATION);
  auto bad = *SockAddr::parse("192.0.2.77", 0);  // TEST-NET-1: not ours
  EXPECT_STATUS(Listener::create(
                    engine_, settings_, bad, 16, [](auto) {}, &l2),
                STATUS_INVALID_ADDRESS);
}

// ---- shared endpoints ----

TEST_F(EngineTest, SharedEndpointManyPeersAndDuplicateTuple) {
  std::shared_ptr<SharedEndpoint> ep;
  ASSERT_EQ(SharedEndpoint::create(loopback(), &ep), STATUS_SUCCESS);
  ASSERT_NE(ep->local().port(), 0);
  constexpr int kPeers = 8;
  std::vector<std::shared_ptr<Listener>> ls;
  std::vector<std::shared_ptr<Connection>> conns;
  for (int i = 0; i < kPeers; ++i) ls.push_back(accepting_listener());
  for (int i = 0; i < kPeers; ++i) {
    auto r = connect(ls[i]->local(), {}, 4, 4, ep);
    EXPECT_STATUS(r.status, STATUS_SUCCESS);
    ASSERT_TRUE(r.connection);
    EXPECT_EQ(r.connection->local(), ep->local());
    conns.push_back(r.connection);
  }
  EXPECT_EQ(ep->connections(), static_cast<size_t>(kPeers));
  // Same peer again: the 4-tuple exists.
  EXPECT_STATUS(connect(ls[0]->local(), {}, 4, 4, ep).status, STATUS_ADDRESS_ALREADY_EXISTS);
  for (auto& c : conns) c->abort();
  for (int i = 0; i < 100 && ep->connections() != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(ep->connections(), 0u);
}

// ---- disconnect and reset ----

TEST_F(EngineTest, ResetIsDetectedOnce) {
  auto l = accepting_listener();
  auto r = connect(l->local());
  ASSERT_TRUE(r.connection);
  auto acc = accepted_.wait();
  ASSERT_TRUE(acc && acc->conn);
  Slot<NTSTATUS> ev;
  r.connection->on_peer_close([&](NTSTATUS s) { ev.set(s); });
  acc->conn->abort();
  EXPECT_STATUS(ev.wait().value_or(-1), STATUS_CONNECTION_RESET);
  Slot<NTSTATUS> d;
  r.connection->disconnect([&](NTSTATUS s) { d.set(s); });
  EXPECT_STATUS(d.wait().value_or(-1), STATUS_CONNECTION_ABORTED);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ev.sets(), 1);
}

TEST_F(EngineTest, PeerCloseBeforeCallbackIsRegistered) {
  auto l = accepting_listener();
  auto r = connect(l->local());
  ASSERT_TRUE(r.connection);
  auto acc = accepted_.wait();
  ASSERT_TRUE(acc && acc->conn);
  Slot<NTSTATUS> d;
  acc->conn->disconnect([&](NTSTATUS s) { d.set(s); });
  std::this_thread::sleep_for(100ms);  // the FIN arrives before on_peer_close
  Slot<NTSTATUS> ev;
  r.connection->on_peer_close([&](NTSTATUS s) { ev.set(s); });
  EXPECT_STATUS(ev.wait().value_or(-1), STATUS_CONNECTION_DISCONNECTED);
  Slot<NTSTATUS> d2;
  r.connection->disconnect([&](NTSTATUS s) { d2.set(s); });
  EXPECT_STATUS(d2.wait().value_or(-1), STATUS_SUCCESS);
  EXPECT_STATUS(d.wait().value_or(-1), STATUS_SUCCESS);
}

TEST_F(EngineTest, DisconnectTimesOutWhenPeerNeverCloses) {
  settings_.disconnect_timeout = 300ms;
  auto l = accepting_listener();
  auto r = connect(l->local());
  ASSERT_TRUE(r.connection);
  auto acc = accepted_.wait();
  ASSERT_TRUE(acc && acc->conn);  // the server side never disconnects
  Slot<NTSTATUS> d;
  auto t0 = std::chrono::steady_clock::now();
  r.connection->disconnect([&](NTSTATUS s) { d.set(s); });
  EXPECT_STATUS(d.wait().value_or(-1), STATUS_IO_TIMEOUT);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 250ms);
  // The timed-out side reset the stream: the server's peer-close says so.
  Slot<NTSTATUS> ev;
  acc->conn->on_peer_close([&](NTSTATUS s) { ev.set(s); });
  auto e = ev.wait();
  ASSERT_TRUE(e);
  EXPECT_TRUE(*e == STATUS_CONNECTION_DISCONNECTED || *e == STATUS_CONNECTION_RESET);
  acc->conn->abort();
}

TEST_F(EngineTest, AbortCancelsPendingDisconnect) {
  settings_.disconnect_timeout = 5000ms;
  auto l = accepting_listener();
  auto r = connect(l->local());
  ASSERT_TRUE(r.connection);
  auto acc = accepted_.wait();
  ASSERT_TRUE(acc && acc->conn);
  Slot<NTSTATUS> d;
  r.connection->disconnect([&](NTSTATUS s) { d.set(s); });
  r.connection->abort();
  EXPECT_STATUS(d.wait().value_or(-1), STATUS_CANCELLED);
  acc->conn->abort();
}

}  // namespace
}  // namespace softndk::tcp::test
