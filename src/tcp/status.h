// SPDX-License-Identifier: Apache-2.0
// tcp/status.h - errno -> NTSTATUS for the connection engine.
//
// The same errno means different things at different steps (EADDRNOTAVAIL
// from bind() is a local address that is not ours, from connect() it is an
// exhausted ephemeral range or, with a shared endpoint, a 4-tuple already
// in use), so the caller says which step failed.
#pragma once

#include "softndk/ndkpi.h"

namespace softndk::tcp {

enum class SockOp { kSocket, kBind, kListen, kConnect, kShared, kIo };

// Maps errno `err` from operation `op` to the NDKPI status a consumer sees
// (NDKPI.md 5.8/5.9 status lists).
NTSTATUS status_from_errno(int err, SockOp op);

const char* status_name(NTSTATUS s);  // "STATUS_IO_TIMEOUT", for logs and tests

}  // namespace softndk::tcp
