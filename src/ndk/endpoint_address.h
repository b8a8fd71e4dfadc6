// SPDX-License-Identifier: Apache-2.0
// endpoint_address.h - validating and binding local NDK endpoints.
//
// Shared endpoints now, and NdkConnect/NdkListen later, take a local
// SOCKADDR that must be one of the adapter's interface addresses (port 0 =
// an ephemeral port). bind_endpoint() reserves the address:port with a real
// TCP socket, so conflicts with any other socket on the host are found by
// the kernel, and hands the bound socket to the caller (the connection layer
// connects or listens from it).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include "ndk/netdev.h"
#include "softndk/ndkpi.h"

namespace softndk::ndk {

// STATUS_INVALID_PARAMETER (NULL, bad family or length) or
// STATUS_INVALID_ADDRESS (not an address of `dev`); copies into *out.
NTSTATUS check_local_address(const NetDevice& dev, const SOCKADDR* addr, ULONG len,
                             sockaddr_storage* out);

// Binds a non-blocking TCP socket to *addr (updated with the chosen port).
// STATUS_SHARING_VIOLATION (in use), STATUS_TOO_MANY_ADDRESSES (port 0 and
// no ephemeral port left), STATUS_INVALID_ADDRESS, STATUS_INSUFFICIENT_RESOURCES.
NTSTATUS bind_endpoint(sockaddr_storage* addr, int* fd);

socklen_t sockaddr_length(const sockaddr_storage& a);

// The NdkGetLocalAddress length protocol: BUFFER_TOO_SMALL with the size.
NTSTATUS copy_address_out(const sockaddr_storage& a, SOCKADDR* out, ULONG* len);

}  // namespace softndk::ndk
