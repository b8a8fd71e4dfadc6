// SPDX-License-Identifier: Apache-2.0
// adapter_ioctl_internal.h - what the WSK half tells the IRP adapter
// control about adapters, and what it asks back.
#pragma once

#include <softndk/ndkpi.h>

namespace softndk::wdk::net::ioctl {

// WskRegister / WskDeregister: the adapter-control device exists while
// some client is registered.
void device_acquire();
void device_release();

// An adapter the kit opened: IRPs may name it from now on.
void adapter_opened(NDK_ADAPTER* adapter);
// The adapter is about to close: new IRPs naming it fail, and this waits
// until no IRP dispatch or cancel routine is inside softndk for it. False
// (and nothing done) when it is unknown or another close is under way.
bool adapter_closing(NDK_ADAPTER* adapter);
// softndk has closed it (every queued request completed): cancel routines
// that waited for the close finish, and the adapter is forgotten.
void adapter_closed(NDK_ADAPTER* adapter);

}  // namespace softndk::wdk::net::ioctl

namespace softndk::wdk::net::wsk {

// Drops an adapter closed through IOCTL_SOFTNDK_CLOSE_ADAPTER from the WSK
// client that opened it.
void adapter_closed_elsewhere(NDK_ADAPTER* adapter);

}  // namespace softndk::wdk::net::wsk
