// SPDX-License-Identifier: Apache-2.0
/* Netioapi.h: the spelling Microsoft's documentation and samples use for
 * <netioapi.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "netioapi.h"
