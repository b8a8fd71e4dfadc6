// SPDX-License-Identifier: Apache-2.0
/* consumer.c - opens "lo" through an installed softndk and closes it. */
#include <softndk/softndk.h>
#include <stdio.h>

int main(void) {
  /* The installed headers and the installed library are one version. */
  const char* version = NULL;
  if (SoftNdkGetVersion(&version) != SOFTNDK_VERSION) {
    printf("SoftNdkGetVersion: %s, headers %s\n", version, SOFTNDK_VERSION_STRING);
    return 1;
  }
  printf("softndk %s\n", version);
  NDK_VERSION v = {NDK_VERSION_MAJOR, NDK_VERSION_MINOR};
  NDK_ADAPTER* a = NULL;
  NTSTATUS s = SoftNdkOpenAdapter("lo", v, NULL, &a);
  printf("SoftNdkOpenAdapter: %s\n", SoftNdkStatusName(s));
  if (s != STATUS_SUCCESS) return 1;
  NDK_PD* pd = NULL;
  s = a->Dispatch->NdkCreatePd(a, NULL, NULL, &pd);
  printf("NdkCreatePd: %s\n", SoftNdkStatusName(s));
  SoftNdkCloseAdapter(a);
  return s == STATUS_SUCCESS ? 0 : 1;
}
