// SPDX-License-Identifier: Apache-2.0
// abi_softndk_net.cc - the connection and per-QP extern "C" functions of
// softndk/softndk.h.
#include <cerrno>

#include "ndk/abi_common.h"
#include "ndk/adapter.h"
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

NTSTATUS SoftNdkQueryConnectionTcpInfo(NDK_CONNECTOR* pNdkConnector, SOFTNDK_TCP_INFO* pInfo) {
  return guarded([&]() -> NTSTATUS {
    Connector* c;
    NTSTATUS s = live(pNdkConnector, NdkObjectTypeConnector, &c);
    if (s != STATUS_SUCCESS) return s;
    if (pInfo == nullptr || pInfo->Size < sizeof(SOFTNDK_TCP_INFO)) return STATUS_INVALID_PARAMETER;
    return c->net().query_tcp(pInfo);
  });
}

NTSTATUS SoftNdkQueryConnectionPath(NDK_CONNECTOR* pNdkConnector, SOFTNDK_PATH_INFO* pInfo) {
  return guarded([&]() -> NTSTATUS {
    Connector* c;
    NTSTATUS s = live(pNdkConnector, NdkObjectTypeConnector, &c);
    if (s != STATUS_SUCCESS) return s;
    if (pInfo == nullptr || pInfo->Size < SOFTNDK_PATH_INFO_V1_SIZE)
      return STATUS_INVALID_PARAMETER;
    return c->net().query_path(pInfo);
  });
}

NTSTATUS SoftNdkQueryPeerActivity(NDK_CONNECTOR* pNdkConnector, SOFTNDK_PEER_ACTIVITY* pInfo) {
  return guarded([&]() -> NTSTATUS {
    Connector* c;
    NTSTATUS s = live(pNdkConnector, NdkObjectTypeConnector, &c);
    if (s != STATUS_SUCCESS) return s;
    if (pInfo == nullptr || pInfo->Size < sizeof(SOFTNDK_PEER_ACTIVITY))
      return STATUS_INVALID_PARAMETER;
    return c->net().query_activity(pInfo);
  });
}

const char* SoftNdkPathName(ULONG Path) {
  switch (Path) {
    case SOFTNDK_PATH_TCP:
      return "tcp";
    case SOFTNDK_PATH_SAMEHOST:
      return "samehost";
    case SOFTNDK_PATH_PROBING:
      return "probing";
    default:
      return nullptr;
  }
}

const char* SoftNdkPathReasonName(ULONG Reason) {
  static const char* const kNames[] = {"none",         "disabled",  "no peer",
                                       "not verified", "no access", "peer declined",
                                       "crc",          "error",     "traced"};
  return Reason < sizeof kNames / sizeof kNames[0] ? kNames[Reason] : nullptr;
}

NTSTATUS SoftNdkInjectConnectionFault(NDK_CONNECTOR* pNdkConnector, const SOFTNDK_FAULT* pFault) {
  return guarded([&]() -> NTSTATUS {
    Connector* c;
    NTSTATUS s = live(pNdkConnector, NdkObjectTypeConnector, &c);
    return s != STATUS_SUCCESS ? s : c->net().inject(pFault);
  });
}

// The QP's own counters (ndk/counters.h): those of every connection the QP
// carried so far.
NTSTATUS SoftNdkQueryQpCounters(NDK_QP* pNdkQp, SOFTNDK_COUNTERS* pCounters) {
  return guarded([&]() -> NTSTATUS {
    Qp* q;
    NTSTATUS s = live(pNdkQp, NdkObjectTypeQp, &q);
    if (s != STATUS_SUCCESS) return s;
    if (pCounters == nullptr) return STATUS_INVALID_PARAMETER;
    q->counters().read(pCounters);
    return STATUS_SUCCESS;
  });
}

// The file is created here (a path that cannot be written fails inline and
// changes nothing); a trace already running on the QP is replaced.
NTSTATUS SoftNdkTraceQp(NDK_QP* pNdkQp, const char* PcapPath) {
  return guarded([&]() -> NTSTATUS {
    Qp* q;
    NTSTATUS s = live(pNdkQp, NdkObjectTypeQp, &q);
    if (s != STATUS_SUCCESS) return s;
    std::shared_ptr<softndk::util::PcapFile> f;
    if (PcapPath != nullptr) {
      f = softndk::util::PcapFile::create(PcapPath);
      if (f == nullptr) return softndk::ndk::trace_open_status(errno);
    }
    q->set_trace(std::move(f));
    return STATUS_SUCCESS;
  });
}

}  // extern "C"
