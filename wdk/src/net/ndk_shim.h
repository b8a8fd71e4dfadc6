// SPDX-License-Identifier: Apache-2.0
// ndk_shim.h - the kit's layer between an NDK consumer and softndk's
// dispatch tables.
//
// Every object a consumer gets through WskOpenNdkAdapter carries the kit's
// dispatch table instead of softndk's (softndk never reads Dispatch after
// handing an object out). Each kit function checks the caller's IRQL
// against the documented maximum, swaps the consumer's callbacks for
// trampolines that run them at DISPATCH_LEVEL, and calls softndk's
// function. Objects are tracked per adapter so that the trampolines'
// records are freed when an object or its adapter closes, and so that
// objects still open at adapter close are reported.
#pragma once

#include <softndk/ndkpi.h>

namespace softndk::wdk::net::shim {

// Takes an adapter softndk just opened: installs the kit table and starts
// tracking its objects.
void adopt_adapter(NDK_ADAPTER* adapter);

// Called after softndk closed the adapter (every callback has returned):
// drops its tracking and reports, for `caller` at `site`, the objects the
// consumer left open. Returns how many there were.
unsigned forget_adapter(NDK_ADAPTER* adapter, const char* caller, const void* site);

// Reports every adapter and object still open (the unload leak check).
ULONG report_open_objects();

// True when `adapter` is an adapter the kit opened and has not closed.
bool is_open_adapter(const NDK_ADAPTER* adapter);

}  // namespace softndk::wdk::net::shim
