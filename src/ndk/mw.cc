// SPDX-License-Identifier: Apache-2.0
// mw.cc - memory windows and their STag operations.
#include "ndk/mw.h"

#include <memory>

#include "ndk/adapter.h"
#include "ndk/dispatch.h"
#include "ndk/mr.h"
#include "ndk/pd.h"

namespace softndk::ndk {

Mw::Mw(Pd* pd) : Object(pd->adapter(), NdkObjectTypeMw, Resource::kMw), pd_(pd) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kMwDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

NTSTATUS Mw::create(Pd* pd, Mw** out) {
  auto mw = std::unique_ptr<Mw>(new Mw(pd));
  provider::Provider& p = pd->adapter()->provider();
  if (p.registers_memory()) {
    // A device engine: the window is the device's type-2 window, its rkey
    // the token (provider.h v3); engines without windows refuse.
    if (p.fr_support() != provider::Provider::FrSupport::kWindows) return STATUS_NOT_SUPPORTED;
    provider::Provider::WindowKeys k;
    NTSTATUS s = p.alloc_window(&k);
    if (s != STATUS_SUCCESS) return s;
    mw->dev_handle_ = k.handle;
    mw->stag_.store(k.rkey);
    mw->depend_on(pd);
    *out = mw.release();
    return STATUS_SUCCESS;
  }
  uint32_t stag = pd->adapter()->stags().allocate(StagKind::kMw, pd, mw.get());
  if (stag == 0) return STATUS_INSUFFICIENT_RESOURCES;
  mw->stag_.store(stag);
  mw->depend_on(pd);
  *out = mw.release();
  return STATUS_SUCCESS;
}

NTSTATUS Mw::prepare_bind(Mr* mr, uint64_t va, uint64_t length, uint32_t access, uint32_t* stag) {
  if (mr->pd() != pd_ || mr->fast_register() || !mr->registered()) return STATUS_INVALID_PARAMETER;
  if (va == 0 || length == 0) return STATUS_INVALID_PARAMETER;
  if (dev_handle_ != 0) {
    // A device window over the MR's device registration; the window keeps
    // its rkey (the device checks rights and range again at execution).
    uint64_t b = mr->device_base(), l = mr->device_length();
    if (va < b || length > l || va - b > l - length) return STATUS_INVALID_PARAMETER;
    *stag = stag_.load();
    return STATUS_SUCCESS;
  }
  StagInfo mi;
  if (!adapter()->stags().lookup(mr->token(), &mi) || !mi.valid) return STATUS_INVALID_PARAMETER;
  if (va < mi.base || length > mi.length || va - mi.base > mi.length - length)
    return STATUS_INVALID_PARAMETER;
  if ((access & kAccessRemoteWrite) && !(mi.access & kAccessLocalWrite))
    return STATUS_ACCESS_VIOLATION;
  uint32_t n = adapter()->stags().rekey(stag_.load());
  if (n == 0) return STATUS_INVALID_PARAMETER;
  stag_.store(n, std::memory_order_release);
  *stag = n;
  return STATUS_SUCCESS;
}

void Mw::set_bound_mr(Mr* mr) {
  Mr* old;
  {
    std::lock_guard lk(mu_);
    old = bound_;
    bound_ = mr;
    if (mr != nullptr) mr->hold();
  }
  if (old != nullptr) old->release();
}

bool Mw::execute_bind(Mr* mr, uint32_t stag, uint64_t va, uint64_t length, uint32_t access,
                      const void* qp) {
  if (!adapter()->stags().validate(stag, va, length, access, qp)) return false;
  set_bound_mr(mr);
  return true;
}

bool Mw::execute_bind(provider::MemoryObject* mr, uint32_t stag, uint64_t va, uint64_t length,
                      uint32_t access, const void* qp) {
  return execute_bind(static_cast<Mr*>(mr), stag, va, length, access, qp);
}

bool Mw::invalidate(uint32_t stag) {
  if (!adapter()->stags().invalidate(stag)) return false;
  set_bound_mr(nullptr);
  return true;
}

void Mw::on_closed() {
  if (dev_handle_ != 0) {
    adapter()->provider().free_window(dev_handle_);
    return;
  }
  adapter()->stags().free(stag_.load());
  set_bound_mr(nullptr);
}

}  // namespace softndk::ndk
