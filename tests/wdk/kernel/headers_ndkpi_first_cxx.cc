// SPDX-License-Identifier: Apache-2.0
// headers_ndkpi_first.c compiled as C++.
#define headers_ndkpi_first headers_ndkpi_first_cxx
extern "C" int headers_ndkpi_first_cxx(void);
#include "headers_ndkpi_first.c"
