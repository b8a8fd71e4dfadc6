// SPDX-License-Identifier: Apache-2.0
/*
 * netioapi.h - softndk-wdk stand-in: interface identifier conversions.
 *
 * Answers come from the Linux network namespace the process runs in, at the
 * moment of the call (an interface that disappears makes later conversions
 * fail). NETIO_STATUS is NTSTATUS, as in kernel mode:
 *   STATUS_SUCCESS, STATUS_INVALID_PARAMETER (NULL pointer, zero index,
 *   malformed LUID), STATUS_NOT_FOUND (no such interface),
 *   STATUS_BUFFER_TOO_SMALL (alias buffer shorter than the name + NUL).
 * Callable at PASSIVE_LEVEL only (the checker reports other callers).
 */
#ifndef SOFTNDK_WDK_NETIOAPI_H_
#define SOFTNDK_WDK_NETIOAPI_H_

#include <ifdef.h>
#include <ws2ipdef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef NTSTATUS NETIO_STATUS;
#define NETIOAPI_API NETIO_STATUS

#ifndef STATUS_NOT_FOUND
#define STATUS_NOT_FOUND ((NTSTATUS)0xC0000225L)
#endif

NETIOAPI_API ConvertInterfaceIndexToLuid(NET_IFINDEX InterfaceIndex, PNET_LUID InterfaceLuid);
NETIOAPI_API ConvertInterfaceLuidToIndex(const NET_LUID* InterfaceLuid,
                                         PNET_IFINDEX InterfaceIndex);
/* Length: the capacity of InterfaceAlias in characters (NUL included). */
NETIOAPI_API ConvertInterfaceLuidToAlias(const NET_LUID* InterfaceLuid, PWSTR InterfaceAlias,
                                         SIZE_T Length);
NETIOAPI_API ConvertInterfaceAliasToLuid(const WCHAR* InterfaceAlias, PNET_LUID InterfaceLuid);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_NETIOAPI_H_ */
