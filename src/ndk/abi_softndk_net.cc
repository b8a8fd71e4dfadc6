// abi_softndk_net.cc - the connection and per-QP extern "C" functions of
// softndk/softndk.h.
#include "ndk/abi_common.h"
#include "ndk/endpoints.h"
#include "ndk/net_glue.h"
#include "ndk/qp.h"
#include "softndk/softndk.h"

using softndk::ndk::Connector;
using softndk::ndk::Qp;
using softndk::ndk::abi::guarded;
using softndk::ndk::abi::live;

extern "C" {

NTSTATUS SoftNdkQueryConnectionInfo(NDK_CONNECTOR* pNdkConnector, SOFTNDK_CONNECTION_INFO* pInfo) {
  return guarded([&]() -> NTSTATUS {
    Connector* c;
    NTSTATUS s = live(pNdkConnector, NdkObjectTypeConnector, &c);
    if (s != STATUS_SUCCESS) return s;
    if (pInfo == nullptr) return STATUS_INVALID_PARAMETER;
    return c->net().query(pInfo);
  });
}

NTSTATUS SoftNdkInjectConnectionFault(NDK_CONNECTOR* pNdkConnector, const SOFTNDK_FAULT* pFault) {
  return guarded([&]() -> NTSTATUS {
    Connector* c;
    NTSTATUS s = live(pNdkConnector, NdkObjectTypeConnector, &c);
    return s != STATUS_SUCCESS ? s : c->net().inject(pFault);
  });
}

// The data path keeps no per-QP counters (only the adapter's): the call
// validates its arguments, zeroes the output and answers STATUS_NOT_SUPPORTED.
NTSTATUS SoftNdkQueryQpCounters(NDK_QP* pNdkQp, SOFTNDK_COUNTERS* pCounters) {
  return guarded([&]() -> NTSTATUS {
    Qp* q;
    NTSTATUS s = live(pNdkQp, NdkObjectTypeQp, &q);
    if (s != STATUS_SUCCESS) return s;
    if (pCounters == nullptr) return STATUS_INVALID_PARAMETER;
    *pCounters = SOFTNDK_COUNTERS{};
    return STATUS_NOT_SUPPORTED;
  });
}

// Packet capture is not implemented: STATUS_NOT_SUPPORTED after the handle
// check (a NULL path, "stop", succeeds).
NTSTATUS SoftNdkTraceQp(NDK_QP* pNdkQp, const char* PcapPath) {
  return guarded([&]() -> NTSTATUS {
    Qp* q;
    NTSTATUS s = live(pNdkQp, NdkObjectTypeQp, &q);
    if (s != STATUS_SUCCESS) return s;
    return PcapPath == nullptr ? STATUS_SUCCESS : STATUS_NOT_SUPPORTED;
  });
}

}  // extern "C"
