// SPDX-License-Identifier: Apache-2.0
/* Ndkpi.h: the spelling Microsoft's documentation and samples use for
 * <ndkpi.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ndkpi.h"
