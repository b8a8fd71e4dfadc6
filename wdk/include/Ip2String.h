// SPDX-License-Identifier: Apache-2.0
/* Ip2String.h: the spelling Microsoft's documentation and samples use for
 * <ip2string.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ip2string.h"
