// SPDX-License-Identifier: Apache-2.0
// A consumer's include order: the WDK headers first, ndkpi.h after. Built as
// C11 and (headers_cxx.cc) as C++, warnings as errors; main() checks the
// Windows x64 (LLP64) type sizes and the shared base types.
#include <ip2string.h>
#include <ntddk.h>
#include <softndk/ndkpi.h>

#include "headers_check.h"

int headers_ntddk_first(void) { return headers_check(); }
