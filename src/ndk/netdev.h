// SPDX-License-Identifier: Apache-2.0
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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace softndk::ndk {

struct NetDevice {
  std::string name;
  uint32_t ifindex = 0;
  uint32_t mtu = 0;
  bool up = false;                      // IFF_UP and carrier (IFF_RUNNING / IFF_LOWER_UP)
  uint32_t speed_mbps = 0;              // from /sys/class/net/<name>/speed, 0 if unknown
  std::vector<sockaddr_storage> addrs;  // IPv4 and IPv6 addresses
};

enum class NetEvent { kLinkUp, kLinkDown, kAddressChange };

// Snapshot of every interface that has at least one address.
std::vector<NetDevice> list_net_devices();

// Finds an interface by name ("lo") or by one of its addresses in text
// form ("127.0.0.1", "::1", "fe80::1%eth0"). Like list_net_devices(), only
// interfaces with at least one address are found.
std::optional<NetDevice> find_net_device(std::string_view name_or_address);

// Follows one interface. The callback runs on the monitor's own thread,
// once per change of the link state (up/down edges only) or address set.
// The monitor thread starts with the first subscription and stops with the
// last; unsubscribe() waits until a running callback of that subscription
// has returned, and no callback of it starts afterwards.
//
// Refinements (compatible with the original interface):
//  - subscribe() returns 0 if the rtnetlink socket cannot be opened (no
//    callback will come); ids are never 0 otherwise and never reused.
//  - The edges are relative to the state seen at subscribe() time: the
//    subscription takes a snapshot after the monitor socket is listening,
//    so no change after subscribe() returns is missed.
//  - The NetDevice passed to the callback is the subscription's view after
//    the change (dev.up is the new link state, dev.addrs the new set).
//  - A deleted interface gives kLinkDown (if it was up) and then nothing.
//  - subscribe()/unsubscribe() may be called from inside a callback;
//    unsubscribing the running subscription from its own callback does not
//    wait (it would deadlock) but no further callback of it starts.
//  - If the kernel drops notifications (socket overrun), the monitor
//    re-reads the subscribed interfaces and reports the net edges.
class NetMonitor {
 public:
  using Callback = std::function<void(const NetDevice& dev, NetEvent ev)>;
  static NetMonitor& instance();
  // baseline (optional): the state the edges are relative to. Use it, not
  // an earlier find_net_device(), to initialise anything the callback then
  // keeps up to date; a change in between would otherwise be lost.
  uint64_t subscribe(uint32_t ifindex, Callback cb, NetDevice* baseline = nullptr);
  void unsubscribe(uint64_t id);
  // Current state of one interface (fresh netlink query), addressed or not.
  std::optional<NetDevice> query(uint32_t ifindex);

  NetMonitor(const NetMonitor&) = delete;
  NetMonitor& operator=(const NetMonitor&) = delete;
  ~NetMonitor();

 private:
  NetMonitor();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace softndk::ndk
