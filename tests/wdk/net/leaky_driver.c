// SPDX-License-Identifier: Apache-2.0
// leaky_driver.c - a driver that forgets to close what it opened: WSK
// registration, an NDK adapter and a CQ. The host's unload leak check must
// name each of them and the host exit with 3 (checker reports).
#include <ndkpi.h>
#include <netioapi.h>
#include <ntddk.h>
#include <wsk.h>
#include <wskndk.h>

static const WSK_CLIENT_DISPATCH LeakyClient = {MAKE_WSK_VERSION(1, 0), 0, NULL};
static WSK_REGISTRATION LeakyRegistration;
static WSK_PROVIDER_NPI LeakyProvider;
static WSK_PROVIDER_NDK_DISPATCH LeakyNdk;

static VOID LeakyUnload(PDRIVER_OBJECT DriverObject) {
  UNREFERENCED_PARAMETER(DriverObject); /* and nothing closed */
}

NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject, PUNICODE_STRING RegistryPath) {
  WSK_CLIENT_NPI client = {NULL, &LeakyClient};
  NDK_VERSION version = {2, 0};
  NET_LUID luid;
  NET_IFINDEX index;
  NDK_ADAPTER* adapter;
  NDK_CQ* cq;
  NTSTATUS status;
  UNREFERENCED_PARAMETER(RegistryPath);
  DriverObject->DriverUnload = LeakyUnload;
  status = WskRegister(&client, &LeakyRegistration);
  if (NT_SUCCESS(status))
    status = WskCaptureProviderNPI(&LeakyRegistration, WSK_NO_WAIT, &LeakyProvider);
  if (NT_SUCCESS(status)) {
    status = LeakyProvider.Dispatch->WskControlClient(LeakyProvider.Client,
                                                      WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
                                                      sizeof(LeakyNdk), &LeakyNdk, NULL, NULL);
  }
  if (NT_SUCCESS(status)) status = ConvertInterfaceAliasToLuid(L"lo", &luid);
  if (NT_SUCCESS(status)) status = ConvertInterfaceLuidToIndex(&luid, &index);
  if (NT_SUCCESS(status)) {
    status = LeakyNdk.WskOpenNdkAdapter(LeakyProvider.Client, version, index, &adapter);
  }
  if (NT_SUCCESS(status)) {
    status = adapter->Dispatch->NdkCreateCq(adapter, 8, NULL, NULL, NULL, NULL, NULL, &cq);
  }
  SoftNdkWdkRequestUnload(status);
  return status;
}
