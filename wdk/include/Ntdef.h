/* Ntdef.h: the spelling Microsoft's documentation and samples use for
 * <ntdef.h>. Linux file names are case sensitive; docs/wdk.md, "Include names". */
#include "ntdef.h"
