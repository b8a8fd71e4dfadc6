// SPDX-License-Identifier: Apache-2.0
// holdoff_test.cc - ConnSettings::initiator_holdoff: the initiator stays
// silent for that long after the MPA Reply before reporting the connection
// (a workaround for Linux siw's race, docs/compatibility.md notes 1 and 8).
// A raw responder on 127.0.0.1 stamps when its Reply went out.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "conn_test_util.h"
#include "tcp/status.h"
#include "transport/tcp/connector.h"

namespace softndk::tcp::test {
namespace {

using Clock = std::chrono::steady_clock;

class Holdoff : public ::testing::Test {
 protected:
  Holdoff() : engine_(1) { settings_.connect_timeout = 3000ms; }

  // Starts a connect against a raw responder that reads the Request and
  // answers with `reply`; `replied` gets the time the Reply was written.
  void start(const Bytes& reply, std::shared_ptr<ActiveConnect>* ac = nullptr) {
    peer_ = std::thread([this, reply] {
      sock_ = raw_.accept();
      if (!sock_.valid()) return;
      EXPECT_EQ(sock_.recv_n(24).size(), 24u);
      EXPECT_TRUE(sock_.send(reply));
      replied_.set(Clock::now());
    });
    ConnectArgs a;
    a.dst = raw_.addr();
    a.ird = a.ord = 1;
    ASSERT_EQ(ActiveConnect::start(
                  engine_.pick(), settings_, a,
                  [this](ConnectResult r) {
                    done_at_ = Clock::now();
                    done_.set(std::move(r));
                  },
                  ac),
              STATUS_PENDING);
  }
  void TearDown() override {
    if (peer_.joinable()) peer_.join();
  }

  Engine engine_;
  ConnSettings settings_;
  RawListener raw_;
  RawSocket sock_;
  std::thread peer_;
  Slot<Clock::time_point> replied_;
  Slot<ConnectResult> done_;
  Clock::time_point done_at_;  // written before done_ is set
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
  auto r = done_.wait(5000ms);
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
  auto r = done_.wait(8000ms);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, STATUS_SUCCESS) << status_name(r->status);
  auto t = replied_.wait(0ms);
  ASSERT_TRUE(t);
  EXPECT_GE(done_at_ - *t, ConnSettings::kMaxHoldoff - 10ms);
  EXPECT_LT(done_at_ - *t, ConnSettings::kMaxHoldoff + 3000ms);
  if (r->connection) r->connection->abort();
}

TEST_F(Holdoff, CancelDuringTheHoldoffIsCancelledOnceAndResets) {
  settings_.initiator_holdoff = 2000ms;
  std::shared_ptr<ActiveConnect> ac;
  start(reply_1_1(), &ac);
  ASSERT_TRUE(replied_.wait(5000ms));
  std::this_thread::sleep_for(100ms);  // the Reply is read: now in the hold-off
  ac->cancel();
  auto r = done_.wait(1500ms);  // well before the hold-off would end
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, STATUS_CANCELLED) << status_name(r->status);
  EXPECT_FALSE(r->connection);
  peer_.join();
  EXPECT_TRUE(sock_.wait_closed());
  std::this_thread::sleep_for(2200ms);  // the hold-off timer must not fire a second callback
  EXPECT_EQ(done_.sets(), 1);
}

TEST_F(Holdoff, PeerCloseDuringTheHoldoffReachesTheConnection) {
  settings_.initiator_holdoff = 300ms;
  start(reply_1_1());
  peer_.join();
  sock_ = RawSocket();  // FIN during the hold-off
  auto r = done_.wait(5000ms);
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
