// SPDX-License-Identifier: Apache-2.0
// netdev_list_test.cc - interface snapshots: list_net_devices,
// find_net_device, NetMonitor::query. Runs unprivileged (loopback only).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <net/if.h>

#include <cstring>
#include <string>

#include "ndk/netdev.h"

namespace softndk::ndk {
namespace {

bool has_address(const NetDevice& dev, const char* text) {
  for (const auto& a : dev.addrs) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, buf, sizeof(buf));
    } else if (a.ss_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, buf, sizeof(buf));
    }
    if (std::strcmp(buf, text) == 0) return true;
  }
  return false;
}

std::optional<NetDevice> loopback() {
  for (auto& d : list_net_devices()) {
    if (d.name == "lo") return d;
  }
  return std::nullopt;
}

TEST(NetDevList, FindsLoopbackWith127001) {
  auto lo = loopback();
  ASSERT_TRUE(lo.has_value()) << "lo missing from list_net_devices()";
  EXPECT_TRUE(has_address(*lo, "127.0.0.1"));
  EXPECT_EQ(lo->ifindex, if_nametoindex("lo"));
  EXPECT_GT(lo->mtu, 0u);
  EXPECT_TRUE(lo->up);
}

TEST(NetDevList, EveryDeviceHasAnAddressAndIndex) {
  auto all = list_net_devices();
  ASSERT_FALSE(all.empty());
  for (const auto& d : all) {
    EXPECT_FALSE(d.addrs.empty()) << d.name;
    EXPECT_EQ(d.ifindex, if_nametoindex(d.name.c_str())) << d.name;
    for (const auto& a : d.addrs) {
      EXPECT_TRUE(a.ss_family == AF_INET || a.ss_family == AF_INET6) << d.name;
    }
  }
}

TEST(NetDevFind, ByName) {
  auto lo = find_net_device("lo");
  ASSERT_TRUE(lo.has_value());
  EXPECT_EQ(lo->name, "lo");
  EXPECT_TRUE(has_address(*lo, "127.0.0.1"));
}

TEST(NetDevFind, ByIPv4Address) {
  auto lo = find_net_device("127.0.0.1");
  ASSERT_TRUE(lo.has_value());
  EXPECT_EQ(lo->name, "lo");
}

TEST(NetDevFind, ByIPv6LoopbackIfPresent) {
  auto lo = loopback();
  ASSERT_TRUE(lo.has_value());
  if (!has_address(*lo, "::1")) GTEST_SKIP() << "no ::1 on lo (IPv6 disabled)";
  auto found = find_net_device("::1");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->name, "lo");
  // A scope pins the interface, by name or by index.
  EXPECT_TRUE(find_net_device("::1%lo").has_value());
  EXPECT_TRUE(find_net_device("::1%" + std::to_string(lo->ifindex)).has_value());
  EXPECT_FALSE(find_net_device("::1%softndk-nope").has_value());
}

TEST(NetDevFind, UnknownIsNullopt) {
  EXPECT_FALSE(find_net_device("softndk-nope0").has_value());
  EXPECT_FALSE(find_net_device("192.0.2.77").has_value());  // TEST-NET-1
  EXPECT_FALSE(find_net_device("2001:db8::77").has_value());
  EXPECT_FALSE(find_net_device("").has_value());
  EXPECT_FALSE(find_net_device("127.0.0.1%lo").has_value());  // no scopes on IPv4
  EXPECT_FALSE(find_net_device(std::string(200, 'x')).has_value());
  EXPECT_FALSE(find_net_device("../lo").has_value());
}

TEST(NetMonitorQuery, MatchesList) {
  auto lo = loopback();
  ASSERT_TRUE(lo.has_value());
  auto q = NetMonitor::instance().query(lo->ifindex);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->name, lo->name);
  EXPECT_EQ(q->mtu, lo->mtu);
  EXPECT_EQ(q->up, lo->up);
  EXPECT_EQ(q->addrs.size(), lo->addrs.size());
  EXPECT_TRUE(has_address(*q, "127.0.0.1"));
}

TEST(NetMonitorQuery, UnknownIndexIsNullopt) {
  EXPECT_FALSE(NetMonitor::instance().query(0).has_value());
  EXPECT_FALSE(NetMonitor::instance().query(0x7ffffff0u).has_value());
  EXPECT_FALSE(NetMonitor::instance().query(0xffffffffu).has_value());
}

TEST(NetMonitorSubscribe, NullCallbackIsRefused) {
  EXPECT_EQ(NetMonitor::instance().subscribe(1, nullptr), 0u);
}

TEST(NetMonitorSubscribe, SubscribeUnsubscribeRepeatedly) {
  // Starts and stops the monitor thread each round; must neither hang nor leak.
  auto& mon = NetMonitor::instance();
  for (int i = 0; i < 20; ++i) {
    const uint64_t a = mon.subscribe(1, [](const NetDevice&, NetEvent) {});
    const uint64_t b = mon.subscribe(1, [](const NetDevice&, NetEvent) {});
    ASSERT_NE(a, 0u);
    ASSERT_NE(b, 0u);
    EXPECT_NE(a, b);
    mon.unsubscribe(a);
    mon.unsubscribe(a);  // twice: a no-op
    mon.unsubscribe(b);
  }
  mon.unsubscribe(0);
  mon.unsubscribe(~0ull);
}

}  // namespace
}  // namespace softndk::ndk
