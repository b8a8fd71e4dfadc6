// SPDX-License-Identifier: Apache-2.0
// netdev_monitor_test.cc - NetMonitor on a real veth pair.
//
// Each test makes its own veth pair (see veth_fixture.h), subscribes to the
// end in this namespace and drives it with `ip`. Waits are bounded (5 s);
// "nothing happens" is checked over a short quiet period. Skipped with a
// reason when the process may not create network namespaces.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ndk/netdev.h"
#include "util/bounded_wait.h"
#include "veth_fixture.h"

namespace softndk::ndk {
namespace {

using namespace std::chrono_literals;
using test::VethPair;

constexpr auto kWait = 5s;
constexpr auto kQuiet = 300ms;

// Collects the events of one subscription.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<NetEvent> events;
  std::vector<NetDevice> devs;

  NetMonitor::Callback callback() {
    return [this](const NetDevice& dev, NetEvent ev) {
      std::lock_guard lk(mu);
      events.push_back(ev);
      devs.push_back(dev);
      cv.notify_all();
    };
  }
  // Waits until `ev` has been seen at least `count` times in total.
  bool wait_for(NetEvent ev, size_t count = 1, std::chrono::milliseconds limit = kWait) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, limit, [&] {
      return static_cast<size_t>(std::count(events.begin(), events.end(), ev)) >= count;
    });
  }
  size_t size() {
    std::lock_guard lk(mu);
    return events.size();
  }
  NetDevice last_dev() {
    std::lock_guard lk(mu);
    return devs.back();
  }
};

bool has_v4(const NetDevice& dev, const std::string& text) {
  in_addr want{};
  inet_pton(AF_INET, text.c_str(), &want);
  for (const auto& a : dev.addrs) {
    if (a.ss_family == AF_INET &&
        reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == want.s_addr) {
      return true;
    }
  }
  return false;
}

class NetMonitorVeth : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    veth_ = VethPair::create(&why);
    if (!veth_) GTEST_SKIP() << why;
  }
  // Unsubscribes on scope exit, so a failed ASSERT leaves no subscription.
  struct Sub {
    uint64_t id = 0;
    ~Sub() {
      if (id) NetMonitor::instance().unsubscribe(id);
    }
  };
  // The same for ids a callback fills in; unsubscribing twice is a no-op.
  struct AtomicSub {
    std::atomic<uint64_t>& id;
    ~AtomicSub() {
      if (id.load()) NetMonitor::instance().unsubscribe(id.load());
    }
  };
  std::unique_ptr<VethPair> veth_;
};

TEST_F(NetMonitorVeth, LinkDownThenUpReportsEdges) {
  Recorder rec;
  Sub sub{NetMonitor::instance().subscribe(veth_->ifindex(), rec.callback())};
  ASSERT_NE(sub.id, 0u);
  ASSERT_TRUE(veth_->set_up(false));
  ASSERT_TRUE(rec.wait_for(NetEvent::kLinkDown));
  EXPECT_FALSE(rec.last_dev().up);
  EXPECT_EQ(rec.last_dev().name, veth_->name());
  EXPECT_EQ(rec.last_dev().ifindex, veth_->ifindex());
  ASSERT_TRUE(veth_->set_up(true));
  ASSERT_TRUE(rec.wait_for(NetEvent::kLinkUp));
  EXPECT_TRUE(rec.last_dev().up);
  EXPECT_TRUE(has_v4(rec.last_dev(), veth_->address()));
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(rec.size(), 2u) << "exactly one event per edge";
}

TEST_F(NetMonitorVeth, PeerDownDropsCarrier) {
  // Administratively up but no carrier is "down" for an RDMA port.
  Recorder rec;
  Sub sub{NetMonitor::instance().subscribe(veth_->ifindex(), rec.callback())};
  ASSERT_TRUE(veth_->set_peer_up(false));
  ASSERT_TRUE(rec.wait_for(NetEvent::kLinkDown));
  ASSERT_TRUE(veth_->set_peer_up(true));
  ASSERT_TRUE(rec.wait_for(NetEvent::kLinkUp));
}

TEST_F(NetMonitorVeth, AddressAddAndRemoveReportAddressChange) {
  Recorder rec;
  Sub sub{NetMonitor::instance().subscribe(veth_->ifindex(), rec.callback())};
  const std::string extra = "198.19.255.254";
  ASSERT_TRUE(veth_->add_address(extra + "/32"));
  ASSERT_TRUE(rec.wait_for(NetEvent::kAddressChange));
  EXPECT_TRUE(has_v4(rec.last_dev(), extra));
  EXPECT_TRUE(has_v4(rec.last_dev(), veth_->address()));
  auto found = find_net_device(extra);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->ifindex, veth_->ifindex());
  ASSERT_TRUE(veth_->del_address(extra + "/32"));
  ASSERT_TRUE(rec.wait_for(NetEvent::kAddressChange, 2));
  EXPECT_FALSE(has_v4(rec.last_dev(), extra));
  EXPECT_FALSE(find_net_device(extra).has_value());
}

TEST_F(NetMonitorVeth, NonEdgesAreSilent) {
  Recorder rec;
  Sub sub{NetMonitor::instance().subscribe(veth_->ifindex(), rec.callback())};
  ASSERT_TRUE(veth_->set_up(true));   // already up
  ASSERT_TRUE(veth_->set_mtu(1400));  // RTM_NEWLINK without a state change
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(rec.size(), 0u);
  EXPECT_EQ(NetMonitor::instance().query(veth_->ifindex())->mtu, 1400u);
}

TEST_F(NetMonitorVeth, OtherInterfacesDoNotLeakIn) {
  Recorder rec;
  Sub sub{NetMonitor::instance().subscribe(1 /* lo */, rec.callback())};
  ASSERT_TRUE(veth_->set_up(false));
  ASSERT_TRUE(veth_->wait_up(false));
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(rec.size(), 0u);
}

TEST_F(NetMonitorVeth, TwoSubscribersBothNotified) {
  Recorder a, b;
  Sub sa{NetMonitor::instance().subscribe(veth_->ifindex(), a.callback())};
  Sub sb{NetMonitor::instance().subscribe(veth_->ifindex(), b.callback())};
  ASSERT_TRUE(veth_->set_up(false));
  EXPECT_TRUE(a.wait_for(NetEvent::kLinkDown));
  EXPECT_TRUE(b.wait_for(NetEvent::kLinkDown));
}

TEST_F(NetMonitorVeth, NoCallbackAfterUnsubscribe) {
  Recorder rec;
  auto& mon = NetMonitor::instance();
  Recorder keep;  // keeps the monitor thread running
  Sub other{mon.subscribe(veth_->ifindex(), keep.callback())};
  const uint64_t id = mon.subscribe(veth_->ifindex(), rec.callback());
  mon.unsubscribe(id);
  ASSERT_TRUE(veth_->set_up(false));
  ASSERT_TRUE(keep.wait_for(NetEvent::kLinkDown));
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(rec.size(), 0u);
}

TEST_F(NetMonitorVeth, MonitorRestartsAfterLastUnsubscribe) {
  auto& mon = NetMonitor::instance();
  mon.unsubscribe(mon.subscribe(veth_->ifindex(), [](const NetDevice&, NetEvent) {}));
  Recorder rec;
  Sub sub{mon.subscribe(veth_->ifindex(), rec.callback())};
  ASSERT_TRUE(veth_->set_up(false));
  EXPECT_TRUE(rec.wait_for(NetEvent::kLinkDown));
}

TEST_F(NetMonitorVeth, UnsubscribeFromOwnCallbackDoesNotDeadlock) {
  auto& mon = NetMonitor::instance();
  std::atomic<uint64_t> id{0};
  std::atomic<int> calls{0};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  AtomicSub guard{id};
  id = mon.subscribe(veth_->ifindex(), [&](const NetDevice&, NetEvent) {
    ++calls;
    mon.unsubscribe(id.load());  // the last subscription: the monitor stops
    std::lock_guard lk(mu);
    done = true;
    cv.notify_all();
  });
  ASSERT_NE(id.load(), 0u);
  ASSERT_TRUE(veth_->set_up(false));
  {
    std::unique_lock lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, kWait, [&] { return done; }));
  }
  ASSERT_TRUE(veth_->set_up(true));
  std::this_thread::sleep_for(kQuiet);
  EXPECT_EQ(calls.load(), 1);
  // The monitor stopped from inside; a new subscription starts it again.
  Recorder rec;
  Sub sub{mon.subscribe(veth_->ifindex(), rec.callback())};
  ASSERT_TRUE(veth_->wait_up(true));
  ASSERT_TRUE(veth_->set_up(false));
  EXPECT_TRUE(rec.wait_for(NetEvent::kLinkDown));
}

TEST_F(NetMonitorVeth, SubscribeFromCallbackKeepsMonitorAlive) {
  auto& mon = NetMonitor::instance();
  Recorder rec;
  std::atomic<uint64_t> first{0};
  std::atomic<uint64_t> second{0};
  AtomicSub guard1{first}, guard2{second};
  first = mon.subscribe(veth_->ifindex(), [&](const NetDevice&, NetEvent) {
    if (second.load() != 0) return;
    mon.unsubscribe(first.load());  // last one: the monitor starts to stop...
    second = mon.subscribe(veth_->ifindex(), rec.callback());  // ...and is kept
  });
  ASSERT_TRUE(veth_->set_up(false));
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (second.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_NE(second.load(), 0u);
  ASSERT_TRUE(veth_->set_up(true));
  EXPECT_TRUE(rec.wait_for(NetEvent::kLinkUp));
}

TEST_F(NetMonitorVeth, UnsubscribeWaitsForRunningCallback) {
  auto& mon = NetMonitor::instance();
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  std::atomic<bool> returned{false};
  std::atomic<uint64_t> id{0};
  AtomicSub guard{id};
  id = mon.subscribe(veth_->ifindex(), [&](const NetDevice&, NetEvent) {
    std::unique_lock lk(mu);
    entered = true;
    cv.notify_all();
    cv.wait_for(lk, kWait, [&] { return release; });
    returned = true;
  });
  ASSERT_TRUE(veth_->set_up(false));
  {
    std::unique_lock lk(mu);
    ASSERT_TRUE(cv.wait_for(lk, kWait, [&] { return entered; }));
  }
  std::atomic<bool> unsubscribed{false};
  std::thread t([&] {
    mon.unsubscribe(id.load());
    unsubscribed = true;
    EXPECT_TRUE(returned.load()) << "unsubscribe returned while the callback ran";
  });
  std::this_thread::sleep_for(kQuiet);
  EXPECT_FALSE(unsubscribed.load());
  {
    std::lock_guard lk(mu);
    release = true;
    cv.notify_all();
  }
  t.join();
  EXPECT_TRUE(unsubscribed.load());
}

TEST_F(NetMonitorVeth, InterfaceDeletionReportsDown) {
  Recorder rec;
  Sub sub{NetMonitor::instance().subscribe(veth_->ifindex(), rec.callback())};
  ASSERT_TRUE(veth_->remove());
  ASSERT_TRUE(rec.wait_for(NetEvent::kLinkDown));
  EXPECT_FALSE(NetMonitor::instance().query(veth_->ifindex()).has_value());
}

TEST_F(NetMonitorVeth, BaselineIsTheStateEdgesAreRelativeTo) {
  NetDevice base;
  Recorder rec;
  Sub sub{NetMonitor::instance().subscribe(veth_->ifindex(), rec.callback(), &base)};
  EXPECT_EQ(base.ifindex, veth_->ifindex());
  EXPECT_EQ(base.name, veth_->name());
  EXPECT_TRUE(base.up);
  EXPECT_TRUE(has_v4(base, veth_->address()));
  NetDevice unknown;
  Sub none{NetMonitor::instance().subscribe(0x7ffffff0u, rec.callback(), &unknown)};
  EXPECT_NE(none.id, 0u);
  EXPECT_FALSE(unknown.up);
  EXPECT_TRUE(unknown.addrs.empty());
}

TEST_F(NetMonitorVeth, SubscribeToDownLinkReportsUp) {
  ASSERT_TRUE(veth_->set_up(false));
  ASSERT_TRUE(veth_->wait_up(false));
  Recorder rec;
  Sub sub{NetMonitor::instance().subscribe(veth_->ifindex(), rec.callback())};
  ASSERT_TRUE(veth_->set_up(true));
  ASSERT_TRUE(rec.wait_for(NetEvent::kLinkUp));
  EXPECT_GT(rec.last_dev().speed_mbps, 0u);  // veth reports 10000
}

}  // namespace
}  // namespace softndk::ndk

// The net monitor's and the reactor's waits (util/bounded_wait.h) name what
// they wait for each time their bound passes, and still end when the
// condition comes (issue 28: every wait bounded and says what it waited for).
TEST(BoundedWait, ReportsWhatItWaitsForAndEndsWhenTheConditionComes) {
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  std::vector<std::string> reports;
  // The sink runs inside wait_reporting with the waiter's lock held, so it
  // must not lock `mu` itself: use a lock of its own.
  std::mutex rmu;
  std::condition_variable rcv;
  softndk::util::wait_report_sink() = [&](const std::string& s) {
    std::lock_guard lk(rmu);
    reports.push_back(s);
    rcv.notify_all();
  };
  // The condition comes only after the first report: no timing assumption.
  std::thread setter([&] {
    {
      std::unique_lock lk(rmu);
      rcv.wait_for(lk, std::chrono::seconds(30), [&] { return !reports.empty(); });
    }
    std::lock_guard lk(mu);
    ready = true;
    cv.notify_all();
  });
  int n;
  {
    std::unique_lock lk(mu);
    n = softndk::util::wait_reporting(
        cv, lk, [&] { return ready; }, [] { return std::string("the test's flag"); },
        std::chrono::milliseconds(20));
  }
  setter.join();
  softndk::util::wait_report_sink() = nullptr;
  EXPECT_GE(n, 1);
  std::lock_guard lk(rmu);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports[0].rfind("still waiting for the test's flag after ", 0), 0u) << reports[0];
}
