// SPDX-License-Identifier: Apache-2.0
// abi_cq.cc - NDK_CQ_DISPATCH shims.
#include "ndk/abi_common.h"
#include "ndk/cq.h"
#include "ndk/dispatch.h"

namespace softndk::ndk::abi {
namespace {

NTSTATUS CloseCq(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION cb, PVOID ctx) {
  return close_object(h, NdkObjectTypeCq, cb, ctx);
}

NTSTATUS ResizeCq(NDK_CQ* p, ULONG depth, NDK_FN_REQUEST_COMPLETION done, PVOID ctx) {
  return guarded([&] {
    Cq* cq;
    NTSTATUS s = live(p, NdkObjectTypeCq, &cq);
    if (s != STATUS_SUCCESS) return s;
    return cq->adapter()->finish_request(cq, done, ctx, cq->resize(depth));
  });
}

void ArmCq(NDK_CQ* p, ULONG type) {
  Cq* cq;
  if (live(p, NdkObjectTypeCq, &cq) == STATUS_SUCCESS) cq->arm(type);
}

// Draining stays possible after a fatal error: it is how the consumer
// collects the STATUS_CANCELLED completions of the flushed QPs.
ULONG GetCqResults(NDK_CQ* p, NDK_RESULT* out, ULONG n) {
  Cq* cq;
  if (resolve(p, NdkObjectTypeCq, &cq) != STATUS_SUCCESS || out == nullptr) return 0;
  return cq->get_results(out, n);
}

ULONG GetCqResultsEx(NDK_CQ* p, NDK_RESULT_EX* out, ULONG n) {
  Cq* cq;
  if (resolve(p, NdkObjectTypeCq, &cq) != STATUS_SUCCESS || out == nullptr) return 0;
  return cq->get_results_ex(out, n);
}

NTSTATUS ControlCqInterruptModeration(NDK_CQ* p, ULONG interval, ULONG count) {
  Cq* cq;
  NTSTATUS s = live(p, NdkObjectTypeCq, &cq);
  return s != STATUS_SUCCESS ? s : cq->moderate(interval, count);
}

}  // namespace
}  // namespace softndk::ndk::abi

namespace softndk::ndk {
const NDK_CQ_DISPATCH kCqDispatch = {
    abi::CloseCq,        abi::query_extension, abi::ResizeCq,
    abi::ArmCq,          abi::GetCqResults,    abi::ControlCqInterruptModeration,
    abi::GetCqResultsEx,
};
}  // namespace softndk::ndk
