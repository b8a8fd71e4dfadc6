// SPDX-License-Identifier: Apache-2.0
// ndk_shim_track.cc - object tracking and the callback trampolines.
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel/stress.h"
#include "ndk_shim_internal.h"
#include "net/ndk_trace.h"

namespace softndk::wdk::net::shim {

Originals g_orig;

namespace {

struct Node {
  NDK_ADAPTER* adapter = nullptr;
  NDK_OBJECT_TYPE type = NdkObjectTypeUndefined;
  bool closing = false;
  std::vector<EventThunk*> thunks;
};

std::mutex g_mu;
std::unordered_map<const void*, Node>& nodes() {
  static auto* m = new std::unordered_map<const void*, Node>;  // outlives static dtors
  return *m;
}

void free_thunks(Node& n) {
  for (EventThunk* t : n.thunks) delete t;
  n.thunks.clear();
}

// Records softndk's table for the type and installs the kit's. Returns false
// for an object that already carries the kit table.
template <typename T, typename D>
bool swap_table(T* obj, std::atomic<const D*>& orig, const D* shim) {
  const D* theirs = obj->Dispatch;
  if (theirs == shim || theirs == trace::Table(shim)) return false;
  const D* expected = nullptr;
  if (!orig.compare_exchange_strong(expected, theirs) && expected != theirs) {
    report_misuse("softndk-wdk", nullptr,
                  "an NDK object arrived with an unexpected provider table");
  }
  obj->Dispatch = trace::Table(shim);  // the shim's, or its tracing twin (--trace)
  return true;
}

const char* type_name(NDK_OBJECT_TYPE t) {
  switch (t) {
    case NdkObjectTypeQp:
      return "QP";
    case NdkObjectTypeCq:
      return "CQ";
    case NdkObjectTypeMr:
      return "MR";
    case NdkObjectTypeMw:
      return "MW";
    case NdkObjectTypePd:
      return "PD";
    case NdkObjectTypeSharedEndpoint:
      return "shared endpoint";
    case NdkObjectTypeConnector:
      return "connector";
    case NdkObjectTypeListener:
      return "listener";
    case NdkObjectTypeSrq:
      return "SRQ";
    default:
      return "object";
  }
}

}  // namespace

void adopt(NDK_OBJECT_HEADER* obj, NDK_ADAPTER* adapter, EventThunk* ev) {
  bool fresh = true;
  switch (obj->ObjectType) {
    case NdkObjectTypeAdapter:
      fresh = swap_table(reinterpret_cast<NDK_ADAPTER*>(obj), g_orig.adapter, &kShimAdapter);
      break;
    case NdkObjectTypeCq:
      fresh = swap_table(reinterpret_cast<NDK_CQ*>(obj), g_orig.cq, &kShimCq);
      break;
    case NdkObjectTypePd:
      fresh = swap_table(reinterpret_cast<NDK_PD*>(obj), g_orig.pd, &kShimPd);
      break;
    case NdkObjectTypeMr:
      fresh = swap_table(reinterpret_cast<NDK_MR*>(obj), g_orig.mr, &kShimMr);
      break;
    case NdkObjectTypeMw:
      fresh = swap_table(reinterpret_cast<NDK_MW*>(obj), g_orig.mw, &kShimMw);
      break;
    case NdkObjectTypeSrq:
      fresh = swap_table(reinterpret_cast<NDK_SRQ*>(obj), g_orig.srq, &kShimSrq);
      break;
    case NdkObjectTypeQp:
      fresh = swap_table(reinterpret_cast<NDK_QP*>(obj), g_orig.qp, &kShimQp);
      break;
    case NdkObjectTypeConnector:
      fresh = swap_table(reinterpret_cast<NDK_CONNECTOR*>(obj), g_orig.connector, &kShimConnector);
      break;
    case NdkObjectTypeListener:
      fresh = swap_table(reinterpret_cast<NDK_LISTENER*>(obj), g_orig.listener, &kShimListener);
      break;
    case NdkObjectTypeSharedEndpoint:
      fresh = swap_table(reinterpret_cast<NDK_SHARED_ENDPOINT*>(obj), g_orig.shared_endpoint,
                         &kShimSharedEndpoint);
      break;
    default:
      report_misuse("softndk-wdk", nullptr, "an NDK object of unknown type was created");
      delete ev;
      return;
  }
  std::lock_guard lock(g_mu);
  Node& n = nodes()[obj];
  if (fresh) {  // a new object, possibly at the address of a closed one
    free_thunks(n);
    n = Node{};
    n.adapter = adapter;
    n.type = obj->ObjectType;
  }
  if (ev != nullptr) n.thunks.push_back(ev);
}

bool attach(const void* obj, EventThunk* ev) {
  std::lock_guard lock(g_mu);
  auto it = nodes().find(obj);
  if (it == nodes().end()) {
    delete ev;  // unknown object: softndk refuses the call anyway
    return false;
  }
  it->second.thunks.push_back(ev);
  return true;
}

NDK_ADAPTER* adapter_of(const void* obj) {
  std::lock_guard lock(g_mu);
  auto it = nodes().find(obj);
  return it == nodes().end() ? nullptr : it->second.adapter;
}

bool mark_closing(const void* obj) {
  std::lock_guard lock(g_mu);
  auto it = nodes().find(obj);
  if (it == nodes().end()) return false;
  it->second.closing = true;
  return !it->second.thunks.empty();
}

void forget(const void* obj) {
  std::lock_guard lock(g_mu);
  auto it = nodes().find(obj);
  // Only the close that started it: a new object may have taken the address.
  if (it == nodes().end() || !it->second.closing) return;
  free_thunks(it->second);
  nodes().erase(it);
}

void adopt_adapter(NDK_ADAPTER* adapter) { adopt(&adapter->Header, adapter, nullptr); }

bool is_open_adapter(const NDK_ADAPTER* adapter) {
  std::lock_guard lock(g_mu);
  auto it = nodes().find(adapter);
  return it != nodes().end() && it->second.type == NdkObjectTypeAdapter;
}

unsigned forget_adapter(NDK_ADAPTER* adapter, const char* caller, const void* site) {
  std::map<std::string, unsigned> left;
  unsigned count = 0;
  {
    std::lock_guard lock(g_mu);
    for (auto it = nodes().begin(); it != nodes().end();) {
      if (it->second.adapter != adapter) {
        ++it;
        continue;
      }
      if (it->first != adapter && !it->second.closing) {
        ++left[type_name(it->second.type)];
        ++count;
      }
      free_thunks(it->second);
      it = nodes().erase(it);
    }
  }
  if (count != 0) {
    std::string what = "the adapter closed with NDK objects still open:";
    for (auto& [name, n] : left) {
      // Appended piece by piece: gcc 12's -Wrestrict misfires on `" " + to_string(n)`.
      what += ' ';
      what += std::to_string(n);
      what += ' ';
      what += name;
    }
    report_leak(caller, site, what.c_str());
  }
  return count;
}

ULONG report_open_objects() {
  std::vector<std::pair<const void*, Node>> open;
  {
    std::lock_guard lock(g_mu);
    for (auto& [obj, n] : nodes()) {
      if (!n.closing) open.emplace_back(obj, Node{n.adapter, n.type, false, {}});
    }
  }
  char what[160];
  for (auto& [obj, n] : open) {
    if (n.type == NdkObjectTypeAdapter) {
      std::snprintf(what, sizeof what, "NDK adapter %p still open at unload", obj);
      report_leak("WskOpenNdkAdapter", nullptr, what);
    } else {
      std::snprintf(what, sizeof what, "NDK %s %p (adapter %p) still open at unload",
                    type_name(n.type), obj, static_cast<void*>(n.adapter));
      report_leak("NdkCreate*", nullptr, what);
    }
  }
  return static_cast<ULONG>(open.size());
}

// ---------------------------------------------------------------------------
// Trampolines: the provider calls these; the consumer's function runs at
// DISPATCH_LEVEL.

void cq_notify_trampoline(void* ctx, NTSTATUS status) {
  auto* t = static_cast<EventThunk*>(ctx);
  softndk::wdk::Stress(softndk::wdk::StressPoint::kCqNotification);
  AtDispatch irql;
  trace::Event("CQ notification", t->ctx, nullptr, status);
  reinterpret_cast<NDK_FN_CQ_NOTIFICATION_CALLBACK>(t->fn)(t->ctx, status);
}

void srq_notify_trampoline(void* ctx, NTSTATUS status) {
  auto* t = static_cast<EventThunk*>(ctx);
  AtDispatch irql;
  trace::Event("SRQ notification", t->ctx, nullptr, status);
  reinterpret_cast<NDK_FN_SRQ_NOTIFICATION_CALLBACK>(t->fn)(t->ctx, status);
}

void connect_event_trampoline(void* ctx, NDK_CONNECTOR* connector) {
  auto* t = static_cast<EventThunk*>(ctx);
  if (connector != nullptr) adopt(&connector->Header, t->adapter, nullptr);
  AtDispatch irql;
  trace::Event("connect event", t->ctx, connector, 0);
  reinterpret_cast<NDK_FN_CONNECT_EVENT_CALLBACK>(t->fn)(t->ctx, connector);
}

void disconnect_trampoline(void* ctx) {
  auto* t = static_cast<EventThunk*>(ctx);
  AtDispatch irql;
  trace::Event("disconnect event", t->ctx, nullptr, 0);
  reinterpret_cast<NDK_FN_DISCONNECT_EVENT_CALLBACK>(t->fn)(t->ctx);
}

void disconnect_ex_trampoline(void* ctx, ULONG reason) {
  auto* t = static_cast<EventThunk*>(ctx);
  AtDispatch irql;
  trace::Event("disconnect event", t->ctx, nullptr, reason);
  reinterpret_cast<NDK_FN_DISCONNECT_EVENT_CALLBACK_EX>(t->fn)(t->ctx, reason);
}

void create_trampoline(void* ctx, NTSTATUS status, NDK_OBJECT_HEADER* obj) {
  auto* t = static_cast<CreateThunk*>(ctx);
  if (NT_SUCCESS(status) && obj != nullptr) {
    adopt(obj, t->adapter, t->ev);
  } else {
    delete t->ev;
  }
  {
    AtDispatch irql;
    trace::Event("create completion", t->ctx, obj, status);
    t->fn(t->ctx, status, obj);
  }
  delete t;
}

void request_trampoline(void* ctx, NTSTATUS status) {
  auto* t = static_cast<RequestThunk*>(ctx);
  softndk::wdk::Stress(softndk::wdk::StressPoint::kNdkCompletion);
  {
    AtDispatch irql;
    trace::Event("request completion", t->ctx, nullptr, status);
    t->fn(t->ctx, status);
  }
  delete t;
}

void close_trampoline(void* ctx) {
  auto* t = static_cast<CloseThunk*>(ctx);
  forget(t->obj);
  if (t->fn != nullptr) {
    AtDispatch irql;
    trace::Event("close completion", t->ctx, t->obj, 0);
    t->fn(t->ctx);
  }
  delete t;
}

}  // namespace softndk::wdk::net::shim
