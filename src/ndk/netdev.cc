// SPDX-License-Identifier: Apache-2.0
// netdev.cc - snapshots of Linux network interfaces (list, find, query).
//
// A snapshot is two rtnetlink dumps, links then addresses, joined by
// ifindex. The monitor (netdev_monitor.cc) reuses query() for the state a
// subscription starts from.
#include "ndk/netdev.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "ndk/netdev_rtnl.h"

namespace softndk::ndk {
namespace {

NetDevice from_link(const rtnl::Link& link) {
  NetDevice dev;
  dev.name = link.name;
  dev.ifindex = link.ifindex;
  dev.mtu = link.mtu;
  dev.up = link.up;
  dev.speed_mbps = link.up ? rtnl::read_speed_mbps(link.name) : 0;
  return dev;
}

// All links (only_ifindex == 0) or one, with their addresses. Links come in
// ifindex order, which is the order `ip link` shows.
bool snapshot(uint32_t only_ifindex, std::vector<NetDevice>& out) {
  std::vector<rtnl::Link> links;
  if (only_ifindex != 0) {
    auto link = rtnl::get_link(only_ifindex);
    if (!link) return false;
    links.push_back(std::move(*link));
  } else if (!rtnl::dump_links(links)) {
    return false;
  }
  std::vector<rtnl::Addr> addrs;
  if (!rtnl::dump_addrs(addrs)) return false;
  std::map<uint32_t, NetDevice> by_index;
  for (const auto& l : links) by_index.emplace(l.ifindex, from_link(l));
  for (const auto& a : addrs) {
    auto it = by_index.find(a.ifindex);
    if (it != by_index.end()) it->second.addrs.push_back(a.addr);
  }
  out.clear();
  for (auto& [index, dev] : by_index) out.push_back(std::move(dev));
  return true;
}

// Parses "a.b.c.d", "x::y" or "x::y%scope"; scope is the text after '%'.
bool parse_address(std::string_view text, sockaddr_storage& out, std::string& scope) {
  std::string s(text);
  if (auto pct = s.find('%'); pct != std::string::npos) {
    scope = s.substr(pct + 1);
    s.resize(pct);
  }
  out = {};
  auto* sin = reinterpret_cast<sockaddr_in*>(&out);
  if (scope.empty() && inet_pton(AF_INET, s.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    return true;
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (inet_pton(AF_INET6, s.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    return true;
  }
  return false;
}

}  // namespace

std::vector<NetDevice> list_net_devices() {
  std::vector<NetDevice> all;
  if (!snapshot(0, all)) return {};
  std::erase_if(all, [](const NetDevice& d) { return d.addrs.empty(); });
  return all;
}

std::optional<NetDevice> find_net_device(std::string_view name_or_address) {
  if (name_or_address.empty() || name_or_address.size() > 64) return std::nullopt;
  sockaddr_storage want{};
  std::string scope;
  const bool is_address = parse_address(name_or_address, want, scope);
  for (auto& dev : list_net_devices()) {
    if (!is_address) {
      if (dev.name == name_or_address) return std::move(dev);
      continue;
    }
    // A scope ("%eth0" or "%3") pins the interface, as getaddrinfo() does.
    if (!scope.empty() && scope != dev.name && scope != std::to_string(dev.ifindex)) continue;
    for (const auto& a : dev.addrs) {
      if (rtnl::same_address(a, want)) return std::move(dev);
    }
  }
  return std::nullopt;
}

std::optional<NetDevice> NetMonitor::query(uint32_t ifindex) {
  if (ifindex == 0) return std::nullopt;  // snapshot(0) would mean "all"
  std::vector<NetDevice> one;
  if (!snapshot(ifindex, one) || one.empty()) return std::nullopt;
  return std::move(one.front());
}

}  // namespace softndk::ndk
