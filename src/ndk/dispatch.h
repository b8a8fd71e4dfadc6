// SPDX-License-Identifier: Apache-2.0
// dispatch.h - the NDK dispatch tables softndk hands out, one per kind.
// Each is defined next to its extern "C"-compatible shim functions
// (abi_*.cc), which validate handles and forward to the C++ objects.
#pragma once

#include "softndk/ndkpi.h"

namespace softndk::ndk {

extern const NDK_ADAPTER_DISPATCH kAdapterDispatch;
extern const NDK_CQ_DISPATCH kCqDispatch;
extern const NDK_PD_DISPATCH kPdDispatch;
extern const NDK_MR_DISPATCH kMrDispatch;
extern const NDK_MW_DISPATCH kMwDispatch;
extern const NDK_SRQ_DISPATCH kSrqDispatch;
extern const NDK_QP_DISPATCH kQpDispatch;
extern const NDK_CONNECTOR_DISPATCH kConnectorDispatch;
extern const NDK_LISTENER_DISPATCH kListenerDispatch;
extern const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch;

}  // namespace softndk::ndk
