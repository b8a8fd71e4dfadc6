// SPDX-License-Identifier: Apache-2.0
// endpoint_address.cc - local address checks and socket reservation.
#include "ndk/endpoint_address.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>

namespace softndk::ndk {

socklen_t sockaddr_length(const sockaddr_storage& a) {
  return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

NTSTATUS check_local_address(const NetDevice& dev, const SOCKADDR* addr, ULONG len,
                             sockaddr_storage* out) {
  if (addr == nullptr) return STATUS_INVALID_PARAMETER;
  if (addr->sa_family == AF_INET) {
    if (len < sizeof(sockaddr_in)) return STATUS_INVALID_PARAMETER;
  } else if (addr->sa_family == AF_INET6) {
    if (len < sizeof(sockaddr_in6)) return STATUS_INVALID_PARAMETER;
  } else {
    return STATUS_INVALID_PARAMETER;
  }
  sockaddr_storage a{};
  std::memcpy(&a, addr, addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
  for (const sockaddr_storage& d : dev.addrs) {
    if (d.ss_family != a.ss_family) continue;
    if (a.ss_family == AF_INET) {
      auto& x = reinterpret_cast<const sockaddr_in&>(a);
      auto& y = reinterpret_cast<const sockaddr_in&>(d);
      if (x.sin_addr.s_addr == y.sin_addr.s_addr) {
        *out = a;
        return STATUS_SUCCESS;
      }
    } else {
      auto& x = reinterpret_cast<const sockaddr_in6&>(a);
      auto& y = reinterpret_cast<const sockaddr_in6&>(d);
      if (std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0) {
        if (IN6_IS_ADDR_LINKLOCAL(&x.sin6_addr) && x.sin6_scope_id == 0)
          reinterpret_cast<sockaddr_in6&>(a).sin6_scope_id = dev.ifindex;
        *out = a;
        return STATUS_SUCCESS;
      }
    }
  }
  return STATUS_INVALID_ADDRESS;
}

NTSTATUS bind_endpoint(sockaddr_storage* addr, int* fd) {
  int s = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return STATUS_INSUFFICIENT_RESOURCES;
  bool any_port =
      (addr->ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(addr)->sin_port
                                  : reinterpret_cast<sockaddr_in6*>(addr)->sin6_port) == 0;
  if (bind(s, reinterpret_cast<sockaddr*>(addr), sockaddr_length(*addr)) != 0) {
    int e = errno;
    close(s);
    if (e == EADDRINUSE) return any_port ? STATUS_TOO_MANY_ADDRESSES : STATUS_SHARING_VIOLATION;
    if (e == EADDRNOTAVAIL) return STATUS_INVALID_ADDRESS;
    if (e == EACCES || e == EPERM) return STATUS_ACCESS_DENIED;  // privileged port
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  socklen_t l = sizeof *addr;
  getsockname(s, reinterpret_cast<sockaddr*>(addr), &l);
  *fd = s;
  return STATUS_SUCCESS;
}

NTSTATUS copy_address_out(const sockaddr_storage& a, SOCKADDR* out, ULONG* len) {
  if (len == nullptr) return STATUS_INVALID_PARAMETER;
  ULONG need = sockaddr_length(a);
  if (out == nullptr || *len < need) {
    *len = need;
    return STATUS_BUFFER_TOO_SMALL;
  }
  std::memcpy(out, &a, need);
  *len = need;
  return STATUS_SUCCESS;
}

}  // namespace softndk::ndk
