// SPDX-License-Identifier: Apache-2.0
// ndk_shim_qp.cc - the kit's MR, MW, SRQ and QP tables (all functions
// <= DISPATCH_LEVEL; work requests complete through CQs, so only the MR
// and SRQ requests have completions of their own).
#include "ndk_shim_internal.h"

namespace softndk::wdk::net::shim {
namespace {

template <typename Close>
NTSTATUS close_with(const char* name, NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx,
                    Close orig) {
  NET_REQUIRE_IRQL(name, DISPATCH_LEVEL);
  return close(obj, cc, ctx,
               [&](NDK_FN_CLOSE_COMPLETION done, void* dctx) { return orig(obj, done, dctx); });
}

NTSTATUS query_extension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                         NDK_EXTENSION_INTERFACE* out, NDK_FN_QUERY_EXTENSION_INTERFACE orig) {
  NET_REQUIRE_IRQL("NdkQueryExtension", DISPATCH_LEVEL);
  return orig(obj, id, v, out);
}

// ---- MR --------------------------------------------------------------------

NTSTATUS CloseMr(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  return close_with("NdkCloseMr", obj, cc, ctx, g_orig.mr.load()->NdkCloseMr);
}
NTSTATUS MrQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                          NDK_EXTENSION_INTERFACE* out) {
  return query_extension(obj, id, v, out, g_orig.mr.load()->NdkQueryExtension);
}
NTSTATUS RegisterMr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags, NDK_FN_REQUEST_COMPLETION rc,
                    PVOID ctx) {
  NET_REQUIRE_IRQL("NdkRegisterMr", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.mr.load()->NdkRegisterMr(mr, mdl, length, flags, done, dctx);
  });
}
NTSTATUS DeregisterMr(NDK_MR* mr, NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkDeregisterMr", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.mr.load()->NdkDeregisterMr(mr, done, dctx);
  });
}
NTSTATUS InitializeFastRegisterMr(NDK_MR* mr, ULONG pages, BOOLEAN remote,
                                  NDK_FN_REQUEST_COMPLETION rc, PVOID ctx) {
  NET_REQUIRE_IRQL("NdkInitializeFastRegisterMr", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.mr.load()->NdkInitializeFastRegisterMr(mr, pages, remote, done, dctx);
  });
}
UINT32 GetRemoteTokenFromMr(NDK_MR* mr) {
  NET_REQUIRE_IRQL("NdkGetRemoteTokenFromMr", DISPATCH_LEVEL);
  return g_orig.mr.load()->NdkGetRemoteTokenFromMr(mr);
}
UINT32 GetLocalTokenFromMr(NDK_MR* mr) {
  NET_REQUIRE_IRQL("NdkGetLocalTokenFromMr", DISPATCH_LEVEL);
  return g_orig.mr.load()->NdkGetLocalTokenFromMr(mr);
}

// ---- MW --------------------------------------------------------------------

NTSTATUS CloseMw(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  return close_with("NdkCloseMw", obj, cc, ctx, g_orig.mw.load()->NdkCloseMw);
}
NTSTATUS MwQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                          NDK_EXTENSION_INTERFACE* out) {
  return query_extension(obj, id, v, out, g_orig.mw.load()->NdkQueryExtension);
}
UINT32 GetRemoteTokenFromMw(NDK_MW* mw) {
  NET_REQUIRE_IRQL("NdkGetRemoteTokenFromMw", DISPATCH_LEVEL);
  return g_orig.mw.load()->NdkGetRemoteTokenFromMw(mw);
}

// ---- SRQ -------------------------------------------------------------------

NTSTATUS CloseSrq(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  return close_with("NdkCloseSrq", obj, cc, ctx, g_orig.srq.load()->NdkCloseSrq);
}
NTSTATUS SrqQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                           NDK_EXTENSION_INTERFACE* out) {
  return query_extension(obj, id, v, out, g_orig.srq.load()->NdkQueryExtension);
}
NTSTATUS ModifySrq(NDK_SRQ* srq, ULONG depth, ULONG threshold, NDK_FN_REQUEST_COMPLETION rc,
                   PVOID ctx) {
  NET_REQUIRE_IRQL("NdkModifySrq", DISPATCH_LEVEL);
  return request(rc, ctx, [&](NDK_FN_REQUEST_COMPLETION done, void* dctx) {
    return g_orig.srq.load()->NdkModifySrq(srq, depth, threshold, done, dctx);
  });
}
NTSTATUS SrqReceive(NDK_SRQ* srq, PVOID ctx, const NDK_SGE* sgl, ULONG n) {
  NET_REQUIRE_IRQL("NdkSrqReceive", DISPATCH_LEVEL);
  return g_orig.srq.load()->NdkSrqReceive(srq, ctx, sgl, n);
}

// ---- QP --------------------------------------------------------------------

NTSTATUS CloseQp(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION cc, PVOID ctx) {
  return close_with("NdkCloseQp", obj, cc, ctx, g_orig.qp.load()->NdkCloseQp);
}
NTSTATUS QpQueryExtension(NDK_OBJECT_HEADER* obj, const GUID* id, NDK_VERSION v,
                          NDK_EXTENSION_INTERFACE* out) {
  return query_extension(obj, id, v, out, g_orig.qp.load()->NdkQueryExtension);
}
void Flush(NDK_QP* qp) {
  NET_REQUIRE_IRQL("NdkFlush", DISPATCH_LEVEL);
  g_orig.qp.load()->NdkFlush(qp);
}
NTSTATUS Send(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n, ULONG flags) {
  NET_REQUIRE_IRQL("NdkSend", DISPATCH_LEVEL);
  return g_orig.qp.load()->NdkSend(qp, ctx, sgl, n, flags);
}
NTSTATUS Receive(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n) {
  NET_REQUIRE_IRQL("NdkReceive", DISPATCH_LEVEL);
  return g_orig.qp.load()->NdkReceive(qp, ctx, sgl, n);
}
NTSTATUS Bind(NDK_QP* qp, PVOID ctx, NDK_MR* mr, NDK_MW* mw, PVOID va, SIZE_T length, ULONG flags) {
  NET_REQUIRE_IRQL("NdkBind", DISPATCH_LEVEL);
  return g_orig.qp.load()->NdkBind(qp, ctx, mr, mw, va, length, flags);
}
NTSTATUS FastRegister(NDK_QP* qp, PVOID ctx, NDK_MR* mr, ULONG pages,
                      const NDK_LOGICAL_ADDRESS* page_array, ULONG fbo, SIZE_T length, PVOID va,
                      ULONG flags) {
  NET_REQUIRE_IRQL("NdkFastRegister", DISPATCH_LEVEL);
  return g_orig.qp.load()->NdkFastRegister(qp, ctx, mr, pages, page_array, fbo, length, va, flags);
}
NTSTATUS Invalidate(NDK_QP* qp, PVOID ctx, NDK_OBJECT_HEADER* mr_or_mw, ULONG flags) {
  NET_REQUIRE_IRQL("NdkInvalidate", DISPATCH_LEVEL);
  return g_orig.qp.load()->NdkInvalidate(qp, ctx, mr_or_mw, flags);
}
NTSTATUS Read(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n, UINT64 raddr, UINT32 rtoken,
              ULONG flags) {
  NET_REQUIRE_IRQL("NdkRead", DISPATCH_LEVEL);
  return g_orig.qp.load()->NdkRead(qp, ctx, sgl, n, raddr, rtoken, flags);
}
NTSTATUS Write(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n, UINT64 raddr, UINT32 rtoken,
               ULONG flags) {
  NET_REQUIRE_IRQL("NdkWrite", DISPATCH_LEVEL);
  return g_orig.qp.load()->NdkWrite(qp, ctx, sgl, n, raddr, rtoken, flags);
}
NTSTATUS SendAndInvalidate(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n, ULONG flags,
                           UINT32 rtoken) {
  NET_REQUIRE_IRQL("NdkSendAndInvalidate", DISPATCH_LEVEL);
  return g_orig.qp.load()->NdkSendAndInvalidate(qp, ctx, sgl, n, flags, rtoken);
}

}  // namespace

const NDK_MR_DISPATCH kShimMr = {CloseMr,
                                 MrQueryExtension,
                                 RegisterMr,
                                 DeregisterMr,
                                 InitializeFastRegisterMr,
                                 GetRemoteTokenFromMr,
                                 GetLocalTokenFromMr};
const NDK_MW_DISPATCH kShimMw = {CloseMw, MwQueryExtension, GetRemoteTokenFromMw};
const NDK_SRQ_DISPATCH kShimSrq = {CloseSrq, SrqQueryExtension, ModifySrq, SrqReceive};
const NDK_QP_DISPATCH kShimQp = {
    CloseQp,      QpQueryExtension, Flush, Send,  Receive,          Bind,
    FastRegister, Invalidate,       Read,  Write, SendAndInvalidate};

}  // namespace softndk::wdk::net::shim
