// SPDX-License-Identifier: Apache-2.0
// softndk-wdk-run --trace FILE: every NDK call a driver makes through the
// kit's tables, with its arguments and NTSTATUS, and every callback and
// completion the kit delivers, each with the thread and its IRQL. When the
// trace is on, objects get these tables instead of the shim's (ndk_shim_*):
// each entry logs the call, calls the shim's entry (which checks IRQL and
// runs the provider), and logs the result.
#include "net/ndk_trace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <string>
#include <type_traits>

#include "irql/irql.h"
#include "net/ndk_shim_internal.h"

namespace softndk::wdk::net::trace {
namespace {

std::mutex g_mutex;
FILE* g_file = nullptr;
std::atomic<bool> g_on{false};

template <size_t N>
struct Name {
  constexpr Name(const char (&s)[N]) {  // NOLINT: implicit, for template arguments
    for (size_t i = 0; i < N; i++) text[i] = s[i];
  }
  char text[N];
};

template <typename T>
void Arg(std::string* out, T v) {
  char buf[64];
  if constexpr (std::is_pointer_v<T>) {
    std::snprintf(buf, sizeof buf, "%p", reinterpret_cast<const void*>(v));
  } else if constexpr (std::is_enum_v<T>) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else if constexpr (std::is_integral_v<T>) {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "{%zu bytes}", sizeof(T));
  }
  if (!out->empty()) *out += ", ";
  *out += buf;
}

void Line(const char* what, const std::string& text) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_file == nullptr) return;
  std::fprintf(g_file, "tid=%ld irql=%u %s %s\n", static_cast<long>(syscall(SYS_gettid)),
               static_cast<unsigned>(CurrentIrql()), what, text.c_str());
  std::fflush(g_file);
}

template <typename D, typename F, F D::*Member, const D* Table, Name N>
struct Traced;

template <typename D, typename R, typename... A, R (*D::*Member)(A...), const D* Table, Name N>
struct Traced<D, R (*)(A...), Member, Table, N> {
  static R Call(A... args) {
    std::string text = std::string(N.text) + "(";
    std::string list;
    (Arg(&list, args), ...);
    text += list + ")";
    Line("call", text);
    if constexpr (std::is_void_v<R>) {
      (Table->*Member)(args...);
      Line("return", std::string(N.text));
    } else {
      R r = (Table->*Member)(args...);
      char buf[32];
      std::snprintf(buf, sizeof buf, " -> 0x%08x", static_cast<unsigned>(r));
      Line("return", std::string(N.text) + buf);
      return r;
    }
  }
};

}  // namespace

// Generated from include/softndk/ndkpi.h's dispatch tables (member order).

static const NDK_ADAPTER_DISPATCH kTracedAdapter = {
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE,
           &NDK_ADAPTER_DISPATCH::NdkQueryExtension, &shim::kShimAdapter,
           "NdkQueryExtension">::Call,
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_QUERY_ADAPTER_INFO,
           &NDK_ADAPTER_DISPATCH::NdkQueryAdapterInfo, &shim::kShimAdapter,
           "NdkQueryAdapterInfo">::Call,
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_CREATE_CQ, &NDK_ADAPTER_DISPATCH::NdkCreateCq,
           &shim::kShimAdapter, "NdkCreateCq">::Call,
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_CREATE_PD, &NDK_ADAPTER_DISPATCH::NdkCreatePd,
           &shim::kShimAdapter, "NdkCreatePd">::Call,
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_CREATE_SHARED_ENDPOINT,
           &NDK_ADAPTER_DISPATCH::NdkCreateSharedEndpoint, &shim::kShimAdapter,
           "NdkCreateSharedEndpoint">::Call,
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_CREATE_CONNECTOR, &NDK_ADAPTER_DISPATCH::NdkCreateConnector,
           &shim::kShimAdapter, "NdkCreateConnector">::Call,
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_CREATE_LISTENER, &NDK_ADAPTER_DISPATCH::NdkCreateListener,
           &shim::kShimAdapter, "NdkCreateListener">::Call,
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_BUILD_LAM, &NDK_ADAPTER_DISPATCH::NdkBuildLAM,
           &shim::kShimAdapter, "NdkBuildLAM">::Call,
    Traced<NDK_ADAPTER_DISPATCH, NDK_FN_RELEASE_LAM, &NDK_ADAPTER_DISPATCH::NdkReleaseLAM,
           &shim::kShimAdapter, "NdkReleaseLAM">::Call,
};
static const NDK_CQ_DISPATCH kTracedCq = {
    Traced<NDK_CQ_DISPATCH, NDK_FN_CLOSE_OBJECT, &NDK_CQ_DISPATCH::NdkCloseCq, &shim::kShimCq,
           "NdkCloseCq">::Call,
    Traced<NDK_CQ_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE, &NDK_CQ_DISPATCH::NdkQueryExtension,
           &shim::kShimCq, "NdkQueryExtension">::Call,
    Traced<NDK_CQ_DISPATCH, NDK_FN_RESIZE_CQ, &NDK_CQ_DISPATCH::NdkResizeCq, &shim::kShimCq,
           "NdkResizeCq">::Call,
    Traced<NDK_CQ_DISPATCH, NDK_FN_ARM_CQ, &NDK_CQ_DISPATCH::NdkArmCq, &shim::kShimCq,
           "NdkArmCq">::Call,
    Traced<NDK_CQ_DISPATCH, NDK_FN_GET_CQ_RESULTS, &NDK_CQ_DISPATCH::NdkGetCqResults,
           &shim::kShimCq, "NdkGetCqResults">::Call,
    Traced<NDK_CQ_DISPATCH, NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION,
           &NDK_CQ_DISPATCH::NdkControlCqInterruptModeration, &shim::kShimCq,
           "NdkControlCqInterruptModeration">::Call,
    Traced<NDK_CQ_DISPATCH, NDK_FN_GET_CQ_RESULTS_EX, &NDK_CQ_DISPATCH::NdkGetCqResultsEx,
           &shim::kShimCq, "NdkGetCqResultsEx">::Call,
};
static const NDK_PD_DISPATCH kTracedPd = {
    Traced<NDK_PD_DISPATCH, NDK_FN_CLOSE_OBJECT, &NDK_PD_DISPATCH::NdkClosePd, &shim::kShimPd,
           "NdkClosePd">::Call,
    Traced<NDK_PD_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE, &NDK_PD_DISPATCH::NdkQueryExtension,
           &shim::kShimPd, "NdkQueryExtension">::Call,
    Traced<NDK_PD_DISPATCH, NDK_FN_CREATE_MR, &NDK_PD_DISPATCH::NdkCreateMr, &shim::kShimPd,
           "NdkCreateMr">::Call,
    Traced<NDK_PD_DISPATCH, NDK_FN_CREATE_MW, &NDK_PD_DISPATCH::NdkCreateMw, &shim::kShimPd,
           "NdkCreateMw">::Call,
    Traced<NDK_PD_DISPATCH, NDK_FN_CREATE_SRQ, &NDK_PD_DISPATCH::NdkCreateSrq, &shim::kShimPd,
           "NdkCreateSrq">::Call,
    Traced<NDK_PD_DISPATCH, NDK_FN_CREATE_QP, &NDK_PD_DISPATCH::NdkCreateQp, &shim::kShimPd,
           "NdkCreateQp">::Call,
    Traced<NDK_PD_DISPATCH, NDK_FN_CREATE_QP_WITH_SRQ, &NDK_PD_DISPATCH::NdkCreateQpWithSrq,
           &shim::kShimPd, "NdkCreateQpWithSrq">::Call,
    Traced<NDK_PD_DISPATCH, NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN,
           &NDK_PD_DISPATCH::NdkGetPrivilegedMemoryRegionToken, &shim::kShimPd,
           "NdkGetPrivilegedMemoryRegionToken">::Call,
};
static const NDK_MR_DISPATCH kTracedMr = {
    Traced<NDK_MR_DISPATCH, NDK_FN_CLOSE_OBJECT, &NDK_MR_DISPATCH::NdkCloseMr, &shim::kShimMr,
           "NdkCloseMr">::Call,
    Traced<NDK_MR_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE, &NDK_MR_DISPATCH::NdkQueryExtension,
           &shim::kShimMr, "NdkQueryExtension">::Call,
    Traced<NDK_MR_DISPATCH, NDK_FN_REGISTER_MR, &NDK_MR_DISPATCH::NdkRegisterMr, &shim::kShimMr,
           "NdkRegisterMr">::Call,
    Traced<NDK_MR_DISPATCH, NDK_FN_DEREGISTER_MR, &NDK_MR_DISPATCH::NdkDeregisterMr, &shim::kShimMr,
           "NdkDeregisterMr">::Call,
    Traced<NDK_MR_DISPATCH, NDK_FN_INITIALIZE_FAST_REGISTER_MR,
           &NDK_MR_DISPATCH::NdkInitializeFastRegisterMr, &shim::kShimMr,
           "NdkInitializeFastRegisterMr">::Call,
    Traced<NDK_MR_DISPATCH, NDK_FN_GET_REMOTE_TOKEN_FROM_MR,
           &NDK_MR_DISPATCH::NdkGetRemoteTokenFromMr, &shim::kShimMr,
           "NdkGetRemoteTokenFromMr">::Call,
    Traced<NDK_MR_DISPATCH, NDK_FN_GET_LOCAL_TOKEN_FROM_MR,
           &NDK_MR_DISPATCH::NdkGetLocalTokenFromMr, &shim::kShimMr,
           "NdkGetLocalTokenFromMr">::Call,
};
static const NDK_MW_DISPATCH kTracedMw = {
    Traced<NDK_MW_DISPATCH, NDK_FN_CLOSE_OBJECT, &NDK_MW_DISPATCH::NdkCloseMw, &shim::kShimMw,
           "NdkCloseMw">::Call,
    Traced<NDK_MW_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE, &NDK_MW_DISPATCH::NdkQueryExtension,
           &shim::kShimMw, "NdkQueryExtension">::Call,
    Traced<NDK_MW_DISPATCH, NDK_FN_GET_REMOTE_TOKEN_FROM_MW,
           &NDK_MW_DISPATCH::NdkGetRemoteTokenFromMw, &shim::kShimMw,
           "NdkGetRemoteTokenFromMw">::Call,
};
static const NDK_SRQ_DISPATCH kTracedSrq = {
    Traced<NDK_SRQ_DISPATCH, NDK_FN_CLOSE_OBJECT, &NDK_SRQ_DISPATCH::NdkCloseSrq, &shim::kShimSrq,
           "NdkCloseSrq">::Call,
    Traced<NDK_SRQ_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE, &NDK_SRQ_DISPATCH::NdkQueryExtension,
           &shim::kShimSrq, "NdkQueryExtension">::Call,
    Traced<NDK_SRQ_DISPATCH, NDK_FN_MODIFY_SRQ, &NDK_SRQ_DISPATCH::NdkModifySrq, &shim::kShimSrq,
           "NdkModifySrq">::Call,
    Traced<NDK_SRQ_DISPATCH, NDK_FN_SRQ_RECEIVE, &NDK_SRQ_DISPATCH::NdkSrqReceive, &shim::kShimSrq,
           "NdkSrqReceive">::Call,
};
static const NDK_QP_DISPATCH kTracedQp = {
    Traced<NDK_QP_DISPATCH, NDK_FN_CLOSE_OBJECT, &NDK_QP_DISPATCH::NdkCloseQp, &shim::kShimQp,
           "NdkCloseQp">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE, &NDK_QP_DISPATCH::NdkQueryExtension,
           &shim::kShimQp, "NdkQueryExtension">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_FLUSH, &NDK_QP_DISPATCH::NdkFlush, &shim::kShimQp,
           "NdkFlush">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_SEND, &NDK_QP_DISPATCH::NdkSend, &shim::kShimQp,
           "NdkSend">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_RECEIVE, &NDK_QP_DISPATCH::NdkReceive, &shim::kShimQp,
           "NdkReceive">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_BIND, &NDK_QP_DISPATCH::NdkBind, &shim::kShimQp,
           "NdkBind">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_FAST_REGISTER, &NDK_QP_DISPATCH::NdkFastRegister, &shim::kShimQp,
           "NdkFastRegister">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_INVALIDATE, &NDK_QP_DISPATCH::NdkInvalidate, &shim::kShimQp,
           "NdkInvalidate">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_READ, &NDK_QP_DISPATCH::NdkRead, &shim::kShimQp,
           "NdkRead">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_WRITE, &NDK_QP_DISPATCH::NdkWrite, &shim::kShimQp,
           "NdkWrite">::Call,
    Traced<NDK_QP_DISPATCH, NDK_FN_SEND_AND_INVALIDATE, &NDK_QP_DISPATCH::NdkSendAndInvalidate,
           &shim::kShimQp, "NdkSendAndInvalidate">::Call,
};
static const NDK_CONNECTOR_DISPATCH kTracedConnector = {
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_CLOSE_OBJECT, &NDK_CONNECTOR_DISPATCH::NdkCloseConnector,
           &shim::kShimConnector, "NdkCloseConnector">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE,
           &NDK_CONNECTOR_DISPATCH::NdkQueryExtension, &shim::kShimConnector,
           "NdkQueryExtension">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_CONNECT, &NDK_CONNECTOR_DISPATCH::NdkConnect,
           &shim::kShimConnector, "NdkConnect">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_CONNECT_WITH_SHARED_ENDPOINT,
           &NDK_CONNECTOR_DISPATCH::NdkConnectWithSharedEndpoint, &shim::kShimConnector,
           "NdkConnectWithSharedEndpoint">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_COMPLETE_CONNECT,
           &NDK_CONNECTOR_DISPATCH::NdkCompleteConnect, &shim::kShimConnector,
           "NdkCompleteConnect">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_ACCEPT, &NDK_CONNECTOR_DISPATCH::NdkAccept,
           &shim::kShimConnector, "NdkAccept">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_REJECT, &NDK_CONNECTOR_DISPATCH::NdkReject,
           &shim::kShimConnector, "NdkReject">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_GET_CONNECTION_DATA,
           &NDK_CONNECTOR_DISPATCH::NdkGetConnectionData, &shim::kShimConnector,
           "NdkGetConnectionData">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_GET_LOCAL_ADDRESS,
           &NDK_CONNECTOR_DISPATCH::NdkGetLocalAddress, &shim::kShimConnector,
           "NdkGetLocalAddress">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_GET_PEER_ADDRESS,
           &NDK_CONNECTOR_DISPATCH::NdkGetPeerAddress, &shim::kShimConnector,
           "NdkGetPeerAddress">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_DISCONNECT, &NDK_CONNECTOR_DISPATCH::NdkDisconnect,
           &shim::kShimConnector, "NdkDisconnect">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_COMPLETE_CONNECT_EX,
           &NDK_CONNECTOR_DISPATCH::NdkCompleteConnectEx, &shim::kShimConnector,
           "NdkCompleteConnectEx">::Call,
    Traced<NDK_CONNECTOR_DISPATCH, NDK_FN_ACCEPT_EX, &NDK_CONNECTOR_DISPATCH::NdkAcceptEx,
           &shim::kShimConnector, "NdkAcceptEx">::Call,
};
static const NDK_LISTENER_DISPATCH kTracedListener = {
    Traced<NDK_LISTENER_DISPATCH, NDK_FN_CLOSE_OBJECT, &NDK_LISTENER_DISPATCH::NdkCloseListener,
           &shim::kShimListener, "NdkCloseListener">::Call,
    Traced<NDK_LISTENER_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE,
           &NDK_LISTENER_DISPATCH::NdkQueryExtension, &shim::kShimListener,
           "NdkQueryExtension">::Call,
    Traced<NDK_LISTENER_DISPATCH, NDK_FN_LISTEN, &NDK_LISTENER_DISPATCH::NdkListen,
           &shim::kShimListener, "NdkListen">::Call,
    Traced<NDK_LISTENER_DISPATCH, NDK_FN_GET_LISTENER_LOCAL_ADDRESS,
           &NDK_LISTENER_DISPATCH::NdkGetLocalAddress, &shim::kShimListener,
           "NdkGetLocalAddress">::Call,
    Traced<NDK_LISTENER_DISPATCH, NDK_FN_CONTROL_CONNECT_EVENTS,
           &NDK_LISTENER_DISPATCH::NdkControlConnectEvents, &shim::kShimListener,
           "NdkControlConnectEvents">::Call,
};
static const NDK_SHARED_ENDPOINT_DISPATCH kTracedSharedEndpoint = {
    Traced<NDK_SHARED_ENDPOINT_DISPATCH, NDK_FN_CLOSE_OBJECT,
           &NDK_SHARED_ENDPOINT_DISPATCH::NdkCloseSharedEndpoint, &shim::kShimSharedEndpoint,
           "NdkCloseSharedEndpoint">::Call,
    Traced<NDK_SHARED_ENDPOINT_DISPATCH, NDK_FN_QUERY_EXTENSION_INTERFACE,
           &NDK_SHARED_ENDPOINT_DISPATCH::NdkQueryExtension, &shim::kShimSharedEndpoint,
           "NdkQueryExtension">::Call,
    Traced<NDK_SHARED_ENDPOINT_DISPATCH, NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS,
           &NDK_SHARED_ENDPOINT_DISPATCH::NdkGetLocalAddress, &shim::kShimSharedEndpoint,
           "NdkGetLocalAddress">::Call,
};

bool Configure(const std::string& path) {
  FILE* f = nullptr;
  if (!path.empty()) {
    f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
      std::perror(("softndk-wdk-run: --trace " + path).c_str());
      return false;
    }
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_file != nullptr) std::fclose(g_file);
  g_file = f;
  g_on.store(f != nullptr);
  return true;
}

bool On() { return g_on.load(std::memory_order_relaxed); }

#define SOFTNDK_TRACE_TABLE(D, traced) \
  const D* Table(const D* shim) { return On() ? &traced : shim; }
SOFTNDK_TRACE_TABLE(NDK_ADAPTER_DISPATCH, kTracedAdapter)
SOFTNDK_TRACE_TABLE(NDK_CQ_DISPATCH, kTracedCq)
SOFTNDK_TRACE_TABLE(NDK_PD_DISPATCH, kTracedPd)
SOFTNDK_TRACE_TABLE(NDK_MR_DISPATCH, kTracedMr)
SOFTNDK_TRACE_TABLE(NDK_MW_DISPATCH, kTracedMw)
SOFTNDK_TRACE_TABLE(NDK_SRQ_DISPATCH, kTracedSrq)
SOFTNDK_TRACE_TABLE(NDK_QP_DISPATCH, kTracedQp)
SOFTNDK_TRACE_TABLE(NDK_CONNECTOR_DISPATCH, kTracedConnector)
SOFTNDK_TRACE_TABLE(NDK_LISTENER_DISPATCH, kTracedListener)
SOFTNDK_TRACE_TABLE(NDK_SHARED_ENDPOINT_DISPATCH, kTracedSharedEndpoint)
#undef SOFTNDK_TRACE_TABLE

void Event(const char* what, const void* callback_context, const void* object, long long value) {
  if (!On()) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s(context %p, object %p, 0x%llx)", what, callback_context,
                object, static_cast<unsigned long long>(value));
  Line("callback", buf);
}

}  // namespace softndk::wdk::net::trace
