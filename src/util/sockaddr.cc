// SPDX-License-Identifier: Apache-2.0
// util/sockaddr.cc - parsing, comparing and printing socket addresses.
#include "util/sockaddr.h"

#include <arpa/inet.h>

#include <cstring>

namespace softndk::util {

std::optional<SockAddr> SockAddr::from(const sockaddr* sa, socklen_t len) {
  if (!sa) return std::nullopt;
  SockAddr a;
  if (sa->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    a.len = sizeof(sockaddr_in);
  } else if (sa->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    a.len = sizeof(sockaddr_in6);
  } else {
    return std::nullopt;
  }
  std::memcpy(&a.ss, sa, a.len);
  return a;
}

std::optional<SockAddr> SockAddr::parse(const std::string& ip, uint16_t port) {
  SockAddr a;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&a.ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.ss);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    a.len = sizeof(sockaddr_in);
    return a;
  }
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    a.len = sizeof(sockaddr_in6);
    return a;
  }
  return std::nullopt;
}

uint16_t SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

void SockAddr::set_port(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(port);
}

bool SockAddr::is_any() const {
  if (family() == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (family() == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr);
  return true;
}

bool SockAddr::is_loopback() const {
  if (family() == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr) >> 24) == 127;
  if (family() == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&a) || (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  return false;
}

bool SockAddr::same_host(const SockAddr& o) const {
  if (family() != o.family()) return false;
  if (family() == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&o.ss)->sin_addr.s_addr;
  if (family() == AF_INET6)
    return IN6_ARE_ADDR_EQUAL(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr,
                              &reinterpret_cast<const sockaddr_in6*>(&o.ss)->sin6_addr);
  return false;
}

std::string SockAddr::str() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof buf);
    // Appended piece by piece: `"[" + std::string(...)` trips a GCC 12 -O3
    // -Wrestrict false positive inside std::string (GCC bug 105329).
    std::string text = "[";
    text += buf;
    text += "]:";
    text += std::to_string(port());
    return text;
  }
  return "?";
}

bool SockAddr::operator==(const SockAddr& o) const {
  if (family() != o.family() || port() != o.port()) return false;
  if (family() == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(&o.ss)->sin_addr.s_addr;
  if (family() == AF_INET6)
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(&o.ss)->sin6_addr, 16) == 0;
  return len == o.len;
}

}  // namespace softndk::util
