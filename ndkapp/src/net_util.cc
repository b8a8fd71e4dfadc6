// SPDX-License-Identifier: Apache-2.0
// net_util.cc - address helpers (getaddrinfo, inet_ntop, UDP route probe).
#include "ndkapp/net_util.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <unistd.h>

#include <cstring>

namespace softndk::tools {

uint16_t SockAddr::port() const {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

void SockAddr::set_port(uint16_t p) {
  if (ss.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(p);
  if (ss.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(p);
}

std::string SockAddr::ip() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (ss.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof buf);
  if (ss.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof buf);
  return buf;
}

std::string SockAddr::to_string() const {
  // Not `"[" + ip()`: that trips a GCC 12 -O3 -Wrestrict false positive
  // inside std::string (GCC bug 105329).
  if (ss.ss_family == AF_INET6)
    return std::string("[").append(ip()) + "]:" + std::to_string(port());
  return ip() + ":" + std::to_string(port());
}

bool resolve(const std::string& host, uint16_t port, SockAddr& out, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    error = "cannot resolve host '" + host + "': " + gai_strerror(rc);
    return false;
  }
  const addrinfo* pick = res;
  for (const addrinfo* p = res; p; p = p->ai_next)
    if (p->ai_family == AF_INET) {
      pick = p;
      break;
    }
  std::memcpy(&out.ss, pick->ai_addr, pick->ai_addrlen);
  out.len = static_cast<socklen_t>(pick->ai_addrlen);
  out.set_port(port);
  freeaddrinfo(res);
  return true;
}

bool local_address_toward(const SockAddr& peer, SockAddr& out, std::string& error) {
  int fd = socket(peer.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  SockAddr probe = peer;
  if (probe.port() == 0) probe.set_port(9);
  bool ok = connect(fd, probe.sa(), probe.len) == 0;
  if (ok) {
    out.len = sizeof out.ss;
    ok = getsockname(fd, out.sa(), &out.len) == 0;
  }
  if (!ok) error = "no route to " + peer.ip() + ": " + std::strerror(errno);
  close(fd);
  out.set_port(0);
  return ok;
}

}  // namespace softndk::tools

#include "ndkapp/softndk_entry.h"

namespace softndk::tools {

std::string default_server_address() {
  SOFTNDK_ADAPTER_DESC desc[16];
  ULONG count = 16;
  if (SoftNdkEnumerateAdapters(desc, &count) != STATUS_SUCCESS) return "127.0.0.1";
  for (ULONG i = 0; i < count && i < 16; ++i) {
    if (desc[i].PortState != SoftNdkPortStateActive) continue;
    for (ULONG k = 0; k < desc[i].AddressCount && k < SOFTNDK_MAX_ADAPTER_ADDRESSES; ++k) {
      SockAddr s;
      std::memcpy(&s.ss, &desc[i].Addresses[k], sizeof s.ss);
      if (s.ss.ss_family != AF_INET) continue;
      std::string ip = s.ip();
      if (ip.rfind("127.", 0) == 0) continue;
      return ip;
    }
  }
  return "127.0.0.1";
}

}  // namespace softndk::tools

namespace softndk::tools {

bool interface_address(const std::string& ifname, SockAddr& out) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (int want : {AF_INET, AF_INET6}) {
    for (ifaddrs* i = list; i && !found; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != want || ifname != i->ifa_name) continue;
      out.len = want == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
      std::memcpy(&out.ss, i->ifa_addr, out.len);
      found = true;
    }
    if (found) break;
  }
  freeifaddrs(list);
  return found;
}

bool address_of_device(const std::string& device, uint16_t port, SockAddr& out,
                       std::string& error) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(device.c_str(), nullptr, &hints, &res) == 0 && res) {
    std::memcpy(&out.ss, res->ai_addr, res->ai_addrlen);
    out.len = static_cast<socklen_t>(res->ai_addrlen);
    freeaddrinfo(res);
    out.set_port(port);
    return true;
  }
  if (interface_address(device, out)) {
    out.set_port(port);
    return true;
  }
  // An interface that exists but has no address is another mistake than a
  // name that is nothing at all; say which.
  if (if_nametoindex(device.c_str()) != 0)
    error = "interface '" + device +
            "' has no IPv4 or IPv6 address (give it one, e.g. ip addr add 192.0.2.1/24 dev " +
            device + ")";
  else
    error = "no interface or address '" + device + "' (no such interface, not a local address)";
  return false;
}

}  // namespace softndk::tools
