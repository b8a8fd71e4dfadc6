// SPDX-License-Identifier: Apache-2.0
/*
 * ws2ipdef.h - softndk-wdk stand-in: IPv6 socket addresses and SOCKADDR_INET
 * (an IPv4 or IPv6 address in one union, tagged by si_family).
 */
#ifndef SOFTNDK_WDK_WS2IPDEF_H_
#define SOFTNDK_WDK_WS2IPDEF_H_

#include <ws2def.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct in6_addr IN6_ADDR;
typedef IN6_ADDR* PIN6_ADDR;
typedef struct sockaddr_in6 SOCKADDR_IN6;
typedef SOCKADDR_IN6* PSOCKADDR_IN6;
typedef SOCKADDR_IN6 SOCKADDR_IN6_LH;
typedef SOCKADDR_IN6* PSOCKADDR_IN6_LH;

typedef union _SOCKADDR_INET {
  SOCKADDR_IN Ipv4;
  SOCKADDR_IN6 Ipv6;
  ADDRESS_FAMILY si_family;
} SOCKADDR_INET, *PSOCKADDR_INET;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_WS2IPDEF_H_ */
