// SPDX-License-Identifier: Apache-2.0
/*
 * ndksock.h - a socket-like layer over NDK, the way a Windows kernel
 * consumer writes one: WSK registration, the NDK NPI, one PD per adapter,
 * one CQ/QP/connector per socket, blocking calls made at PASSIVE_LEVEL on
 * top of NDK's asynchronous ones (a KEVENT per request), completions
 * signalled from the CQ notification at DISPATCH_LEVEL.
 *
 * Written only against the WDK headers (ntddk.h, wsk.h, wskndk.h,
 * netioapi.h, ndkpi.h): it builds for Windows as it does for softndk-wdk.
 */
#ifndef NDKSOCK_H_
#define NDKSOCK_H_

#include <ndkpi.h>
#include <netioapi.h>
#include <ntddk.h>
#include <wsk.h>
#include <wskndk.h>

#define NDKSOCK_TAG 'kSdN'
/* Every blocking call gives up after this long (STATUS_IO_TIMEOUT). */
#define NDKSOCK_TIMEOUT_MS 10000

/* WSK registration and the NDK dispatch table: once per driver. */
NTSTATUS NsStartup(void);
VOID NsCleanup(void);

/* An NDK adapter and its protection domain. */
typedef struct _NS_DEVICE {
  NDK_ADAPTER* Adapter;
  NDK_PD* Pd;
  NDK_ADAPTER_INFO Info;
} NS_DEVICE;

/* Opens the adapter on the interface with this alias ("lo", "eth0"). */
NTSTATUS NsOpenDevice(PCWSTR InterfaceAlias, NS_DEVICE* Device);
VOID NsCloseDevice(NS_DEVICE* Device);

/* Pool memory, its MDL and an MR: registered (Fast FALSE) for messages or
 * fast-registered through the QP for RDMA. */
typedef struct _NS_BUFFER {
  PUCHAR Va;
  ULONG Length;
  PMDL Mdl;
  NDK_MR* Mr;
  UINT32 LocalToken;
  UINT32 RemoteToken;
} NS_BUFFER;

#define NS_MAX_STASH 16

typedef struct _NS_SOCKET {
  NS_DEVICE* Device;
  NDK_CQ* Cq;
  NDK_QP* Qp;
  NDK_CONNECTOR* Connector;
  NDK_LISTENER* Listener;
  KEVENT CqEvent;         /* CQ notification (DISPATCH_LEVEL) */
  KEVENT ConnectEvent;    /* listener: a connection request arrived */
  KEVENT DisconnectEvent; /* the peer disconnected */
  KSPIN_LOCK Lock;        /* Incoming */
  NDK_CONNECTOR* Incoming;
  NDK_RESULT_EX Stash[NS_MAX_STASH]; /* completions not yet asked for */
  ULONG StashCount;
} NS_SOCKET;

NTSTATUS NsBufferAllocate(ULONG Length, NS_BUFFER* Buffer);
VOID NsBufferFree(NS_SOCKET* Socket, NS_BUFFER* Buffer);
/* A registered MR for sends and receives. */
NTSTATUS NsBufferRegister(NS_SOCKET* Socket, NS_BUFFER* Buffer);
/* A fast-registered MR (RDMA target when Remote, read sink otherwise). */
NTSTATUS NsBufferFastRegister(NS_SOCKET* Socket, NS_BUFFER* Buffer, BOOLEAN Remote);

NTSTATUS NsSocketCreate(NS_DEVICE* Device, NS_SOCKET* Socket);
VOID NsSocketClose(NS_SOCKET* Socket);

/* Initializes Listener (no QP) and listens on Address. */
NTSTATUS NsListen(NS_DEVICE* Device, NS_SOCKET* Listener, const SOCKADDR_IN* Address);
/* Waits for a connection on Listener and accepts it on Socket. */
NTSTATUS NsAccept(NS_SOCKET* Listener, NS_SOCKET* Socket);
NTSTATUS NsConnect(NS_SOCKET* Socket, const SOCKADDR_IN* Local, const SOCKADDR_IN* Remote);
NTSTATUS NsDisconnect(NS_SOCKET* Socket);
/* Waits for the peer's disconnect. */
NTSTATUS NsWaitDisconnect(NS_SOCKET* Socket);

NTSTATUS NsPostReceive(NS_SOCKET* Socket, NS_BUFFER* Buffer, ULONG Offset, ULONG Length);
/* Waits for the receive posted for Buffer+Offset; *Bytes: bytes received. */
NTSTATUS NsWaitReceive(NS_SOCKET* Socket, NS_BUFFER* Buffer, ULONG Offset, ULONG* Bytes);
NTSTATUS NsSend(NS_SOCKET* Socket, NS_BUFFER* Buffer, ULONG Offset, ULONG Length);
NTSTATUS NsRead(NS_SOCKET* Socket, NS_BUFFER* Local, ULONG Offset, ULONG Length,
                UINT64 RemoteAddress, UINT32 RemoteToken);
NTSTATUS NsWrite(NS_SOCKET* Socket, NS_BUFFER* Local, ULONG Offset, ULONG Length,
                 UINT64 RemoteAddress, UINT32 RemoteToken);

#endif /* NDKSOCK_H_ */
