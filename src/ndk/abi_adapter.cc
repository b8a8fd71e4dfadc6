// SPDX-License-Identifier: Apache-2.0
// abi_adapter.cc - NDK_ADAPTER_DISPATCH shims, NdkBuildLAM/NdkReleaseLAM,
// and the close/extension helpers every table shares.
#include <cstddef>

#include "ndk/abi_common.h"
#include "ndk/cq.h"
#include "ndk/dispatch.h"
#include "ndk/endpoints.h"
#include "ndk/mr.h"
#include "ndk/pd.h"

namespace softndk::ndk::abi {

NTSTATUS close_object(void* p, NDK_OBJECT_TYPE type, NDK_FN_CLOSE_COMPLETION cb, void* ctx) {
  Object* o = nullptr;
  NTSTATUS s = check_handle(p, type, &o, false);
  if (s != STATUS_SUCCESS) return s;
  // Close never fails, not even on a failed adapter.
  return o->close(cb, ctx, o->adapter()->async_close() && cb != nullptr);
}

NTSTATUS query_extension(NDK_OBJECT_HEADER* h, const GUID*, NDK_VERSION, NDK_EXTENSION_INTERFACE*) {
  if (h == nullptr) return STATUS_INVALID_HANDLE;
  if (h->ObjectType == NdkObjectTypeAdapter) {
    Adapter* a;
    NTSTATUS s = live_adapter(h, &a);
    return s != STATUS_SUCCESS ? s : STATUS_NOT_SUPPORTED;
  }
  Object* o;
  NTSTATUS s = live(h, h->ObjectType, &o);
  return s != STATUS_SUCCESS ? s : STATUS_NOT_SUPPORTED;  // no extensions exist
}

namespace {

NTSTATUS QueryAdapterInfo(NDK_ADAPTER* p, NDK_ADAPTER_INFO* info, ULONG* size) {
  Adapter* a;
  NTSTATUS s = live_adapter(p, &a);
  return s != STATUS_SUCCESS ? s : a->query_info(info, size);
}

NTSTATUS CreateCq(NDK_ADAPTER* p, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, PVOID cb_ctx,
                  GROUP_AFFINITY*, NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_CQ** out) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(p, &a);
    if (s != STATUS_SUCCESS) return s;
    return create<Cq>(a, Resource::kCq, done, ctx, out,
                      [&](Cq** o) { return Cq::create(a, depth, cb, cb_ctx, o); });
  });
}

NTSTATUS CreatePd(NDK_ADAPTER* p, NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_PD** out) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(p, &a);
    if (s != STATUS_SUCCESS) return s;
    return create<Pd>(a, Resource::kPd, done, ctx, out, [&](Pd** o) { return Pd::create(a, o); });
  });
}

NTSTATUS CreateSharedEndpoint(NDK_ADAPTER* p, const SOCKADDR* addr, ULONG len,
                              NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_SHARED_ENDPOINT** out) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(p, &a);
    if (s != STATUS_SUCCESS) return s;
    return create<SharedEndpoint>(a, Resource::kNone, done, ctx, out, [&](SharedEndpoint** o) {
      return SharedEndpoint::create(a, addr, len, o);
    });
  });
}

NTSTATUS CreateConnector(NDK_ADAPTER* p, NDK_FN_CREATE_COMPLETION done, PVOID ctx,
                         NDK_CONNECTOR** out) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(p, &a);
    if (s != STATUS_SUCCESS) return s;
    return create<Connector>(a, Resource::kConnector, done, ctx, out,
                             [&](Connector** o) { return Connector::create(a, o); });
  });
}

NTSTATUS CreateListener(NDK_ADAPTER* p, NDK_FN_CONNECT_EVENT_CALLBACK cb, PVOID cb_ctx,
                        NDK_FN_CREATE_COMPLETION done, PVOID ctx, NDK_LISTENER** out) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(p, &a);
    if (s != STATUS_SUCCESS) return s;
    return create<Listener>(a, Resource::kNone, done, ctx, out,
                            [&](Listener** o) { return Listener::create(a, cb, cb_ctx, o); });
  });
}

// A LAM maps the MDL's pages: logical address = process VA of each page.
NTSTATUS BuildLAM(NDK_ADAPTER* p, MDL* mdl, SIZE_T length, NDK_FN_REQUEST_COMPLETION done,
                  PVOID ctx, NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* lam_size, ULONG* fbo) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(p, &a);
    if (s != STATUS_SUCCESS) return s;
    if (lam_size == nullptr || fbo == nullptr) return STATUS_INVALID_PARAMETER;
    if (length > a->info().MaxRegistrationSize) return STATUS_INVALID_PARAMETER;
    uint64_t base = 0;
    s = Mr::walk_mdl(mdl, length, &base);
    if (s != STATUS_SUCCESS) return s;
    uint64_t first = base & ~uint64_t{NDK_PAGE_SIZE - 1};
    uint64_t offset = base - first;
    uint64_t pages = (offset + length + NDK_PAGE_SIZE - 1) / NDK_PAGE_SIZE;
    uint64_t need = offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) +
                    pages * sizeof(NDK_LOGICAL_ADDRESS);
    if (need > 0xffffffffu) return STATUS_INSUFFICIENT_RESOURCES;
    if (lam == nullptr || *lam_size < need) {
      *lam_size = static_cast<ULONG>(need);
      return STATUS_BUFFER_TOO_SMALL;
    }
    lam->AdapterContext = a;
    lam->AdapterPageCount = static_cast<ULONG>(pages);
    for (uint64_t i = 0; i < pages; ++i)
      lam->AdapterPageArray[i].QuadPart = static_cast<int64_t>(first + i * NDK_PAGE_SIZE);
    *lam_size = static_cast<ULONG>(need);
    *fbo = static_cast<ULONG>(offset);
    if (a->provider().fr_support() == provider::Provider::FrSupport::kWindows) {
      // A device engine with windows: the LAM's pages become the arena the
      // fast-register windows are bound over (provider.h v3), registered on
      // the engine's thread; the outcome comes through `done`.
      if (done == nullptr) return STATUS_INVALID_PARAMETER;
      return a->provider().register_lam(first, pages * NDK_PAGE_SIZE,
                                        [done, ctx](NTSTATUS st) { done(ctx, st); });
    }
    return a->finish_request(nullptr, done, ctx, STATUS_SUCCESS);
  });
}

void ReleaseLAM(NDK_ADAPTER* p, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
  Adapter* a;
  if (Adapter::from(p, &a) != STATUS_SUCCESS || lam == nullptr) return;
  if (lam->AdapterContext != nullptr && lam->AdapterPageCount > 0 &&
      a->provider().fr_support() == provider::Provider::FrSupport::kWindows)
    a->provider().release_lam(static_cast<uint64_t>(lam->AdapterPageArray[0].QuadPart),
                              uint64_t{lam->AdapterPageCount} * NDK_PAGE_SIZE);
  lam->AdapterContext = nullptr;  // nothing is pinned: the mapping is the VA itself
}

}  // namespace
}  // namespace softndk::ndk::abi

namespace softndk::ndk {
const NDK_ADAPTER_DISPATCH kAdapterDispatch = {
    abi::query_extension,      abi::QueryAdapterInfo, abi::CreateCq,       abi::CreatePd,
    abi::CreateSharedEndpoint, abi::CreateConnector,  abi::CreateListener, abi::BuildLAM,
    abi::ReleaseLAM,
};
}  // namespace softndk::ndk
