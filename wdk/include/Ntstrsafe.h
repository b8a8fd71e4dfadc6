// SPDX-License-Identifier: Apache-2.0
/* Ntstrsafe.h: the spelling Microsoft's documentation and samples use for
 * <ntstrsafe.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ntstrsafe.h"
