// SPDX-License-Identifier: Apache-2.0
/* Ntddk.h: the spelling Microsoft's documentation and samples use for
 * <ntddk.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ntddk.h"
