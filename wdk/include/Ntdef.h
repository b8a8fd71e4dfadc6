// SPDX-License-Identifier: Apache-2.0
/* Ntdef.h: the spelling Microsoft's documentation and samples use for
 * <ntdef.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ntdef.h"
