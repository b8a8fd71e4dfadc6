// SPDX-License-Identifier: Apache-2.0
// abi_qp.cc - NDK_QP_DISPATCH shims (posting calls and flush).
#include "ndk/abi_common.h"
#include "ndk/dispatch.h"
#include "ndk/mr.h"
#include "ndk/mw.h"
#include "ndk/qp.h"

namespace softndk::ndk::abi {
namespace {

NTSTATUS CloseQp(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeQp, cb, ctx);
}

void Flush(NDK_QP* p) {
  Qp* qp;
  if (live(p, NdkObjectTypeQp, &qp) == STATUS_SUCCESS) qp->flush();
}

// Every initiator call goes through here: whatever refuses it inline - the
// QP's own checks, a missing MR, MW or target handle, an exception - first
// starts the requests queued with NDK_OP_FLAG_DEFER (NDKPI deferred
// processing scheme), so a chain cut short by a failure still completes.
template <typename F>
NTSTATUS post(NDK_QP* p, F&& f) {
  Qp* qp;
  NTSTATUS s = live(p, NdkObjectTypeQp, &qp);
  if (s != STATUS_SUCCESS) return s;
  s = guarded([&] { return f(qp); });
  if (s != STATUS_SUCCESS) qp->kick_on_failure();
  return s;
}

NTSTATUS Send(NDK_QP* p, PVOID ctx, const NDK_SGE* sgl, ULONG nsge, ULONG flags) {
  return post(p, [&](Qp* qp) { return qp->send(ctx, sgl, nsge, flags, false, 0); });
}

NTSTATUS SendAndInvalidate(NDK_QP* p, PVOID ctx, const NDK_SGE* sgl, ULONG nsge, ULONG flags,
                           UINT32 token) {
  return post(p, [&](Qp* qp) { return qp->send(ctx, sgl, nsge, flags, true, token); });
}

NTSTATUS Receive(NDK_QP* p, PVOID ctx, const NDK_SGE* sgl, ULONG nsge) {
  return guarded([&] {
    Qp* qp;
    NTSTATUS s = live(p, NdkObjectTypeQp, &qp);
    return s != STATUS_SUCCESS ? s : qp->receive(ctx, sgl, nsge);
  });
}

NTSTATUS Bind(NDK_QP* p, PVOID ctx, NDK_MR* mr_p, NDK_MW* mw_p, PVOID va, SIZE_T length,
              ULONG flags) {
  return post(p, [&](Qp* qp) -> NTSTATUS {
    Mr* mr;
    Mw* mw;
    NTSTATUS s = live(mr_p, NdkObjectTypeMr, &mr);
    if (s == STATUS_SUCCESS) s = live(mw_p, NdkObjectTypeMw, &mw);
    if (s != STATUS_SUCCESS) return s;
    return qp->bind(ctx, mr, mw, reinterpret_cast<uintptr_t>(va), length, flags);
  });
}

NTSTATUS FastRegister(NDK_QP* p, PVOID ctx, NDK_MR* mr_p, ULONG pages,
                      const NDK_LOGICAL_ADDRESS* page_array, ULONG fbo, SIZE_T length, PVOID va,
                      ULONG flags) {
  return post(p, [&](Qp* qp) -> NTSTATUS {
    Mr* mr;
    NTSTATUS s = live(mr_p, NdkObjectTypeMr, &mr);
    if (s != STATUS_SUCCESS) return s;
    return qp->fast_register(ctx, mr, pages, page_array, fbo, length,
                             reinterpret_cast<uintptr_t>(va), flags);
  });
}

NTSTATUS Invalidate(NDK_QP* p, PVOID ctx, NDK_OBJECT_HEADER* target, ULONG flags) {
  return post(p, [&](Qp* qp) -> NTSTATUS {
    if (target == nullptr) return STATUS_INVALID_PARAMETER;
    Object* o;
    NTSTATUS s = target->ObjectType == NdkObjectTypeMw ? live(target, NdkObjectTypeMw, &o)
                                                       : live(target, NdkObjectTypeMr, &o);
    if (s == STATUS_OBJECT_TYPE_MISMATCH) return STATUS_INVALID_PARAMETER;
    if (s != STATUS_SUCCESS) return s;
    return qp->invalidate(ctx, o, flags);
  });
}

NTSTATUS Read(NDK_QP* p, PVOID ctx, const NDK_SGE* sgl, ULONG nsge, UINT64 addr, UINT32 token,
              ULONG flags) {
  return post(p, [&](Qp* qp) { return qp->read(ctx, sgl, nsge, addr, token, flags); });
}

NTSTATUS Write(NDK_QP* p, PVOID ctx, const NDK_SGE* sgl, ULONG nsge, UINT64 addr, UINT32 token,
               ULONG flags) {
  return post(p, [&](Qp* qp) { return qp->write(ctx, sgl, nsge, addr, token, flags); });
}

}  // namespace
}  // namespace softndk::ndk::abi

namespace softndk::ndk {
const NDK_QP_DISPATCH kQpDispatch = {
    abi::CloseQp,      abi::query_extension,   abi::Flush,
    abi::Send,         abi::Receive,           abi::Bind,
    abi::FastRegister, abi::Invalidate,        abi::Read,
    abi::Write,        abi::SendAndInvalidate,
};
}  // namespace softndk::ndk
