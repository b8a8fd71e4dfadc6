// SPDX-License-Identifier: Apache-2.0
// abi_pd.cc - NDK_PD_DISPATCH, NDK_MR_DISPATCH and NDK_MW_DISPATCH shims.
#include "ndk/abi_common.h"
#include "ndk/cq.h"
#include "ndk/dispatch.h"
#include "ndk/mr.h"
#include "ndk/mw.h"
#include "ndk/pd.h"
#include "ndk/qp.h"
#include "ndk/srq.h"

namespace softndk::ndk::abi {
namespace {

// ---- PD ----------------------------------------------------------------------

NTSTATUS ClosePd(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypePd, cb, ctx);
}

NTSTATUS CreateMr(NDK_PD* p, BOOLEAN fast, NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_MR** out) {
  return guarded([&] {
    Pd* pd;
    NTSTATUS s = live(p, NdkObjectTypePd, &pd);
    if (s != STATUS_SUCCESS) return s;
    return create<Mr>(pd->adapter(), Resource::kMr, done, ctx, out,
                      [&](Mr** o) { return Mr::create(pd, fast != FALSE, o); });
  });
}

NTSTATUS CreateMw(NDK_PD* p, NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_MW** out) {
  return guarded([&] {
    Pd* pd;
    NTSTATUS s = live(p, NdkObjectTypePd, &pd);
    if (s != STATUS_SUCCESS) return s;
    // On a device engine windows are the device's (Mw::create, provider.h v3).
    return create<Mw>(pd->adapter(), Resource::kMw, done, ctx, out,
                      [&](Mw** o) { return Mw::create(pd, o); });
  });
}

NTSTATUS CreateSrq(NDK_PD* p, ULONG depth, ULONG max_sge, ULONG threshold,
                   NDK_FN_SRQ_NOTIFICATION_CALLBACK cb, PVOID cb_ctx, GROUP_AFFINITY*,
                   NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_SRQ** out) {
  return guarded([&] {
    Pd* pd;
    NTSTATUS s = live(p, NdkObjectTypePd, &pd);
    if (s != STATUS_SUCCESS) return s;
    return create<Srq>(pd->adapter(), Resource::kSrq, done, ctx, out, [&](Srq** o) {
      return Srq::create(pd, depth, max_sge, threshold, cb, cb_ctx, o);
    });
  });
}

NTSTATUS create_qp(NDK_PD* p, NDK_CQ* rcq_p, NDK_CQ* icq_p, NDK_SRQ* srq_p, bool with_srq,
                   const QpConfig& cfg, NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_QP** out) {
  return guarded([&] {
    Pd* pd;
    Cq* rcq;
    Cq* icq;
    Srq* srq = nullptr;
    NTSTATUS s = live(p, NdkObjectTypePd, &pd);
    if (s == STATUS_SUCCESS) s = live(rcq_p, NdkObjectTypeCq, &rcq);
    if (s == STATUS_SUCCESS) s = live(icq_p, NdkObjectTypeCq, &icq);
    if (s == STATUS_SUCCESS && with_srq) s = live(srq_p, NdkObjectTypeSrq, &srq);
    if (s != STATUS_SUCCESS) return s;
    return create<Qp>(pd->adapter(), Resource::kQp, done, ctx, out,
                      [&](Qp** o) { return Qp::create(pd, rcq, icq, srq, cfg, o); });
  });
}

NTSTATUS CreateQp(NDK_PD* p, NDK_CQ* rcq, NDK_CQ* icq, PVOID qp_ctx, ULONG rq_depth, ULONG sq_depth,
                  ULONG rq_sge, ULONG sq_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION done,
                  PVOID ctx, NDK_QP** out) {
  QpConfig cfg{qp_ctx, rq_depth, sq_depth, rq_sge, sq_sge, inline_size};
  return create_qp(p, rcq, icq, nullptr, false, cfg, done, ctx, out);
}

NTSTATUS CreateQpWithSrq(NDK_PD* p, NDK_CQ* rcq, NDK_CQ* icq, NDK_SRQ* srq, PVOID qp_ctx,
                         ULONG sq_depth, ULONG sq_sge, ULONG inline_size,
                         NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_QP** out) {
  QpConfig cfg{qp_ctx, 0, sq_depth, 0, sq_sge, inline_size};
  return create_qp(p, rcq, icq, srq, true, cfg, done, ctx, out);
}

void GetPrivilegedMemoryRegionToken(NDK_PD* p, UINT32* token) {
  Pd* pd;
  if (token == nullptr) return;
  if (live(p, NdkObjectTypePd, &pd) != STATUS_SUCCESS) {
    *token = 0;
    return;
  }
  // A device engine (the verbs backend) has no privileged token: verbs
  // offers no reserved lkey to user space, and the object model's token
  // would reach the device as an lkey it never issued. 0 is no device's key
  // (siw, rxe): an SGE naming it fails with the device's local protection
  // error (docs/verbs.md, "NdkGetPrivilegedMemoryRegionToken").
  *token = pd->adapter()->provider().registers_memory() ? 0 : pd->privileged_token();
}

// ---- MR ----------------------------------------------------------------------

NTSTATUS CloseMr(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeMr, cb, ctx);
}

NTSTATUS RegisterMr(NDK_MR* p, MDL* mdl, SIZE_T length, ULONG flags, NDK_FN_REQUEST_COMPLETION done,
                    PVOID ctx) {
  return guarded([&] {
    Mr* mr;
    NTSTATUS s = live(p, NdkObjectTypeMr, &mr);
    if (s != STATUS_SUCCESS) return s;
    if (mr->adapter()->provider().registers_memory())
      return mr->register_on_device(mdl, length, flags, done, ctx);
    return mr->adapter()->finish_request(mr, done, ctx, mr->register_mdl(mdl, length, flags));
  });
}

NTSTATUS DeregisterMr(NDK_MR* p, NDK_FN_REQUEST_COMPLETION done, PVOID ctx) {
  return guarded([&] {
    Mr* mr;
    NTSTATUS s = live(p, NdkObjectTypeMr, &mr);
    if (s != STATUS_SUCCESS) return s;
    if (mr->adapter()->provider().registers_memory()) return mr->deregister_on_device(done, ctx);
    return mr->adapter()->finish_request(mr, done, ctx, mr->deregister());
  });
}

NTSTATUS InitializeFastRegisterMr(NDK_MR* p, ULONG pages, BOOLEAN remote,
                                  NDK_FN_REQUEST_COMPLETION done, PVOID ctx) {
  return guarded([&] {
    Mr* mr;
    NTSTATUS s = live(p, NdkObjectTypeMr, &mr);
    if (s != STATUS_SUCCESS) return s;
    return mr->adapter()->finish_request(mr, done, ctx,
                                         mr->initialize_fast_register(pages, remote != FALSE));
  });
}

UINT32 GetRemoteTokenFromMr(NDK_MR* p) {
  Mr* mr;
  return live(p, NdkObjectTypeMr, &mr) == STATUS_SUCCESS ? mr->token() : 0;
}

UINT32 GetLocalTokenFromMr(NDK_MR* p) {
  Mr* mr;
  return live(p, NdkObjectTypeMr, &mr) == STATUS_SUCCESS ? mr->local_token() : 0;
}

// ---- MW ----------------------------------------------------------------------

NTSTATUS CloseMw(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeMw, cb, ctx);
}

UINT32 GetRemoteTokenFromMw(NDK_MW* p) {
  Mw* mw;
  return live(p, NdkObjectTypeMw, &mw) == STATUS_SUCCESS ? mw->token() : 0;
}

}  // namespace
}  // namespace softndk::ndk::abi

namespace softndk::ndk {
const NDK_PD_DISPATCH kPdDispatch = {
    abi::ClosePd,   abi::query_extension, abi::CreateMr,        abi::CreateMw,
    abi::CreateSrq, abi::CreateQp,        abi::CreateQpWithSrq, abi::GetPrivilegedMemoryRegionToken,
};
const NDK_MR_DISPATCH kMrDispatch = {
    abi::CloseMr,
    abi::query_extension,
    abi::RegisterMr,
    abi::DeregisterMr,
    abi::InitializeFastRegisterMr,
    abi::GetRemoteTokenFromMr,
    abi::GetLocalTokenFromMr,
};
const NDK_MW_DISPATCH kMwDispatch = {abi::CloseMw, abi::query_extension, abi::GetRemoteTokenFromMw};
}  // namespace softndk::ndk
