// SPDX-License-Identifier: Apache-2.0
// endpoints.cc - connector, listener and shared endpoint objects.
#include "ndk/endpoints.h"

#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "ndk/adapter.h"
#include "ndk/dispatch.h"
#include "ndk/endpoint_address.h"
#include "ndk/endpoint_reservation.h"
#include "ndk/net_glue.h"

namespace softndk::ndk {

Connector::Connector(Adapter* a) : Object(a, NdkObjectTypeConnector, Resource::kConnector) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kConnectorDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
  net_ = std::make_shared<ConnectorNet>(this);
}

Connector::~Connector() = default;

NTSTATUS Connector::create(Adapter* a, Connector** out) {
  *out = new Connector(a);
  return STATUS_SUCCESS;
}

void Connector::begin_teardown() { net_->teardown(); }
void Connector::on_closed() { net_->closed(); }

Listener::Listener(Adapter* a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void* ctx)
    : Object(a, NdkObjectTypeListener, Resource::kNone), cb_(cb), cb_ctx_(ctx) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kListenerDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
  net_ = std::make_shared<ListenerNet>(this);
}

Listener::~Listener() = default;

NTSTATUS Listener::create(Adapter* a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void* ctx, Listener** out) {
  if (cb == nullptr) return STATUS_INVALID_PARAMETER;
  *out = new Listener(a, cb, ctx);
  return STATUS_SUCCESS;
}

void Listener::pause(bool p) {
  paused_.store(p, std::memory_order_release);
  net_->pause(p);
}

void Listener::begin_teardown() { net_->teardown(); }

SharedEndpoint::SharedEndpoint(Adapter* a)
    : Object(a, NdkObjectTypeSharedEndpoint, Resource::kNone) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kSharedEndpointDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

SharedEndpoint::~SharedEndpoint() = default;

NTSTATUS SharedEndpoint::create(Adapter* a, const SOCKADDR* addr, ULONG len, SharedEndpoint** out) {
  sockaddr_storage local{};
  NTSTATUS s = check_local_address(a->device(), addr, len, &local);
  if (s != STATUS_SUCCESS) return s;
  // Probe with a plain (non-reusing) bind: the engine's reservation uses
  // SO_REUSEPORT so that its connections can bind the same address, which
  // would also let a second endpoint on the same port through. The probe
  // finds conflicts with any socket (and picks the port for port 0), then
  // gives way to the one reservation that stays. The provider's own record
  // (endpoint_reservation.h) also refuses a port a closed listener still
  // holds for its accepted connectors (NDKPI.md 6.1). With port 0 a probe
  // that landed on such a port stays open while we try again, so the
  // kernel picks another.
  // sin_port and sin6_port sit at the same offset.
  const bool any_port = reinterpret_cast<const sockaddr_in&>(local).sin_port == 0;
  const sockaddr_storage wanted = local;
  std::vector<int> passed_over;
  std::shared_ptr<Reservation> res;
  for (int tries = 0; tries < 8; ++tries) {
    local = wanted;
    int probe = -1;
    s = bind_endpoint(&local, &probe);
    if (s != STATUS_SUCCESS) break;
    s = reserve_endpoint(local, &res);
    if (s == STATUS_SUCCESS || !any_port) {
      ::close(probe);
      break;
    }
    passed_over.push_back(probe);
  }
  for (int fd : passed_over) ::close(fd);
  if (s != STATUS_SUCCESS) return s;
  auto sa = util::SockAddr::from(reinterpret_cast<const sockaddr*>(&local), sockaddr_length(local));
  if (!sa) return STATUS_INVALID_PARAMETER;
  std::shared_ptr<provider::SharedEndpoint> ep;
  s = a->provider().create_shared_endpoint(*sa, &ep);
  if (s != STATUS_SUCCESS) return s;
  auto* se = new SharedEndpoint(a);
  const util::SockAddr l = ep->local();
  std::memcpy(&se->local_, &l.ss, sizeof se->local_);
  se->ep_ = std::move(ep);
  se->reservation_ = std::move(res);
  *out = se;
  return STATUS_SUCCESS;
}

std::shared_ptr<provider::SharedEndpoint> SharedEndpoint::endpoint() const { return ep_; }

void SharedEndpoint::on_closed() {
  // The port is free again once the close completed and the connections
  // over it (which keep their own reference) are gone.
  ep_.reset();
  reservation_.reset();
}

}  // namespace softndk::ndk
