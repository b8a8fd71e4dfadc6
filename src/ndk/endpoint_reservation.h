// SPDX-License-Identifier: Apache-2.0
// endpoint_reservation.h - the provider's own record of which local
// address:port pairs NDK endpoints hold (NDKPI.md 6.1).
//
// The kernel alone does not keep a listener's port reserved the way NDKPI
// requires: once the listening socket is closed, its accepted sockets
// (SO_REUSEADDR, inherited) let another SO_REUSEADDR socket bind and listen
// on the same port, and once those connections end nothing holds it at all.
// NDKPI wants the port held until the listener AND every connector accepted
// through it are closed. So each NDK endpoint takes a Reservation here, and
// NdkListen, NdkConnect with an explicit local port and
// NdkCreateSharedEndpoint consult it before binding.
//
// A Reservation is shared by shared_ptr: the listener holds one reference,
// each connector it delivered copies it; the address is free again when the
// last copy is dropped (the reference count of 6.1).
#pragma once

#include <sys/socket.h>

#include <memory>

#include "softndk/ndkpi.h"

namespace softndk::ndk {

class Reservation {
 public:
  ~Reservation();
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  const sockaddr_storage& address() const { return addr_; }

 private:
  friend NTSTATUS reserve_endpoint(const sockaddr_storage&, std::shared_ptr<Reservation>*);
  explicit Reservation(const sockaddr_storage& a) : addr_(a) {}
  sockaddr_storage addr_;
};

// Records `addr` (a concrete port) as held by an NDK endpoint.
// STATUS_SHARING_VIOLATION if a live reservation overlaps it: same port and
// the same address, or either side a wildcard (an IPv6 wildcard also covers
// IPv4, as a dual-stack socket would).
NTSTATUS reserve_endpoint(const sockaddr_storage& addr, std::shared_ptr<Reservation>* out);

// Would reserve_endpoint(addr) fail? (Port 0 never conflicts.)
bool endpoint_reserved(const sockaddr_storage& addr);

// Live reservations (tests: nothing leaks).
long reservation_count();

}  // namespace softndk::ndk
