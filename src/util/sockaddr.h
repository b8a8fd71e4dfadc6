// SPDX-License-Identifier: Apache-2.0
// util/sockaddr.h - an IPv4 or IPv6 socket address as a value: what the
// object model validates, the provider interface carries and the TCP layer
// binds and connects to.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

namespace softndk::util {

// An IPv4 or IPv6 socket address.
struct SockAddr {
  sockaddr_storage ss{};
  socklen_t len = 0;

  static std::optional<SockAddr> from(const sockaddr* sa, socklen_t len);
  // "127.0.0.1" / "::1" plus port; nullopt if not an IP literal.
  static std::optional<SockAddr> parse(const std::string& ip, uint16_t port);
  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&ss); }
  sockaddr* sa() { return reinterpret_cast<sockaddr*>(&ss); }
  int family() const { return ss.ss_family; }
  bool empty() const { return len == 0; }
  uint16_t port() const;
  void set_port(uint16_t port);
  bool is_any() const;                       // wildcard address
  bool is_loopback() const;                  // 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104
  bool same_host(const SockAddr& o) const;   // same family and address, any port
  std::string str() const;                   // "1.2.3.4:5" / "[::1]:5"
  bool operator==(const SockAddr& o) const;  // family, address and port
};

}  // namespace softndk::util
