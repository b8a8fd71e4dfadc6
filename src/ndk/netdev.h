// netdev.h - Linux network interfaces as softndk sees them (rtnetlink).
//
// One softndk adapter binds to one interface that has an IP address, the
// way `rdma link add siw0 type siw netdev eth0` binds siw. This module
// enumerates interfaces and their addresses with an rtnetlink dump and
// follows link and address changes with an rtnetlink subscription
// (RTMGRP_LINK, RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR), using libmnl.
// It knows nothing about NDK objects.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace softndk::ndk {

struct NetDevice {
  std::string name;
  uint32_t ifindex = 0;
  uint32_t mtu = 0;
  bool up = false;           // IFF_UP and carrier (IFF_RUNNING / IFF_LOWER_UP)
  uint32_t speed_mbps = 0;   // from /sys/class/net/<name>/speed, 0 if unknown
  std::vector<sockaddr_storage> addrs;  // IPv4 and IPv6 addresses
};

enum class NetEvent { kLinkUp, kLinkDown, kAddressChange };

// Snapshot of every interface that has at least one address.
std::vector<NetDevice> list_net_devices();

// Finds an interface by name ("lo") or by one of its addresses in text
// form ("127.0.0.1", "::1").
std::optional<NetDevice> find_net_device(std::string_view name_or_address);

// Follows one interface. The callback runs on the monitor's own thread,
// once per change of the link state (up/down edges only) or address set.
// The monitor thread starts with the first subscription and stops with the
// last; unsubscribe() waits until a running callback of that subscription
// has returned, and no callback of it starts afterwards.
class NetMonitor {
 public:
  using Callback = std::function<void(const NetDevice& dev, NetEvent ev)>;
  static NetMonitor& instance();
  uint64_t subscribe(uint32_t ifindex, Callback cb);
  void unsubscribe(uint64_t id);
  // Current state of one interface (fresh netlink query).
  std::optional<NetDevice> query(uint32_t ifindex);
};

}  // namespace softndk::ndk
