// SPDX-License-Identifier: Apache-2.0
/*
 * driver.c - the sample NDK consumer driver: DriverEntry starts a system
 * thread that plays one side of a short conversation over ndksock, and the
 * driver asks its host to unload it when that side is done.
 *
 *   server <interface> <local-ip> <port>
 *   client <interface> <local-ip> <server-ip> <port>
 *
 * The conversation (all data checked against a seeded pattern):
 *   1. NDKSOCK_ROUNDS echo rounds: the client sends, the server sends back;
 *   2. the server fast-registers a region, fills it and tells the client its
 *      address and token; the client RDMA-reads the first half into its own
 *      fast-registered buffer and RDMA-writes the second half;
 *   3. the server checks the written half and says so; the client
 *      disconnects, the server sees the disconnect; both tear down.
 *
 * Under softndk-wdk the arguments come from the host's command line; on
 * Windows a driver would read them from its registry key.
 */
#include <ip2string.h>
#include <stdlib.h>
#include <string.h>

#include "ndksock.h"

#define NDKSOCK_ROUNDS 4
#define NDKSOCK_MSG_SIZE 4096
#define NDKSOCK_REGION_SIZE (64 * 1024)
#define NDKSOCK_MAGIC 0x4e444b53u /* "NDKS" */

typedef enum { MsgEcho = 1, MsgRegion = 2, MsgWritten = 3, MsgVerdict = 4 } NS_MSG_TYPE;

/* What the two sides send each other, at the start of a message buffer. */
typedef struct _NS_MSG {
  ULONG Magic;
  ULONG Type;
  ULONG Seed;
  ULONG Length;     /* MsgEcho: pattern bytes after the header */
  UINT64 Address;   /* MsgRegion */
  UINT32 Token;     /* MsgRegion */
  NTSTATUS Verdict; /* MsgVerdict */
} NS_MSG;

typedef struct _NS_CONFIG {
  BOOLEAN Server;
  WCHAR Interface[IF_MAX_STRING_SIZE];
  SOCKADDR_IN Local;
  SOCKADDR_IN Remote; /* client: the server */
} NS_CONFIG;

static NS_CONFIG NsConfig;
static HANDLE NsThreadHandle;
static PVOID NsThreadObject;
static NTSTATUS NsResult = STATUS_PENDING;

static VOID NsFill(PUCHAR p, ULONG n, ULONG seed) {
  ULONG x = seed * 2654435761u + 1, i;
  for (i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    p[i] = (UCHAR)(x >> 16);
  }
}

static BOOLEAN NsCheck(const UCHAR* p, ULONG n, ULONG seed) {
  ULONG x = seed * 2654435761u + 1, i;
  for (i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    if (p[i] != (UCHAR)(x >> 16)) return FALSE;
  }
  return TRUE;
}

/* Two receives stay posted, so that two messages in a row (the server's
 * last echo and its region message) both find one: iWARP has no
 * receiver-not-ready retry, a Send without a posted receive breaks the
 * connection. Messages arrive in the order the receives were posted. */
typedef struct _NS_RX {
  NS_BUFFER Buffer; /* 2 * NDKSOCK_MSG_SIZE */
  ULONG Next;       /* the slot the next message lands in */
} NS_RX;

static NTSTATUS NsRxStart(NS_SOCKET* Socket, NS_RX* Rx) {
  NTSTATUS status = NsBufferAllocate(2 * NDKSOCK_MSG_SIZE, &Rx->Buffer);
  if (NT_SUCCESS(status)) status = NsBufferRegister(Socket, &Rx->Buffer);
  if (NT_SUCCESS(status)) status = NsPostReceive(Socket, &Rx->Buffer, 0, NDKSOCK_MSG_SIZE);
  if (NT_SUCCESS(status)) {
    status = NsPostReceive(Socket, &Rx->Buffer, NDKSOCK_MSG_SIZE, NDKSOCK_MSG_SIZE);
  }
  Rx->Next = 0;
  return status;
}

/* Receives the next message, checks it, and posts its slot again. */
static NTSTATUS NsReceiveMsg(NS_SOCKET* Socket, NS_RX* Rx, ULONG Type, NS_MSG* Msg) {
  ULONG offset = Rx->Next * NDKSOCK_MSG_SIZE;
  PUCHAR slot = Rx->Buffer.Va + offset;
  ULONG bytes = 0;
  NTSTATUS status = NsWaitReceive(Socket, &Rx->Buffer, offset, &bytes);
  if (!NT_SUCCESS(status)) return status;
  Rx->Next ^= 1;
  if (bytes < sizeof(NS_MSG)) return STATUS_DATA_ERROR;
  RtlCopyMemory(Msg, slot, sizeof(*Msg));
  if (Msg->Magic != NDKSOCK_MAGIC || Msg->Type != Type) return STATUS_DATA_ERROR;
  if (Type == MsgEcho && (Msg->Length > bytes - sizeof(NS_MSG) ||
                          !NsCheck(slot + sizeof(NS_MSG), Msg->Length, Msg->Seed))) {
    return STATUS_DATA_ERROR;
  }
  return NsPostReceive(Socket, &Rx->Buffer, offset, NDKSOCK_MSG_SIZE);
}

static NTSTATUS NsSendMsg(NS_SOCKET* Socket, NS_BUFFER* Buffer, const NS_MSG* Msg) {
  ULONG payload = Msg->Type == MsgEcho ? Msg->Length : 0;
  RtlCopyMemory(Buffer->Va, Msg, sizeof(*Msg));
  if (payload != 0) NsFill(Buffer->Va + sizeof(NS_MSG), payload, Msg->Seed);
  return NsSend(Socket, Buffer, 0, sizeof(NS_MSG) + payload);
}

static VOID NsMsg(NS_MSG* Msg, ULONG Type, ULONG Seed) {
  RtlZeroMemory(Msg, sizeof(*Msg));
  Msg->Magic = NDKSOCK_MAGIC;
  Msg->Type = Type;
  Msg->Seed = Seed;
}

#define NS_CHECK(expr)                                                   \
  do {                                                                   \
    status = (expr);                                                     \
    if (!NT_SUCCESS(status)) {                                           \
      DbgPrint("ndksock: %s failed: 0x%08x\n", #expr, (unsigned)status); \
      goto out;                                                          \
    }                                                                    \
  } while (0)

/* Messages arrive in a receive buffer half (offset 0); sends use the other. */
static NTSTATUS NsServe(NS_DEVICE* Device) {
  NS_SOCKET listener, socket;
  NS_RX rx = {0};
  NS_BUFFER tx = {0}, region = {0};
  NS_MSG msg;
  ULONG round;
  NTSTATUS status;

  RtlZeroMemory(&socket, sizeof(socket));
  NS_CHECK(NsListen(Device, &listener, &NsConfig.Local));
  NS_CHECK(NsSocketCreate(Device, &socket));
  NS_CHECK(NsRxStart(&socket, &rx));
  NS_CHECK(NsBufferAllocate(NDKSOCK_MSG_SIZE, &tx));
  NS_CHECK(NsBufferRegister(&socket, &tx));
  DbgPrint("ndksock: server listening\n");
  NS_CHECK(NsAccept(&listener, &socket));

  for (round = 0; round < NDKSOCK_ROUNDS; ++round) {
    NS_CHECK(NsReceiveMsg(&socket, &rx, MsgEcho, &msg));
    msg.Seed += 1000; /* the echo carries its own pattern */
    NS_CHECK(NsSendMsg(&socket, &tx, &msg));
  }

  NS_CHECK(NsBufferAllocate(NDKSOCK_REGION_SIZE, &region));
  NsFill(region.Va, NDKSOCK_REGION_SIZE / 2, 7);
  RtlZeroMemory(region.Va + NDKSOCK_REGION_SIZE / 2, NDKSOCK_REGION_SIZE / 2);
  NS_CHECK(NsBufferFastRegister(&socket, &region, TRUE));
  NsMsg(&msg, MsgRegion, 7);
  msg.Address = (UINT64)(ULONG_PTR)region.Va;
  msg.Token = region.RemoteToken;
  msg.Length = NDKSOCK_REGION_SIZE;
  NS_CHECK(NsSendMsg(&socket, &tx, &msg));

  NS_CHECK(NsReceiveMsg(&socket, &rx, MsgWritten, &msg));
  status = NsCheck(region.Va + NDKSOCK_REGION_SIZE / 2, NDKSOCK_REGION_SIZE / 2, msg.Seed)
               ? STATUS_SUCCESS
               : STATUS_DATA_ERROR;
  NsMsg(&msg, MsgVerdict, 0);
  msg.Verdict = status;
  NS_CHECK(NsSendMsg(&socket, &tx, &msg));
  NS_CHECK(msg.Verdict);
  NS_CHECK(NsWaitDisconnect(&socket));
  NS_CHECK(NsDisconnect(&socket)); /* answer the graceful disconnect */
  DbgPrint("ndksock: server done, data verified\n");
out:
  NsBufferFree(&socket, &region);
  NsBufferFree(&socket, &tx);
  NsBufferFree(&socket, &rx.Buffer);
  NsSocketClose(&socket);
  NsSocketClose(&listener);
  return status;
}

static NTSTATUS NsClient(NS_DEVICE* Device) {
  NS_SOCKET socket;
  NS_RX rx = {0};
  NS_BUFFER tx = {0}, local = {0};
  NS_MSG msg;
  UINT64 address;
  UINT32 token;
  ULONG round, half = NDKSOCK_REGION_SIZE / 2;
  NTSTATUS status;

  NS_CHECK(NsSocketCreate(Device, &socket));
  NS_CHECK(NsRxStart(&socket, &rx));
  NS_CHECK(NsBufferAllocate(NDKSOCK_MSG_SIZE, &tx));
  NS_CHECK(NsBufferRegister(&socket, &tx));
  NS_CHECK(NsConnect(&socket, &NsConfig.Local, &NsConfig.Remote));

  for (round = 0; round < NDKSOCK_ROUNDS; ++round) {
    NsMsg(&msg, MsgEcho, 100 + round);
    msg.Length = 256 << round;
    NS_CHECK(NsSendMsg(&socket, &tx, &msg));
    NS_CHECK(NsReceiveMsg(&socket, &rx, MsgEcho, &msg));
    if (msg.Seed != 1100 + round || msg.Length != (256u << round)) {
      NS_CHECK(STATUS_DATA_ERROR);
    }
    DbgPrint("ndksock: client: echo %u of %u bytes verified\n", round + 1, msg.Length);
  }

  NS_CHECK(NsReceiveMsg(&socket, &rx, MsgRegion, &msg));
  address = msg.Address;
  token = msg.Token;
  if (msg.Length != NDKSOCK_REGION_SIZE) NS_CHECK(STATUS_DATA_ERROR);
  NS_CHECK(NsBufferAllocate(NDKSOCK_REGION_SIZE, &local));
  NS_CHECK(NsBufferFastRegister(&socket, &local, FALSE));
  NS_CHECK(NsRead(&socket, &local, 0, half, address, token));
  if (!NsCheck(local.Va, half, msg.Seed)) NS_CHECK(STATUS_DATA_ERROR);
  DbgPrint("ndksock: client: RDMA read of %u bytes verified\n", half);
  NsFill(local.Va + half, half, 4242);
  NS_CHECK(NsWrite(&socket, &local, half, half, address + half, token));
  NsMsg(&msg, MsgWritten, 4242);
  NS_CHECK(NsSendMsg(&socket, &tx, &msg));
  NS_CHECK(NsReceiveMsg(&socket, &rx, MsgVerdict, &msg));
  NS_CHECK(msg.Verdict);
  NS_CHECK(NsDisconnect(&socket));
  DbgPrint("ndksock: client done, data verified\n");
out:
  NsBufferFree(&socket, &local);
  NsBufferFree(&socket, &tx);
  NsBufferFree(&socket, &rx.Buffer);
  NsSocketClose(&socket);
  return status;
}

static VOID NsThread(PVOID Context) {
  NS_DEVICE device;
  NTSTATUS status;
  UNREFERENCED_PARAMETER(Context);
  status = NsOpenDevice(NsConfig.Interface, &device);
  if (NT_SUCCESS(status)) {
    status = NsConfig.Server ? NsServe(&device) : NsClient(&device);
    NsCloseDevice(&device);
  } else {
    DbgPrint("ndksock: cannot open the NDK adapter: 0x%08x\n", (unsigned)status);
  }
  NsResult = status;
#ifdef SOFTNDK_WDK
  SoftNdkWdkRequestUnload(status);
#endif
  PsTerminateSystemThread(status);
}

static NTSTATUS NsParseAddress(PCSTR Text, USHORT Port, SOCKADDR_IN* Address) {
  PCSTR end = NULL;
  RtlZeroMemory(Address, sizeof(*Address));
  Address->sin_family = AF_INET;
  Address->sin_port = RtlUshortByteSwap(Port);
  if (Text == NULL) return STATUS_INVALID_PARAMETER;
  return RtlIpv4StringToAddressA(Text, TRUE, &end, &Address->sin_addr);
}

static NTSTATUS NsReadConfig(void) {
#ifdef SOFTNDK_WDK
  ULONG argc = SoftNdkWdkArgumentCount(), i;
  PCSTR role = argc > 0 ? SoftNdkWdkArgument(0) : NULL;
  PCSTR alias = argc > 1 ? SoftNdkWdkArgument(1) : NULL;
  ULONG port;
  NTSTATUS status;
  if (role == NULL || alias == NULL) return STATUS_INVALID_PARAMETER;
  NsConfig.Server = strcmp(role, "server") == 0;
  if (!NsConfig.Server && strcmp(role, "client") != 0) return STATUS_INVALID_PARAMETER;
  if (argc != (NsConfig.Server ? 4u : 5u)) return STATUS_INVALID_PARAMETER;
  for (i = 0; alias[i] != '\0' && i + 1 < IF_MAX_STRING_SIZE; ++i) {
    NsConfig.Interface[i] = (WCHAR)alias[i];
  }
  NsConfig.Interface[i] = 0;
  port = (ULONG)strtoul(SoftNdkWdkArgument(argc - 1), NULL, 10);
  if (port == 0 || port > 65535) return STATUS_INVALID_PARAMETER;
  status = NsParseAddress(SoftNdkWdkArgument(2), 0, &NsConfig.Local);
  if (NT_SUCCESS(status) && NsConfig.Server)
    NsConfig.Local.sin_port = RtlUshortByteSwap((USHORT)port);
  if (NT_SUCCESS(status) && !NsConfig.Server) {
    status = NsParseAddress(SoftNdkWdkArgument(3), (USHORT)port, &NsConfig.Remote);
  }
  return status;
#else
  return STATUS_NOT_SUPPORTED; /* on Windows: read the driver's registry key */
#endif
}

static DRIVER_UNLOAD NsDriverUnload;

static VOID NsDriverUnload(PDRIVER_OBJECT DriverObject) {
  UNREFERENCED_PARAMETER(DriverObject);
  PAGED_CODE();
  if (NsThreadObject != NULL) {
    KeWaitForSingleObject(NsThreadObject, Executive, KernelMode, FALSE, NULL);
    ObDereferenceObject(NsThreadObject);
  }
  if (NsThreadHandle != NULL) ZwClose(NsThreadHandle);
  NsCleanup();
  DbgPrint("ndksock: unloaded (0x%08x)\n", (unsigned)NsResult);
}

NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
  NTSTATUS status;
  UNREFERENCED_PARAMETER(RegistryPath);
  PAGED_CODE();
  status = NsReadConfig();
  if (!NT_SUCCESS(status)) {
    DbgPrint(
        "ndksock: usage: server <interface> <local-ip> <port> | "
        "client <interface> <local-ip> <server-ip> <port>\n");
    return status;
  }
  status = NsStartup();
  if (!NT_SUCCESS(status)) return status;
  DriverObject->DriverUnload = NsDriverUnload;
  status =
      PsCreateSystemThread(&NsThreadHandle, THREAD_ALL_ACCESS, NULL, NULL, NULL, NsThread, NULL);
  if (NT_SUCCESS(status)) {
    status = ObReferenceObjectByHandle(NsThreadHandle, SYNCHRONIZE, NULL, KernelMode,
                                       &NsThreadObject, NULL);
  }
  if (!NT_SUCCESS(status)) {
    NsCleanup();
    DriverObject->DriverUnload = NULL;
  }
  return status;
}
