// SPDX-License-Identifier: Apache-2.0
// abi_endpoints.cc - SRQ, connector, listener and shared endpoint shims.
// The networking behind the connector and listener calls is the connection
// glue (net_glue.h, connector_net.cc, listener_net.cc).
#include "ndk/abi_common.h"
#include "ndk/dispatch.h"
#include "ndk/endpoint_address.h"
#include "ndk/endpoints.h"
#include "ndk/net_glue.h"
#include "ndk/qp.h"
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

template <typename F>
NTSTATUS with_connector(NDK_CONNECTOR* p, F&& f) {
  return guarded([&]() -> NTSTATUS {
    Connector* c;
    NTSTATUS s = live(p, NdkObjectTypeConnector, &c);
    return s != STATUS_SUCCESS ? s : f(c->net());
  });
}

NTSTATUS Connect(NDK_CONNECTOR* p, NDK_QP* qp, const SOCKADDR* src, ULONG src_len,
                 const SOCKADDR* dst, ULONG dst_len, ULONG ird, ULONG ord, const PVOID pd,
                 ULONG pd_len, NDK_FN_REQUEST_COMPLETION done, PVOID ctx) {
  return with_connector(p, [&](ConnectorNet& n) {
    Qp* q;
    NTSTATUS s = live(qp, NdkObjectTypeQp, &q);
    if (s != STATUS_SUCCESS) return s;
    if (src == nullptr || dst == nullptr) return STATUS_INVALID_PARAMETER;
    return n.connect(q, src, src_len, nullptr, dst, dst_len, ird, ord, pd, pd_len, done, ctx);
  });
}
NTSTATUS ConnectWithSharedEndpoint(NDK_CONNECTOR* p, NDK_QP* qp, NDK_SHARED_ENDPOINT* sep,
                                   const SOCKADDR* dst, ULONG dst_len, ULONG ird, ULONG ord,
                                   const PVOID pd, ULONG pd_len, NDK_FN_REQUEST_COMPLETION done,
                                   PVOID ctx) {
  return with_connector(p, [&](ConnectorNet& n) {
    Qp* q;
    NTSTATUS s = live(qp, NdkObjectTypeQp, &q);
    if (s != STATUS_SUCCESS) return s;
    SharedEndpoint* se;
    s = live(sep, NdkObjectTypeSharedEndpoint, &se);
    if (s != STATUS_SUCCESS) return s;
    if (dst == nullptr) return STATUS_INVALID_PARAMETER;
    return n.connect(q, nullptr, 0, se, dst, dst_len, ird, ord, pd, pd_len, done, ctx);
  });
}
NTSTATUS CompleteConnect(NDK_CONNECTOR* p, NDK_FN_DISCONNECT_EVENT_CALLBACK ev, PVOID ev_ctx,
                         NDK_FN_REQUEST_COMPLETION done, PVOID ctx) {
  return with_connector(
      p, [&](ConnectorNet& n) { return n.complete_connect(ev, nullptr, ev_ctx, done, ctx); });
}
NTSTATUS CompleteConnectEx(NDK_CONNECTOR* p, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX ev, PVOID ev_ctx,
                           NDK_FN_REQUEST_COMPLETION done, PVOID ctx) {
  return with_connector(
      p, [&](ConnectorNet& n) { return n.complete_connect(nullptr, ev, ev_ctx, done, ctx); });
}
NTSTATUS Accept(NDK_CONNECTOR* p, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID pd, ULONG pd_len,
                NDK_FN_DISCONNECT_EVENT_CALLBACK ev, PVOID ev_ctx, NDK_FN_REQUEST_COMPLETION done,
                PVOID ctx) {
  return with_connector(p, [&](ConnectorNet& n) {
    Qp* q;
    NTSTATUS s = live(qp, NdkObjectTypeQp, &q);
    return s != STATUS_SUCCESS ? s
                               : n.accept(q, ird, ord, pd, pd_len, ev, nullptr, ev_ctx, done, ctx);
  });
}
NTSTATUS AcceptEx(NDK_CONNECTOR* p, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID pd, ULONG pd_len,
                  NDK_FN_DISCONNECT_EVENT_CALLBACK_EX ev, PVOID ev_ctx,
                  NDK_FN_REQUEST_COMPLETION done, PVOID ctx) {
  return with_connector(p, [&](ConnectorNet& n) {
    Qp* q;
    NTSTATUS s = live(qp, NdkObjectTypeQp, &q);
    return s != STATUS_SUCCESS ? s
                               : n.accept(q, ird, ord, pd, pd_len, nullptr, ev, ev_ctx, done, ctx);
  });
}
NTSTATUS Reject(NDK_CONNECTOR* p, const PVOID pd, ULONG pd_len) {
  return with_connector(p, [&](ConnectorNet& n) { return n.reject(pd, pd_len); });
}
NTSTATUS GetConnectionData(NDK_CONNECTOR* p, ULONG* ird, ULONG* ord, PVOID pd, ULONG* pd_len) {
  return with_connector(p,
                        [&](ConnectorNet& n) { return n.connection_data(ird, ord, pd, pd_len); });
}
NTSTATUS GetLocalAddress(NDK_CONNECTOR* p, SOCKADDR* a, ULONG* len) {
  return with_connector(p, [&](ConnectorNet& n) { return n.local_address(a, len); });
}
NTSTATUS GetPeerAddress(NDK_CONNECTOR* p, SOCKADDR* a, ULONG* len) {
  return with_connector(p, [&](ConnectorNet& n) { return n.peer_address(a, len); });
}
NTSTATUS Disconnect(NDK_CONNECTOR* p, NDK_FN_REQUEST_COMPLETION done, PVOID ctx) {
  return with_connector(p, [&](ConnectorNet& n) { return n.disconnect(done, ctx); });
}

// ---- Listener ----------------------------------------------------------------

NTSTATUS CloseListener(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeListener, cb, ctx);
}

NTSTATUS Listen(NDK_LISTENER* p, const SOCKADDR* addr, ULONG len, NDK_FN_REQUEST_COMPLETION done,
                PVOID ctx) {
  return guarded([&]() -> NTSTATUS {
    Listener* l;
    NTSTATUS s = live(p, NdkObjectTypeListener, &l);
    if (s != STATUS_SUCCESS) return s;
    if (addr == nullptr) return STATUS_INVALID_PARAMETER;
    return l->adapter()->finish_request(l, done, ctx, l->net().listen(addr, len));
  });
}

NTSTATUS GetListenerLocalAddress(NDK_LISTENER* p, SOCKADDR* addr, ULONG* len) {
  return guarded([&]() -> NTSTATUS {
    Listener* l;
    NTSTATUS s = live(p, NdkObjectTypeListener, &l);
    return s != STATUS_SUCCESS ? s : l->net().local_address(addr, len);
  });
}

void ControlConnectEvents(NDK_LISTENER* p, BOOLEAN pause) {
  guarded([&]() -> NTSTATUS {
    Listener* l;
    if (live(p, NdkObjectTypeListener, &l) == STATUS_SUCCESS) l->pause(pause != FALSE);
    return STATUS_SUCCESS;
  });
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
