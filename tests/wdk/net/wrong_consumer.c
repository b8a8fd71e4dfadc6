// SPDX-License-Identifier: Apache-2.0
// wrong_consumer.c - see wrong_consumer.h.
#include "wrong_consumer.h"

NTSTATUS WrongQueryAdapterInfoUnderSpinLock(NDK_ADAPTER* Adapter) {
  KSPIN_LOCK lock;
  KIRQL irql;
  NDK_ADAPTER_INFO info;
  ULONG size = sizeof(info);
  NTSTATUS status;
  KeInitializeSpinLock(&lock);
  KeAcquireSpinLock(&lock, &irql);
  status = Adapter->Dispatch->NdkQueryAdapterInfo(Adapter, &info, &size);
  KeReleaseSpinLock(&lock, irql);
  return status;
}

VOID WrongArmCqAtHighLevel(NDK_CQ* Cq) {
  KIRQL irql;
  KeRaiseIrql(HIGH_LEVEL, &irql);
  Cq->Dispatch->NdkArmCq(Cq, NDK_CQ_NOTIFY_ANY);
  KeLowerIrql(irql);
}

NTSTATUS WrongOpenAdapterAtDispatch(const WSK_PROVIDER_NDK_DISPATCH* Ndk, PWSK_CLIENT Client,
                                    NET_IFINDEX IfIndex, NDK_ADAPTER** Adapter) {
  NDK_VERSION version = {2, 0};
  KIRQL irql;
  NTSTATUS status;
  KeRaiseIrql(DISPATCH_LEVEL, &irql);
  status = Ndk->WskOpenNdkAdapter(Client, version, IfIndex, Adapter);
  KeLowerIrql(irql);
  return status;
}

VOID WrongCloseAdapterAtApc(const WSK_PROVIDER_NDK_DISPATCH* Ndk, PWSK_CLIENT Client,
                            NDK_ADAPTER* Adapter) {
  KIRQL irql;
  KeRaiseIrql(APC_LEVEL, &irql);
  Ndk->WskCloseNdkAdapter(Client, Adapter);
  KeLowerIrql(irql);
}

VOID WrongQueryFromCqCallback(PVOID Context, NTSTATUS Status) {
  NDK_ADAPTER* adapter = (NDK_ADAPTER*)Context;
  NDK_ADAPTER_INFO info;
  ULONG size = sizeof(info);
  UNREFERENCED_PARAMETER(Status);
  adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size);
}

static VOID Probe(PVOID Context) {
  WRONG_IRQL_PROBE* probe = (WRONG_IRQL_PROBE*)Context;
  probe->Irql = KeGetCurrentIrql();
  InterlockedIncrement(&probe->Calls);
  KeSetEvent(&probe->Done, IO_NO_INCREMENT, FALSE);
}

VOID ProbeCqNotification(PVOID Context, NTSTATUS Status) {
  UNREFERENCED_PARAMETER(Status);
  Probe(Context);
}
VOID ProbeRequestCompletion(PVOID Context, NTSTATUS Status) {
  UNREFERENCED_PARAMETER(Status);
  Probe(Context);
}
VOID ProbeCreateCompletion(PVOID Context, NTSTATUS Status, NDK_OBJECT_HEADER* Object) {
  UNREFERENCED_PARAMETER(Status);
  UNREFERENCED_PARAMETER(Object);
  Probe(Context);
}
VOID ProbeCloseCompletion(PVOID Context) { Probe(Context); }
VOID ProbeDisconnectEvent(PVOID Context) { Probe(Context); }
