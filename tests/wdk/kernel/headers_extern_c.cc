// SPDX-License-Identifier: Apache-2.0
// C++ drivers often include the WDK headers inside extern "C"; that must
// compile too (the kit's C++-only helpers keep C++ linkage).
extern "C" {
#include <ip2string.h>
#include <ntddk.h>
}
#include <softndk/ndkpi.h>

extern "C" int headers_extern_c(void) {
  UNICODE_STRING name = RTL_CONSTANT_STRING(L"\\Device\\ExternC");
  ANSI_STRING narrow = RTL_CONSTANT_STRING("narrow");
  return name.Length == 15 * sizeof(WCHAR) && narrow.Length == 6 ? 0 : 1;
}
