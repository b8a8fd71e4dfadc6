// SPDX-License-Identifier: Apache-2.0
/* Wdmsec.h: the spelling Microsoft's documentation and samples use for
 * <wdmsec.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "wdmsec.h"
