// SPDX-License-Identifier: Apache-2.0
/* Wskndk.h: the spelling Microsoft's documentation and samples use for
 * <wskndk.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "wskndk.h"
