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

std::string connect_failure_text(NTSTATUS status, const std::string& where) {
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

std::string listen_failure_text(NTSTATUS status, const std::string& where) {
  switch (status) {
    case STATUS_SHARING_VIOLATION:
    case STATUS_ADDRESS_ALREADY_EXISTS:
      return "port in use: cannot listen on " + where;
    case STATUS_INVALID_ADDRESS:
      return "cannot listen on " + where + ": not an address of this adapter";
    default:
      return "listen on " + where + " failed: " + status_name(status);
  }
}

}  // namespace softndk::tools
