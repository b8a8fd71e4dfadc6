// SPDX-License-Identifier: Apache-2.0
// abi_common.h - helpers shared by the ABI shims (abi_*.cc).
//
// Shims never let an exception cross the C ABI: guarded() maps bad_alloc to
// STATUS_INSUFFICIENT_RESOURCES and anything else to STATUS_INTERNAL_ERROR.
// Order of checks in every shim: handle (NULL / closed / wrong kind), fatal
// adapter state (STATUS_FILE_FORCED_CLOSED, except for closes), then the
// function's own parameters.
#pragma once

#include <new>

#include "ndk/adapter.h"
#include "ndk/object.h"

namespace softndk::ndk::abi {

template <typename F>
NTSTATUS guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return STATUS_INSUFFICIENT_RESOURCES;
  } catch (...) {
    return STATUS_INTERNAL_ERROR;
  }
}

// Resolves a handle and refuses calls on a failed adapter.
template <typename T>
NTSTATUS live(const void* p, NDK_OBJECT_TYPE type, T** out) {
  NTSTATUS s = resolve(p, type, out);
  if (s != STATUS_SUCCESS) return s;
  if ((*out)->adapter()->dead()) return STATUS_FILE_FORCED_CLOSED;
  return STATUS_SUCCESS;
}

inline NTSTATUS live_adapter(const void* p, Adapter** out) {
  NTSTATUS s = Adapter::from(p, out);
  if (s != STATUS_SUCCESS) return s;
  if ((*out)->dead()) return STATUS_FILE_FORCED_CLOSED;
  return STATUS_SUCCESS;
}

// The common create protocol: argument checks, cap, construction, delivery.
// `make(T**)` builds the object or returns a failure status.
template <typename T, typename Make>
NTSTATUS create(Adapter* a, Resource r, NDK_FN_CREATE_COMPLETION cb, void* ctx, void* out,
                Make&& make) {
  if (a->async_create() ? cb == nullptr : out == nullptr) return STATUS_INVALID_PARAMETER;
  if (!a->reserve(r)) return STATUS_INSUFFICIENT_RESOURCES;
  T* o = nullptr;
  NTSTATUS s;
  try {
    s = make(&o);
  } catch (const std::bad_alloc&) {
    s = STATUS_INSUFFICIENT_RESOURCES;
  }
  if (s != STATUS_SUCCESS) {
    a->unreserve(r);
    return s;
  }
  return a->deliver_created(o, cb, ctx, static_cast<void**>(out));
}

NTSTATUS close_object(void* p, NDK_OBJECT_TYPE type, NDK_FN_CLOSE_COMPLETION cb, void* ctx);
NTSTATUS query_extension(NDK_OBJECT_HEADER* h, const GUID* id, NDK_VERSION v,
                         NDK_EXTENSION_INTERFACE* out);

}  // namespace softndk::ndk::abi
