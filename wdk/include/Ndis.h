// SPDX-License-Identifier: Apache-2.0
/* Ndis.h: the spelling Microsoft's documentation and samples use for
 * <ndis.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ndis.h"
