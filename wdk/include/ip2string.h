// SPDX-License-Identifier: Apache-2.0
/*
 * ip2string.h - textual IPv4/IPv6 address conversion (RtlIpv4StringToAddress
 * and friends), as documented for Windows. Addresses are the platform's
 * struct in_addr / struct in6_addr (network byte order, as on Windows);
 * ports are in network byte order too. The W variants take wide strings
 * (WCHAR is wchar_t, see ntdef.h).
 */
#ifndef SOFTNDK_WDK_IP2STRING_H_
#define SOFTNDK_WDK_IP2STRING_H_

#include <netinet/in.h>

#include "ntdef.h"
#include "ntstatus.h"

#ifdef __cplusplus
extern "C" {
#endif

#define INET_ADDRSTRLEN_W 22  /* "255.255.255.255:65535" + NUL */
#define INET6_ADDRSTRLEN_W 65 /* "[ffff:...%4294967295]:65535" + NUL */

/* Strict: only the four-part dotted decimal form. Terminator: where parsing
 * stopped. */
NTSTATUS RtlIpv4StringToAddressA(PCSTR S, BOOLEAN Strict, PCSTR* Terminator, struct in_addr* Addr);
NTSTATUS RtlIpv4StringToAddressW(PCWSTR S, BOOLEAN Strict, PCWSTR* Terminator,
                                 struct in_addr* Addr);
/* "a.b.c.d[:port]", the whole string. */
NTSTATUS RtlIpv4StringToAddressExA(PCSTR AddressString, BOOLEAN Strict, struct in_addr* Address,
                                   PUSHORT Port);
NTSTATUS RtlIpv4StringToAddressExW(PCWSTR AddressString, BOOLEAN Strict, struct in_addr* Address,
                                   PUSHORT Port);
NTSTATUS RtlIpv6StringToAddressA(PCSTR S, PCSTR* Terminator, struct in6_addr* Addr);
NTSTATUS RtlIpv6StringToAddressW(PCWSTR S, PCWSTR* Terminator, struct in6_addr* Addr);
/* "addr", "addr%scope", "[addr]:port", "[addr%scope]:port". */
NTSTATUS RtlIpv6StringToAddressExA(PCSTR AddressString, struct in6_addr* Address, PULONG ScopeId,
                                   PUSHORT Port);
NTSTATUS RtlIpv6StringToAddressExW(PCWSTR AddressString, struct in6_addr* Address, PULONG ScopeId,
                                   PUSHORT Port);
/* Write the address (at least 16 / 46 characters of room) and return a
 * pointer to the terminating NUL. */
PSTR RtlIpv4AddressToStringA(const struct in_addr* Addr, PSTR S);
PWSTR RtlIpv4AddressToStringW(const struct in_addr* Addr, PWSTR S);
PSTR RtlIpv6AddressToStringA(const struct in6_addr* Addr, PSTR S);
PWSTR RtlIpv6AddressToStringW(const struct in6_addr* Addr, PWSTR S);
/* With an optional port (0 = none) and scope; *AddressStringLength is the
 * room in characters on input, the length written including the NUL on
 * output (or the length needed, with STATUS_INVALID_PARAMETER). */
NTSTATUS RtlIpv4AddressToStringExA(const struct in_addr* Address, USHORT Port, PSTR AddressString,
                                   PULONG AddressStringLength);
NTSTATUS RtlIpv4AddressToStringExW(const struct in_addr* Address, USHORT Port, PWSTR AddressString,
                                   PULONG AddressStringLength);
NTSTATUS RtlIpv6AddressToStringExA(const struct in6_addr* Address, ULONG ScopeId, USHORT Port,
                                   PSTR AddressString, PULONG AddressStringLength);
NTSTATUS RtlIpv6AddressToStringExW(const struct in6_addr* Address, ULONG ScopeId, USHORT Port,
                                   PWSTR AddressString, PULONG AddressStringLength);

/* Ethernet (EUI-48) addresses as "XX-XX-XX-XX-XX-XX" (upper-case hex; the
 * parser takes either case and '-' separators). The ToString functions need
 * 18 characters of room and return a pointer to the terminating NUL; the
 * parsers set *Terminator to the character after the address and return
 * STATUS_INVALID_PARAMETER for anything else (ip2string_eth.cc). */
#ifndef SOFTNDK_WDK_DL_EUI48
#define SOFTNDK_WDK_DL_EUI48 1
typedef union _DL_EUI48 {
  UCHAR Byte[6];
} DL_EUI48, *PDL_EUI48;
#endif
PSTR RtlEthernetAddressToStringA(const DL_EUI48* Addr, PSTR S);
PWSTR RtlEthernetAddressToStringW(const DL_EUI48* Addr, PWSTR S);
NTSTATUS RtlEthernetStringToAddressA(PCSTR S, PCSTR* Terminator, DL_EUI48* Addr);
NTSTATUS RtlEthernetStringToAddressW(PCWSTR S, PCWSTR* Terminator, DL_EUI48* Addr);

#ifdef UNICODE
#define RtlIpv4StringToAddress RtlIpv4StringToAddressW
#define RtlIpv4StringToAddressEx RtlIpv4StringToAddressExW
#define RtlIpv6StringToAddress RtlIpv6StringToAddressW
#define RtlIpv6StringToAddressEx RtlIpv6StringToAddressExW
#define RtlIpv4AddressToString RtlIpv4AddressToStringW
#define RtlIpv4AddressToStringEx RtlIpv4AddressToStringExW
#define RtlIpv6AddressToString RtlIpv6AddressToStringW
#define RtlIpv6AddressToStringEx RtlIpv6AddressToStringExW
#else
#define RtlIpv4StringToAddress RtlIpv4StringToAddressA
#define RtlIpv4StringToAddressEx RtlIpv4StringToAddressExA
#define RtlIpv6StringToAddress RtlIpv6StringToAddressA
#define RtlIpv6StringToAddressEx RtlIpv6StringToAddressExA
#define RtlIpv4AddressToString RtlIpv4AddressToStringA
#define RtlIpv4AddressToStringEx RtlIpv4AddressToStringExA
#define RtlIpv6AddressToString RtlIpv6AddressToStringA
#define RtlIpv6AddressToStringEx RtlIpv6AddressToStringExA
#endif

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_WDK_IP2STRING_H_ */
