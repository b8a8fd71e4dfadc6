// SPDX-License-Identifier: Apache-2.0
// report.h - what ndkinfo learns about one adapter, through the public C
// API only (softndk/softndk.h and the NDK dispatch table).
//
// Collection and presentation are separate so the text and JSON renderers
// see exactly the same facts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "softndk/softndk.h"

namespace ndkinfo {

struct AdapterReport {
  SOFTNDK_ADAPTER_DESC desc{};               // from SoftNdkEnumerateAdapters
  std::vector<std::string> addresses;        // desc.Addresses as text
  std::optional<NDK_ADAPTER_INFO> info;      // NdkQueryAdapterInfo
  std::optional<SOFTNDK_PORT_ATTR> port;     // SoftNdkQueryPort (fixed part)
  std::vector<std::string> port_addresses;   // the port's address list
  std::optional<SOFTNDK_COUNTERS> counters;  // SoftNdkQueryAdapterCounters
  std::optional<ULONG> mpa_flags;            // SoftNdkQueryAdapter: MPA flags in effect
  bool samehost = false;                     // ... and SOFTNDK_ADAPTER_SAMEHOST
  // SoftNdkQueryBackend: which engine serves the adapter, its device, why.
  std::optional<SOFTNDK_BACKEND_INFO> backend;
  // The first call that failed, if any ("SoftNdkOpenAdapter"), and its status.
  std::string failed_call;
  NTSTATUS failed_status = STATUS_SUCCESS;
  bool ok() const { return failed_call.empty(); }
};

// Lists the adapters. false (with *status) if enumeration itself failed.
bool enumerate(std::vector<SOFTNDK_ADAPTER_DESC>& out, NTSTATUS* status);

// Opens the adapter, queries everything, closes it.
AdapterReport collect(const SOFTNDK_ADAPTER_DESC& desc);

// "127.0.0.1", "fe80::1%eth0"; "" for anything that is not IPv4/IPv6.
std::string address_text(const sockaddr_storage& ss);

// SoftNdkStatusName, or the value in hex when it has no name.
std::string status_text(NTSTATUS status);

}  // namespace ndkinfo
