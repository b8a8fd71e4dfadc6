// SPDX-License-Identifier: Apache-2.0
// ndk_shim_conn.cc - the kit's connector, listener and shared-endpoint
// tables (all functions <= DISPATCH_LEVEL). Disconnect handlers given to
// accept/complete-connect live as long as the connector.
#include "ndk_shim_internal.h"

namespace softndk::wdk::net::shim {
namespace {

NTSTATUS query_extension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                         NDK_EXTENSION_INTERFACE* out, NDK_FN_QUERY_EXTENSION_INTERFACE orig) {
  NET_REQUIRE_IRQL("NdkQueryExtension", DISPATCH_LEVEL);
  return orig(obj, id, v, out);
}

template <typename Close>
NTSTATUS close_with(const char* name, NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx,
                    Close orig) {
  NET_REQUIRE_IRQL(name, DISPATCH_LEVEL);
  return close(obj, cc, ctx,
               [&](NDK_FN_CLOSE_COMPLETION done, void* dctx) { return orig(obj, done, dctx); });
}

// A disconnect handler for connector `c`, tied to its lifetime.
template <typename Fn>
EventThunk* disconnect_thunk(NDK_CONNECTOR* c, Fn fn, void* ctx) {
  EventThunk* ev = event_thunk(fn, ctx, nullptr);
  if (ev != nullptr && !attach(c, ev)) return nullptr;
  return ev;
}

// ---- connector ---------------------------------------------------------------

NTSTATUS CloseConnector(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  return close_with("NdkCloseConnector", obj, cc, ctx, g_orig.connector.load()->NdkCloseConnector);
}
NTSTATUS ConnectorQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                                 NDK_EXTENSION_INTERFACE* out) {
  return query_extension(obj, id, v, out, g_orig.connector.load()->NdkQueryExtension);
}
NTSTATUS Connect(NDK_CONNECTOR* c, NDK_QP* qp, const SOCKADDR* src, ULONG src_len,
                 const SOCKADDR* dst, ULONG dst_len, ULONG ird, ULONG ord, const PVOID pdata,
                 ULONG pdata_len, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkConnect", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.connector.load()->NdkConnect(c, qp, src, src_len, dst, dst_len, ird, ord, pdata,
                                               pdata_len, done, dctx);
  });
}
NTSTATUS ConnectWithSharedEndpoint(NDK_CONNECTOR* c, NDK_QP* qp, NDK_SHARED_ENDPOINT* se,
                                   const SOCKADDR* dst, ULONG dst_len, ULONG ird, ULONG ord,
                                   const PVOID pdata, ULONG pdata_len, NDK_FN_REQUEST_COMPLETION rc,
                                   PVOID ctx) {
  NET_REQUIRE_IRQL("NdkConnectWithSharedEndpoint", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.connector.load()->NdkConnectWithSharedEndpoint(c, qp, se, dst, dst_len, ird, ord,
                                                                 pdata, pdata_len, done, dctx);
  });
}
NTSTATUS CompleteConnect(NDK_CONNECTOR* c, NDK_FN_DISCONNECT_EVENT_CALLBACK disc, PVOID disc_ctx,
                         NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkCompleteConnect", DISPATCH_LEVEL);
  EventThunk* ev = disconnect_thunk(c, disc, disc_ctx);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.connector.load()->NdkCompleteConnect(
        c, ev != nullptr ? disconnect_trampoline : disc,
        ev != nullptr ? static_cast<void*>(ev) : disc_ctx, done, dctx);
  });
}
NTSTATUS CompleteConnectEx(NDK_CONNECTOR* c, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX disc,
                           PVOID disc_ctx, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkCompleteConnectEx", DISPATCH_LEVEL);
  EventThunk* ev = disconnect_thunk(c, disc, disc_ctx);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.connector.load()->NdkCompleteConnectEx(
        c, ev != nullptr ? disconnect_ex_trampoline : disc,
        ev != nullptr ? static_cast<void*>(ev) : disc_ctx, done, dctx);
  });
}
NTSTATUS Accept(NDK_CONNECTOR* c, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID pdata,
                ULONG pdata_len, NDK_FN_DISCONNECT_EVENT_CALLBACK disc, PVOID disc_ctx,
                NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkAccept", DISPATCH_LEVEL);
  EventThunk* ev = disconnect_thunk(c, disc, disc_ctx);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.connector.load()->NdkAccept(
        c, qp, ird, ord, pdata, pdata_len, ev != nullptr ? disconnect_trampoline : disc,
        ev != nullptr ? static_cast<void*>(ev) : disc_ctx, done, dctx);
  });
}
NTSTATUS AcceptEx(NDK_CONNECTOR* c, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID pdata,
                  ULONG pdata_len, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX disc, PVOID disc_ctx,
                  NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkAcceptEx", DISPATCH_LEVEL);
  EventThunk* ev = disconnect_thunk(c, disc, disc_ctx);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.connector.load()->NdkAcceptEx(
        c, qp, ird, ord, pdata, pdata_len, ev != nullptr ? disconnect_ex_trampoline : disc,
        ev != nullptr ? static_cast<void*>(ev) : disc_ctx, done, dctx);
  });
}
NTSTATUS Reject(NDK_CONNECTOR* c, const PVOID pdata, ULONG pdata_len) {
  NET_REQUIRE_IRQL("NdkReject", DISPATCH_LEVEL);
  return g_orig.connector.load()->NdkReject(c, pdata, pdata_len);
}
NTSTATUS GetConnectionData(NDK_CONNECTOR* c, ULONG* ird, ULONG* ord, PVOID pdata,
                           ULONG* pdata_len) {
  NET_REQUIRE_IRQL("NdkGetConnectionData", DISPATCH_LEVEL);
  return g_orig.connector.load()->NdkGetConnectionData(c, ird, ord, pdata, pdata_len);
}
NTSTATUS GetLocalAddress(NDK_CONNECTOR* c, SOCKADDR* addr, ULONG* len) {
  NET_REQUIRE_IRQL("NdkGetLocalAddress", DISPATCH_LEVEL);
  return g_orig.connector.load()->NdkGetLocalAddress(c, addr, len);
}
NTSTATUS GetPeerAddress(NDK_CONNECTOR* c, SOCKADDR* addr, ULONG* len) {
  NET_REQUIRE_IRQL("NdkGetPeerAddress", DISPATCH_LEVEL);
  return g_orig.connector.load()->NdkGetPeerAddress(c, addr, len);
}
NTSTATUS Disconnect(NDK_CONNECTOR* c, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkDisconnect", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.connector.load()->NdkDisconnect(c, done, dctx);
  });
}

// ---- listener ----------------------------------------------------------------

NTSTATUS CloseListener(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  return close_with("NdkCloseListener", obj, cc, ctx, g_orig.listener.load()->NdkCloseListener);
}
NTSTATUS ListenerQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                                NDK_EXTENSION_INTERFACE* out) {
  return query_extension(obj, id, v, out, g_orig.listener.load()->NdkQueryExtension);
}
NTSTATUS Listen(NDK_LISTENER* l, const SOCKADDR* addr, ULONG len, NDK_FN_REQUEST_COMPLETION rc,
                PVOID ctx) {
  NET_REQUIRE_IRQL("NdkListen", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.listener.load()->NdkListen(l, addr, len, done, dctx);
  });
}
NTSTATUS ListenerGetLocalAddress(NDK_LISTENER* l, SOCKADDR* addr, ULONG* len) {
  NET_REQUIRE_IRQL("NdkGetLocalAddress", DISPATCH_LEVEL);
  return g_orig.listener.load()->NdkGetLocalAddress(l, addr, len);
}
void ControlConnectEvents(NDK_LISTENER* l, BOOLEAN pause) {
  NET_REQUIRE_IRQL("NdkControlConnectEvents", DISPATCH_LEVEL);
  g_orig.listener.load()->NdkControlConnectEvents(l, pause);
}

// ---- shared endpoint -----------------------------------------------------------

NTSTATUS CloseSharedEndpoint(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  return close_with("NdkCloseSharedEndpoint", obj, cc, ctx,
                    g_orig.shared_endpoint.load()->NdkCloseSharedEndpoint);
}
NTSTATUS SharedEndpointQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                                      NDK_EXTENSION_INTERFACE* out) {
  return query_extension(obj, id, v, out, g_orig.shared_endpoint.load()->NdkQueryExtension);
}
NTSTATUS SharedEndpointGetLocalAddress(NDK_SHARED_ENDPOINT* se, SOCKADDR* addr, ULONG* len) {
  NET_REQUIRE_IRQL("NdkGetLocalAddress", DISPATCH_LEVEL);
  return g_orig.shared_endpoint.load()->NdkGetLocalAddress(se, addr, len);
}

}  // namespace

const NDK_CONNECTOR_DISPATCH kShimConnector = {CloseConnector,  ConnectorQueryExtension,
                                               Connect,         ConnectWithSharedEndpoint,
                                               CompleteConnect, Accept,
                                               Reject,          GetConnectionData,
                                               GetLocalAddress, GetPeerAddress,
                                               Disconnect,      CompleteConnectEx,
                                               AcceptEx};
const NDK_LISTENER_DISPATCH kShimListener = {CloseListener, ListenerQueryExtension, Listen,
                                             ListenerGetLocalAddress, ControlConnectEvents};
const NDK_SHARED_ENDPOINT_DISPATCH kShimSharedEndpoint = {
    CloseSharedEndpoint, SharedEndpointQueryExtension, SharedEndpointGetLocalAddress};

}  // namespace softndk::wdk::net::shim
