// SPDX-License-Identifier: Apache-2.0
/*
 * ifdef.h - softndk-wdk stand-in: interface identifiers.
 *
 * NET_IFINDEX is the Linux interface index (if_nametoindex), NET_LUID packs
 * it with an interface type derived from the Linux link type (loopback,
 * Ethernet, other); the alias of an interface is its Linux name ("lo",
 * "eth0"). See netioapi.h for the conversions.
 */
#ifndef SOFTNDK_WDK_IFDEF_H_
#define SOFTNDK_WDK_IFDEF_H_

#include <wdm.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef ULONG NET_IFINDEX, *PNET_IFINDEX;
typedef NET_IFINDEX IF_INDEX, *PIF_INDEX;
typedef ULONG IFTYPE;

#define NET_IFINDEX_UNSPECIFIED ((NET_IFINDEX)0)
#define IFI_UNSPECIFIED NET_IFINDEX_UNSPECIFIED

/* The interface types a NET_LUID can carry here (ipifcons.h values). */
#define IF_TYPE_OTHER 1
#define IF_TYPE_ETHERNET_CSMACD 6
#define IF_TYPE_SOFTWARE_LOOPBACK 24
#define IF_TYPE_TUNNEL 131

#define IF_MAX_STRING_SIZE 256
#define IF_MAX_PHYS_ADDRESS_LENGTH 32
#define NDIS_IF_MAX_STRING_SIZE IF_MAX_STRING_SIZE

typedef union _NET_LUID_LH {
  ULONG64 Value;
  struct {
    ULONG64 Reserved : 24;
    ULONG64 NetLuidIndex : 24;
    ULONG64 IfType : 16;
  } Info;
} NET_LUID_LH, *PNET_LUID_LH;
typedef NET_LUID_LH NET_LUID;
typedef NET_LUID* PNET_LUID;
typedef NET_LUID IF_LUID, *PIF_LUID;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_IFDEF_H_ */
