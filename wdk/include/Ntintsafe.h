// SPDX-License-Identifier: Apache-2.0
/* Ntintsafe.h: the spelling Microsoft's documentation and samples use for
 * <ntintsafe.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ntintsafe.h"
