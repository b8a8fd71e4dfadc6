// SPDX-License-Identifier: Apache-2.0
// softndk-wdk-run --pcap FILE: the iWARP traffic of every adapter the
// driver opens, through libsoftndk's adapter trace
// (SOFTNDK_MODIFY_ADAPTER_TRACE, docs/observability.md). The first adapter
// writes FILE, the n-th FILE with ".n" before its extension (x.pcap,
// x.2.pcap, ...): each adapter instance owns its file.
#pragma once

#include <ndkpi.h>
#include <wdm.h>

#include <string>

namespace softndk::wdk::net {

// Empty: off. Returns false (with a message) if `path` cannot be created.
bool ConfigureAdapterPcap(const std::string& path);
// Called when WskOpenNdkAdapter opened `a`: starts its trace.
void StartAdapterPcap(NDK_ADAPTER* a, const char* ifname);

}  // namespace softndk::wdk::net
