// SPDX-License-Identifier: Apache-2.0
// softndk-wdk-run --trace FILE (ndk_trace.cc): the NDK calls a driver makes,
// with arguments and NTSTATUS, and the callbacks and completions it gets,
// each with the thread and its IRQL, one line each.
#pragma once

#include <ndkpi.h>

#include <string>

namespace softndk::wdk::net::trace {

// Starts writing to `path` ("" stops); false (with a message) if it cannot
// be created.
bool Configure(const std::string& path);
bool On();

// The table an object the kit adopts gets: the tracing one when on.
const NDK_ADAPTER_DISPATCH* Table(const NDK_ADAPTER_DISPATCH* shim);
const NDK_CQ_DISPATCH* Table(const NDK_CQ_DISPATCH* shim);
const NDK_PD_DISPATCH* Table(const NDK_PD_DISPATCH* shim);
const NDK_MR_DISPATCH* Table(const NDK_MR_DISPATCH* shim);
const NDK_MW_DISPATCH* Table(const NDK_MW_DISPATCH* shim);
const NDK_SRQ_DISPATCH* Table(const NDK_SRQ_DISPATCH* shim);
const NDK_QP_DISPATCH* Table(const NDK_QP_DISPATCH* shim);
const NDK_CONNECTOR_DISPATCH* Table(const NDK_CONNECTOR_DISPATCH* shim);
const NDK_LISTENER_DISPATCH* Table(const NDK_LISTENER_DISPATCH* shim);
const NDK_SHARED_ENDPOINT_DISPATCH* Table(const NDK_SHARED_ENDPOINT_DISPATCH* shim);

// A callback or completion delivered to the driver (no-op when off).
void Event(const char* what, const void* callback_context, const void* object, long long value);

}  // namespace softndk::wdk::net::trace
