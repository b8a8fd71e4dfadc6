// SPDX-License-Identifier: Apache-2.0
/*
 * ndksock.c - the socket-like NDK layer of the sample driver (ndksock.h).
 */
#include "ndksock.h"

/* ---- WSK and the NDK NPI ---------------------------------------------- */

static const WSK_CLIENT_DISPATCH NsWskClientDispatch = {MAKE_WSK_VERSION(1, 0), 0, NULL};
static WSK_REGISTRATION NsWskRegistration;
static WSK_PROVIDER_NPI NsWskProvider;
static WSK_PROVIDER_NDK_DISPATCH NsNdk;
static BOOLEAN NsRegistered;
static BOOLEAN NsCaptured;

NTSTATUS NsStartup(void) {
  WSK_CLIENT_NPI client;
  NTSTATUS status;

  PAGED_CODE();
  client.ClientContext = NULL;
  client.Dispatch = &NsWskClientDispatch;
  status = WskRegister(&client, &NsWskRegistration);
  if (!NT_SUCCESS(status)) return status;
  NsRegistered = TRUE;
  status = WskCaptureProviderNPI(&NsWskRegistration, WSK_INFINITE_WAIT, &NsWskProvider);
  if (!NT_SUCCESS(status)) goto fail;
  NsCaptured = TRUE;
  status = NsWskProvider.Dispatch->WskControlClient(NsWskProvider.Client,
                                                    WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
                                                    sizeof(NsNdk), &NsNdk, NULL, NULL);
  if (NT_SUCCESS(status)) return status;
fail:
  NsCleanup();
  return status;
}

VOID NsCleanup(void) {
  PAGED_CODE();
  if (NsCaptured) WskReleaseProviderNPI(&NsWskRegistration);
  if (NsRegistered) WskDeregister(&NsWskRegistration);
  NsCaptured = FALSE;
  NsRegistered = FALSE;
}

/* ---- waiting for NDK's asynchronous completions --------------------------- */

typedef struct _NS_WAIT {
  KEVENT Event;
  NTSTATUS Status;
  NDK_OBJECT_HEADER* Object;
} NS_WAIT;

static VOID NsInitWait(NS_WAIT* Wait) {
  KeInitializeEvent(&Wait->Event, NotificationEvent, FALSE);
  Wait->Status = STATUS_PENDING;
  Wait->Object = NULL;
}

static VOID NsCreateDone(PVOID Context, NTSTATUS Status, NDK_OBJECT_HEADER* Object) {
  NS_WAIT* wait = (NS_WAIT*)Context;
  wait->Status = Status;
  wait->Object = Object;
  KeSetEvent(&wait->Event, IO_NO_INCREMENT, FALSE);
}

static VOID NsRequestDone(PVOID Context, NTSTATUS Status) {
  NS_WAIT* wait = (NS_WAIT*)Context;
  wait->Status = Status;
  KeSetEvent(&wait->Event, IO_NO_INCREMENT, FALSE);
}

static VOID NsCloseDone(PVOID Context) {
  NS_WAIT* wait = (NS_WAIT*)Context;
  wait->Status = STATUS_SUCCESS;
  KeSetEvent(&wait->Event, IO_NO_INCREMENT, FALSE);
}

static NTSTATUS NsWaitEvent(PKEVENT Event, ULONG Milliseconds) {
  LARGE_INTEGER timeout;
  timeout.QuadPart = -10000LL * Milliseconds;
  return KeWaitForSingleObject(Event, Executive, KernelMode, FALSE, &timeout);
}

/* The final status of a call that may have pended. A request that never
 * completes would write into Wait later: the caller's Wait must then stay
 * valid, so a timeout here is reported and the driver stops. */
static NTSTATUS NsFinish(NS_WAIT* Wait, NTSTATUS Status) {
  if (Status != STATUS_PENDING) return Status;
  if (NsWaitEvent(&Wait->Event, NDKSOCK_TIMEOUT_MS) == STATUS_TIMEOUT) return STATUS_IO_TIMEOUT;
  return Wait->Status;
}

static VOID NsCloseObject(NDK_OBJECT_HEADER* Object, NDK_FN_CLOSE_OBJECT Close) {
  NS_WAIT wait;
  NsInitWait(&wait);
  if (Close(Object, NsCloseDone, &wait) == STATUS_PENDING) {
    NsWaitEvent(&wait.Event, NDKSOCK_TIMEOUT_MS);
  }
}

/* ---- adapter -------------------------------------------------------------- */

NTSTATUS NsOpenDevice(PCWSTR InterfaceAlias, NS_DEVICE* Device) {
  NET_LUID luid;
  NET_IFINDEX index;
  NDK_VERSION version = {2, 0};
  ULONG size = sizeof(Device->Info);
  NS_WAIT wait;
  NTSTATUS status;

  PAGED_CODE();
  RtlZeroMemory(Device, sizeof(*Device));
  status = ConvertInterfaceAliasToLuid(InterfaceAlias, &luid);
  if (NT_SUCCESS(status)) status = ConvertInterfaceLuidToIndex(&luid, &index);
  if (!NT_SUCCESS(status)) return status;
  status = NsNdk.WskOpenNdkAdapter(NsWskProvider.Client, version, index, &Device->Adapter);
  if (!NT_SUCCESS(status)) return status;
  status = Device->Adapter->Dispatch->NdkQueryAdapterInfo(Device->Adapter, &Device->Info, &size);
  if (NT_SUCCESS(status)) {
    NsInitWait(&wait);
    status = NsFinish(&wait, Device->Adapter->Dispatch->NdkCreatePd(Device->Adapter, NsCreateDone,
                                                                    &wait, &Device->Pd));
    if (status == STATUS_SUCCESS && wait.Object != NULL) Device->Pd = (NDK_PD*)wait.Object;
  }
  if (!NT_SUCCESS(status)) NsCloseDevice(Device);
  return status;
}

VOID NsCloseDevice(NS_DEVICE* Device) {
  PAGED_CODE();
  if (Device->Pd != NULL) NsCloseObject(&Device->Pd->Header, Device->Pd->Dispatch->NdkClosePd);
  if (Device->Adapter != NULL) NsNdk.WskCloseNdkAdapter(NsWskProvider.Client, Device->Adapter);
  Device->Pd = NULL;
  Device->Adapter = NULL;
}

/* ---- buffers ----------------------------------------------------------------- */

NTSTATUS NsBufferAllocate(ULONG Length, NS_BUFFER* Buffer) {
  RtlZeroMemory(Buffer, sizeof(*Buffer));
  Buffer->Va = (PUCHAR)ExAllocatePool2(POOL_FLAG_NON_PAGED, Length, NDKSOCK_TAG);
  if (Buffer->Va == NULL) return STATUS_INSUFFICIENT_RESOURCES;
  Buffer->Length = Length;
  Buffer->Mdl = IoAllocateMdl(Buffer->Va, Length, FALSE, FALSE, NULL);
  if (Buffer->Mdl == NULL) {
    ExFreePoolWithTag(Buffer->Va, NDKSOCK_TAG);
    Buffer->Va = NULL;
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  MmBuildMdlForNonPagedPool(Buffer->Mdl);
  return STATUS_SUCCESS;
}

VOID NsBufferFree(NS_SOCKET* Socket, NS_BUFFER* Buffer) {
  UNREFERENCED_PARAMETER(Socket);
  if (Buffer->Mr != NULL) NsCloseObject(&Buffer->Mr->Header, Buffer->Mr->Dispatch->NdkCloseMr);
  if (Buffer->Mdl != NULL) IoFreeMdl(Buffer->Mdl);
  if (Buffer->Va != NULL) ExFreePoolWithTag(Buffer->Va, NDKSOCK_TAG);
  RtlZeroMemory(Buffer, sizeof(*Buffer));
}

static NTSTATUS NsCreateMr(NS_SOCKET* Socket, BOOLEAN Fast, NDK_MR** Mr) {
  NDK_PD* pd = Socket->Device->Pd;
  NS_WAIT wait;
  NTSTATUS status;
  NsInitWait(&wait);
  status = NsFinish(&wait, pd->Dispatch->NdkCreateMr(pd, Fast, NsCreateDone, &wait, Mr));
  if (status == STATUS_SUCCESS && wait.Object != NULL) *Mr = (NDK_MR*)wait.Object;
  return status;
}

NTSTATUS NsBufferRegister(NS_SOCKET* Socket, NS_BUFFER* Buffer) {
  NS_WAIT wait;
  NTSTATUS status = NsCreateMr(Socket, FALSE, &Buffer->Mr);
  if (!NT_SUCCESS(status)) return status;
  NsInitWait(&wait);
  status = NsFinish(&wait, Buffer->Mr->Dispatch->NdkRegisterMr(
                               Buffer->Mr, Buffer->Mdl, Buffer->Length,
                               NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NsRequestDone, &wait));
  if (!NT_SUCCESS(status)) return status;
  Buffer->LocalToken = Buffer->Mr->Dispatch->NdkGetLocalTokenFromMr(Buffer->Mr);
  return STATUS_SUCCESS;
}

/* ---- completions ------------------------------------------------------------- */

static VOID NsCqNotify(PVOID Context, NTSTATUS CqStatus) {
  NS_SOCKET* socket = (NS_SOCKET*)Context;
  UNREFERENCED_PARAMETER(CqStatus);
  NT_ASSERT(KeGetCurrentIrql() <= DISPATCH_LEVEL);
  KeSetEvent(&socket->CqEvent, IO_NETWORK_INCREMENT, FALSE);
}

/* Moves the CQ's completions into the stash. */
static VOID NsDrainCq(NS_SOCKET* Socket) {
  while (Socket->StashCount < NS_MAX_STASH) {
    ULONG n = Socket->Cq->Dispatch->NdkGetCqResultsEx(
        Socket->Cq, &Socket->Stash[Socket->StashCount], NS_MAX_STASH - Socket->StashCount);
    if (n == 0) return;
    Socket->StashCount += n;
  }
}

static BOOLEAN NsTakeResult(NS_SOCKET* Socket, PVOID RequestContext, NDK_RESULT_EX* Result) {
  ULONG i;
  for (i = 0; i < Socket->StashCount; ++i) {
    if (Socket->Stash[i].RequestContext == RequestContext) {
      *Result = Socket->Stash[i];
      Socket->Stash[i] = Socket->Stash[--Socket->StashCount];
      return TRUE;
    }
  }
  return FALSE;
}

/* Waits for the completion of the work request posted with RequestContext. */
static NTSTATUS NsWaitCompletion(NS_SOCKET* Socket, PVOID RequestContext, NDK_RESULT_EX* Result) {
  LARGE_INTEGER start, now;
  KeQuerySystemTime(&start);
  for (;;) {
    NsDrainCq(Socket);
    if (NsTakeResult(Socket, RequestContext, Result)) return Result->Status;
    /* Arm, then look again: a completion between the two polls has not
     * notified anybody. */
    KeClearEvent(&Socket->CqEvent);
    Socket->Cq->Dispatch->NdkArmCq(Socket->Cq, NDK_CQ_NOTIFY_ANY);
    NsDrainCq(Socket);
    if (NsTakeResult(Socket, RequestContext, Result)) return Result->Status;
    KeQuerySystemTime(&now);
    if (now.QuadPart - start.QuadPart > 10000LL * NDKSOCK_TIMEOUT_MS) return STATUS_IO_TIMEOUT;
    NsWaitEvent(&Socket->CqEvent, 100);
  }
}

NTSTATUS NsBufferFastRegister(NS_SOCKET* Socket, NS_BUFFER* Buffer, BOOLEAN Remote) {
  NDK_ADAPTER* adapter = Socket->Device->Adapter;
  ULONG pages = ADDRESS_AND_SIZE_TO_SPAN_PAGES(Buffer->Va, Buffer->Length);
  ULONG lamSize = FIELD_OFFSET(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) +
                  pages * sizeof(NDK_LOGICAL_ADDRESS);
  NDK_LOGICAL_ADDRESS_MAPPING* lam;
  NDK_RESULT_EX result;
  ULONG fbo = 0;
  ULONG flags = Remote ? NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE |
                             NDK_OP_FLAG_ALLOW_LOCAL_WRITE
                       : NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK;
  NS_WAIT wait;
  NTSTATUS status = NsCreateMr(Socket, TRUE, &Buffer->Mr);
  if (!NT_SUCCESS(status)) return status;
  NsInitWait(&wait);
  status = NsFinish(&wait, Buffer->Mr->Dispatch->NdkInitializeFastRegisterMr(
                               Buffer->Mr, pages, TRUE, NsRequestDone, &wait));
  if (!NT_SUCCESS(status)) return status;
  lam = (NDK_LOGICAL_ADDRESS_MAPPING*)ExAllocatePool2(POOL_FLAG_NON_PAGED, lamSize, NDKSOCK_TAG);
  if (lam == NULL) return STATUS_INSUFFICIENT_RESOURCES;
  NsInitWait(&wait);
  status =
      NsFinish(&wait, adapter->Dispatch->NdkBuildLAM(adapter, Buffer->Mdl, Buffer->Length,
                                                     NsRequestDone, &wait, lam, &lamSize, &fbo));
  if (NT_SUCCESS(status)) {
    status = Socket->Qp->Dispatch->NdkFastRegister(Socket->Qp, Buffer, Buffer->Mr,
                                                   lam->AdapterPageCount, lam->AdapterPageArray,
                                                   fbo, Buffer->Length, Buffer->Va, flags);
    if (NT_SUCCESS(status)) status = NsWaitCompletion(Socket, Buffer, &result);
    adapter->Dispatch->NdkReleaseLAM(adapter, lam);
  }
  ExFreePoolWithTag(lam, NDKSOCK_TAG);
  if (!NT_SUCCESS(status)) return status;
  Buffer->LocalToken = Buffer->Mr->Dispatch->NdkGetLocalTokenFromMr(Buffer->Mr);
  Buffer->RemoteToken = Buffer->Mr->Dispatch->NdkGetRemoteTokenFromMr(Buffer->Mr);
  return STATUS_SUCCESS;
}

/* ---- sockets ------------------------------------------------------------------- */

NTSTATUS NsSocketCreate(NS_DEVICE* Device, NS_SOCKET* Socket) {
  NDK_ADAPTER* adapter = Device->Adapter;
  NS_WAIT wait;
  NTSTATUS status;

  RtlZeroMemory(Socket, sizeof(*Socket));
  Socket->Device = Device;
  KeInitializeEvent(&Socket->CqEvent, SynchronizationEvent, FALSE);
  KeInitializeEvent(&Socket->ConnectEvent, NotificationEvent, FALSE);
  KeInitializeEvent(&Socket->DisconnectEvent, NotificationEvent, FALSE);
  KeInitializeSpinLock(&Socket->Lock);
  NsInitWait(&wait);
  status = NsFinish(&wait, adapter->Dispatch->NdkCreateCq(adapter, 64, NsCqNotify, Socket, NULL,
                                                          NsCreateDone, &wait, &Socket->Cq));
  if (status == STATUS_SUCCESS && wait.Object != NULL) Socket->Cq = (NDK_CQ*)wait.Object;
  if (!NT_SUCCESS(status)) return status;
  NsInitWait(&wait);
  status = NsFinish(
      &wait, Device->Pd->Dispatch->NdkCreateQp(Device->Pd, Socket->Cq, Socket->Cq, Socket, 16, 16,
                                               2, 2, 0, NsCreateDone, &wait, &Socket->Qp));
  if (status == STATUS_SUCCESS && wait.Object != NULL) Socket->Qp = (NDK_QP*)wait.Object;
  return status;
}

VOID NsSocketClose(NS_SOCKET* Socket) {
  if (Socket->Connector != NULL) {
    NsCloseObject(&Socket->Connector->Header, Socket->Connector->Dispatch->NdkCloseConnector);
  }
  if (Socket->Listener != NULL) {
    NsCloseObject(&Socket->Listener->Header, Socket->Listener->Dispatch->NdkCloseListener);
  }
  if (Socket->Incoming != NULL) {
    NsCloseObject(&Socket->Incoming->Header, Socket->Incoming->Dispatch->NdkCloseConnector);
  }
  if (Socket->Qp != NULL) NsCloseObject(&Socket->Qp->Header, Socket->Qp->Dispatch->NdkCloseQp);
  if (Socket->Cq != NULL) NsCloseObject(&Socket->Cq->Header, Socket->Cq->Dispatch->NdkCloseCq);
  Socket->Connector = NULL;
  Socket->Listener = NULL;
  Socket->Incoming = NULL;
  Socket->Qp = NULL;
  Socket->Cq = NULL;
}

static VOID NsConnectEvent(PVOID Context, NDK_CONNECTOR* Connector) {
  NS_SOCKET* listener = (NS_SOCKET*)Context;
  KIRQL irql;
  BOOLEAN taken = FALSE;
  KeAcquireSpinLock(&listener->Lock, &irql);
  if (listener->Incoming == NULL) {
    listener->Incoming = Connector;
    taken = TRUE;
  }
  KeReleaseSpinLock(&listener->Lock, irql);
  if (taken) {
    KeSetEvent(&listener->ConnectEvent, IO_NETWORK_INCREMENT, FALSE);
  } else {
    /* One connection at a time: refuse the rest. */
    Connector->Dispatch->NdkReject(Connector, NULL, 0);
    Connector->Dispatch->NdkCloseConnector(&Connector->Header, NULL, NULL);
  }
}

static VOID NsDisconnectEvent(PVOID Context) {
  NS_SOCKET* socket = (NS_SOCKET*)Context;
  KeSetEvent(&socket->DisconnectEvent, IO_NETWORK_INCREMENT, FALSE);
}

static NTSTATUS NsCreateConnector(NS_DEVICE* Device, NDK_CONNECTOR** Connector) {
  NDK_ADAPTER* adapter = Device->Adapter;
  NS_WAIT wait;
  NTSTATUS status;
  NsInitWait(&wait);
  status = NsFinish(&wait,
                    adapter->Dispatch->NdkCreateConnector(adapter, NsCreateDone, &wait, Connector));
  if (status == STATUS_SUCCESS && wait.Object != NULL) *Connector = (NDK_CONNECTOR*)wait.Object;
  return status;
}

NTSTATUS NsListen(NS_DEVICE* Device, NS_SOCKET* Listener, const SOCKADDR_IN* Address) {
  NDK_ADAPTER* adapter = Device->Adapter;
  NS_WAIT wait;
  NTSTATUS status;
  RtlZeroMemory(Listener, sizeof(*Listener));
  Listener->Device = Device;
  KeInitializeEvent(&Listener->CqEvent, SynchronizationEvent, FALSE);
  KeInitializeEvent(&Listener->ConnectEvent, NotificationEvent, FALSE);
  KeInitializeEvent(&Listener->DisconnectEvent, NotificationEvent, FALSE);
  KeInitializeSpinLock(&Listener->Lock);
  NsInitWait(&wait);
  status = NsFinish(
      &wait, adapter->Dispatch->NdkCreateListener(adapter, NsConnectEvent, Listener, NsCreateDone,
                                                  &wait, &Listener->Listener));
  if (status == STATUS_SUCCESS && wait.Object != NULL) {
    Listener->Listener = (NDK_LISTENER*)wait.Object;
  }
  if (!NT_SUCCESS(status)) return status;
  NsInitWait(&wait);
  return NsFinish(
      &wait, Listener->Listener->Dispatch->NdkListen(Listener->Listener, (const SOCKADDR*)Address,
                                                     sizeof(*Address), NsRequestDone, &wait));
}

NTSTATUS NsAccept(NS_SOCKET* Listener, NS_SOCKET* Socket) {
  NDK_CONNECTOR* connector;
  KIRQL irql;
  NS_WAIT wait;
  NTSTATUS status = NsWaitEvent(&Listener->ConnectEvent, 3 * NDKSOCK_TIMEOUT_MS);
  if (status == STATUS_TIMEOUT) return STATUS_IO_TIMEOUT;
  KeAcquireSpinLock(&Listener->Lock, &irql);
  connector = Listener->Incoming;
  Listener->Incoming = NULL;
  KeClearEvent(&Listener->ConnectEvent);
  KeReleaseSpinLock(&Listener->Lock, irql);
  if (connector == NULL) return STATUS_CONNECTION_ABORTED;
  Socket->Connector = connector;
  NsInitWait(&wait);
  return NsFinish(&wait, connector->Dispatch->NdkAccept(
                             connector, Socket->Qp, Listener->Device->Info.MaxInboundReadLimit,
                             Listener->Device->Info.MaxOutboundReadLimit, NULL, 0,
                             NsDisconnectEvent, Socket, NsRequestDone, &wait));
}

NTSTATUS NsConnect(NS_SOCKET* Socket, const SOCKADDR_IN* Local, const SOCKADDR_IN* Remote) {
  NS_DEVICE* device = Socket->Device;
  NS_WAIT wait;
  NTSTATUS status = NsCreateConnector(device, &Socket->Connector);
  if (!NT_SUCCESS(status)) return status;
  NsInitWait(&wait);
  status = NsFinish(&wait,
                    Socket->Connector->Dispatch->NdkConnect(
                        Socket->Connector, Socket->Qp, (const SOCKADDR*)Local, sizeof(*Local),
                        (const SOCKADDR*)Remote, sizeof(*Remote), device->Info.MaxInboundReadLimit,
                        device->Info.MaxOutboundReadLimit, NULL, 0, NsRequestDone, &wait));
  if (!NT_SUCCESS(status)) return status;
  NsInitWait(&wait);
  return NsFinish(&wait, Socket->Connector->Dispatch->NdkCompleteConnect(
                             Socket->Connector, NsDisconnectEvent, Socket, NsRequestDone, &wait));
}

NTSTATUS NsDisconnect(NS_SOCKET* Socket) {
  NS_WAIT wait;
  NsInitWait(&wait);
  return NsFinish(
      &wait, Socket->Connector->Dispatch->NdkDisconnect(Socket->Connector, NsRequestDone, &wait));
}

NTSTATUS NsWaitDisconnect(NS_SOCKET* Socket) {
  if (NsWaitEvent(&Socket->DisconnectEvent, NDKSOCK_TIMEOUT_MS) == STATUS_TIMEOUT) {
    return STATUS_IO_TIMEOUT;
  }
  return STATUS_SUCCESS;
}

/* ---- data ------------------------------------------------------------------------ */

static VOID NsSge(NS_BUFFER* Buffer, ULONG Offset, ULONG Length, NDK_SGE* Sge) {
  Sge->VirtualAddress = Buffer->Va + Offset;
  Sge->Length = Length;
  Sge->MemoryRegionToken = Buffer->LocalToken;
}

NTSTATUS NsPostReceive(NS_SOCKET* Socket, NS_BUFFER* Buffer, ULONG Offset, ULONG Length) {
  NDK_SGE sge;
  NsSge(Buffer, Offset, Length, &sge);
  return Socket->Qp->Dispatch->NdkReceive(Socket->Qp, Buffer->Va + Offset, &sge, 1);
}

NTSTATUS NsWaitReceive(NS_SOCKET* Socket, NS_BUFFER* Buffer, ULONG Offset, ULONG* Bytes) {
  NDK_RESULT_EX result;
  NTSTATUS status = NsWaitCompletion(Socket, Buffer->Va + Offset, &result);
  *Bytes = result.BytesTransferred;
  return status;
}

NTSTATUS NsSend(NS_SOCKET* Socket, NS_BUFFER* Buffer, ULONG Offset, ULONG Length) {
  NDK_RESULT_EX result;
  NDK_SGE sge;
  PVOID context = Buffer->Va + Offset + 1; /* not a receive's context */
  NTSTATUS status;
  NsSge(Buffer, Offset, Length, &sge);
  status = Socket->Qp->Dispatch->NdkSend(Socket->Qp, context, &sge, 1, 0);
  if (!NT_SUCCESS(status)) return status;
  return NsWaitCompletion(Socket, context, &result);
}

NTSTATUS NsRead(NS_SOCKET* Socket, NS_BUFFER* Local, ULONG Offset, ULONG Length,
                UINT64 RemoteAddress, UINT32 RemoteToken) {
  NDK_RESULT_EX result;
  NDK_SGE sge;
  NTSTATUS status;
  NsSge(Local, Offset, Length, &sge);
  status = Socket->Qp->Dispatch->NdkRead(Socket->Qp, &sge, &sge, 1, RemoteAddress, RemoteToken, 0);
  if (!NT_SUCCESS(status)) return status;
  return NsWaitCompletion(Socket, &sge, &result);
}

NTSTATUS NsWrite(NS_SOCKET* Socket, NS_BUFFER* Local, ULONG Offset, ULONG Length,
                 UINT64 RemoteAddress, UINT32 RemoteToken) {
  NDK_RESULT_EX result;
  NDK_SGE sge;
  NTSTATUS status;
  NsSge(Local, Offset, Length, &sge);
  status = Socket->Qp->Dispatch->NdkWrite(Socket->Qp, &sge, &sge, 1, RemoteAddress, RemoteToken, 0);
  if (!NT_SUCCESS(status)) return status;
  return NsWaitCompletion(Socket, &sge, &result);
}
