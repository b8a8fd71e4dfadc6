// SPDX-License-Identifier: Apache-2.0
// tcp/status.cc - errno -> NTSTATUS for the connection engine.
#include "tcp/status.h"

#include <cerrno>

namespace softndk::tcp {

NTSTATUS status_from_errno(int err, SockOp op) {
  switch (err) {
    case 0:
      return STATUS_SUCCESS;
    case ECONNREFUSED:
      return STATUS_CONNECTION_REFUSED;  // RST to our SYN: nothing listens
    case ENETUNREACH:
      return STATUS_NETWORK_UNREACHABLE;  // no route
    case EHOSTUNREACH:                    // ARP/ND failed, ICMP host unreachable
    case EHOSTDOWN:
      return STATUS_HOST_UNREACHABLE;
    case ETIMEDOUT:
      return STATUS_IO_TIMEOUT;
    case ECONNRESET:
      return STATUS_CONNECTION_RESET;
    case ECONNABORTED:
      return STATUS_CONNECTION_ABORTED;
    case EPIPE:
      return STATUS_CONNECTION_DISCONNECTED;
    case EADDRINUSE:
      // bind: local ip:port in use. connect with a shared endpoint: the
      // kernel found the 4-tuple in use.
      return op == SockOp::kShared ? STATUS_ADDRESS_ALREADY_EXISTS : STATUS_SHARING_VIOLATION;
    case EADDRNOTAVAIL:
      if (op == SockOp::kBind) return STATUS_INVALID_ADDRESS;  // not a local address
      if (op == SockOp::kShared) return STATUS_ADDRESS_ALREADY_EXISTS;
      return STATUS_TOO_MANY_ADDRESSES;  // connect(): no free ephemeral port
    case EAFNOSUPPORT:
    case EPROTONOSUPPORT:
      return STATUS_INVALID_ADDRESS;
    case EINVAL:
      // connect() validates its arguments before routing (we build them), so
      // EINVAL there is the route lookup refusing the pair: a socket bound
      // to a loopback address cannot reach a non-loopback host.
      if (op == SockOp::kConnect || op == SockOp::kShared) return STATUS_NETWORK_UNREACHABLE;
      return STATUS_INVALID_PARAMETER;
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
      return STATUS_INSUFFICIENT_RESOURCES;
    case EACCES:
    case EPERM:
      // bind: a port below net.ipv4.ip_unprivileged_port_start without
      // CAP_NET_BIND_SERVICE (Winsock's WSAEACCES is STATUS_ACCESS_DENIED).
      if (op == SockOp::kBind) return STATUS_ACCESS_DENIED;
      return STATUS_CONNECTION_REFUSED;  // e.g. a firewall REJECT (prohibited)
    default:
      return STATUS_INTERNAL_ERROR;
  }
}

const char* status_name(NTSTATUS s) {
  switch (s) {
#define N(x) \
  case x:    \
    return #x;
    N(STATUS_SUCCESS)
    N(STATUS_PENDING)
    N(STATUS_CANCELLED)
    N(STATUS_IO_TIMEOUT)
    N(STATUS_CONNECTION_REFUSED)
    N(STATUS_CONNECTION_RESET)
    N(STATUS_CONNECTION_ABORTED)
    N(STATUS_CONNECTION_DISCONNECTED)
    N(STATUS_CONNECTION_INVALID)
    N(STATUS_NETWORK_UNREACHABLE)
    N(STATUS_HOST_UNREACHABLE)
    N(STATUS_ADDRESS_ALREADY_EXISTS)
    N(STATUS_SHARING_VIOLATION)
    N(STATUS_INVALID_ADDRESS)
    N(STATUS_TOO_MANY_ADDRESSES)
    N(STATUS_INSUFFICIENT_RESOURCES)
    N(STATUS_INVALID_PARAMETER)
    N(STATUS_ACCESS_DENIED)
    N(STATUS_DATA_ERROR)
    N(STATUS_NOT_SUPPORTED)
    N(STATUS_INTERNAL_ERROR)
    N(STATUS_BUFFER_TOO_SMALL)
#undef N
    default:
      return "STATUS_?";
  }
}

}  // namespace softndk::tcp
