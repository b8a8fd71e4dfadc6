// SPDX-License-Identifier: Apache-2.0
/* Driver.c - a WDM driver in the style of Windows NDK consumers, ported to
 * softndk-wdk without changes to its logic: parameters from the registry,
 * a secure device object, an endpoint parsed with RtlIpv4StringToAddressExW,
 * a lock-annotated socket state, and an NDK adapter opened through WSK. */
#define INITGUID
#include "precomp.h"

/* {5c1a64c2-8f1e-4d37-9b6e-0d2f3a4b5c6d} */
DEFINE_GUID(GUID_PD_DEVICE_CLASS, 0x5c1a64c2, 0x8f1e, 0x4d37, 0x9b, 0x6e, 0x0d, 0x2f, 0x3a, 0x4b,
            0x5c, 0x6d);

DRIVER_INITIALIZE DriverEntry;
DRIVER_UNLOAD PdUnload;

static PDEVICE_OBJECT PdDevice;
static PD_PARAMETERS PdParams;
static PD_SOCKET PdSocket;

#ifdef ALLOC_PRAGMA
#pragma alloc_text(INIT, DriverEntry)
#pragma alloc_text(PAGE, PdUnload)
#endif

_Requires_exclusive_lock_held_(Socket->Lock) static VOID
    PdSetStateLocked(_Inout_ PPD_SOCKET Socket, _In_ ULONG State) {
  Socket->State = State;
}

_Acquires_exclusive_lock_(Socket->Lock) _IRQL_raises_(DISPATCH_LEVEL) static KIRQL
    PdLock(_Inout_ PPD_SOCKET Socket) {
  KIRQL old;
  KeAcquireSpinLock(&Socket->Lock, &old);
  return old;
}

_Releases_exclusive_lock_(Socket->Lock) _IRQL_requires_(DISPATCH_LEVEL) static VOID
    PdUnlock(_Inout_ PPD_SOCKET Socket, _In_ _IRQL_restores_ KIRQL Old) {
  KeReleaseSpinLock(&Socket->Lock, Old);
}

static NTSTATUS PdParseEndpoint(_In_z_ CONST WCHAR* Text, _Out_ struct in_addr* Address,
                                _Out_opt_ PUSHORT Port) {
  USHORT port = 0;
  NTSTATUS status = RtlIpv4StringToAddressExW(Text, TRUE, Address, &port);
  if (NT_SUCCESS(status) && ARGUMENT_PRESENT(Port)) *Port = RtlUshortByteSwap(port);
  return status;
}

/* The NDK adapter on the loopback interface, through WSK (as a consumer
 * that needs RDMA would open it), queried and closed again. */
static NTSTATUS PdProbeNdk(_Out_ PULONG MaxTransfer) {
  WSK_CLIENT_DISPATCH dispatch = {MAKE_WSK_VERSION(1, 0), 0, NULL};
  WSK_CLIENT_NPI client = {NULL, &dispatch};
  WSK_REGISTRATION registration;
  WSK_PROVIDER_NPI provider;
  WSK_PROVIDER_NDK_DISPATCH ndk;
  NDK_ADAPTER* adapter = NULL;
  NDK_ADAPTER_INFO info;
  ULONG size = sizeof(info);
  NDK_VERSION version = {2, 0};
  NET_LUID luid;
  NET_IFINDEX index;
  NTSTATUS status;

  *MaxTransfer = 0;
  status = WskRegister(&client, &registration);
  if (!NT_SUCCESS(status)) return status;
  status = WskCaptureProviderNPI(&registration, WSK_INFINITE_WAIT, &provider);
  if (NT_SUCCESS(status)) {
    status =
        provider.Dispatch->WskControlClient(provider.Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH,
                                            0, NULL, sizeof(ndk), &ndk, NULL, NULL);
    if (NT_SUCCESS(status)) status = ConvertInterfaceAliasToLuid(L"lo", &luid);
    if (NT_SUCCESS(status)) status = ConvertInterfaceLuidToIndex(&luid, &index);
    if (NT_SUCCESS(status))
      status = ndk.WskOpenNdkAdapter(provider.Client, version, index, &adapter);
    if (NT_SUCCESS(status)) {
      status = adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size);
      if (NT_SUCCESS(status)) *MaxTransfer = info.MaxTransferLength;
      ndk.WskCloseNdkAdapter(provider.Client, adapter);
    }
    WskReleaseProviderNPI(&registration);
  }
  WskDeregister(&registration);
  return status;
}

_Use_decl_annotations_ VOID PdUnload(PDRIVER_OBJECT DriverObject) {
  UNREFERENCED_PARAMETER(DriverObject);
  PAGED_CODE();
  if (PdParams.Greeting.Buffer != NULL) RtlFreeUnicodeString(&PdParams.Greeting);
  if (PdDevice != NULL) IoDeleteDevice(PdDevice);
  DbgPrint("porting_driver: unloaded\n");
}

_Use_decl_annotations_ NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject,
                                            PUNICODE_STRING RegistryPath) {
  UNICODE_STRING deviceName = RTL_CONSTANT_STRING(L"\\Device\\PortingDriver");
  UNICODE_STRING sddl = RTL_CONSTANT_STRING(SDDL_DEVOBJ_SYS_ALL_ADM_ALL);
  struct in_addr address;
  USHORT port = 0;
  WCHAR text[INET_ADDRSTRLEN + 8];
  ULONG total = 0, maxTransfer = 0;
  KIRQL old;
  NTSTATUS status;

  DriverObject->DriverUnload = PdUnload;
  KeInitializeSpinLock(&PdSocket.Lock);
  InitializeListHead(&PdSocket.Pending);

  status = PdReadParameters(RegistryPath, &PdParams);
  if (!NT_SUCCESS(status)) return status;
  DbgPrint("porting_driver: registry Port=%u Endpoint=%ls Greeting=%.*ls Flags=0x%x\n",
           (unsigned)PdParams.Port, PdParams.Endpoint,
           (int)(PdParams.Greeting.Length / sizeof(WCHAR)), PdParams.Greeting.Buffer,
           (unsigned)PdParams.Flags);

  status = PdParseEndpoint(PdParams.Endpoint, &address, &port);
  PD_LOG_IF_FAILED(status, "RtlIpv4StringToAddressExW");
  if (!NT_SUCCESS(status)) return status;
  RtlIpv4AddressToStringW(&address, text);
  DbgPrint("porting_driver: endpoint %ls port %u\n", text, (unsigned)port);
  if (port != PdParams.Port) return STATUS_INVALID_PARAMETER;

  status = RtlULongAdd(PdParams.Port, PdParams.Flags, &total);
  if (!NT_SUCCESS(status)) return status;

  status =
      IoCreateDeviceSecure(DriverObject, 0, &deviceName, FILE_DEVICE_NETWORK,
                           FILE_DEVICE_SECURE_OPEN, FALSE, &sddl, &GUID_PD_DEVICE_CLASS, &PdDevice);
  PD_LOG_IF_FAILED(status, "IoCreateDeviceSecure");
  if (!NT_SUCCESS(status)) return status;

  old = PdLock(&PdSocket);
  PdSetStateLocked(&PdSocket, 1);
  PdUnlock(&PdSocket, old);

  status = PdProbeNdk(&maxTransfer);
  PD_LOG_IF_FAILED(status, "NDK adapter");
  if (!NT_SUCCESS(status)) {
    IoDeleteDevice(PdDevice);
    PdDevice = NULL;
    return status;
  }
  DbgPrint("porting_driver: device created, NDK adapter max transfer %u, sum %u\n",
           (unsigned)maxTransfer, (unsigned)total);
#ifdef SOFTNDK_WDK
  /* Until softndk-wdk-run stops an unmodified driver itself (--stop-after),
   * this driver says it is done. */
  SoftNdkWdkRequestUnload(STATUS_SUCCESS);
#endif
  return STATUS_SUCCESS;
}
