// SPDX-License-Identifier: Apache-2.0
/* Ntifs.h: the spelling Microsoft's documentation and samples use for
 * <ntifs.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ntifs.h"
