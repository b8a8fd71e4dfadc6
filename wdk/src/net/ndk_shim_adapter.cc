// SPDX-License-Identifier: Apache-2.0
// ndk_shim_adapter.cc - the kit's adapter, CQ and PD tables.
//
// IRQL maxima are NDKPI's: every function <= DISPATCH_LEVEL except
// NdkQueryAdapterInfo (PASSIVE_LEVEL: it may block).
#include "ndk_shim_internal.h"

namespace softndk::wdk::net::shim {
namespace {

// ---- adapter ---------------------------------------------------------------

NTSTATUS QueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                        NDK_EXTENSION_INTERFACE* out, NDK_FN_QUERY_EXTENSION_INTERFACE orig) {
  NET_REQUIRE_IRQL("NdkQueryExtension", DISPATCH_LEVEL);
  return orig(obj, id, v, out);
}

NTSTATUS AdapterQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                               NDK_EXTENSION_INTERFACE* out) {
  return QueryExtension(obj, id, v, out, g_orig.adapter.load()->NdkQueryExtension);
}

NTSTATUS QueryAdapterInfo(NDK_ADAPTER* a, NDK_ADAPTER_INFO* info, ULONG* size) {
  NET_REQUIRE_IRQL("NdkQueryAdapterInfo", PASSIVE_LEVEL);
  return g_orig.adapter.load()->NdkQueryAdapterInfo(a, info, size);
}

NTSTATUS CreateCq(NDK_ADAPTER* a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK notify,
                  PVOID notify_ctx, GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION cc,
                  PVOID ctx, NDK_CQ** out) {
  NET_REQUIRE_IRQL("NdkCreateCq", DISPATCH_LEVEL);
  EventThunk* ev = event_thunk(notify, notify_ctx, a);
  if (notify != nullptr && ev == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  return create(a, cc, ctx, ev, reinterpret_cast<void**>(out), [&](auto done, void* dctx) {
    return g_orig.adapter.load()->NdkCreateCq(
        a, depth, ev != nullptr ? cq_notify_trampoline : nullptr,
        ev != nullptr ? static_cast<void*>(ev) : notify_ctx, affinity, done, dctx, out);
  });
}

NTSTATUS CreatePd(NDK_ADAPTER* a, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_PD** out) {
  NET_REQUIRE_IRQL("NdkCreatePd", DISPATCH_LEVEL);
  return create(a, cc, ctx, nullptr, reinterpret_cast<void**>(out), [&](auto done, void* dctx) {
    return g_orig.adapter.load()->NdkCreatePd(a, done, dctx, out);
  });
}

NTSTATUS CreateSharedEndpoint(NDK_ADAPTER* a, const SOCKADDR* addr, ULONG len,
                              NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_SHARED_ENDPOINT** out) {
  NET_REQUIRE_IRQL("NdkCreateSharedEndpoint", DISPATCH_LEVEL);
  return create(a, cc, ctx, nullptr, reinterpret_cast<void**>(out), [&](auto done, void* dctx) {
    return g_orig.adapter.load()->NdkCreateSharedEndpoint(a, addr, len, done, dctx, out);
  });
}

NTSTATUS CreateConnector(NDK_ADAPTER* a, NDK_FN_CREATE_COMPLETION cc, PVOID ctx,
                         NDK_CONNECTOR** out) {
  NET_REQUIRE_IRQL("NdkCreateConnector", DISPATCH_LEVEL);
  return create(a, cc, ctx, nullptr, reinterpret_cast<void**>(out), [&](auto done, void* dctx) {
    return g_orig.adapter.load()->NdkCreateConnector(a, done, dctx, out);
  });
}

NTSTATUS CreateListener(NDK_ADAPTER* a, NDK_FN_CONNECT_EVENT_CALLBACK event, PVOID event_ctx,
                        NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_LISTENER** out) {
  NET_REQUIRE_IRQL("NdkCreateListener", DISPATCH_LEVEL);
  EventThunk* ev = event_thunk(event, event_ctx, a);
  if (event != nullptr && ev == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  return create(a, cc, ctx, ev, reinterpret_cast<void**>(out), [&](auto done, void* dctx) {
    return g_orig.adapter.load()->NdkCreateListener(
        a, ev != nullptr ? connect_event_trampoline : nullptr,
        ev != nullptr ? static_cast<void*>(ev) : event_ctx, done, dctx, out);
  });
}

NTSTATUS BuildLAM(NDK_ADAPTER* a, MDL* mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx,
                  NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* lam_size, ULONG* fbo) {
  NET_REQUIRE_IRQL("NdkBuildLAM", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.adapter.load()->NdkBuildLAM(a, mdl, length, done, dctx, lam, lam_size, fbo);
  });
}

void ReleaseLAM(NDK_ADAPTER* a, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
  NET_REQUIRE_IRQL("NdkReleaseLAM", DISPATCH_LEVEL);
  g_orig.adapter.load()->NdkReleaseLAM(a, lam);
}

// ---- CQ --------------------------------------------------------------------

NTSTATUS CloseCq(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkCloseCq", DISPATCH_LEVEL);
  return close(obj, cc, ctx, [&](NDK_FN_CLOSE_COMPLETION done, void* dctx) {
    return g_orig.cq.load()->NdkCloseCq(obj, done, dctx);
  });
}

NTSTATUS CqQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                          NDK_EXTENSION_INTERFACE* out) {
  return QueryExtension(obj, id, v, out, g_orig.cq.load()->NdkQueryExtension);
}

NTSTATUS ResizeCq(NDK_CQ* cq, ULONG depth, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkResizeCq", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.cq.load()->NdkResizeCq(cq, depth, done, dctx);
  });
}

void ArmCq(NDK_CQ* cq, ULONG type) {
  NET_REQUIRE_IRQL("NdkArmCq", DISPATCH_LEVEL);
  g_orig.cq.load()->NdkArmCq(cq, type);
}

ULONG GetCqResults(NDK_CQ* cq, NDK_RESULT results[], ULONG n) {
  NET_REQUIRE_IRQL("NdkGetCqResults", DISPATCH_LEVEL);
  return g_orig.cq.load()->NdkGetCqResults(cq, results, n);
}

NTSTATUS ControlCqInterruptModeration(NDK_CQ* cq, ULONG interval, ULONG count) {
  NET_REQUIRE_IRQL("NdkControlCqInterruptModeration", DISPATCH_LEVEL);
  return g_orig.cq.load()->NdkControlCqInterruptModeration(cq, interval, count);
}

ULONG GetCqResultsEx(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG n) {
  NET_REQUIRE_IRQL("NdkGetCqResultsEx", DISPATCH_LEVEL);
  return g_orig.cq.load()->NdkGetCqResultsEx(cq, results, n);
}

// ---- PD --------------------------------------------------------------------

NTSTATUS ClosePd(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkClosePd", DISPATCH_LEVEL);
  return close(obj, cc, ctx, [&](NDK_FN_CLOSE_COMPLETION done, void* dctx) {
    return g_orig.pd.load()->NdkClosePd(obj, done, dctx);
  });
}

NTSTATUS PdQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                          NDK_EXTENSION_INTERFACE* out) {
  return QueryExtension(obj, id, v, out, g_orig.pd.load()->NdkQueryExtension);
}

NTSTATUS CreateMr(NDK_PD* pd, BOOLEAN fast, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MR** out) {
  NET_REQUIRE_IRQL("NdkCreateMr", DISPATCH_LEVEL);
  return create(adapter_of(pd), cc, ctx, nullptr, reinterpret_cast<void**>(out),
                [&](auto done, void* dctx) {
                  return g_orig.pd.load()->NdkCreateMr(pd, fast, done, dctx, out);
                });
}

NTSTATUS CreateMw(NDK_PD* pd, NDK_FN_CREATE_COMPLETION cc, PVOID ctx, NDK_MW** out) {
  NET_REQUIRE_IRQL("NdkCreateMw", DISPATCH_LEVEL);
  return create(
      adapter_of(pd), cc, ctx, nullptr, reinterpret_cast<void**>(out),
      [&](auto done, void* dctx) { return g_orig.pd.load()->NdkCreateMw(pd, done, dctx, out); });
}

NTSTATUS CreateSrq(NDK_PD* pd, ULONG depth, ULONG max_sge, ULONG threshold,
                   NDK_FN_SRQ_NOTIFICATION_CALLBACK notify, PVOID notify_ctx,
                   GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION cc, PVOID ctx,
                   NDK_SRQ** out) {
  NET_REQUIRE_IRQL("NdkCreateSrq", DISPATCH_LEVEL);
  NDK_ADAPTER* a = adapter_of(pd);
  EventThunk* ev = event_thunk(notify, notify_ctx, a);
  if (notify != nullptr && ev == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  return create(a, cc, ctx, ev, reinterpret_cast<void**>(out), [&](auto done, void* dctx) {
    return g_orig.pd.load()->NdkCreateSrq(
        pd, depth, max_sge, threshold, ev != nullptr ? srq_notify_trampoline : nullptr,
        ev != nullptr ? static_cast<void*>(ev) : notify_ctx, affinity, done, dctx, out);
  });
}

NTSTATUS CreateQp(NDK_PD* pd, NDK_CQ* rcq, NDK_CQ* icq, PVOID qp_ctx, ULONG rdepth, ULONG idepth,
                  ULONG rsge, ULONG isge, ULONG inline_size, NDK_FN_CREATE_COMPLETION cc, PVOID ctx,
                  NDK_QP** out) {
  NET_REQUIRE_IRQL("NdkCreateQp", DISPATCH_LEVEL);
  return create(adapter_of(pd), cc, ctx, nullptr, reinterpret_cast<void**>(out),
                [&](auto done, void* dctx) {
                  return g_orig.pd.load()->NdkCreateQp(pd, rcq, icq, qp_ctx, rdepth, idepth, rsge,
                                                       isge, inline_size, done, dctx, out);
                });
}

NTSTATUS CreateQpWithSrq(NDK_PD* pd, NDK_CQ* rcq, NDK_CQ* icq, NDK_SRQ* srq, PVOID qp_ctx,
                         ULONG idepth, ULONG isge, ULONG inline_size, NDK_FN_CREATE_COMPLETION cc,
                         PVOID ctx, NDK_QP** out) {
  NET_REQUIRE_IRQL("NdkCreateQpWithSrq", DISPATCH_LEVEL);
  return create(adapter_of(pd), cc, ctx, nullptr, reinterpret_cast<void**>(out),
                [&](auto done, void* dctx) {
                  return g_orig.pd.load()->NdkCreateQpWithSrq(pd, rcq, icq, srq, qp_ctx, idepth,
                                                              isge, inline_size, done, dctx, out);
                });
}

void GetPrivilegedMemoryRegionToken(NDK_PD* pd, UINT32* token) {
  NET_REQUIRE_IRQL("NdkGetPrivilegedMemoryRegionToken", DISPATCH_LEVEL);
  g_orig.pd.load()->NdkGetPrivilegedMemoryRegionToken(pd, token);
}

}  // namespace

const NDK_ADAPTER_DISPATCH kShimAdapter = {
    AdapterQueryExtension, QueryAdapterInfo, CreateCq, CreatePd,  CreateSharedEndpoint,
    CreateConnector,       CreateListener,   BuildLAM, ReleaseLAM};

const NDK_CQ_DISPATCH kShimCq = {CloseCq,       CqQueryExtension, ResizeCq,
                                 ArmCq,         GetCqResults,     ControlCqInterruptModeration,
                                 GetCqResultsEx};

const NDK_PD_DISPATCH kShimPd = {
    ClosePd,   PdQueryExtension, CreateMr,        CreateMw,
    CreateSrq, CreateQp,         CreateQpWithSrq, GetPrivilegedMemoryRegionToken};

}  // namespace softndk::wdk::net::shim
