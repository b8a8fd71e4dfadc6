// SPDX-License-Identifier: Apache-2.0
// status_names.cc - SoftNdkStatusName and SoftNdkTerminateName: NTSTATUS
// values and Terminate codes to their names.
#include "engine/iwarp_provider.h"
#include "softndk/softndk.h"

extern "C" const char* SoftNdkStatusName(NTSTATUS Status) {
  switch (Status) {
#define S(x) \
  case x:    \
    return #x;
    S(STATUS_SUCCESS)
    S(STATUS_PENDING)
    S(STATUS_BUFFER_OVERFLOW)
    S(STATUS_ACCESS_VIOLATION)
    S(STATUS_INVALID_HANDLE)
    S(STATUS_INVALID_PARAMETER)
    S(STATUS_NO_SUCH_DEVICE)
    S(STATUS_INVALID_DEVICE_REQUEST)
    S(STATUS_ACCESS_DENIED)
    S(STATUS_BUFFER_TOO_SMALL)
    S(STATUS_OBJECT_TYPE_MISMATCH)
    S(STATUS_INVALID_PARAMETER_MIX)
    S(STATUS_SHARING_VIOLATION)
    S(STATUS_FILE_LOCK_CONFLICT)
    S(STATUS_INSUFFICIENT_RESOURCES)
    S(STATUS_DEVICE_NOT_READY)
    S(STATUS_IO_TIMEOUT)
    S(STATUS_NOT_SUPPORTED)
    S(STATUS_INTERNAL_ERROR)
    S(STATUS_CANCELLED)
    S(STATUS_FILE_CLOSED)
    S(STATUS_REMOTE_RESOURCES)
    S(STATUS_INVALID_ADDRESS)
    S(STATUS_DEVICE_BUSY)
    S(STATUS_FILE_FORCED_CLOSED)
    S(STATUS_TOO_MANY_ADDRESSES)
    S(STATUS_ADDRESS_ALREADY_EXISTS)
    S(STATUS_CONNECTION_DISCONNECTED)
    S(STATUS_CONNECTION_RESET)
    S(STATUS_CONNECTION_REFUSED)
    S(STATUS_CONNECTION_INVALID)
    S(STATUS_CONNECTION_ACTIVE)
    S(STATUS_NETWORK_UNREACHABLE)
    S(STATUS_HOST_UNREACHABLE)
    S(STATUS_CONNECTION_ABORTED)
    S(STATUS_DATA_ERROR)
    S(STATUS_IMPLEMENTATION_LIMIT)
    S(NDIS_STATUS_BAD_VERSION)
    S(NDIS_STATUS_ADAPTER_NOT_READY)
#undef S
    default:
      return nullptr;
  }
}

// The engine's own Terminate table (rdmap/terminate.cc) names the code, so
// the tools print what the wire layer meant.
extern "C" const char* SoftNdkTerminateName(ULONG Code) {
  return softndk::engine::iwarp_terminate_code_name(Code);
}
