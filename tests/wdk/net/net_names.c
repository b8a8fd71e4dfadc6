// SPDX-License-Identifier: Apache-2.0
// net_names.c - the networking names a Windows consumer writes, compiled as
// C11 with the WDK include order (ntddk.h, ndis.h, wsk.h, wskndk.h, then
// ndkpi.h): socket addresses, SOCKADDR_INET, interface identifiers.
#include <ndis.h>
#include <ndkpi.h>
#include <ntddk.h>
#include <stddef.h>
#include <wsk.h>
#include <wskndk.h>

_Static_assert(sizeof(SOCKADDR_IN) == 16, "SOCKADDR_IN is 16 bytes");
_Static_assert(sizeof(SOCKADDR_IN6) == 28, "SOCKADDR_IN6 is 28 bytes");
_Static_assert(sizeof(SOCKADDR_INET) == 28, "SOCKADDR_INET holds either");
_Static_assert(offsetof(SOCKADDR_INET, si_family) == 0, "the family tags the union");
_Static_assert(sizeof(NET_LUID) == 8, "NET_LUID is 64 bits");
_Static_assert(sizeof(NET_IFINDEX) == 4, "NET_IFINDEX is a ULONG");
_Static_assert(sizeof(WSK_PROVIDER_NDK_DISPATCH) == 2 * sizeof(void*), "two functions");

// Fills addresses the Windows way; returns 1 when every view agrees.
int NetNamesOk(void) {
  SOCKADDR_INET a;
  SOCKADDR_IN6 b;
  NET_LUID luid;
  RtlZeroMemory(&a, sizeof(a));
  a.Ipv4.sin_family = AF_INET;
  a.Ipv4.sin_port = RtlUshortByteSwap(4791);
  a.Ipv4.sin_addr.s_addr = RtlUlongByteSwap(0x7f000001);
  RtlZeroMemory(&b, sizeof(b));
  b.sin6_family = AF_INET6;
  b.sin6_addr.s6_addr[15] = 1;
  b.sin6_scope_id = 0;
  luid.Value = 0;
  luid.Info.NetLuidIndex = 1;
  luid.Info.IfType = IF_TYPE_SOFTWARE_LOOPBACK;
  return a.si_family == AF_INET && ((const SOCKADDR*)&a)->sa_family == AF_INET &&
         ((const UCHAR*)&a.Ipv4.sin_port)[0] == 0x12 && b.sin6_family == AF_INET6 &&
         luid.Value == ((ULONG64)IF_TYPE_SOFTWARE_LOOPBACK << 48 | (ULONG64)1 << 24) &&
         NDIS_STATUS_SUCCESS == STATUS_SUCCESS;
}
