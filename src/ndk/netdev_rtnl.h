// SPDX-License-Identifier: Apache-2.0
// netdev_rtnl.h - the rtnetlink plumbing behind netdev.h (libmnl).
//
// Decoding of RTM_NEWLINK/RTM_DELLINK and RTM_NEWADDR/RTM_DELADDR messages
// and the request/dump round-trips, kept apart from the public NetDevice
// functions and the monitor so that both share one parser. Internal to
// src/ndk; nothing here knows about NDK objects.
#pragma once

#include <linux/netlink.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace softndk::ndk::rtnl {

// One link as an RTM_NEWLINK/RTM_DELLINK message describes it.
struct Link {
  uint32_t ifindex = 0;
  std::string name;
  uint32_t mtu = 0;
  uint32_t flags = 0;  // IFF_*
  bool up = false;     // link_is_up(flags)
};

// One address as an RTM_NEWADDR/RTM_DELADDR message describes it.
struct Addr {
  uint32_t ifindex = 0;
  sockaddr_storage addr{};  // AF_INET or AF_INET6, port 0
};

// The port-state rule: administratively up and operationally running
// (the kernel sets IFF_RUNNING only with carrier, so a veth whose peer is
// down, or a cable pulled, counts as down).
bool link_is_up(uint32_t ifi_flags);

// Decoders for one message; nullopt if it is not a well-formed message of
// that kind (or an address family other than IPv4/IPv6).
std::optional<Link> parse_link(const nlmsghdr* nlh);
std::optional<Addr> parse_addr(const nlmsghdr* nlh);

// Round-trips on a fresh NETLINK_ROUTE socket (so callers on any thread,
// the monitor included, never share a socket). false on netlink failure.
bool dump_links(std::vector<Link>& out);
bool dump_addrs(std::vector<Addr>& out);
// One link by index; nullopt if there is no such link or netlink failed.
std::optional<Link> get_link(uint32_t ifindex);

// Same family and address bytes (ports and flow labels ignored).
bool same_address(const sockaddr_storage& a, const sockaddr_storage& b);

// /sys/class/net/<name>/speed in Mb/s, 0 if unknown (down, virtual, lo).
uint32_t read_speed_mbps(const std::string& name);

// Large enough for any rtnetlink message the kernel sends: it caps dump
// skbs at 32 KiB.
inline constexpr size_t kRecvBufferSize = 32768;

}  // namespace softndk::ndk::rtnl
