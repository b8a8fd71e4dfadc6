// SPDX-License-Identifier: Apache-2.0
/*
 * A small kernel driver written against the WDK names only, run by the
 * launcher tests (softndk-wdk-run). Its first driver argument picks the
 * behaviour:
 *   ok            timer -> DPC -> work item -> unload request; clean unload
 *   fail          requests unload with STATUS_UNSUCCESSFUL
 *   leak          as ok, but DriverUnload forgets to free its pool
 *   entryfail     DriverEntry fails
 *   hang          never requests unload
 *   dispatchwait  the DPC waits with a timeout at DISPATCH_LEVEL
 *   unloadhang    DriverUnload waits for an event nobody sets
 */
#include <ntddk.h>

#define DRV_TAG 'tvrD' /* "Drvt" in memory */

typedef struct _DRV_CONTEXT {
  KTIMER Timer;
  KDPC Dpc;
  PIO_WORKITEM WorkItem;
  KEVENT WorkDone;
  ULONG Mode;
  volatile LONG Steps;
} DRV_CONTEXT;

enum { ModeOk, ModeFail, ModeLeak, ModeHang, ModeDispatchWait, ModeUnloadHang };

static DRV_CONTEXT* g_context;
static PDEVICE_OBJECT g_device;

DRIVER_INITIALIZE DriverEntry;
static DRIVER_UNLOAD DrvUnload;
static KDEFERRED_ROUTINE DrvDpc;
static IO_WORKITEM_ROUTINE DrvWork;

_Use_decl_annotations_ static VOID DrvWork(PDEVICE_OBJECT DeviceObject, PVOID Context) {
  DRV_CONTEXT* ctx = (DRV_CONTEXT*)Context;
  UNREFERENCED_PARAMETER(DeviceObject);
  PAGED_CODE();
  NT_ASSERT(KeGetCurrentIrql() == PASSIVE_LEVEL);
  InterlockedIncrement(&ctx->Steps);
  KeSetEvent(&ctx->WorkDone, IO_NO_INCREMENT, FALSE);
  SoftNdkWdkRequestUnload(ctx->Mode == ModeFail ? STATUS_UNSUCCESSFUL : STATUS_SUCCESS);
}

_Use_decl_annotations_ static VOID DrvDpc(PKDPC Dpc, PVOID Context, PVOID A1, PVOID A2) {
  DRV_CONTEXT* ctx = (DRV_CONTEXT*)Context;
  UNREFERENCED_PARAMETER(Dpc);
  UNREFERENCED_PARAMETER(A1);
  UNREFERENCED_PARAMETER(A2);
  NT_ASSERT(KeGetCurrentIrql() == DISPATCH_LEVEL);
  InterlockedIncrement(&ctx->Steps);
  if (ctx->Mode == ModeDispatchWait) {
    LARGE_INTEGER timeout;
    timeout.QuadPart = -10000; /* 1 ms: not allowed at DISPATCH_LEVEL */
    KeWaitForSingleObject(&ctx->WorkDone, Executive, KernelMode, FALSE, &timeout);
  }
  if (ctx->Mode != ModeHang) IoQueueWorkItem(ctx->WorkItem, DrvWork, DelayedWorkQueue, ctx);
}

_Use_decl_annotations_ static VOID DrvUnload(PDRIVER_OBJECT DriverObject) {
  UNREFERENCED_PARAMETER(DriverObject);
  PAGED_CODE();
  KeCancelTimer(&g_context->Timer);
  KeFlushQueuedDpcs();
  if (g_context->Mode != ModeHang) {
    KeWaitForSingleObject(&g_context->WorkDone, Executive, KernelMode, FALSE, NULL);
  }
  if (g_context->Mode == ModeUnloadHang) {
    KEVENT never;
    KeInitializeEvent(&never, NotificationEvent, FALSE);
    KeWaitForSingleObject(&never, Executive, KernelMode, FALSE, NULL);
  }
  IoFreeWorkItem(g_context->WorkItem);
  DbgPrintEx(DPFLTR_IHVDRIVER_ID, DPFLTR_INFO_LEVEL, "test_driver: unload after %d steps\n",
             (int)g_context->Steps);
  if (g_context->Mode != ModeLeak) ExFreePoolWithTag(g_context, DRV_TAG);
  IoDeleteDevice(g_device);
}

static ULONG ModeFromArgument(PCSTR arg) {
  if (arg == NULL || strcmp(arg, "ok") == 0) return ModeOk;
  if (strcmp(arg, "fail") == 0) return ModeFail;
  if (strcmp(arg, "leak") == 0) return ModeLeak;
  if (strcmp(arg, "hang") == 0) return ModeHang;
  if (strcmp(arg, "dispatchwait") == 0) return ModeDispatchWait;
  if (strcmp(arg, "unloadhang") == 0) return ModeUnloadHang;
  return MAXULONG;
}

_Use_decl_annotations_ NTSTATUS DriverEntry(PDRIVER_OBJECT DriverObject,
                                            PUNICODE_STRING RegistryPath) {
  UNICODE_STRING expected =
      RTL_CONSTANT_STRING(L"\\Registry\\Machine\\System\\CurrentControlSet\\Services\\test_driver");
  UNICODE_STRING device_name = RTL_CONSTANT_STRING(L"\\Device\\WdkTestDriver");
  PCSTR arg = SoftNdkWdkArgumentCount() > 0 ? SoftNdkWdkArgument(0) : NULL;
  LARGE_INTEGER due;
  NTSTATUS status;
  ULONG mode;

  PAGED_CODE();
  if (arg != NULL && strcmp(arg, "entryfail") == 0) return STATUS_INSUFFICIENT_RESOURCES;
  mode = ModeFromArgument(arg);
  if (mode == MAXULONG || !RtlEqualUnicodeString(RegistryPath, &expected, TRUE)) {
    return STATUS_INVALID_PARAMETER;
  }
  status = IoCreateDevice(DriverObject, 0, &device_name, FILE_DEVICE_NETWORK, 0, FALSE, &g_device);
  if (!NT_SUCCESS(status)) return status;
  g_context = (DRV_CONTEXT*)ExAllocatePool2(POOL_FLAG_NON_PAGED, sizeof(DRV_CONTEXT), DRV_TAG);
  if (g_context == NULL) {
    IoDeleteDevice(g_device);
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  g_context->Mode = mode;
  g_context->WorkItem = IoAllocateWorkItem(g_device);
  KeInitializeEvent(&g_context->WorkDone, NotificationEvent, FALSE);
  KeInitializeTimerEx(&g_context->Timer, NotificationTimer);
  KeInitializeDpc(&g_context->Dpc, DrvDpc, g_context);
  DriverObject->DriverUnload = DrvUnload;
  due.QuadPart = -20 * 10000; /* 20 ms */
  KeSetTimer(&g_context->Timer, due, &g_context->Dpc);
  return STATUS_SUCCESS;
}
