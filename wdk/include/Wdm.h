// SPDX-License-Identifier: Apache-2.0
/* Wdm.h: the spelling Microsoft's documentation and samples use for
 * <wdm.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "wdm.h"
