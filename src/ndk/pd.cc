// SPDX-License-Identifier: Apache-2.0
// pd.cc - protection domain and its privileged token.
#include "ndk/pd.h"

#include <memory>

#include "ndk/adapter.h"
#include "ndk/dispatch.h"

namespace softndk::ndk {

Pd::Pd(Adapter* a) : Object(a, NdkObjectTypePd, Resource::kPd) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kPdDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

Pd::~Pd() = default;

NTSTATUS Pd::create(Adapter* a, Pd** out) {
  auto pd = std::unique_ptr<Pd>(new Pd(a));
  StagTable& t = a->stags();
  pd->privileged_ = t.allocate(StagKind::kPrivileged, pd.get(), nullptr);
  if (pd->privileged_ == 0) return STATUS_INSUFFICIENT_RESOURCES;
  t.validate(pd->privileged_, 0, ~0ull, kAccessLocalRead | kAccessLocalWrite | kAccessReadSink);
  *out = pd.release();
  return STATUS_SUCCESS;
}

void Pd::on_closed() { adapter()->stags().free(privileged_); }

}  // namespace softndk::ndk
