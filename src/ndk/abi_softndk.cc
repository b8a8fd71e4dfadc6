// SPDX-License-Identifier: Apache-2.0
// abi_softndk.cc - the extern "C" functions of softndk/softndk.h.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include "ndk/abi_common.h"
#include "ndk/netdev.h"
#include "softndk/softndk.h"

using softndk::ndk::Adapter;
using softndk::ndk::abi::guarded;
using softndk::ndk::abi::live_adapter;

extern "C" {

ULONG SoftNdkGetVersion(const char** pText) {
  // The macros of the softndk/version.h this library was built with, so the
  // number is the library's own, whatever headers its caller had.
  if (pText != nullptr) *pText = SOFTNDK_VERSION_STRING;
  return SOFTNDK_VERSION;
}

NTSTATUS SoftNdkEnumerateAdapters(SOFTNDK_ADAPTER_DESC* pDesc, ULONG* pCount) {
  return guarded([&]() -> NTSTATUS {
    if (pCount == nullptr) return STATUS_INVALID_PARAMETER;
    auto devs = softndk::ndk::list_net_devices();
    ULONG cap = *pCount;
    *pCount = static_cast<ULONG>(devs.size());
    if (cap < devs.size() || (pDesc == nullptr && !devs.empty())) return STATUS_BUFFER_TOO_SMALL;
    for (size_t i = 0; i < devs.size(); ++i) {
      SOFTNDK_ADAPTER_DESC& d = pDesc[i];
      std::memset(&d, 0, sizeof d);
      std::strncpy(d.IfName, devs[i].name.c_str(), SOFTNDK_IFNAME_SIZE - 1);
      d.IfIndex = devs[i].ifindex;
      d.PortState = devs[i].up ? SoftNdkPortStateActive : SoftNdkPortStateDown;
      d.Mtu = devs[i].mtu;
      size_t n = devs[i].addrs.size();
      if (n > SOFTNDK_MAX_ADAPTER_ADDRESSES) n = SOFTNDK_MAX_ADAPTER_ADDRESSES;
      d.AddressCount = static_cast<ULONG>(n);
      for (size_t k = 0; k < n; ++k) d.Addresses[k] = devs[i].addrs[k];
    }
    return STATUS_SUCCESS;
  });
}

NTSTATUS SoftNdkOpenAdapter(const char* NameOrAddress, NDK_VERSION Version,
                            const SOFTNDK_OPEN_PARAMETERS* Params, NDK_ADAPTER** ppNdkAdapter) {
  return guarded([&] {
    Adapter* a = nullptr;
    NTSTATUS s = Adapter::open(NameOrAddress, Version, Params, ppNdkAdapter ? &a : nullptr);
    if (s == STATUS_SUCCESS) *ppNdkAdapter = a->ndk();
    return s;
  });
}

void SoftNdkCloseAdapter(NDK_ADAPTER* pNdkAdapter) {
  Adapter* a;
  if (Adapter::from(pNdkAdapter, &a) == STATUS_SUCCESS) a->close_blocking();
}

NTSTATUS SoftNdkCloseAdapterAsync(NDK_ADAPTER* pNdkAdapter, SOFTNDK_REQUEST* pRequest) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = Adapter::from(pNdkAdapter, &a);  // allowed after a fatal error
    return s != STATUS_SUCCESS ? s : a->close_async(pRequest);
  });
}

NTSTATUS SoftNdkGetFatalEvent(NDK_ADAPTER* pNdkAdapter, SOFTNDK_REQUEST* pRequest) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = Adapter::from(pNdkAdapter, &a);  // after a fatal error: completes inline
    return s != STATUS_SUCCESS ? s : a->get_fatal_event(pRequest);
  });
}

NTSTATUS SoftNdkGetPortEvent(NDK_ADAPTER* pNdkAdapter, UCHAR PortNumber,
                             SOFTNDK_REQUEST* pRequest) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(pNdkAdapter, &a);
    return s != STATUS_SUCCESS ? s : a->get_port_event(PortNumber, pRequest);
  });
}

NTSTATUS SoftNdkCancelRequest(NDK_ADAPTER* pNdkAdapter, SOFTNDK_REQUEST* pRequest) {
  Adapter* a;
  NTSTATUS s = Adapter::from(pNdkAdapter, &a);  // cancelling stays possible after a failure
  return s != STATUS_SUCCESS ? s : a->cancel_request(pRequest);
}

NTSTATUS SoftNdkQueryAdapter(NDK_ADAPTER* pNdkAdapter, SIZE_T AttrSize, SOFTNDK_ADAPTER_ATTR* pAttr,
                             SOFTNDK_REQUEST* pRequest) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(pNdkAdapter, &a);
    return s != STATUS_SUCCESS ? s : a->query_adapter(AttrSize, pAttr, pRequest);
  });
}

namespace {
// SOFTNDK_BACKEND_INFO.FastRegister: the mode's name, then why.
const char* fr_mode_text(softndk::ndk::Adapter& a) {
  using F = softndk::provider::Provider::FrSupport;
  switch (a.provider().fr_support()) {
    case F::kObjectModel:
      return a.fr_rekey()
                 ? "software-rekey: a new token per NdkFastRegister (SOFTNDK_OPEN_FLAG_FR_REKEY)"
                 : "software: one token per fast-register MR for its life";
    case F::kWindows:
      return "type2-window: a type-2 memory window re-bound with its own key; the token is stable";
    case F::kReregister:
      return "register-per-fast-register: degraded mode (SOFTNDK_OPEN_FLAG_FR_REGISTER), the token "
             "changes with every NdkFastRegister";
    case F::kNone:
      break;
  }
  return "unsupported: the device has no type-2 memory windows (SOFTNDK_OPEN_FLAG_FR_REGISTER "
         "opts into register-per-fast-register)";
}
}  // namespace

NTSTATUS SoftNdkQueryBackend(NDK_ADAPTER* pNdkAdapter, SOFTNDK_BACKEND_INFO* pInfo) {
  return guarded([&]() -> NTSTATUS {
    Adapter* a;
    NTSTATUS s = live_adapter(pNdkAdapter, &a);
    if (s != STATUS_SUCCESS) return s;
    if (pInfo == nullptr || pInfo->Size < offsetof(SOFTNDK_BACKEND_INFO, Device))
      return STATUS_INVALID_PARAMETER;
    SOFTNDK_BACKEND_INFO full{};
    full.Size = sizeof full;
    full.Backend = a->backend().backend;
    std::snprintf(full.Device, sizeof full.Device, "%s", a->backend().device.c_str());
    std::snprintf(full.Reason, sizeof full.Reason, "%s", a->backend().why.c_str());
    std::snprintf(full.FastRegister, sizeof full.FastRegister, "%s", fr_mode_text(*a));
    const size_t n = std::min<size_t>(pInfo->Size, sizeof full);
    const ULONG caller_size = pInfo->Size;
    std::memcpy(pInfo, &full, n);
    pInfo->Size = caller_size;
    return STATUS_SUCCESS;
  });
}

NTSTATUS SoftNdkQueryPort(NDK_ADAPTER* pNdkAdapter, UCHAR PortNumber, SIZE_T AttrSize,
                          SOFTNDK_PORT_ATTR* pAttr, SOFTNDK_REQUEST* pRequest) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(pNdkAdapter, &a);
    return s != STATUS_SUCCESS ? s : a->query_port(PortNumber, AttrSize, pAttr, pRequest);
  });
}

NTSTATUS SoftNdkModifyAdapter(NDK_ADAPTER* pNdkAdapter, ULONG Flags,
                              const SOFTNDK_MODIFY_ADAPTER* pModify, SOFTNDK_REQUEST* pRequest) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(pNdkAdapter, &a);
    return s != STATUS_SUCCESS ? s : a->modify_adapter(Flags, pModify, pRequest);
  });
}

NTSTATUS SoftNdkModifyPort(NDK_ADAPTER* pNdkAdapter, UCHAR PortNumber, ULONG Flags,
                           const SOFTNDK_MODIFY_PORT* pModify, SOFTNDK_REQUEST* pRequest) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(pNdkAdapter, &a);
    return s != STATUS_SUCCESS ? s : a->modify_port(PortNumber, Flags, pModify, pRequest);
  });
}

NTSTATUS SoftNdkQueryAdapterCounters(NDK_ADAPTER* pNdkAdapter, SOFTNDK_COUNTERS* pCounters) {
  Adapter* a;
  NTSTATUS s = live_adapter(pNdkAdapter, &a);
  if (s != STATUS_SUCCESS) return s;
  if (pCounters == nullptr) return STATUS_INVALID_PARAMETER;
  a->read_counters(pCounters);
  return STATUS_SUCCESS;
}

NTSTATUS SoftNdkInjectAdapterFault(NDK_ADAPTER* pNdkAdapter, const SOFTNDK_FAULT* pFault) {
  return guarded([&] {
    Adapter* a;
    NTSTATUS s = live_adapter(pNdkAdapter, &a);
    return s != STATUS_SUCCESS ? s : a->inject_fault(pFault);
  });
}

}  // extern "C"
