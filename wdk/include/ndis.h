// SPDX-License-Identifier: Apache-2.0
/*
 * ndis.h - softndk-wdk stand-in: the part of NDIS an NDK consumer touches.
 *
 * An NDK consumer includes ndis.h for the interface identifiers (ifdef.h),
 * the socket address types and NDIS_STATUS. Miniport and protocol driver
 * services (NdisMRegisterMiniportDriver, NET_BUFFER_LIST, OIDs) are not
 * emulated and are not declared: a driver that uses them fails to compile.
 */
#ifndef SOFTNDK_WDK_NDIS_H_
#define SOFTNDK_WDK_NDIS_H_

#include <ifdef.h>
#include <ip2string.h> /* the WDK's network headers bring RtlIpv4StringToAddressExW & co. */
#include <netioapi.h>
#include <wdm.h>
#include <ws2ipdef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef NTSTATUS NDIS_STATUS, *PNDIS_STATUS;
typedef PVOID NDIS_HANDLE, *PNDIS_HANDLE;

#define NDIS_STATUS_SUCCESS ((NDIS_STATUS)STATUS_SUCCESS)
#define NDIS_STATUS_PENDING ((NDIS_STATUS)STATUS_PENDING)
#define NDIS_STATUS_FAILURE ((NDIS_STATUS)0xC0000001L)
#define NDIS_STATUS_INVALID_PARAMETER ((NDIS_STATUS)STATUS_INVALID_PARAMETER)
#define NDIS_STATUS_NOT_SUPPORTED ((NDIS_STATUS)STATUS_NOT_SUPPORTED)
#define NDIS_STATUS_BUFFER_TOO_SHORT ((NDIS_STATUS)STATUS_BUFFER_TOO_SMALL)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_NDIS_H_ */
