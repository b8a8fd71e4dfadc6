// SPDX-License-Identifier: Apache-2.0
// logical_address.c - NDK_LOGICAL_ADDRESS in the shape consumers use: the
// WDK's PHYSICAL_ADDRESS (LARGE_INTEGER), compiled as C11 the way a driver
// uses it (docs/abi.md, "NDK_LOGICAL_ADDRESS").
#include <ndkpi.h>
#include <ntddk.h>
#include <stddef.h>

_Static_assert(sizeof(NDK_LOGICAL_ADDRESS) == 8, "one 64-bit value");
_Static_assert(offsetof(NDK_LOGICAL_ADDRESS, LowPart) == 0, "LowPart first");
_Static_assert(offsetof(NDK_LOGICAL_ADDRESS, HighPart) == 4, "HighPart second");
_Static_assert(offsetof(NDK_LOGICAL_ADDRESS, u.HighPart) == 4, "and through .u");
_Static_assert(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) == 16, "LAM layout");

// Fills a LAM page the way a consumer does from an MDL's physical address,
// and reads it back through every name. Returns 1 when all agree.
int LogicalAddressShapeOk(void) {
  PHYSICAL_ADDRESS physical;
  NDK_LOGICAL_ADDRESS logical;
  NDK_SGE sge;
  physical.QuadPart = 0x1122334455667000LL;
  logical = physical; /* the same type */
  sge.LogicalAddress = logical;
  sge.LogicalAddress.LowPart += 0x10;
  return logical.LowPart == 0x55667000u && logical.HighPart == 0x11223344 &&
         logical.u.LowPart == logical.LowPart && logical.u.HighPart == logical.HighPart &&
         sge.LogicalAddress.QuadPart == 0x1122334455667010LL;
}
