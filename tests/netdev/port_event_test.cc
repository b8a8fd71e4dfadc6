// SPDX-License-Identifier: Apache-2.0
// port_event_test.cc - end to end: a softndk adapter's port follows the
// real link state of the interface it is bound to.
//
// The adapter is opened on the veth end that stays in this namespace (its
// peer sits in a throw-away namespace, see veth_fixture.h). Toggling that
// end with `ip link set dev X down/up` must complete queued
// SoftNdkGetPortEvent requests, oldest first and exactly one per event,
// with SOFTNDK_PORT_EVENT_DOWN / _ACTIVE; cancel and close complete them
// with STATUS_CANCELLED. Only the public C API is used.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "softndk/softndk.h"
#include "veth_fixture.h"

namespace {

using namespace std::chrono_literals;
using softndk::test::VethPair;

constexpr auto kWait = 5s;
constexpr auto kQuiet = 300ms;

// Records the completions of port-event requests, in order.
struct Completions {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<SOFTNDK_REQUEST*> done;

  static void on_complete(SOFTNDK_REQUEST* req) {
    auto* self = static_cast<Completions*>(req->Context);
    std::lock_guard lk(self->mu);
    self->done.push_back(req);
    self->cv.notify_all();
  }
  void arm(SOFTNDK_REQUEST& req) {
    req = {};
    req.Completion = on_complete;
    req.Context = this;
  }
  bool wait_count(size_t n, std::chrono::milliseconds limit = kWait) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, limit, [&] { return done.size() >= n; });
  }
  size_t count() {
    std::lock_guard lk(mu);
    return done.size();
  }
  SOFTNDK_REQUEST* at(size_t i) {
    std::lock_guard lk(mu);
    return done.at(i);
  }
};

class PortEventVeth : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    veth_ = VethPair::create(&why);
    if (!veth_) GTEST_SKIP() << why;
    const NDK_VERSION v{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};
    ASSERT_EQ(SoftNdkOpenAdapter(veth_->name().c_str(), v, nullptr, &adapter_), STATUS_SUCCESS);
    ASSERT_NE(adapter_, nullptr);
  }
  // The adapter closes before the requests and the recorder go away: close
  // completes every queued request first.
  void TearDown() override {
    if (adapter_) SoftNdkCloseAdapter(adapter_);
  }

  ULONG port_state() {
    std::vector<unsigned char> buf(4096);
    auto* attr = reinterpret_cast<SOFTNDK_PORT_ATTR*>(buf.data());
    SOFTNDK_REQUEST req{};
    const NTSTATUS st = SoftNdkQueryPort(adapter_, SOFTNDK_PORT_NUMBER, buf.size(), attr, &req);
    EXPECT_EQ(st, STATUS_SUCCESS);
    return st == STATUS_SUCCESS ? attr->State : 0;
  }
  NTSTATUS queue(SOFTNDK_REQUEST& req) {
    completions_.arm(req);
    return SoftNdkGetPortEvent(adapter_, SOFTNDK_PORT_NUMBER, &req);
  }

  Completions completions_;
  SOFTNDK_REQUEST reqs_[4]{};
  std::unique_ptr<VethPair> veth_;
  NDK_ADAPTER* adapter_ = nullptr;
};

TEST_F(PortEventVeth, LinkDownAndUpCompleteOldestRequestEach) {
  EXPECT_EQ(port_state(), static_cast<ULONG>(SoftNdkPortStateActive));
  for (auto& r : reqs_) ASSERT_EQ(queue(r), STATUS_PENDING);

  ASSERT_TRUE(veth_->set_up(false));
  ASSERT_TRUE(completions_.wait_count(1));
  EXPECT_EQ(completions_.at(0), &reqs_[0]) << "the oldest request completes first";
  EXPECT_EQ(reqs_[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(reqs_[0].Information, SOFTNDK_PORT_EVENT_DOWN);
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(completions_.count(), 1u) << "exactly one request per event";
  EXPECT_EQ(port_state(), static_cast<ULONG>(SoftNdkPortStateDown));

  ASSERT_TRUE(veth_->set_up(true));
  ASSERT_TRUE(completions_.wait_count(2));
  EXPECT_EQ(completions_.at(1), &reqs_[1]);
  EXPECT_EQ(reqs_[1].Status, STATUS_SUCCESS);
  EXPECT_EQ(reqs_[1].Information, SOFTNDK_PORT_EVENT_ACTIVE);
  EXPECT_EQ(port_state(), static_cast<ULONG>(SoftNdkPortStateActive));
}

TEST_F(PortEventVeth, PeerLosingCarrierIsPortDown) {
  ASSERT_EQ(queue(reqs_[0]), STATUS_PENDING);
  ASSERT_TRUE(veth_->set_peer_up(false));
  ASSERT_TRUE(completions_.wait_count(1));
  EXPECT_EQ(reqs_[0].Information, SOFTNDK_PORT_EVENT_DOWN);
}

TEST_F(PortEventVeth, AddressAddIsAddressChange) {
  ASSERT_EQ(queue(reqs_[0]), STATUS_PENDING);
  ASSERT_TRUE(veth_->add_address("198.19.255.253/32"));
  ASSERT_TRUE(completions_.wait_count(1));
  EXPECT_EQ(reqs_[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(reqs_[0].Information, SOFTNDK_PORT_EVENT_ADDRESS_CHANGE);
}

TEST_F(PortEventVeth, CancelCompletesWithCancelled) {
  ASSERT_EQ(queue(reqs_[0]), STATUS_PENDING);
  ASSERT_EQ(queue(reqs_[1]), STATUS_PENDING);
  EXPECT_EQ(SoftNdkCancelRequest(adapter_, &reqs_[0]), STATUS_SUCCESS);
  ASSERT_TRUE(completions_.wait_count(1));
  EXPECT_EQ(completions_.at(0), &reqs_[0]);
  EXPECT_EQ(reqs_[0].Status, STATUS_CANCELLED);
  // Already completed: nothing to cancel.
  EXPECT_EQ(SoftNdkCancelRequest(adapter_, &reqs_[0]), STATUS_INVALID_PARAMETER);
  // The next event goes to the request still queued.
  ASSERT_TRUE(veth_->set_up(false));
  ASSERT_TRUE(completions_.wait_count(2));
  EXPECT_EQ(completions_.at(1), &reqs_[1]);
  EXPECT_EQ(reqs_[1].Information, SOFTNDK_PORT_EVENT_DOWN);
}

TEST_F(PortEventVeth, CloseCancelsQueuedRequestsBeforeReturning) {
  for (auto& r : reqs_) ASSERT_EQ(queue(r), STATUS_PENDING);
  SoftNdkCloseAdapter(adapter_);
  adapter_ = nullptr;
  EXPECT_EQ(completions_.count(), 4u);
  for (auto& r : reqs_) EXPECT_EQ(r.Status, STATUS_CANCELLED);
}

TEST_F(PortEventVeth, OpenByAddressBindsTheSameInterface) {
  NDK_ADAPTER* by_addr = nullptr;
  const NDK_VERSION v{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};
  SOFTNDK_REQUEST req{};
  ASSERT_EQ(SoftNdkOpenAdapter(veth_->address().c_str(), v, nullptr, &by_addr), STATUS_SUCCESS);
  struct Closer {
    NDK_ADAPTER*& a;
    ~Closer() {
      if (a) SoftNdkCloseAdapter(a);
    }
  } closer{by_addr};
  completions_.arm(req);
  ASSERT_EQ(SoftNdkGetPortEvent(by_addr, SOFTNDK_PORT_NUMBER, &req), STATUS_PENDING);
  ASSERT_TRUE(veth_->set_up(false));
  EXPECT_TRUE(completions_.wait_count(1));
  EXPECT_EQ(req.Information, SOFTNDK_PORT_EVENT_DOWN);
}

TEST_F(PortEventVeth, BadPortIsInvalidParameter) {
  completions_.arm(reqs_[0]);
  EXPECT_EQ(SoftNdkGetPortEvent(adapter_, 2, &reqs_[0]), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(SoftNdkGetPortEvent(adapter_, 0, &reqs_[0]), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(completions_.count(), 0u);
}

}  // namespace
