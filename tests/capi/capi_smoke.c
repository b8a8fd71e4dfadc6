// SPDX-License-Identifier: Apache-2.0
/* capi_smoke.c - the C ABI from C11: open "lo", create and close objects,
 * check statuses. Exits non-zero on the first unexpected status. */
#include <softndk/ndkpi.h>
#include <softndk/softndk.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void expect(const char* what, NTSTATUS got, NTSTATUS want) {
  const char* name = SoftNdkStatusName(got);
  printf("%-32s %s\n", what, name ? name : "?");
  if (got != want) {
    fprintf(stderr, "  expected %s\n", SoftNdkStatusName(want));
    ++failures;
  }
}

/* SoftNdkGetVersion: the library's version is the one of the headers it
 * was built with (one build here), in number and text form. */
static void check_version(void) {
  const char* text = NULL;
  ULONG v = SoftNdkGetVersion(&text);
  char want[32];
  snprintf(want, sizeof want, "%u.%u.%u", (unsigned)SOFTNDK_VERSION_MAJOR_OF(v),
           (unsigned)SOFTNDK_VERSION_MINOR_OF(v), (unsigned)SOFTNDK_VERSION_PATCH_OF(v));
  printf("%-32s %s (0x%06x)\n", "SoftNdkGetVersion", text ? text : "(null)", (unsigned)v);
  if (v != SOFTNDK_VERSION || text == NULL || strcmp(text, SOFTNDK_VERSION_STRING) != 0 ||
      strcmp(text, want) != 0 || SoftNdkGetVersion(NULL) != v) {
    fprintf(stderr, "  expected %s (0x%06x)\n", SOFTNDK_VERSION_STRING, (unsigned)SOFTNDK_VERSION);
    ++failures;
  }
}

int main(void) {
  check_version();
  NDK_VERSION v = {NDK_VERSION_MAJOR, NDK_VERSION_MINOR};
  NDK_ADAPTER* a = NULL;
  SOFTNDK_OPEN_PARAMETERS p;
  memset(&p, 0, sizeof p);
  p.Size = sizeof p;
  expect("SoftNdkOpenAdapter", SoftNdkOpenAdapter("lo", v, &p, &a), STATUS_SUCCESS);
  if (a == NULL) return 1;

  NDK_ADAPTER_INFO info;
  ULONG size = sizeof info;
  expect("NdkQueryAdapterInfo", a->Dispatch->NdkQueryAdapterInfo(a, &info, &size), STATUS_SUCCESS);
  if (info.RdmaTechnology != NdkiWarp) ++failures;

  NDK_CQ* cq = NULL;
  expect("NdkCreateCq", a->Dispatch->NdkCreateCq(a, 64, NULL, NULL, NULL, NULL, NULL, &cq),
         STATUS_SUCCESS);
  NDK_PD* pd = NULL;
  expect("NdkCreatePd", a->Dispatch->NdkCreatePd(a, NULL, NULL, &pd), STATUS_SUCCESS);
  NDK_MR* mr = NULL;
  expect("NdkCreateMr", pd->Dispatch->NdkCreateMr(pd, FALSE, NULL, NULL, &mr), STATUS_SUCCESS);
  static char buf[4096];
  MDL mdl = {NULL, buf, sizeof buf};
  expect(
      "NdkRegisterMr",
      mr->Dispatch->NdkRegisterMr(mr, &mdl, sizeof buf, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL, NULL),
      STATUS_SUCCESS);
  NDK_QP* qp = NULL;
  expect("NdkCreateQp",
         pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, 16, 16, 2, 2, 0, NULL, NULL, &qp),
         STATUS_SUCCESS);
  NDK_QP* bad = NULL;
  expect("NdkCreateQp (depth too big)",
         pd->Dispatch->NdkCreateQp(pd, cq, cq, NULL, info.MaxReceiveQueueDepth + 1, 16, 2, 2, 0,
                                   NULL, NULL, &bad),
         STATUS_INVALID_PARAMETER);
  NDK_SGE sge;
  memset(&sge, 0, sizeof sge);
  sge.VirtualAddress = buf;
  sge.Length = 64;
  sge.MemoryRegionToken = mr->Dispatch->NdkGetLocalTokenFromMr(mr);
  expect("NdkSend (unconnected)", qp->Dispatch->NdkSend(qp, NULL, &sge, 1, 0),
         STATUS_CONNECTION_INVALID);
  /* Closing the PD first pends until its successors are closed; this C
   * program passes no completion and simply closes the rest. */
  expect("NdkCloseQp", qp->Dispatch->NdkCloseQp(&qp->Header, NULL, NULL), STATUS_SUCCESS);
  expect("NdkCloseMr", mr->Dispatch->NdkCloseMr(&mr->Header, NULL, NULL), STATUS_SUCCESS);
  expect("NdkClosePd", pd->Dispatch->NdkClosePd(&pd->Header, NULL, NULL), STATUS_SUCCESS);
  expect("NdkCloseCq (double close)", cq->Dispatch->NdkCloseCq(&cq->Header, NULL, NULL),
         STATUS_SUCCESS);
  expect("NdkCloseCq (again)", cq->Dispatch->NdkCloseCq(&cq->Header, NULL, NULL),
         STATUS_FILE_CLOSED);
  SoftNdkCloseAdapter(a);
  printf("%s\n", failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
}
