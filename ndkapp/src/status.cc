// SPDX-License-Identifier: Apache-2.0
// status.cc - NTSTATUS names (own table first, so messages do not depend on
// the library being complete) and the one-line causes the tools print.
#include "ndkapp/status.h"

#include <cstdio>

#include "ndkapp/softndk_entry.h"

namespace softndk::tools {

namespace {

struct Named {
  NTSTATUS status;
  const char* name;
};

constexpr Named kNames[] = {
    {STATUS_SUCCESS, "STATUS_SUCCESS"},
    {STATUS_PENDING, "STATUS_PENDING"},
    {STATUS_BUFFER_OVERFLOW, "STATUS_BUFFER_OVERFLOW"},
    {STATUS_ACCESS_VIOLATION, "STATUS_ACCESS_VIOLATION"},
    {STATUS_INVALID_HANDLE, "STATUS_INVALID_HANDLE"},
    {STATUS_INVALID_PARAMETER, "STATUS_INVALID_PARAMETER"},
    {STATUS_NO_SUCH_DEVICE, "STATUS_NO_SUCH_DEVICE"},
    {STATUS_INVALID_DEVICE_REQUEST, "STATUS_INVALID_DEVICE_REQUEST"},
    {STATUS_ACCESS_DENIED, "STATUS_ACCESS_DENIED"},
    {STATUS_BUFFER_TOO_SMALL, "STATUS_BUFFER_TOO_SMALL"},
    {STATUS_OBJECT_TYPE_MISMATCH, "STATUS_OBJECT_TYPE_MISMATCH"},
    {STATUS_INVALID_PARAMETER_MIX, "STATUS_INVALID_PARAMETER_MIX"},
    {STATUS_SHARING_VIOLATION, "STATUS_SHARING_VIOLATION"},
    {STATUS_FILE_LOCK_CONFLICT, "STATUS_FILE_LOCK_CONFLICT"},
    {STATUS_INSUFFICIENT_RESOURCES, "STATUS_INSUFFICIENT_RESOURCES"},
    {STATUS_DEVICE_NOT_READY, "STATUS_DEVICE_NOT_READY"},
    {STATUS_IO_TIMEOUT, "STATUS_IO_TIMEOUT"},
    {STATUS_NOT_SUPPORTED, "STATUS_NOT_SUPPORTED"},
    {STATUS_INTERNAL_ERROR, "STATUS_INTERNAL_ERROR"},
    {STATUS_CANCELLED, "STATUS_CANCELLED"},
    {STATUS_FILE_CLOSED, "STATUS_FILE_CLOSED"},
    {STATUS_REMOTE_RESOURCES, "STATUS_REMOTE_RESOURCES"},
    {STATUS_INVALID_ADDRESS, "STATUS_INVALID_ADDRESS"},
    {STATUS_DEVICE_BUSY, "STATUS_DEVICE_BUSY"},
    {STATUS_FILE_FORCED_CLOSED, "STATUS_FILE_FORCED_CLOSED"},
    {STATUS_TOO_MANY_ADDRESSES, "STATUS_TOO_MANY_ADDRESSES"},
    {STATUS_ADDRESS_ALREADY_EXISTS, "STATUS_ADDRESS_ALREADY_EXISTS"},
    {STATUS_CONNECTION_DISCONNECTED, "STATUS_CONNECTION_DISCONNECTED"},
    {STATUS_CONNECTION_RESET, "STATUS_CONNECTION_RESET"},
    {STATUS_CONNECTION_REFUSED, "STATUS_CONNECTION_REFUSED"},
    {STATUS_CONNECTION_INVALID, "STATUS_CONNECTION_INVALID"},
    {STATUS_CONNECTION_ACTIVE, "STATUS_CONNECTION_ACTIVE"},
    {STATUS_NETWORK_UNREACHABLE, "STATUS_NETWORK_UNREACHABLE"},
    {STATUS_HOST_UNREACHABLE, "STATUS_HOST_UNREACHABLE"},
    {STATUS_CONNECTION_ABORTED, "STATUS_CONNECTION_ABORTED"},
    {STATUS_DATA_ERROR, "STATUS_DATA_ERROR"},
    {STATUS_IMPLEMENTATION_LIMIT, "STATUS_IMPLEMENTATION_LIMIT"},
    {NDIS_STATUS_BAD_VERSION, "NDIS_STATUS_BAD_VERSION"},
    {NDIS_STATUS_ADAPTER_NOT_READY, "NDIS_STATUS_ADAPTER_NOT_READY"},
};

}  // namespace

std::string status_name(NTSTATUS status) {
  for (const auto& n : kNames)
    if (n.status == status) return n.name;
  if (const char* s = SoftNdkStatusName(status)) return s;
  char buf[32];
  std::snprintf(buf, sizeof buf, "NTSTATUS 0x%08X", static_cast<unsigned>(status));
  return buf;
}

namespace {
// Where the user reads more (the source tree's docs; the man pages' NOTES
// sections say the same in short).
constexpr const char* kSiwDoc =
    "softndk's docs/compatibility.md, \"What does not interoperate\", note 1";
}  // namespace

std::string connect_failure_text(NTSTATUS status, const std::string& where, ULONG setup_phase) {
  if (status == STATUS_CONNECTION_RESET || status == STATUS_CONNECTION_ABORTED) {
    switch (setup_phase) {
      case SOFTNDK_SETUP_TCP:
        return "connection to " + where +
               " was reset in the TCP handshake, before the MPA exchange (nothing accepts "
               "connections on that port now)";
      case SOFTNDK_SETUP_MPA:
        // The library says aborted for an orderly close (FIN) where the
        // Reply was due, reset for a TCP reset.
        if (status == STATUS_CONNECTION_ABORTED)
          return "the server at " + where +
                 " closed the connection without answering the MPA Request: not an iWARP "
                 "peer? (another protocol on that port that gives up on our bytes; behind a "
                 "port forward such as QEMU's user networking a refused connection looks the "
                 "same: nothing listens behind it, or a Linux siw listener stopped accepting "
                 "after a bare TCP connection to it: see " +
                 std::string(kSiwDoc) + ")";
        return "connection to " + where +
               " was reset before the MPA exchange (TCP connected, then reset before the peer's "
               "MPA Reply; behind a port forward such as QEMU's user networking this is how a "
               "refused connection looks: nothing listens behind it, or a Linux siw listener "
               "stopped accepting after a bare TCP connection to it, e.g. a readiness probe: "
               "see " +
               std::string(kSiwDoc) + ")";
      case SOFTNDK_SETUP_AFTER_MPA:
        return "connection to " + where +
               " was reset after the MPA exchange (the peer accepted, then closed before the "
               "connection was up)";
      default:
        break;
    }
  }
  // In the MPA exchange a data error means the answer to our MPA Request was
  // no MPA Reply at all (its key, "MPA ID Rep Frame", or its frame wrong):
  // some other protocol, an HTTP server say, listens there.
  if (status == STATUS_DATA_ERROR && setup_phase == SOFTNDK_SETUP_MPA)
    return where +
           " is not an iWARP peer: it answered our MPA Request with something other than an MPA "
           "Reply (another protocol on that port?)";
  switch (status) {
    case STATUS_CONNECTION_REFUSED:
      return "connection to " + where + " refused (no server listening there, or it said no)";
    case STATUS_IO_TIMEOUT:
      return "no answer from " + where + " (timed out)";
    case STATUS_HOST_UNREACHABLE:
      return "host " + where + " unreachable";
    case STATUS_NETWORK_UNREACHABLE:
      return "network unreachable for " + where;
    case STATUS_CONNECTION_RESET:
    case STATUS_CONNECTION_ABORTED:
      return "connection to " + where + " was reset during set-up";
    default:
      return "connect to " + where + " failed: " + status_name(status);
  }
}

std::string silent_peer_text(const SOFTNDK_PEER_ACTIVITY& a) {
  if (!a.Established || !a.SentFpdu || a.PeerSpoke) return "";
  std::string s =
      "the peer accepted the connection (MPA exchange done) but never answered our first "
      "message: not one byte came from it since";
  if (a.WakeUpsSent > 0)
    s += " (softndk also sent it " + std::to_string(a.WakeUpsSent) +
         " zero-length RDMA Writes to wake it)";
  s += ". If the peer is Linux siw (6.1 and later), it can leave the first data that reaches it "
       "right behind its MPA Reply unread, and closing such a connection can crash a 6.1 "
       "kernel (iwcm.c BUG()); see " +
       std::string(kSiwDoc) +
       ". Try: check the peer (its kernel log); run again; if it keeps happening, "
       "SOFTNDK_SILENT_PEER_WAKE_MS (a shorter first wake-up) or SOFTNDK_MPA_HOLDOFF_MS=300 "
       "(hold our first message back after the Reply)";
  return s;
}

std::string listen_failure_text(NTSTATUS status, const std::string& where) {
  switch (status) {
    case STATUS_SHARING_VIOLATION:
    case STATUS_ADDRESS_ALREADY_EXISTS:
      return "port in use: cannot listen on " + where;
    case STATUS_INVALID_ADDRESS:
      return "cannot listen on " + where + ": not an address of this adapter";
    case STATUS_ACCESS_DENIED:
      return "permission denied: cannot listen on " + where +
             " (ports below net.ipv4.ip_unprivileged_port_start, 1024 by default, need root or "
             "CAP_NET_BIND_SERVICE)";
    default:
      return "listen on " + where + " failed: " + status_name(status);
  }
}

}  // namespace softndk::tools
