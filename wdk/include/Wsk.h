// SPDX-License-Identifier: Apache-2.0
/* Wsk.h: the spelling Microsoft's documentation and samples use for
 * <wsk.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "wsk.h"
