// SPDX-License-Identifier: Apache-2.0
// wrong_consumer.h - deliberately wrong NDK/WSK consumer snippets (written
// in C against the kit's WDK headers, as a driver would be); each breaks
// exactly one rule the checker knows.
#pragma once

#include <ndkpi.h>
#include <ntddk.h>
#include <wsk.h>
#include <wskndk.h>

#ifdef __cplusplus
extern "C" {
#endif

// NdkQueryAdapterInfo is PASSIVE_LEVEL only: called with a spin lock held.
NTSTATUS WrongQueryAdapterInfoUnderSpinLock(NDK_ADAPTER* Adapter);
// NdkArmCq is <= DISPATCH_LEVEL: called at HIGH_LEVEL.
VOID WrongArmCqAtHighLevel(NDK_CQ* Cq);
// WskOpenNdkAdapter is PASSIVE_LEVEL only: called at DISPATCH_LEVEL.
NTSTATUS WrongOpenAdapterAtDispatch(const WSK_PROVIDER_NDK_DISPATCH* Ndk, PWSK_CLIENT Client,
                                    NET_IFINDEX IfIndex, NDK_ADAPTER** Adapter);
// WskCloseNdkAdapter is PASSIVE_LEVEL only: called at APC_LEVEL.
VOID WrongCloseAdapterAtApc(const WSK_PROVIDER_NDK_DISPATCH* Ndk, PWSK_CLIENT Client,
                            NDK_ADAPTER* Adapter);
// A CQ notification callback that queries the adapter (PASSIVE_LEVEL only)
// from the callback, which runs at DISPATCH_LEVEL. Context: the adapter.
VOID WrongQueryFromCqCallback(PVOID Context, NTSTATUS Status);
// Provider callbacks that record the IRQL they run at (Context: a
// WRONG_IRQL_PROBE), count their calls and set its event.
typedef struct _WRONG_IRQL_PROBE {
  volatile KIRQL Irql;
  volatile LONG Calls;
  KEVENT Done;
} WRONG_IRQL_PROBE;
VOID ProbeCqNotification(PVOID Context, NTSTATUS Status);
VOID ProbeRequestCompletion(PVOID Context, NTSTATUS Status);
VOID ProbeCreateCompletion(PVOID Context, NTSTATUS Status, NDK_OBJECT_HEADER* Object);
VOID ProbeCloseCompletion(PVOID Context);
VOID ProbeDisconnectEvent(PVOID Context);

#ifdef __cplusplus
}
#endif
