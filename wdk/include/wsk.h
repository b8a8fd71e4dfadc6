// SPDX-License-Identifier: Apache-2.0
/*
 * wsk.h - softndk-wdk stand-in: Winsock Kernel registration, as far as an
 * NDK consumer needs it.
 *
 * Provided: WskRegister, WskCaptureProviderNPI, WskReleaseProviderNPI,
 * WskDeregister and the provider dispatch table, whose WskControlClient
 * answers WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH (wskndk.h). Not emulated:
 * WSK sockets and name resolution. Their table entries exist (a consumer
 * that fills its own copy of the table compiles) but fail with
 * STATUS_NOT_SUPPORTED and a checker report naming the call; the socket
 * dispatch types they would need (WSK_PROVIDER_*_DISPATCH) are not
 * declared, so a consumer that uses WSK sockets fails to compile.
 */
#ifndef SOFTNDK_WDK_WSK_H_
#define SOFTNDK_WDK_WSK_H_

#include <ifdef.h>
#include <ip2string.h> /* the WDK's network headers bring RtlIpv4StringToAddressExW & co. */
#include <wdm.h>
#include <ws2ipdef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WSKAPI

typedef VOID WSK_CLIENT, *PWSK_CLIENT;

typedef struct _WSK_SOCKET {
  const VOID* Dispatch;
} WSK_SOCKET, *PWSK_SOCKET;

#define MAKE_WSK_VERSION(Mj, Mn) ((USHORT)((Mj) << 8) | (USHORT)((Mn)&0xff))
#define WSK_MAJOR_VERSION(V) ((UCHAR)((V) >> 8))
#define WSK_MINOR_VERSION(V) ((UCHAR)(V))
/* The highest WSK NPI version the kit's provider speaks. */
#define WSK_SOFTNDK_VERSION MAKE_WSK_VERSION(1, 0)

/* WskCaptureProviderNPI wait timeouts, in milliseconds. */
#define WSK_NO_WAIT 0
#define WSK_INFINITE_WAIT 0xffffffffu

/* WskControlClient control codes (only the NDK one is served). */
#define WSK_TRANSPORT_LIST_QUERY 2
#define WSK_TRANSPORT_LIST_CHANGE 3
#define WSK_CACHE_SD 4
#define WSK_RELEASE_SD 5
#define WSK_TDI_DEVICENAME_MAPPING 6
#define WSK_SET_STATIC_EVENT_CALLBACKS 7
#define WSK_TDI_BEHAVIOR 8

typedef NTSTATUS(WSKAPI* PFN_WSK_CLIENT_EVENT)(PVOID ClientContext, ULONG EventType,
                                               PVOID Information, SIZE_T InformationLength);

typedef struct _WSK_CLIENT_DISPATCH {
  USHORT Version;
  USHORT Reserved;
  PFN_WSK_CLIENT_EVENT WskClientEvent;
} WSK_CLIENT_DISPATCH, *PWSK_CLIENT_DISPATCH;

typedef struct _WSK_CLIENT_NPI {
  PVOID ClientContext;
  const WSK_CLIENT_DISPATCH* Dispatch;
} WSK_CLIENT_NPI, *PWSK_CLIENT_NPI;

/* Opaque to the consumer; the kit keeps its state behind it. */
typedef struct _WSK_REGISTRATION {
  ULONGLONG ReservedRegistrationState;
  PVOID ReservedRegistrationContext;
  KSPIN_LOCK ReservedRegistrationLock;
} WSK_REGISTRATION, *PWSK_REGISTRATION;

/* Same definition as the WDK's (a repeated identical typedef is valid C11). */
typedef PVOID PSECURITY_DESCRIPTOR;

struct addrinfoexW;
struct _WSK_CLIENT_CONNECTION_DISPATCH;

typedef NTSTATUS(WSKAPI* PFN_WSK_SOCKET)(PWSK_CLIENT Client, ADDRESS_FAMILY AddressFamily,
                                         USHORT SocketType, ULONG Protocol, ULONG Flags,
                                         PVOID SocketContext, const VOID* Dispatch,
                                         PEPROCESS OwningProcess, PETHREAD OwningThread,
                                         PSECURITY_DESCRIPTOR SecurityDescriptor, PIRP Irp);
typedef NTSTATUS(WSKAPI* PFN_WSK_SOCKET_CONNECT)(
    PWSK_CLIENT Client, USHORT SocketType, ULONG Protocol, PSOCKADDR LocalAddress,
    PSOCKADDR RemoteAddress, ULONG Flags, PVOID SocketContext,
    const struct _WSK_CLIENT_CONNECTION_DISPATCH* Dispatch, PEPROCESS OwningProcess,
    PETHREAD OwningThread, PSECURITY_DESCRIPTOR SecurityDescriptor, PIRP Irp);
typedef NTSTATUS(WSKAPI* PFN_WSK_CONTROL_CLIENT)(PWSK_CLIENT Client, ULONG ControlCode,
                                                 SIZE_T InputSize, PVOID InputBuffer,
                                                 SIZE_T OutputSize, PVOID OutputBuffer,
                                                 SIZE_T* OutputSizeReturned, PIRP Irp);
typedef NTSTATUS(WSKAPI* PFN_WSK_GET_ADDRESS_INFO)(PWSK_CLIENT Client, PUNICODE_STRING NodeName,
                                                   PUNICODE_STRING ServiceName, ULONG NameSpace,
                                                   GUID* Provider, struct addrinfoexW* Hints,
                                                   struct addrinfoexW** Result,
                                                   PEPROCESS OwningProcess, PETHREAD OwningThread,
                                                   PIRP Irp);
typedef VOID(WSKAPI* PFN_WSK_FREE_ADDRESS_INFO)(PWSK_CLIENT Client, struct addrinfoexW* AddrInfo);
typedef NTSTATUS(WSKAPI* PFN_WSK_GET_NAME_INFO)(PWSK_CLIENT Client, PSOCKADDR SockAddr,
                                                ULONG SockAddrLength, PUNICODE_STRING NodeName,
                                                PUNICODE_STRING ServiceName, ULONG Flags,
                                                PEPROCESS OwningProcess, PETHREAD OwningThread,
                                                PIRP Irp);

typedef struct _WSK_PROVIDER_DISPATCH {
  USHORT Version;
  USHORT Reserved;
  PFN_WSK_SOCKET WskSocket;
  PFN_WSK_SOCKET_CONNECT WskSocketConnect;
  PFN_WSK_CONTROL_CLIENT WskControlClient;
  PFN_WSK_GET_ADDRESS_INFO WskGetAddressInfo;
  PFN_WSK_FREE_ADDRESS_INFO WskFreeAddressInfo;
  PFN_WSK_GET_NAME_INFO WskGetNameInfo;
} WSK_PROVIDER_DISPATCH, *PWSK_PROVIDER_DISPATCH;

typedef struct _WSK_PROVIDER_NPI {
  PWSK_CLIENT Client;
  const WSK_PROVIDER_DISPATCH* Dispatch;
} WSK_PROVIDER_NPI, *PWSK_PROVIDER_NPI;

/* PASSIVE_LEVEL. STATUS_SUCCESS, or STATUS_INVALID_PARAMETER for NULL
 * arguments, a NULL client dispatch or a WSK major version other than 1;
 * STATUS_INSUFFICIENT_RESOURCES. */
NTSTATUS WskRegister(PWSK_CLIENT_NPI WskClientNpi, PWSK_REGISTRATION WskRegistration);
/* The provider is always ready here: STATUS_SUCCESS whatever the timeout,
 * STATUS_DEVICE_NOT_READY after WskDeregister. <= DISPATCH_LEVEL when
 * WaitTimeout is WSK_NO_WAIT, else PASSIVE_LEVEL. */
NTSTATUS WskCaptureProviderNPI(PWSK_REGISTRATION WskRegistration, ULONG WaitTimeout,
                               PWSK_PROVIDER_NPI WskProviderNpi);
VOID WskReleaseProviderNPI(PWSK_REGISTRATION WskRegistration);
/* PASSIVE_LEVEL. Waits until every captured NPI is released (bounded: the
 * checker reports a wait past 10 s and the call returns). */
VOID WskDeregister(PWSK_REGISTRATION WskRegistration);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_WSK_H_ */
