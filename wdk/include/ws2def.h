// SPDX-License-Identifier: Apache-2.0
/*
 * ws2def.h - softndk-wdk stand-in: socket address types with their Windows
 * names.
 *
 * The types are Linux's own (struct sockaddr, sockaddr_in, sockaddr_in6,
 * sockaddr_storage), because softndk hands SOCKADDRs straight to the Linux
 * socket layer. The Windows field names sin_family, sin_port, sin_addr,
 * sin6_family, sin6_port, sin6_flowinfo, sin6_addr, sin6_scope_id,
 * ss_family and in_addr.s_addr are the same on both. Differences a consumer
 * may notice (docs/wdk.md, "Networking"):
 *   - AF_INET6 is Linux's value (10), not Windows' (23): use the macro;
 *   - IN_ADDR has only s_addr (no S_un union); IN6_ADDR has s6_addr (no u).
 */
#ifndef SOFTNDK_WDK_WS2DEF_H_
#define SOFTNDK_WDK_WS2DEF_H_

#include <netinet/in.h>
#include <softndk/ndkpi.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef USHORT ADDRESS_FAMILY;

typedef SOCKADDR* PSOCKADDR;
typedef const SOCKADDR* PCSOCKADDR;
typedef struct sockaddr_storage SOCKADDR_STORAGE;
typedef SOCKADDR_STORAGE* PSOCKADDR_STORAGE;
typedef struct in_addr IN_ADDR;
typedef IN_ADDR* PIN_ADDR;
typedef struct sockaddr_in SOCKADDR_IN;
typedef SOCKADDR_IN* PSOCKADDR_IN;

/* Windows spells the IPv4 "any" and loopback addresses as these macros
 * too; netinet/in.h provides INADDR_ANY/INADDR_LOOPBACK in host order. */
#ifndef IPPROTO_TCP
#define IPPROTO_TCP 6
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_WS2DEF_H_ */
