// SPDX-License-Identifier: Apache-2.0
// The other include order: ndkpi.h (and softndk.h) first, then wdm.h.
#include <softndk/ndkpi.h>
#include <softndk/softndk.h>
#include <wdm.h>

#include "headers_check.h"

int headers_ndkpi_first(void) { return headers_check(); }
