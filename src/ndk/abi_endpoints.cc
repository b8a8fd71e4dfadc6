// abi_endpoints.cc - SRQ, connector, listener and shared endpoint shims.
// Connection establishment belongs to the connection layer; until it is in,
// its entry points validate their handles and answer STATUS_NOT_SUPPORTED.
#include "ndk/abi_common.h"
#include "ndk/dispatch.h"
#include "ndk/endpoint_address.h"
#include "ndk/endpoints.h"
#include "ndk/srq.h"

namespace softndk::ndk::abi {
namespace {

// ---- SRQ ---------------------------------------------------------------------

NTSTATUS CloseSrq(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeSrq, cb, ctx);
}

NTSTATUS ModifySrq(NDK_SRQ* p, ULONG depth, ULONG threshold, NDK_FN_REQUEST_COMPLETION done,
                   PVOID ctx) {
  return guarded([&] {
    Srq* srq;
    NTSTATUS s = live(p, NdkObjectTypeSrq, &srq);
    if (s != STATUS_SUCCESS) return s;
    return srq->adapter()->finish_request(srq, done, ctx, srq->modify(depth, threshold));
  });
}

NTSTATUS SrqReceive(NDK_SRQ* p, PVOID ctx, const NDK_SGE* sgl, ULONG nsge) {
  Srq* srq;
  NTSTATUS s = live(p, NdkObjectTypeSrq, &srq);
  return s != STATUS_SUCCESS ? s : srq->post(ctx, sgl, nsge);
}

// ---- Connector ---------------------------------------------------------------

NTSTATUS CloseConnector(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeConnector, cb, ctx);
}

NTSTATUS connector_only(NDK_CONNECTOR* p) {
  Connector* c;
  NTSTATUS s = live(p, NdkObjectTypeConnector, &c);
  return s != STATUS_SUCCESS ? s : STATUS_NOT_SUPPORTED;
}

NTSTATUS Connect(NDK_CONNECTOR* p, NDK_QP*, const SOCKADDR*, ULONG, const SOCKADDR*, ULONG, ULONG,
                 ULONG, const PVOID, ULONG, NDK_FN_REQUEST_COMPLETION, PVOID) {
  return connector_only(p);
}
NTSTATUS ConnectWithSharedEndpoint(NDK_CONNECTOR* p, NDK_QP*, NDK_SHARED_ENDPOINT*, const SOCKADDR*,
                                   ULONG, ULONG, ULONG, const PVOID, ULONG,
                                   NDK_FN_REQUEST_COMPLETION, PVOID) {
  return connector_only(p);
}
NTSTATUS CompleteConnect(NDK_CONNECTOR* p, NDK_FN_DISCONNECT_EVENT_CALLBACK, PVOID,
                         NDK_FN_REQUEST_COMPLETION, PVOID) {
  return connector_only(p);
}
NTSTATUS CompleteConnectEx(NDK_CONNECTOR* p, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX, PVOID,
                           NDK_FN_REQUEST_COMPLETION, PVOID) {
  return connector_only(p);
}
NTSTATUS Accept(NDK_CONNECTOR* p, NDK_QP*, ULONG, ULONG, const PVOID, ULONG,
                NDK_FN_DISCONNECT_EVENT_CALLBACK, PVOID, NDK_FN_REQUEST_COMPLETION, PVOID) {
  return connector_only(p);
}
NTSTATUS AcceptEx(NDK_CONNECTOR* p, NDK_QP*, ULONG, ULONG, const PVOID, ULONG,
                  NDK_FN_DISCONNECT_EVENT_CALLBACK_EX, PVOID, NDK_FN_REQUEST_COMPLETION, PVOID) {
  return connector_only(p);
}
NTSTATUS Reject(NDK_CONNECTOR* p, const PVOID, ULONG) { return connector_only(p); }
NTSTATUS GetConnectionData(NDK_CONNECTOR* p, ULONG*, ULONG*, PVOID, ULONG*) {
  return connector_only(p);
}
NTSTATUS GetLocalAddress(NDK_CONNECTOR* p, SOCKADDR*, ULONG*) { return connector_only(p); }
NTSTATUS GetPeerAddress(NDK_CONNECTOR* p, SOCKADDR*, ULONG*) { return connector_only(p); }
NTSTATUS Disconnect(NDK_CONNECTOR* p, NDK_FN_REQUEST_COMPLETION, PVOID) {
  return connector_only(p);
}

// ---- Listener ----------------------------------------------------------------

NTSTATUS CloseListener(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeListener, cb, ctx);
}

NTSTATUS Listen(NDK_LISTENER* p, const SOCKADDR*, ULONG, NDK_FN_REQUEST_COMPLETION, PVOID) {
  Listener* l;
  NTSTATUS s = live(p, NdkObjectTypeListener, &l);
  return s != STATUS_SUCCESS ? s : STATUS_NOT_SUPPORTED;
}

NTSTATUS GetListenerLocalAddress(NDK_LISTENER* p, SOCKADDR*, ULONG*) {
  Listener* l;
  NTSTATUS s = live(p, NdkObjectTypeListener, &l);
  return s != STATUS_SUCCESS ? s : STATUS_NOT_SUPPORTED;
}

void ControlConnectEvents(NDK_LISTENER* p, BOOLEAN pause) {
  Listener* l;
  if (live(p, NdkObjectTypeListener, &l) == STATUS_SUCCESS) l->pause(pause != FALSE);
}

// ---- Shared endpoint -----------------------------------------------------------

NTSTATUS CloseSharedEndpoint(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeSharedEndpoint, cb, ctx);
}

NTSTATUS GetSharedEndpointLocalAddress(NDK_SHARED_ENDPOINT* p, SOCKADDR* addr, ULONG* len) {
  SharedEndpoint* se;
  NTSTATUS s = live(p, NdkObjectTypeSharedEndpoint, &se);
  return s != STATUS_SUCCESS ? s : copy_address_out(se->local(), addr, len);
}

}  // namespace
}  // namespace softndk::ndk::abi

namespace softndk::ndk {
const NDK_SRQ_DISPATCH kSrqDispatch = {abi::CloseSrq, abi::query_extension, abi::ModifySrq,
                                       abi::SrqReceive};
const NDK_CONNECTOR_DISPATCH kConnectorDispatch = {
    abi::CloseConnector,  abi::query_extension, abi::Connect,    abi::ConnectWithSharedEndpoint,
    abi::CompleteConnect, abi::Accept,          abi::Reject,     abi::GetConnectionData,
    abi::GetLocalAddress, abi::GetPeerAddress,  abi::Disconnect, abi::CompleteConnectEx,
    abi::AcceptEx,
};
const NDK_LISTENER_DISPATCH kListenerDispatch = {abi::CloseListener, abi::query_extension,
                                                 abi::Listen, abi::GetListenerLocalAddress,
                                                 abi::ControlConnectEvents};
const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch = {
    abi::CloseSharedEndpoint, abi::query_extension, abi::GetSharedEndpointLocalAddress};
}  // namespace softndk::ndk
