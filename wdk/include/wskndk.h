// SPDX-License-Identifier: Apache-2.0
/*
 * wskndk.h - softndk-wdk stand-in: the NDK extension of WSK, the way a
 * kernel NDK consumer opens an adapter.
 *
 * WskControlClient(Client, WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH, 0, NULL,
 * sizeof(WSK_PROVIDER_NDK_DISPATCH), &table, NULL, NULL) fills the table;
 * WskOpenNdkAdapter(Client, Version, IfIndex, &adapter) opens softndk on
 * the Linux interface with that index. Both table functions require
 * PASSIVE_LEVEL. docs/wdk.md, "WSK and the NDK NPI".
 */
#ifndef SOFTNDK_WDK_WSKNDK_H_
#define SOFTNDK_WDK_WSKNDK_H_

#include <softndk/ndkpi.h>
#include <wsk.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef NTSTATUS(WSKAPI* PFN_WSK_NDK_OPEN_ADAPTER)(PWSK_CLIENT Client, NDK_VERSION NdkVersion,
                                                   NET_IFINDEX IfIndex, NDK_ADAPTER** ppNdkAdapter);
typedef VOID(WSKAPI* PFN_WSK_NDK_CLOSE_ADAPTER)(PWSK_CLIENT Client, NDK_ADAPTER* pNdkAdapter);

typedef struct _WSK_PROVIDER_NDK_DISPATCH {
  PFN_WSK_NDK_OPEN_ADAPTER WskOpenNdkAdapter;
  PFN_WSK_NDK_CLOSE_ADAPTER WskCloseNdkAdapter;
} WSK_PROVIDER_NDK_DISPATCH, *PWSK_PROVIDER_NDK_DISPATCH;

/* The control code is the four characters 'NDKD' as MSVC packs them
 * (written as a number: a multi-character constant warns in GCC). */
#define WSKNDK_GET_WSK_PROVIDER_NDK_DISPATCH ((ULONG)0x4E444B44u)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_WSKNDK_H_ */
