// SPDX-License-Identifier: Apache-2.0
// endpoint_reservation.cc - process-wide table of NDK endpoint addresses.
#include "ndk/endpoint_reservation.h"

#include <netinet/in.h>

#include <cstring>
#include <map>
#include <mutex>

namespace softndk::ndk {

namespace {

struct Table {
  std::mutex mu;
  // By port: few endpoints share one, so a scan of the bucket is cheap.
  std::multimap<uint16_t, const Reservation*> by_port;
};

Table& table() {
  static Table* t = new Table;  // never destroyed: reservations may outlive statics
  return *t;
}

uint16_t port_of(const sockaddr_storage& a) {
  return ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(a).sin6_port
                                       : reinterpret_cast<const sockaddr_in&>(a).sin_port);
}

bool is_wildcard(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET)
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr == htonl(INADDR_ANY);
  return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr);
}

bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET)
    return reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in&>(b).sin_addr.s_addr;
  return std::memcmp(&reinterpret_cast<const sockaddr_in6&>(a).sin6_addr,
                     &reinterpret_cast<const sockaddr_in6&>(b).sin6_addr, sizeof(in6_addr)) == 0;
}

// Same port assumed.
bool overlaps(const sockaddr_storage& a, const sockaddr_storage& b) {
  const bool wa = is_wildcard(a), wb = is_wildcard(b);
  if (a.ss_family == b.ss_family) return wa || wb || same_address(a, b);
  // Across families only a dual-stack IPv6 wildcard covers the other side.
  return (wa && a.ss_family == AF_INET6) || (wb && b.ss_family == AF_INET6);
}

bool conflicts_locked(Table& t, const sockaddr_storage& addr, uint16_t port) {
  auto [lo, hi] = t.by_port.equal_range(port);
  for (auto it = lo; it != hi; ++it)
    if (overlaps(it->second->address(), addr)) return true;
  return false;
}

}  // namespace

Reservation::~Reservation() {
  Table& t = table();
  std::lock_guard lk(t.mu);
  auto [lo, hi] = t.by_port.equal_range(port_of(addr_));
  for (auto it = lo; it != hi; ++it) {
    if (it->second == this) {
      t.by_port.erase(it);
      break;
    }
  }
}

NTSTATUS reserve_endpoint(const sockaddr_storage& addr, std::shared_ptr<Reservation>* out) {
  if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) return STATUS_INVALID_PARAMETER;
  const uint16_t port = port_of(addr);
  if (port == 0) return STATUS_INVALID_PARAMETER;  // reserve what the kernel picked
  Table& t = table();
  std::shared_ptr<Reservation> r(new Reservation(addr));
  std::lock_guard lk(t.mu);
  if (conflicts_locked(t, addr, port)) return STATUS_SHARING_VIOLATION;
  t.by_port.emplace(port, r.get());
  *out = std::move(r);
  return STATUS_SUCCESS;
}

bool endpoint_reserved(const sockaddr_storage& addr) {
  const uint16_t port = port_of(addr);
  if (port == 0) return false;
  Table& t = table();
  std::lock_guard lk(t.mu);
  return conflicts_locked(t, addr, port);
}

long reservation_count() {
  Table& t = table();
  std::lock_guard lk(t.mu);
  return static_cast<long>(t.by_port.size());
}

}  // namespace softndk::ndk
