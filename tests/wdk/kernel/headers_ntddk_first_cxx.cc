// SPDX-License-Identifier: Apache-2.0
// headers_ntddk_first.c compiled as C++.
#define headers_ntddk_first headers_ntddk_first_cxx
extern "C" int headers_ntddk_first_cxx(void);
#include "headers_ntddk_first.c"
