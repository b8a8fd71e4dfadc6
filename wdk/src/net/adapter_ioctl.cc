// SPDX-License-Identifier: Apache-2.0
// adapter_ioctl.cc - softndk's asynchronous adapter control behind a
// DEVICE_OBJECT: IRPs in, SOFTNDK_REQUESTs to softndk, IRPs completed.
//
// A queued request (fatal/port event) is finished by up to three parties:
// the dispatch routine that queued it, softndk's completion callback, and
// the cancel routine if IoCancelIrp runs it. Each records its part under the
// request's lock; the last one completes the IRP, outside every lock and
// never while a call into softndk is in progress (so a completion routine
// may close the adapter). Calls into softndk for an adapter are counted so
// that a close waits for them; a cancel routine that runs while the adapter
// is closing is finished by the close, which cancels every queued request.
#include <softndk_wdk/ndk_ioctl.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "adapter_ioctl_internal.h"
#include "ndk_shim.h"
#include "net_irql.h"

namespace softndk::wdk::net::ioctl {
namespace {

enum class Kind { kFatalEvent, kPortEvent, kClose, kInline };

struct Pending {
  SOFTNDK_REQUEST req{};
  PIRP irp = nullptr;
  NDK_ADAPTER* adapter = nullptr;
  Kind kind = Kind::kInline;
  std::mutex mu;
  bool armed = false;          // the cancel routine has been set
  bool done = false;           // softndk completed the request
  bool no_cancel = false;      // no cancel routine runs (cleared, or never set)
  bool dispatch_done = false;  // the dispatch routine no longer touches the IRP
  bool completed = false;
};

// ---- adapters the IRPs may name ---------------------------------------------

struct AdapterCtl {
  bool closing = false;
  unsigned inflight = 0;           // dispatch/cancel routines inside softndk
  std::vector<Pending*> deferred;  // cancel routines that met the close
};

std::mutex g_mu;
std::condition_variable g_idle;
std::unordered_map<NDK_ADAPTER*, AdapterCtl>& adapters() {
  static auto* m = new std::unordered_map<NDK_ADAPTER*, AdapterCtl>;
  return *m;
}

// Admits a call into softndk for `a`; false if `a` is not open.
bool enter(NDK_ADAPTER* a) {
  std::lock_guard lock(g_mu);
  auto it = adapters().find(a);
  if (it == adapters().end() || it->second.closing) return false;
  ++it->second.inflight;
  return true;
}

void leave(NDK_ADAPTER* a) {
  std::lock_guard lock(g_mu);
  auto it = adapters().find(a);
  if (it != adapters().end() && --it->second.inflight == 0) g_idle.notify_all();
}

// ---- completing -----------------------------------------------------------

void post_close(NDK_ADAPTER* a) {
  shim::forget_adapter(a, "IOCTL_SOFTNDK_CLOSE_ADAPTER", nullptr);
  wsk::adapter_closed_elsewhere(a);
  adapter_closed(a);
}

void complete_and_delete(Pending* p) {
  PIRP irp = p->irp;
  NTSTATUS st = p->req.Status;
  ULONG_PTR info = 0;
  if (p->kind == Kind::kPortEvent && st == STATUS_SUCCESS) {
    auto code = static_cast<ULONG>(p->req.Information);
    std::memcpy(irp->AssociatedIrp.SystemBuffer, &code, sizeof code);
    info = sizeof code;
  } else if (p->kind == Kind::kInline) {
    info = p->req.Information;
  }
  if (p->kind == Kind::kClose && st == STATUS_SUCCESS) post_close(p->adapter);
  delete p;
  irp->IoStatus.Status = st;
  irp->IoStatus.Information = info;
  IoCompleteRequest(irp, IO_NETWORK_INCREMENT);
}

// One party's last touch of `p`: record its part, and complete the IRP if
// it was the last.
template <typename Mark>
void finish_party(Pending* p, Mark&& mark) {
  bool last;
  {
    std::lock_guard lock(p->mu);
    mark();
    last = p->done && p->no_cancel && p->dispatch_done && !p->completed;
    if (last) p->completed = true;
  }
  if (last) complete_and_delete(p);
}

void on_request_done(SOFTNDK_REQUEST* r) {
  auto* p = static_cast<Pending*>(r->Context);
  finish_party(p, [&] {
    p->done = true;
    if (p->armed && IoSetCancelRoutine(p->irp, nullptr) != nullptr) p->no_cancel = true;
  });
}

void cancel_routine(PDEVICE_OBJECT, PIRP irp) {
  IoReleaseCancelSpinLock(irp->CancelIrql);
  auto* p = static_cast<Pending*>(irp->Tail.Overlay.DriverContext[0]);
  bool done;
  {
    std::lock_guard lock(p->mu);
    done = p->done;
  }
  if (!done) {
    {
      std::lock_guard lock(g_mu);
      auto it = adapters().find(p->adapter);
      if (it != adapters().end() && it->second.closing) {
        it->second.deferred.push_back(p);  // the close cancels it and finishes us
        return;
      }
      if (it != adapters().end()) ++it->second.inflight;
    }
    SoftNdkCancelRequest(p->adapter, &p->req);  // completes through on_request_done
    leave(p->adapter);
  }
  finish_party(p, [&] { p->no_cancel = true; });
}

// ---- dispatch -------------------------------------------------------------

NTSTATUS complete_now(PIRP irp, NTSTATUS st, ULONG_PTR info) {
  irp->IoStatus.Status = st;
  irp->IoStatus.Information = info;
  IoCompleteRequest(irp, IO_NO_INCREMENT);
  return st;
}

// Queues a cancellable event request; called between enter() and leave().
// Returns the request, which the caller finishes (dispatch_done) after
// leave(): finished inline, it completes the IRP then.
Pending* queue_event(PIRP irp, NDK_ADAPTER* a, Kind kind, UCHAR port) {
  auto* p = new (std::nothrow) Pending;
  if (p == nullptr) return nullptr;
  p->irp = irp;
  p->adapter = a;
  p->kind = kind;
  p->req.Completion = on_request_done;
  p->req.Context = p;
  irp->Tail.Overlay.DriverContext[0] = p;
  IoMarkIrpPending(irp);
  NTSTATUS st = kind == Kind::kFatalEvent ? SoftNdkGetFatalEvent(a, &p->req)
                                          : SoftNdkGetPortEvent(a, port, &p->req);
  if (st != STATUS_PENDING) {  // finished inline: no callback follows
    p->req.Status = st;
    p->done = true;
    p->no_cancel = true;
    return p;
  }
  bool cancel_self = false;
  {
    std::lock_guard lock(p->mu);
    IoSetCancelRoutine(irp, cancel_routine);
    p->armed = true;
    // Cancelled before the routine was set, or already done: whoever clears
    // the routine first decides that no cancel routine will run.
    if ((p->done || irp->Cancel) && IoSetCancelRoutine(irp, nullptr) != nullptr) {
      p->no_cancel = true;
      cancel_self = !p->done;
    }
  }
  if (cancel_self) SoftNdkCancelRequest(a, &p->req);
  return p;
}

NTSTATUS close_adapter(PIRP irp, NDK_ADAPTER* a) {
  auto* p = new (std::nothrow) Pending;
  if (p == nullptr) return complete_now(irp, STATUS_INSUFFICIENT_RESOURCES, 0);
  if (!adapter_closing(a)) {  // unknown, or another close is under way
    delete p;
    return complete_now(irp, STATUS_INVALID_HANDLE, 0);
  }
  p->irp = irp;
  p->adapter = a;
  p->kind = Kind::kClose;
  p->no_cancel = true;
  p->req.Completion = on_request_done;
  p->req.Context = p;
  IoMarkIrpPending(irp);
  NTSTATUS st = SoftNdkCloseAdapterAsync(a, &p->req);
  if (st == STATUS_PENDING) {
    finish_party(p, [&] { p->dispatch_done = true; });
    return STATUS_PENDING;
  }
  if (st != STATUS_SUCCESS) {  // busy: the adapter stays open
    std::vector<Pending*> deferred;
    {
      std::lock_guard lock(g_mu);
      AdapterCtl& c = adapters()[a];
      c.closing = false;
      deferred.swap(c.deferred);
    }
    for (Pending* d : deferred) {  // finish the cancel routines that waited
      SoftNdkCancelRequest(a, &d->req);
      finish_party(d, [&] { d->no_cancel = true; });
    }
  }
  p->req.Status = st;
  complete_and_delete(p);
  return STATUS_PENDING;
}

template <typename In>
bool read_input(PIRP irp, PIO_STACK_LOCATION sl, In* in) {
  if (sl->Parameters.DeviceIoControl.InputBufferLength < sizeof(In) ||
      irp->AssociatedIrp.SystemBuffer == nullptr) {
    return false;
  }
  std::memcpy(in, irp->AssociatedIrp.SystemBuffer, sizeof(In));
  return true;
}

// Query into the output buffer: STATUS_BUFFER_TOO_SMALL with the size
// needed (in *info) when it does not hold the whole answer.
template <typename Attr, typename Query>
NTSTATUS query(PIRP irp, ULONG out_len, ULONG_PTR* info, Query&& q) {
  Attr probe{};
  SOFTNDK_REQUEST r{};
  NTSTATUS st = q(sizeof probe, &probe, &r);
  if (st != STATUS_SUCCESS && st != STATUS_BUFFER_OVERFLOW) return st;
  if (out_len < probe.Size) {
    *info = probe.Size;
    return STATUS_BUFFER_TOO_SMALL;
  }
  r = SOFTNDK_REQUEST{};
  st = q(out_len, static_cast<Attr*>(irp->AssociatedIrp.SystemBuffer), &r);
  if (NT_SUCCESS(st)) *info = r.Information;
  return st;
}

NTSTATUS dispatch_control(PIRP irp, PIO_STACK_LOCATION sl) {
  ULONG code = sl->Parameters.DeviceIoControl.IoControlCode;
  ULONG out_len = sl->Parameters.DeviceIoControl.OutputBufferLength;
  NDK_ADAPTER* a = nullptr;
  UCHAR port = 0;
  SOFTNDK_IOCTL_MODIFY_ADAPTER ma{};
  SOFTNDK_IOCTL_MODIFY_PORT mp{};
  bool ok;
  switch (code) {
    case IOCTL_SOFTNDK_GET_FATAL_EVENT:
    case IOCTL_SOFTNDK_QUERY_ADAPTER:
    case IOCTL_SOFTNDK_CLOSE_ADAPTER: {
      SOFTNDK_IOCTL_ADAPTER in{};
      ok = read_input(irp, sl, &in);
      a = in.Adapter;
      break;
    }
    case IOCTL_SOFTNDK_GET_PORT_EVENT:
    case IOCTL_SOFTNDK_QUERY_PORT: {
      SOFTNDK_IOCTL_PORT in{};
      ok = read_input(irp, sl, &in);
      a = in.Adapter;
      port = in.PortNumber;
      break;
    }
    case IOCTL_SOFTNDK_MODIFY_ADAPTER:
      ok = read_input(irp, sl, &ma);
      a = ma.Adapter;
      break;
    case IOCTL_SOFTNDK_MODIFY_PORT:
      ok = read_input(irp, sl, &mp);
      a = mp.Adapter;
      port = mp.PortNumber;
      break;
    default:
      return complete_now(irp, STATUS_INVALID_DEVICE_REQUEST, 0);
  }
  if (!ok) return complete_now(irp, STATUS_INVALID_PARAMETER, 0);
  if (code == IOCTL_SOFTNDK_GET_PORT_EVENT && out_len < sizeof(ULONG)) {
    return complete_now(irp, STATUS_BUFFER_TOO_SMALL, sizeof(ULONG));
  }
  if (code == IOCTL_SOFTNDK_CLOSE_ADAPTER) return close_adapter(irp, a);
  if (!enter(a)) return complete_now(irp, STATUS_INVALID_HANDLE, 0);
  // Inside enter()/leave() only softndk calls; IRPs complete after leave(),
  // so a completion routine may close the adapter.
  NTSTATUS st = STATUS_SUCCESS;
  ULONG_PTR info = 0;
  Pending* queued = nullptr;
  SOFTNDK_REQUEST r{};
  switch (code) {
    case IOCTL_SOFTNDK_GET_FATAL_EVENT:
    case IOCTL_SOFTNDK_GET_PORT_EVENT:
      queued = queue_event(
          irp, a, code == IOCTL_SOFTNDK_GET_FATAL_EVENT ? Kind::kFatalEvent : Kind::kPortEvent,
          port);
      st = queued != nullptr ? STATUS_PENDING : STATUS_INSUFFICIENT_RESOURCES;
      break;
    case IOCTL_SOFTNDK_QUERY_ADAPTER:
      st = query<SOFTNDK_ADAPTER_ATTR>(irp, out_len, &info, [&](SIZE_T n, auto* attr, auto* req) {
        return SoftNdkQueryAdapter(a, n, attr, req);
      });
      break;
    case IOCTL_SOFTNDK_QUERY_PORT:
      st = query<SOFTNDK_PORT_ATTR>(irp, out_len, &info, [&](SIZE_T n, auto* attr, auto* req) {
        return SoftNdkQueryPort(a, port, n, attr, req);
      });
      break;
    case IOCTL_SOFTNDK_MODIFY_ADAPTER:
      st = SoftNdkModifyAdapter(a, ma.Flags, &ma.Modify, &r);
      break;
    default:  // IOCTL_SOFTNDK_MODIFY_PORT
      st = SoftNdkModifyPort(a, port, mp.Flags, &mp.Modify, &r);
      break;
  }
  leave(a);
  if (queued != nullptr) {
    finish_party(queued, [&] { queued->dispatch_done = true; });
    return STATUS_PENDING;
  }
  return complete_now(irp, st, info);
}

NTSTATUS dispatch(PDEVICE_OBJECT, PIRP irp) {
  PIO_STACK_LOCATION sl = IoGetCurrentIrpStackLocation(irp);
  if (sl->MajorFunction != IRP_MJ_INTERNAL_DEVICE_CONTROL &&
      sl->MajorFunction != IRP_MJ_DEVICE_CONTROL) {
    return complete_now(irp, STATUS_INVALID_DEVICE_REQUEST, 0);
  }
  return dispatch_control(irp, sl);
}

// The device lives while any WSK client is registered (WskRegister creates
// it, the last WskDeregister deletes it), so that nothing of the kit's own
// is left for the unload leak check.
DRIVER_OBJECT g_driver{};
std::mutex g_device_mu;
PDEVICE_OBJECT g_device = nullptr;
unsigned g_device_users = 0;

PDEVICE_OBJECT device_locked() {
  if (g_device == nullptr) {
    for (auto& f : g_driver.MajorFunction) f = dispatch;
    UNICODE_STRING name;
    RtlInitUnicodeString(&name, SOFTNDK_ADAPTER_CONTROL_DEVICE_NAME);
    NTSTATUS st = IoCreateDevice(&g_driver, 0, &name, FILE_DEVICE_NETWORK, 0, FALSE, &g_device);
    if (!NT_SUCCESS(st)) {
      g_device = nullptr;
      report_misuse("SoftNdkWdkAdapterControlDevice", nullptr,
                    "IoCreateDevice failed for the adapter-control device");
    }
  }
  return g_device;
}

}  // namespace

void device_acquire() {
  std::lock_guard lock(g_device_mu);
  ++g_device_users;
  device_locked();
}

void device_release() {
  std::lock_guard lock(g_device_mu);
  if (g_device_users == 0 || --g_device_users != 0 || g_device == nullptr) return;
  IoDeleteDevice(g_device);
  g_device = nullptr;
}

void adapter_opened(NDK_ADAPTER* a) {
  std::lock_guard lock(g_mu);
  adapters()[a] = AdapterCtl{};
}

bool adapter_closing(NDK_ADAPTER* a) {
  std::unique_lock lock(g_mu);
  auto it = adapters().find(a);
  if (it == adapters().end() || it->second.closing) return false;
  it->second.closing = true;
  // The dispatch and cancel routines still inside softndk use the adapter,
  // which the caller closes next: this wait cannot give up, but it is not
  // silent. Every 10 s it names what it waits for.
  const auto t0 = std::chrono::steady_clock::now();
  while (!g_idle.wait_for(lock, std::chrono::seconds(10),
                          [&] { return adapters()[a].inflight == 0; })) {
    const auto s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0);
    std::fprintf(stderr,
                 "softndk-wdk: closing adapter %p still waits for %u dispatch/cancel "
                 "routine(s) after %lld s\n",
                 static_cast<void*>(a), adapters()[a].inflight, static_cast<long long>(s.count()));
  }
  return true;
}

void adapter_closed(NDK_ADAPTER* a) {
  std::vector<Pending*> deferred;
  {
    std::lock_guard lock(g_mu);
    auto it = adapters().find(a);
    if (it == adapters().end()) return;
    deferred.swap(it->second.deferred);
    adapters().erase(it);
  }
  // The close completed their requests; their cancel routines end here.
  for (Pending* p : deferred) finish_party(p, [&] { p->no_cancel = true; });
}

}  // namespace softndk::wdk::net::ioctl

using namespace softndk::wdk::net::ioctl;

extern "C" PDEVICE_OBJECT SoftNdkWdkAdapterControlDevice(void) {
  std::lock_guard lock(g_device_mu);
  return device_locked();
}
