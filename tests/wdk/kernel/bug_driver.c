/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A driver that commits one bug (or lifecycle behaviour) per run, chosen by
 * its first driver argument, for the host's bug-check analysis, Special Pool
 * and lifecycle tests (tests/wdk/kernel/CMakeLists.txt asserts each report):
 *   service      runs until stopped (never asks to be unloaded); clean unload
 *   entryhang    DriverEntry waits for an event nobody sets
 *   unloadhang   runs until stopped; DriverUnload never returns
 *   uaf          touches a request after its completion (a DPC) freed it
 *   overrun      writes one element past the end of a pool array
 *   underrun     writes one byte before the start of a pool block
 *   nullrace     DriverEntry uses the socket its accept callback has not set yet
 *   nulldpc      a DPC dereferences a NULL context member (at DISPATCH_LEVEL)
 *   doublefree   frees a pool block twice
 *   wrongtag     frees a pool block with another tag
 *   dispatchwait waits with a timeout at DISPATCH_LEVEL (in a DPC)
 *   irqlcallback allocates paged pool in a DPC (IRQL too high)
 *   divzero      divides by zero
 *   bugcheck     calls KeBugCheckEx
 */
#include <ntddk.h>

#define BUG_TAG 'tguB' /* "Bugt" */
#define REQ_TAG 'qeRU' /* "UReq" */
#define ARR_TAG 'nrvO' /* "Ovrn" */

typedef struct _BUG_REQUEST {
  LIST_ENTRY Link;
  ULONG Bytes;
  volatile LONG Completed;
} BUG_REQUEST;

typedef struct _BUG_SOCKET {
  ULONG Flags;
  ULONG Pad;
  PVOID Connection;
  volatile LONG State;
} BUG_SOCKET;

typedef struct _BUG_CONTEXT {
  KDPC Dpc;
  KTIMER Timer;
  KEVENT Done;
  BUG_REQUEST* Request;
  BUG_SOCKET* Socket;
  ULONG Mode;
} BUG_CONTEXT;

enum {
  ModeService,
  ModeEntryHang,
  ModeUnloadHang,
  ModeUaf,
  ModeOverrun,
  ModeUnderrun,
  ModeNullRace,
  ModeNullDpc,
  ModeDoubleFree,
  ModeWrongTag,
  ModeDispatchWait,
  ModeIrqlCallback,
  ModeDivZero,
  ModeBugCheck,
  ModeCount
};
static const char* const kModes[ModeCount] = {
    "service", "entryhang",  "unloadhang", "uaf",          "overrun",      "underrun", "nullrace",
    "nulldpc", "doublefree", "wrongtag",   "dispatchwait", "irqlcallback", "divzero",  "bugcheck"};

static BUG_CONTEXT* g_ctx;
static BUG_SOCKET* volatile g_accepted; /* set by the "accept callback" */

DRIVER_INITIALIZE DriverEntry;
static DRIVER_UNLOAD BugUnload;
static KDEFERRED_ROUTINE BugCompletionDpc;
static KDEFERRED_ROUTINE BugAcceptDpc;

/* The request's completion: frees it (as an NDK completion handler would). */
_Use_decl_annotations_ static VOID BugCompletionDpc(PKDPC Dpc, PVOID Context, PVOID A1, PVOID A2) {
  BUG_CONTEXT* ctx = (BUG_CONTEXT*)Context;
  UNREFERENCED_PARAMETER(Dpc);
  UNREFERENCED_PARAMETER(A1);
  UNREFERENCED_PARAMETER(A2);
  if (ctx->Mode == ModeNullDpc) {
    /* The socket is not there yet: NULL + offsetof(State). */
    InterlockedIncrement(&ctx->Socket->State);
  } else if (ctx->Mode == ModeDispatchWait) {
    LARGE_INTEGER timeout;
    timeout.QuadPart = -10000;
    KeWaitForSingleObject(&ctx->Done, Executive, KernelMode, FALSE, &timeout);
  } else if (ctx->Mode == ModeIrqlCallback) {
    PVOID p = ExAllocatePool2(POOL_FLAG_PAGED, 32, BUG_TAG);
    if (p != NULL) ExFreePoolWithTag(p, BUG_TAG);
  } else if (ctx->Request != NULL) {
    ExFreePoolWithTag(ctx->Request, REQ_TAG);
  }
  KeSetEvent(&ctx->Done, IO_NO_INCREMENT, FALSE);
}

/* The accept callback: the socket arrives 200 ms later. */
_Use_decl_annotations_ static VOID BugAcceptDpc(PKDPC Dpc, PVOID Context, PVOID A1, PVOID A2) {
  UNREFERENCED_PARAMETER(Dpc);
  UNREFERENCED_PARAMETER(A1);
  UNREFERENCED_PARAMETER(A2);
  g_accepted = ((BUG_CONTEXT*)Context)->Socket;
}

/* Marks a posted request complete - after its completion freed it. */
static __attribute__((noinline)) void BugMarkRequestDone(BUG_REQUEST* request) {
  InterlockedExchange(&request->Completed, 1);
}

/* The classic off-by-one: <= instead of <. */
static __attribute__((noinline)) void BugFillArray(ULONG* array, ULONG count) {
  for (ULONG i = 0; i <= count; i++) ((volatile ULONG*)array)[i] = i;
}

static __attribute__((noinline)) void BugWriteHeader(UCHAR* block) {
  ((volatile UCHAR*)block)[-1] = 0x42;
}

static __attribute__((noinline)) LONG BugUseAcceptedSocket(void) {
  return InterlockedIncrement(&g_accepted->State);
}

static __attribute__((noinline)) ULONG BugAverage(ULONG total, ULONG count) {
  return total / count;
}

_Use_decl_annotations_ static VOID BugUnload(PDRIVER_OBJECT DriverObject) {
  UNREFERENCED_PARAMETER(DriverObject);
  if (g_ctx->Mode == ModeUnloadHang) {
    KEVENT never;
    KeInitializeEvent(&never, NotificationEvent, FALSE);
    KeWaitForSingleObject(&never, Executive, KernelMode, FALSE, NULL);
  }
  KeCancelTimer(&g_ctx->Timer);
  KeFlushQueuedDpcs();
  if (g_ctx->Socket != NULL) ExFreePoolWithTag(g_ctx->Socket, BUG_TAG);
  ExFreePoolWithTag(g_ctx, BUG_TAG);
  DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_INFO_LEVEL, "bug_driver: unloaded\n");
}

_Use_decl_annotations_ NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject,
                                            PUNICODE_STRING RegistryPath) {
  PCSTR arg = SoftNdkWdkArgumentCount() > 0 ? SoftNdkWdkArgument(0) : "service";
  ULONG mode = ModeCount;
  LARGE_INTEGER due;
  UNREFERENCED_PARAMETER(RegistryPath);
  for (ULONG i = 0; i < ModeCount; i++) {
    if (strcmp(arg, kModes[i]) == 0) mode = i;
  }
  if (mode == ModeCount) return STATUS_INVALID_PARAMETER;
  DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_INFO_LEVEL, "bug_driver: DriverEntry running (%s)\n", arg);
  g_ctx = (BUG_CONTEXT*)ExAllocatePool2(POOL_FLAG_NON_PAGED, sizeof(BUG_CONTEXT), BUG_TAG);
  if (g_ctx == NULL) return STATUS_INSUFFICIENT_RESOURCES;
  g_ctx->Mode = mode;
  KeInitializeEvent(&g_ctx->Done, NotificationEvent, FALSE);
  KeInitializeDpc(&g_ctx->Dpc, BugCompletionDpc, g_ctx);
  KeInitializeTimer(&g_ctx->Timer);
  DriverObject->DriverUnload = BugUnload;

  switch (mode) {
    case ModeEntryHang:
      KeWaitForSingleObject(&g_ctx->Done, Executive, KernelMode, FALSE, NULL);
      break;
    case ModeUaf:
      g_ctx->Request =
          (BUG_REQUEST*)ExAllocatePool2(POOL_FLAG_NON_PAGED, sizeof(BUG_REQUEST), REQ_TAG);
      if (g_ctx->Request == NULL) return STATUS_INSUFFICIENT_RESOURCES;
      KeInsertQueueDpc(&g_ctx->Dpc, NULL, NULL); /* "post": the completion frees it */
      KeWaitForSingleObject(&g_ctx->Done, Executive, KernelMode, FALSE, NULL);
      BugMarkRequestDone(g_ctx->Request);
      break;
    case ModeOverrun: {
      ULONG* array = (ULONG*)ExAllocatePool2(POOL_FLAG_NON_PAGED, 16 * sizeof(ULONG), ARR_TAG);
      if (array == NULL) return STATUS_INSUFFICIENT_RESOURCES;
      BugFillArray(array, 16);
      ExFreePoolWithTag(array, ARR_TAG);
      break;
    }
    case ModeUnderrun: {
      UCHAR* block = (UCHAR*)ExAllocatePool2(POOL_FLAG_NON_PAGED, 48, ARR_TAG);
      if (block == NULL) return STATUS_INSUFFICIENT_RESOURCES;
      BugWriteHeader(block);
      ExFreePoolWithTag(block, ARR_TAG);
      break;
    }
    case ModeNullRace:
      g_ctx->Socket =
          (BUG_SOCKET*)ExAllocatePool2(POOL_FLAG_NON_PAGED, sizeof(BUG_SOCKET), BUG_TAG);
      if (g_ctx->Socket == NULL) return STATUS_INSUFFICIENT_RESOURCES;
      KeInitializeDpc(&g_ctx->Dpc, BugAcceptDpc, g_ctx);
      due.QuadPart = -200 * 10000;
      KeSetTimer(&g_ctx->Timer, due, &g_ctx->Dpc); /* "listen": accepted later */
      BugUseAcceptedSocket();                      /* without waiting for the accept */
      break;
    case ModeNullDpc:
    case ModeDispatchWait:
    case ModeIrqlCallback:
      KeInsertQueueDpc(&g_ctx->Dpc, NULL, NULL);
      KeWaitForSingleObject(&g_ctx->Done, Executive, KernelMode, FALSE, NULL);
      break;
    case ModeDoubleFree: {
      PVOID p = ExAllocatePool2(POOL_FLAG_NON_PAGED, 40, BUG_TAG);
      ExFreePoolWithTag(p, BUG_TAG);
      ExFreePoolWithTag(p, BUG_TAG);
      break;
    }
    case ModeWrongTag: {
      PVOID p = ExAllocatePool2(POOL_FLAG_NON_PAGED, 40, BUG_TAG);
      ExFreePoolWithTag(p, REQ_TAG);
      ExFreePoolWithTag(p, BUG_TAG);
      break;
    }
    case ModeDivZero:
      return (NTSTATUS)BugAverage(10, (ULONG)SoftNdkWdkArgumentCount() - 1);
    case ModeBugCheck:
      KeBugCheckEx(0xe2, 1, 2, 3, 4); /* MANUALLY_INITIATED_CRASH */
      break;
    default:
      break;
  }
  DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_INFO_LEVEL, "bug_driver: started\n");
  return STATUS_SUCCESS;
}
