// SPDX-License-Identifier: Apache-2.0
// Runs the header shape checks of both include orders, in C and in C++.
#include <stdio.h>

int headers_ntddk_first(void);
int headers_ndkpi_first(void);
int headers_ntddk_first_cxx(void);
int headers_ndkpi_first_cxx(void);
int headers_extern_c(void);

int main(void) {
  int r[5] = {headers_ntddk_first(), headers_ndkpi_first(), headers_ntddk_first_cxx(),
              headers_ndkpi_first_cxx(), headers_extern_c()};
  for (int i = 0; i < 5; i++) {
    if (r[i] != 0) {
      printf("header check %d failed: %d\n", i, r[i]);
      return 1;
    }
  }
  printf("headers: OK\n");
  return 0;
}
