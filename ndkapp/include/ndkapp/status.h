// SPDX-License-Identifier: Apache-2.0
// status.h - NTSTATUS values as short readable names for one-line errors.
#pragma once

#include <string>

#include "softndk/ndkpi.h"
#include "softndk/softndk.h"

namespace softndk::tools {

// "STATUS_CONNECTION_REFUSED", or "NTSTATUS 0xC0000236" when unknown.
std::string status_name(NTSTATUS status);

// A human cause for a connect/listen failure: "connection refused (no
// listener on 10.0.0.1:18515?)". `where` is "HOST:PORT".
// `setup_phase` (SOFTNDK_SETUP_*, SoftNdkQueryPeerActivity) says whether a
// reset came before or after the MPA exchange.
std::string connect_failure_text(NTSTATUS status, const std::string& where,
                                 ULONG setup_phase = SOFTNDK_SETUP_NONE);
// The diagnosis for a peer that accepted the connection and then never sent
// a byte although we sent it a message, or "" when `a` does not say so:
// what happened, the likely cause when the peer is Linux siw 6.1, where the
// docs explain it, and what to try.
std::string silent_peer_text(const SOFTNDK_PEER_ACTIVITY& a);
std::string listen_failure_text(NTSTATUS status, const std::string& where);

}  // namespace softndk::tools
