// SPDX-License-Identifier: Apache-2.0
// ndk_shim_internal.h - shared by the ndk_shim_*.cc files: the provider's
// original tables, the object tracker and the callback trampolines.
#pragma once

#include <atomic>
#include <new>

#include "ndk_shim.h"
#include "net_irql.h"

namespace softndk::wdk::net::shim {

// softndk's own tables, one per object type (softndk uses one static table
// per type; the first object of a type records it).
struct Originals {
  std::atomic<const NDK_ADAPTER_DISPATCH*> adapter{nullptr};
  std::atomic<const NDK_CQ_DISPATCH*> cq{nullptr};
  std::atomic<const NDK_PD_DISPATCH*> pd{nullptr};
  std::atomic<const NDK_MR_DISPATCH*> mr{nullptr};
  std::atomic<const NDK_MW_DISPATCH*> mw{nullptr};
  std::atomic<const NDK_SRQ_DISPATCH*> srq{nullptr};
  std::atomic<const NDK_QP_DISPATCH*> qp{nullptr};
  std::atomic<const NDK_CONNECTOR_DISPATCH*> connector{nullptr};
  std::atomic<const NDK_LISTENER_DISPATCH*> listener{nullptr};
  std::atomic<const NDK_SHARED_ENDPOINT_DISPATCH*> shared_endpoint{nullptr};
};
extern Originals g_orig;

// The kit's tables (ndk_shim_*.cc).
extern const NDK_ADAPTER_DISPATCH kShimAdapter;
extern const NDK_CQ_DISPATCH kShimCq;
extern const NDK_PD_DISPATCH kShimPd;
extern const NDK_MR_DISPATCH kShimMr;
extern const NDK_MW_DISPATCH kShimMw;
extern const NDK_SRQ_DISPATCH kShimSrq;
extern const NDK_QP_DISPATCH kShimQp;
extern const NDK_CONNECTOR_DISPATCH kShimConnector;
extern const NDK_LISTENER_DISPATCH kShimListener;
extern const NDK_SHARED_ENDPOINT_DISPATCH kShimSharedEndpoint;

// A consumer callback that lives as long as its object (CQ/SRQ
// notification, listener connect event, connector disconnect event).
struct EventThunk {
  void (*fn)();  // the consumer's function, cast back by the trampoline
  void* ctx;
  NDK_ADAPTER* adapter;
};

// Installs the kit table on a new object and tracks it under `adapter`
// with `ev` (may be null). Objects already carrying the kit table are left.
void adopt(NDK_OBJECT_HEADER* obj, NDK_ADAPTER* adapter, EventThunk* ev);
// Ties another long-lived callback to a tracked object; false (and `ev`
// freed) for an object the kit does not know.
bool attach(const void* obj, EventThunk* ev);
// The adapter a tracked object belongs to (null if unknown).
NDK_ADAPTER* adapter_of(const void* obj);
// Marks an object as being closed; true if the kit holds callback records
// for it (to be freed only once the close has finished).
bool mark_closing(const void* obj);
// Forgets an object once it is closed.
void forget(const void* obj);

// Trampolines for long-lived callbacks (ctx: EventThunk*).
void cq_notify_trampoline(void* ctx, NTSTATUS status);
void srq_notify_trampoline(void* ctx, NTSTATUS status);
void connect_event_trampoline(void* ctx, NDK_CONNECTOR* connector);
void disconnect_trampoline(void* ctx);
void disconnect_ex_trampoline(void* ctx, ULONG reason);

// One-shot callbacks.
struct CreateThunk {
  NDK_FN_CREATE_COMPLETION fn;
  void* ctx;
  NDK_ADAPTER* adapter;
  EventThunk* ev;
};
void create_trampoline(void* ctx, NTSTATUS status, NDK_OBJECT_HEADER* obj);

struct RequestThunk {
  NDK_FN_REQUEST_COMPLETION fn;
  void* ctx;
};
void request_trampoline(void* ctx, NTSTATUS status);

struct CloseThunk {
  NDK_FN_CLOSE_COMPLETION fn;
  void* ctx;
  const void* obj;
};
void close_trampoline(void* ctx);

// A create call: `call(completion, context, out)` is softndk's function
// with the kit's completion. A synchronous success adopts *out at once.
template <typename Call>
NTSTATUS create(NDK_ADAPTER* adapter, NDK_FN_CREATE_COMPLETION cc, void* ctx, EventThunk* ev,
                void** out, Call&& call) {
  auto* t = new (std::nothrow) CreateThunk{cc, ctx, adapter, ev};
  if (t == nullptr) {
    delete ev;
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  NTSTATUS st = call(cc != nullptr ? create_trampoline : nullptr, cc != nullptr ? t : ctx);
  if (st == STATUS_PENDING) return st;  // the trampoline owns t and ev now
  if (NT_SUCCESS(st) && out != nullptr && *out != nullptr) {
    adopt(static_cast<NDK_OBJECT_HEADER*>(*out), adapter, ev);
  } else {
    delete ev;
  }
  delete t;
  return st;
}

// A request with a completion: the consumer's runs at DISPATCH_LEVEL.
template <typename Call>
NTSTATUS request(NDK_FN_REQUEST_COMPLETION fn, void* ctx, Call&& call) {
  if (fn == nullptr) return call(nullptr, ctx);  // softndk judges the NULL
  auto* t = new (std::nothrow) RequestThunk{fn, ctx};
  if (t == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  NTSTATUS st = call(request_trampoline, t);
  if (st != STATUS_PENDING) delete t;
  return st;
}

// A close: the object is forgotten once softndk says it is closed. A close
// may pend even without a completion (a callback still running holds the
// object); the kit then still needs to know when it ends if it holds
// callback records for the object, so it passes its own completion.
template <typename Call>
NTSTATUS close(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_COMPLETION fn, void* ctx, Call&& call) {
  auto* t = new (std::nothrow) CloseThunk{fn, ctx, obj};
  if (t == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  const bool track = mark_closing(obj);
  const bool ours = fn != nullptr || track;
  NTSTATUS st = call(ours ? close_trampoline : nullptr, ours ? t : ctx);
  if (st == STATUS_PENDING && ours) return st;  // the trampoline forgets
  if (NT_SUCCESS(st)) forget(obj);
  delete t;
  return st;
}

// A new long-lived callback record, or null for a null callback.
template <typename Fn>
EventThunk* event_thunk(Fn fn, void* ctx, NDK_ADAPTER* adapter) {
  if (fn == nullptr) return nullptr;
  return new (std::nothrow) EventThunk{reinterpret_cast<void (*)()>(fn), ctx, adapter};
}

}  // namespace softndk::wdk::net::shim
