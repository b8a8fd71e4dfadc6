// SPDX-License-Identifier: Apache-2.0
// engine/iwarp_provider.h - the software iWARP engine's factory: the one
// engine header the object model includes (besides provider/provider.h).
//
// The engine behind it: connections over the TCP transport (TCP + MPA,
// src/transport/tcp), the same-host transport beside it
// (src/transport/samehost), and the RDMAP/DDP protocol engine on top of
// both (src/rdmap). docs/architecture.md draws the picture.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "provider/provider.h"

namespace softndk::engine {

// The probe-list entry (ndk/provider_list.cc): serves any interface with
// an IP address (it needs nothing but sockets).
provider::ProviderEntry iwarp_entry();

// Open-time validation of SOFTNDK_TCP_CONGESTION: "" (automatic),
// "system", or an algorithm this kernel allows (tcp/socket.h).
bool iwarp_congestion_allowed(const std::string& name);

// The same-host transport's shared segments, which the C ABI hands out
// process-wide (SoftNdkAllocateSharedMemory; docs/samehost.md): 0 or an
// errno value.
int iwarp_shared_segment_alloc(size_t bytes, void** out);
int iwarp_shared_segment_free(void* address);

// The name of a Terminate code (layer<<16 | etype<<8 | code), null if the
// engine's table does not know it (SoftNdkTerminateCodeName).
const char* iwarp_terminate_code_name(uint32_t code);

}  // namespace softndk::engine
