// SPDX-License-Identifier: Apache-2.0
// listener_net.cc - NdkListen / NdkGetListenerLocalAddress /
// NdkControlConnectEvents and the connect event (net_glue.h).
//
// Each request the engine presents becomes a new NDK_CONNECTOR, a successor
// of the listener (so the listener's close pends until the connectors it
// delivered are closed), handed to the consumer's connect-event callback on
// the reactor that ran the handshake. Closing the listener stops accepting
// at once; a request the engine is presenting concurrently is abandoned.
//
// The port (NDKPI.md 6.1): NdkListen takes an endpoint Reservation and each
// delivered connector copies it, so the address stays reserved - new
// NdkListen / NdkConnect from it / NdkCreateSharedEndpoint on it fail with
// STATUS_SHARING_VIOLATION - until the listener and every connector it
// delivered are closed, even though the listening socket itself is closed
// as soon as the listener's close is requested.
#include <cstring>
#include <new>
#include <vector>

#include "ndk/adapter.h"
#include "ndk/endpoint_address.h"
#include "ndk/endpoint_reservation.h"
#include "ndk/endpoints.h"
#include "ndk/net_glue.h"

namespace softndk::ndk {

namespace {
// Port 0: the kernel may pick a port that only our reservations still hold
// (its connections are gone, its connectors not yet closed). Keep such a
// listener open while trying again, so the kernel picks another.
constexpr int kEphemeralTries = 8;

sockaddr_storage storage_of(const util::SockAddr& a) {
  sockaddr_storage s{};
  std::memcpy(&s, &a.ss, a.len);
  return s;
}
}  // namespace

NTSTATUS ListenerNet::listen(const SOCKADDR* addr, ULONG len) {
  Adapter* a = obj_->adapter();
  auto sa = util::SockAddr::from(reinterpret_cast<const sockaddr*>(addr), len);
  if (!sa) return STATUS_INVALID_PARAMETER;
  if (!sa->is_any()) {
    sockaddr_storage l{};
    NTSTATUS st = check_local_address(a->device(), addr, len, &l);
    if (st != STATUS_SUCCESS) return st;
    sa = util::SockAddr::from(reinterpret_cast<const sockaddr*>(&l), sockaddr_length(l));
  }
  {
    std::lock_guard lk(mu_);
    if (torn_down_) return STATUS_FILE_CLOSED;
    if (tl_) return STATUS_INVALID_DEVICE_REQUEST;  // already listening
  }
  // Checked before binding: SO_REUSEADDR would let the bind through once
  // the port is held only by accepted connections (or not at all).
  if (endpoint_reserved(storage_of(*sa))) return STATUS_SHARING_VIOLATION;
  std::weak_ptr<ListenerNet> w = shared_from_this();
  std::shared_ptr<provider::Listener> tl;
  std::shared_ptr<Reservation> res;
  std::vector<std::shared_ptr<provider::Listener>> passed_over;
  NTSTATUS st = STATUS_SHARING_VIOLATION;
  for (int i = 0; i < kEphemeralTries; ++i) {
    st = a->provider().listen(
        *sa,
        [w](std::shared_ptr<provider::IncomingConnection> p) {
          if (auto self = w.lock()) {
            self->on_request(std::move(p));
          } else {
            p->abandon();
          }
        },
        &tl);
    if (st != STATUS_SUCCESS) break;
    st = reserve_endpoint(storage_of(tl->local()), &res);
    if (st == STATUS_SUCCESS || sa->port() != 0) break;
    passed_over.push_back(std::move(tl));
  }
  for (auto& p : passed_over) p->close();
  if (st != STATUS_SUCCESS) {
    if (tl) tl->close();
    return st;
  }
  bool close_now = false, paused = false;
  {
    std::lock_guard lk(mu_);
    if (torn_down_ || tl_) {
      close_now = true;
    } else {
      tl_ = tl;
      reservation_ = std::move(res);
      paused = paused_;
    }
  }
  if (close_now) {
    tl->close();
    return STATUS_INVALID_DEVICE_REQUEST;
  }
  if (paused) tl->pause(true);
  return STATUS_SUCCESS;
}

NTSTATUS ListenerNet::local_address(SOCKADDR* out, ULONG* len) {
  sockaddr_storage s{};
  {
    std::lock_guard lk(mu_);
    if (!tl_) return STATUS_INVALID_DEVICE_REQUEST;  // not listening
    const util::SockAddr l = tl_->local();
    std::memcpy(&s, &l.ss, l.len);
  }
  return copy_address_out(s, out, len);
}

void ListenerNet::pause(bool p) {
  std::shared_ptr<provider::Listener> tl;
  {
    std::lock_guard lk(mu_);
    paused_ = p;
    tl = tl_;
  }
  if (tl) tl->pause(p);
}

void ListenerNet::teardown() {
  std::shared_ptr<provider::Listener> tl;
  std::shared_ptr<Reservation> res;
  {
    std::lock_guard lk(mu_);
    torn_down_ = true;
    tl = std::move(tl_);
    res = std::move(reservation_);  // the listener's reference; connectors keep theirs
  }
  if (tl) tl->close();  // stops accepting at once
}

void ListenerNet::on_request(std::shared_ptr<provider::IncomingConnection> p) {
  Adapter* a = obj_->adapter();
  std::shared_ptr<Reservation> res;
  {
    std::lock_guard lk(mu_);
    if (torn_down_ || paused_ || a->dead()) {
      p->abandon();
      return;
    }
    res = reservation_;
    obj_->hold();  // the listener cannot finish its close while we deliver
  }
  Connector* c = nullptr;
  if (a->reserve(Resource::kConnector)) {
    try {
      Connector::create(a, &c);
    } catch (const std::bad_alloc&) {
      c = nullptr;
    }
    if (c == nullptr) a->unreserve(Resource::kConnector);
  }
  if (c == nullptr) {
    p->abandon();
    obj_->release();
    return;
  }
  c->depend_on(obj_);
  c->net().set_incoming(std::move(p), std::move(res));
  a->publish(c);
  obj_->callback()(obj_->callback_context(), c->ndk());
  obj_->release();
}

}  // namespace softndk::ndk
