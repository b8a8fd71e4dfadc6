// SPDX-License-Identifier: Apache-2.0
/* Devguid.h: the spelling Microsoft's documentation and samples use for
 * <devguid.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "devguid.h"
