// endpoints.cc - connector, listener and shared endpoint objects.
#include "ndk/endpoints.h"

#include <unistd.h>

#include <memory>

#include "ndk/adapter.h"
#include "ndk/dispatch.h"
#include "ndk/endpoint_address.h"

namespace softndk::ndk {

Connector::Connector(Adapter* a) : Object(a, NdkObjectTypeConnector, Resource::kConnector) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kConnectorDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

NTSTATUS Connector::create(Adapter* a, Connector** out) {
  *out = new Connector(a);
  return STATUS_SUCCESS;
}

Listener::Listener(Adapter* a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void* ctx)
    : Object(a, NdkObjectTypeListener, Resource::kNone), cb_(cb), cb_ctx_(ctx) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kListenerDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

NTSTATUS Listener::create(Adapter* a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void* ctx, Listener** out) {
  if (cb == nullptr) return STATUS_INVALID_PARAMETER;
  *out = new Listener(a, cb, ctx);
  return STATUS_SUCCESS;
}

SharedEndpoint::SharedEndpoint(Adapter* a)
    : Object(a, NdkObjectTypeSharedEndpoint, Resource::kNone) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kSharedEndpointDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

SharedEndpoint::~SharedEndpoint() {
  if (fd_ >= 0) ::close(fd_);
}

NTSTATUS SharedEndpoint::create(Adapter* a, const SOCKADDR* addr, ULONG len, SharedEndpoint** out) {
  sockaddr_storage local{};
  NTSTATUS s = check_local_address(a->device(), addr, len, &local);
  if (s != STATUS_SUCCESS) return s;
  int fd = -1;
  s = bind_endpoint(&local, &fd);
  if (s != STATUS_SUCCESS) return s;
  auto* se = new SharedEndpoint(a);
  se->local_ = local;
  se->fd_ = fd;
  *out = se;
  return STATUS_SUCCESS;
}

void SharedEndpoint::on_closed() {
  // The port is free again as soon as the close completed.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace softndk::ndk
