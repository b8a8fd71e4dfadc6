// SPDX-License-Identifier: Apache-2.0
// wsk.cc - WSK registration and the provider dispatch table: the door
// through which a Windows NDK consumer reaches softndk.
//
// A registration's state lives in a kit object that the consumer's
// WSK_REGISTRATION points to (ReservedRegistrationContext); the provider
// NPI's Client is that same object, so every later call can be checked.
#include <net/if.h>
#include <softndk/softndk.h>
#include <softndk_wdk/ndk_ioctl.h>
#include <wsk.h>
#include <wskndk.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include "adapter_ioctl_internal.h"
#include "ndk_shim.h"
#include "net/adapter_pcap.h"
#include "net_irql.h"

namespace softndk::wdk::net {
namespace {

// How long WskDeregister waits for captured NPIs before it reports.
constexpr auto kDeregisterWait = std::chrono::seconds(10);

struct Registration {
  WSK_CLIENT_NPI client{};
  std::mutex mu;
  std::condition_variable released;
  unsigned captures = 0;
  bool deregistered = false;
  std::set<NDK_ADAPTER*> adapters;
};

// Every live registration, for the IRP close path and the leak check.
std::mutex g_regs_mu;
std::set<Registration*>& registrations() {
  static auto* s = new std::set<Registration*>;
  return *s;
}

ULONG report_leaks() {
  ULONG n;
  {
    std::lock_guard lock(g_regs_mu);
    n = static_cast<ULONG>(registrations().size());
  }
  for (ULONG i = 0; i < n; ++i) {
    report_leak("WskRegister", nullptr, "a WSK registration was not deregistered at unload");
  }
  return n + shim::report_open_objects();
}

// A registration the kit knows, found without reading through the
// consumer's pointer (a foreign pointer is reported, not dereferenced).
Registration* live(const void* p) {
  std::lock_guard lock(g_regs_mu);
  auto* reg = static_cast<Registration*>(const_cast<void*>(p));
  return p != nullptr && registrations().count(reg) != 0 ? reg : nullptr;
}

Registration* from_registration(PWSK_REGISTRATION r) {
  return r == nullptr ? nullptr : live(r->ReservedRegistrationContext);
}

Registration* from_client(PWSK_CLIENT c) { return live(c); }

// WSK entry points that take an IRP complete it when they finish inline.
NTSTATUS finish(PIRP irp, NTSTATUS st, ULONG_PTR information) {
  if (irp != nullptr) {
    irp->IoStatus.Status = st;
    irp->IoStatus.Information = information;
    IoCompleteRequest(irp, IO_NO_INCREMENT);
  }
  return st;
}

NTSTATUS not_emulated(const char* function, const void* site, PIRP irp) {
  report_misuse(function, site, "WSK sockets and name resolution are not emulated by softndk-wdk");
  return finish(irp, STATUS_NOT_SUPPORTED, 0);
}

// ---- the NDK extension (wskndk.h) ------------------------------------------

NTSTATUS OpenNdkAdapter(PWSK_CLIENT Client, NDK_VERSION Version, NET_IFINDEX IfIndex,
                        NDK_ADAPTER** ppNdkAdapter) {
  NET_REQUIRE_IRQL("WskOpenNdkAdapter", PASSIVE_LEVEL);
  Registration* reg = from_client(Client);
  if (reg == nullptr) {
    NET_MISUSE("WskOpenNdkAdapter", "Client is not a captured WSK provider NPI's client");
    return STATUS_INVALID_PARAMETER;
  }
  if (ppNdkAdapter == nullptr) return STATUS_INVALID_PARAMETER;
  char name[IF_NAMESIZE];
  if (IfIndex == 0 || ::if_indextoname(IfIndex, name) == nullptr) return STATUS_NO_SUCH_DEVICE;
  // SOFTNDK_WDK_OPEN_FLAGS (SOFTNDK_OPEN_FLAG_*, e.g. 3: every create and
  // close pends) tests a consumer's asynchronous paths, which Windows
  // providers take at will.
  SOFTNDK_OPEN_PARAMETERS params{};
  params.Size = sizeof params;
  if (const char* flags = std::getenv("SOFTNDK_WDK_OPEN_FLAGS")) {
    params.Flags = static_cast<ULONG>(std::strtoul(flags, nullptr, 0));
  }
  NDK_ADAPTER* a = nullptr;
  NTSTATUS st = SoftNdkOpenAdapter(name, Version, &params, &a);
  if (st != STATUS_SUCCESS) return st;
  shim::adopt_adapter(a);
  ioctl::adapter_opened(a);
  StartAdapterPcap(a, name);  // softndk-wdk-run --pcap
  {
    std::lock_guard lock(reg->mu);
    reg->adapters.insert(a);
  }
  *ppNdkAdapter = a;
  return STATUS_SUCCESS;
}

// Closes an adapter the kit opened: queued adapter-control IRPs complete
// with STATUS_CANCELLED, objects left open are reported and closed.
void close_adapter(NDK_ADAPTER* a, const char* caller, const void* site) {
  if (!ioctl::adapter_closing(a)) {
    report_misuse(caller, site,
                  "the adapter is already being closed (IOCTL_SOFTNDK_CLOSE_ADAPTER)");
    return;
  }
  SoftNdkCloseAdapter(a);
  shim::forget_adapter(a, caller, site);
  ioctl::adapter_closed(a);
}

VOID CloseNdkAdapter(PWSK_CLIENT Client, NDK_ADAPTER* pNdkAdapter) {
  NET_REQUIRE_IRQL("WskCloseNdkAdapter", PASSIVE_LEVEL);
  Registration* reg = from_client(Client);
  if (reg == nullptr) {
    NET_MISUSE("WskCloseNdkAdapter", "Client is not a captured WSK provider NPI's client");
    return;
  }
  {
    std::lock_guard lock(reg->mu);
    if (reg->adapters.erase(pNdkAdapter) == 0) {
      NET_MISUSE("WskCloseNdkAdapter", "not an adapter this client opened, or already closed");
      return;
    }
  }
  close_adapter(pNdkAdapter, "WskCloseNdkAdapter", SOFTNDK_WDK_SITE());
}

const WSK_PROVIDER_NDK_DISPATCH kNdkDispatch = {OpenNdkAdapter, CloseNdkAdapter};

// ---- the provider dispatch (wsk.h) -----------------------------------------

NTSTATUS ControlClient(PWSK_CLIENT Client, ULONG ControlCode, SIZE_T InputSize, PVOID InputBuffer,
                       SIZE_T OutputSize, PVOID OutputBuffer, SIZE_T* OutputSizeReturned,
                       PIRP Irp) {
  NET_REQUIRE_IRQL("WskControlClient", DISPATCH_LEVEL);
  (void)InputSize;
  (void)InputBuffer;
  if (from_client(Client) == nullptr) {
    NET_MISUSE("WskControlClient", "Client is not a captured WSK provider NPI's client");
    return finish(Irp, STATUS_INVALID_PARAMETER, 0);
  }
  if (ControlCode != WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH) {
    NET_MISUSE("WskControlClient", "only WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH is emulated");
    return finish(Irp, STATUS_NOT_SUPPORTED, 0);
  }
  if (OutputBuffer == nullptr) return finish(Irp, STATUS_INVALID_PARAMETER, 0);
  if (OutputSize < sizeof(kNdkDispatch)) {
    if (OutputSizeReturned != nullptr) *OutputSizeReturned = sizeof(kNdkDispatch);
    return finish(Irp, STATUS_BUFFER_TOO_SMALL, sizeof(kNdkDispatch));
  }
  *static_cast<WSK_PROVIDER_NDK_DISPATCH*>(OutputBuffer) = kNdkDispatch;
  if (OutputSizeReturned != nullptr) *OutputSizeReturned = sizeof(kNdkDispatch);
  return finish(Irp, STATUS_SUCCESS, sizeof(kNdkDispatch));
}

NTSTATUS Socket(PWSK_CLIENT, ADDRESS_FAMILY, USHORT, ULONG, ULONG, PVOID, const VOID*, PEPROCESS,
                PETHREAD, PSECURITY_DESCRIPTOR, PIRP Irp) {
  return not_emulated("WskSocket", SOFTNDK_WDK_SITE(), Irp);
}
NTSTATUS SocketConnect(PWSK_CLIENT, USHORT, ULONG, PSOCKADDR, PSOCKADDR, ULONG, PVOID,
                       const struct _WSK_CLIENT_CONNECTION_DISPATCH*, PEPROCESS, PETHREAD,
                       PSECURITY_DESCRIPTOR, PIRP Irp) {
  return not_emulated("WskSocketConnect", SOFTNDK_WDK_SITE(), Irp);
}
NTSTATUS GetAddressInfo(PWSK_CLIENT, PUNICODE_STRING, PUNICODE_STRING, ULONG, GUID*,
                        struct addrinfoexW*, struct addrinfoexW**, PEPROCESS, PETHREAD, PIRP Irp) {
  return not_emulated("WskGetAddressInfo", SOFTNDK_WDK_SITE(), Irp);
}
VOID FreeAddressInfo(PWSK_CLIENT, struct addrinfoexW*) {
  not_emulated("WskFreeAddressInfo", SOFTNDK_WDK_SITE(), nullptr);
}
NTSTATUS GetNameInfo(PWSK_CLIENT, PSOCKADDR, ULONG, PUNICODE_STRING, PUNICODE_STRING, ULONG,
                     PEPROCESS, PETHREAD, PIRP Irp) {
  return not_emulated("WskGetNameInfo", SOFTNDK_WDK_SITE(), Irp);
}

const WSK_PROVIDER_DISPATCH kProviderDispatch = {
    WSK_SOFTNDK_VERSION, 0,          Socket, SocketConnect, ControlClient, GetAddressInfo,
    FreeAddressInfo,     GetNameInfo};

}  // namespace

void wsk::adapter_closed_elsewhere(NDK_ADAPTER* adapter) {
  std::lock_guard lock(g_regs_mu);
  for (Registration* reg : registrations()) {
    std::lock_guard reg_lock(reg->mu);
    reg->adapters.erase(adapter);
  }
}

}  // namespace softndk::wdk::net

using namespace softndk::wdk::net;

extern "C" {

NTSTATUS WskRegister(PWSK_CLIENT_NPI WskClientNpi, PWSK_REGISTRATION WskRegistration) {
  NET_REQUIRE_IRQL("WskRegister", PASSIVE_LEVEL);
  if (WskClientNpi == nullptr || WskRegistration == nullptr || WskClientNpi->Dispatch == nullptr ||
      WSK_MAJOR_VERSION(WskClientNpi->Dispatch->Version) != 1) {
    return STATUS_INVALID_PARAMETER;
  }
  if (from_registration(WskRegistration) != nullptr) {
    NET_MISUSE("WskRegister", "the WSK_REGISTRATION is already registered");
    return STATUS_INVALID_PARAMETER;
  }
  auto* reg = new (std::nothrow) Registration;
  if (reg == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  reg->client = *WskClientNpi;
  static std::once_flag once;
  std::call_once(once, [] {
    softndk::wdk::RegisterLeakReporter("NDK objects and WSK registrations", report_leaks);
  });
  {
    std::lock_guard lock(g_regs_mu);
    registrations().insert(reg);
  }
  ioctl::device_acquire();  // IoGetDeviceObjectPointer finds it from now on
  WskRegistration->ReservedRegistrationState = 1;
  WskRegistration->ReservedRegistrationContext = reg;
  return STATUS_SUCCESS;
}

NTSTATUS WskCaptureProviderNPI(PWSK_REGISTRATION WskRegistration, ULONG WaitTimeout,
                               PWSK_PROVIDER_NPI WskProviderNpi) {
  NET_REQUIRE_IRQL("WskCaptureProviderNPI",
                   WaitTimeout == WSK_NO_WAIT ? DISPATCH_LEVEL : PASSIVE_LEVEL);
  Registration* reg = from_registration(WskRegistration);
  if (reg == nullptr || WskProviderNpi == nullptr) {
    if (reg == nullptr) NET_MISUSE("WskCaptureProviderNPI", "the registration is not live");
    return STATUS_INVALID_PARAMETER;
  }
  std::lock_guard lock(reg->mu);
  if (reg->deregistered) return STATUS_DEVICE_NOT_READY;
  ++reg->captures;
  WskProviderNpi->Client = reg;
  WskProviderNpi->Dispatch = &kProviderDispatch;
  return STATUS_SUCCESS;
}

VOID WskReleaseProviderNPI(PWSK_REGISTRATION WskRegistration) {
  NET_REQUIRE_IRQL("WskReleaseProviderNPI", DISPATCH_LEVEL);
  Registration* reg = from_registration(WskRegistration);
  if (reg == nullptr) {
    NET_MISUSE("WskReleaseProviderNPI", "the registration is not live");
    return;
  }
  std::lock_guard lock(reg->mu);
  if (reg->captures == 0) {
    NET_MISUSE("WskReleaseProviderNPI", "released more often than captured");
    return;
  }
  if (--reg->captures == 0) reg->released.notify_all();
}

VOID WskDeregister(PWSK_REGISTRATION WskRegistration) {
  NET_REQUIRE_IRQL("WskDeregister", PASSIVE_LEVEL);
  const void* site = SOFTNDK_WDK_SITE();
  Registration* reg = from_registration(WskRegistration);
  if (reg == nullptr) {
    NET_MISUSE("WskDeregister", "the registration is not live (never registered, or twice)");
    return;
  }
  {
    std::lock_guard lock(g_regs_mu);
    registrations().erase(reg);
  }
  std::set<NDK_ADAPTER*> left;
  bool released;
  {
    std::unique_lock lock(reg->mu);
    reg->deregistered = true;
    released = reg->released.wait_for(lock, kDeregisterWait, [&] { return reg->captures == 0; });
    left.swap(reg->adapters);
  }
  if (!left.empty()) {
    report_leak(
        "WskDeregister", site,
        (std::to_string(left.size()) + " NDK adapter(s) still open; the kit closes them").c_str());
    for (NDK_ADAPTER* a : left) close_adapter(a, "WskDeregister", site);
  }
  WskRegistration->ReservedRegistrationContext = nullptr;
  WskRegistration->ReservedRegistrationState = 0;
  ioctl::device_release();
  if (!released) {
    // A captured NPI may still be used: keep the state (leaked) rather than
    // free memory a client can reach.
    report_leak("WskDeregister", site, "captured provider NPIs not released after 10 s");
    return;
  }
  delete reg;
}

}  // extern "C"
