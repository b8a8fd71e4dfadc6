// SPDX-License-Identifier: Apache-2.0
// holdoff_test.cc - ConnSettings::initiator_holdoff: the initiator stays
// silent for that long after the MPA Reply before reporting the connection
// (a workaround for Linux siw's race, docs/compatibility.md notes 1 and 8).
// A raw responder on 127.0.0.1 stamps when its Reply went out.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <thread>

#include "conn_test_util.h"
#include "tcp/status.h"
#include "transport/tcp/connector.h"

namespace softndk::tcp::test {
namespace {

using Clock = std::chrono::steady_clock;

// One connect against a raw responder on 127.0.0.1 that reads the Request
// and answers with a given Reply, stamping when it went out.
struct RawRun {
  RawRun() : engine(1) {}
  ~RawRun() {
    if (peer.joinable()) peer.join();
  }
  void start(const ConnSettings& settings, const Bytes& reply,
             std::shared_ptr<ActiveConnect>* ac = nullptr) {
    peer = std::thread([this, reply] {
      sock = raw.accept();
      if (!sock.valid()) return;
      EXPECT_EQ(sock.recv_n(24).size(), 24u);
      EXPECT_TRUE(sock.send(reply));
      replied.set(Clock::now());
    });
    ConnectArgs a;
    a.dst = raw.addr();
    a.ird = a.ord = 1;
    ASSERT_EQ(ActiveConnect::start(
                  engine.pick(), settings, a,
                  [this](ConnectResult r) {
                    done_at = Clock::now();
                    done.set(std::move(r));
                  },
                  ac),
              STATUS_PENDING);
  }

  Engine engine;
  RawListener raw;
  RawSocket sock;
  std::thread peer;
  Slot<Clock::time_point> replied;
  Slot<ConnectResult> done;
  Clock::time_point done_at;  // written before done is set
};

class Holdoff : public ::testing::Test {
 protected:
  Holdoff() { settings_.connect_timeout = 3000ms; }

  // Starts a connect against a raw responder that reads the Request and
  // answers with `reply`; `replied_` gets the time the Reply was written.
  void start(const Bytes& reply, std::shared_ptr<ActiveConnect>* ac = nullptr) {
    run_.start(settings_, reply, ac);
  }

  ConnSettings settings_;
  RawRun run_;
  RawSocket& sock_ = run_.sock;
  std::thread& peer_ = run_.peer;
  Slot<Clock::time_point>& replied_ = run_.replied;
  Slot<ConnectResult>& done_ = run_.done;
  Clock::time_point& done_at_ = run_.done_at;
};

Bytes reply_1_1() { return raw_frame(false, 0x10, 2, {0, 1, 0, 1}); }

TEST_F(Holdoff, ConnectionIsReportedOnlyAfterTheHoldoff) {
  settings_.initiator_holdoff = 300ms;
  // An FPDU behind the Reply (a responder may not send one, but whatever
  // came is kept for the data path) must survive the hold-off.
  Bytes f = reply_1_1();
  const Bytes fpdu = {0x00, 0x0e, 0xc1, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  f.insert(f.end(), fpdu.begin(), fpdu.end());
  start(f);
  auto r = done_.wait(30000ms);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, STATUS_SUCCESS) << status_name(r->status);
  auto t = replied_.wait(0ms);
  ASSERT_TRUE(t);
  EXPECT_GE(done_at_ - *t, 290ms);  // steady clock; small slack for the stamp order
  Slot<Bytes> left;
  r->connection->reactor().post([&] { left.set(r->connection->take_leftover()); });
  EXPECT_EQ(left.wait().value_or(Bytes{}), fpdu);
  r->connection->abort();
}

TEST_F(Holdoff, LongValuesAreCapped) {
  settings_.initiator_holdoff = 60000ms;  // capped to kMaxHoldoff (2 s)
  start(reply_1_1());
  // Upper bounds far below the uncapped 60 s, not a few seconds above the
  // cap: the same test once took 10 s under ASan on a loaded host.
  auto r = done_.wait(30000ms);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, STATUS_SUCCESS) << status_name(r->status);
  auto t = replied_.wait(0ms);
  ASSERT_TRUE(t);
  EXPECT_GE(done_at_ - *t, ConnSettings::kMaxHoldoff - 10ms);
  EXPECT_LT(done_at_ - *t, 30000ms);
  if (r->connection) r->connection->abort();
}

TEST_F(Holdoff, CancelDuringTheHoldoffIsCancelledOnceAndResets) {
  settings_.initiator_holdoff = 2000ms;
  // The cancel must reach the connector inside the 2 s hold-off (the cap).
  // A test thread starved past it (ASan at host load ~30: the connect had
  // completed by the time cancel() ran) proves nothing either way: that
  // attempt is run again, at most 3 times. A cancel issued within 1.5 s of
  // the Reply that still ends in success fails at once.
  for (int attempt = 1;; ++attempt) {
    RawRun run;
    std::shared_ptr<ActiveConnect> ac;
    run.start(settings_, reply_1_1(), &ac);
    auto replied = run.replied.wait(5000ms);
    ASSERT_TRUE(replied);
    std::this_thread::sleep_for(100ms);  // most likely the Reply is read: in the hold-off
    const auto cancel_at = Clock::now();
    ac->cancel();
    auto r = run.done.wait(1500ms);  // well before the hold-off would end
    ASSERT_TRUE(r);
    if (r->status == STATUS_SUCCESS && cancel_at - *replied >= 1500ms && attempt < 3) {
      std::fprintf(
          stderr, "attempt %d: cancel() ran %lld ms after the Reply; again\n", attempt,
          static_cast<long long>(
              std::chrono::duration_cast<std::chrono::milliseconds>(cancel_at - *replied).count()));
      if (r->connection) r->connection->abort();
      continue;
    }
    EXPECT_EQ(r->status, STATUS_CANCELLED)
        << status_name(r->status) << ", cancel() "
        << std::chrono::duration_cast<std::chrono::milliseconds>(cancel_at - *replied).count()
        << " ms after the Reply";
    EXPECT_FALSE(r->connection);
    run.peer.join();
    EXPECT_TRUE(run.sock.wait_closed());
    std::this_thread::sleep_for(2200ms);  // the hold-off timer must not fire a second callback
    EXPECT_EQ(run.done.sets(), 1);
    break;
  }
}

TEST_F(Holdoff, PeerCloseDuringTheHoldoffReachesTheConnection) {
  settings_.initiator_holdoff = 300ms;
  start(reply_1_1());
  peer_.join();
  sock_ = RawSocket();  // FIN during the hold-off
  auto r = done_.wait(30000ms);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, STATUS_SUCCESS) << status_name(r->status);
  // The FIN waited in the socket; the connection reports it once watched.
  Slot<NTSTATUS> ev;
  r->connection->on_peer_close([&](NTSTATUS s) { ev.set(s); });
  EXPECT_EQ(ev.wait().value_or(-1), STATUS_CONNECTION_DISCONNECTED);
  r->connection->abort();
}

}  // namespace
}  // namespace softndk::tcp::test
