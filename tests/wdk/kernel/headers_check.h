// SPDX-License-Identifier: Apache-2.0
// Shared by the header tests: type sizes and shapes a consumer relies on.
#pragma once

#ifdef __cplusplus
#define HEADERS_STATIC_ASSERT static_assert
#else
#define HEADERS_STATIC_ASSERT _Static_assert
#endif

HEADERS_STATIC_ASSERT(sizeof(ULONG) == 4, "ULONG is 32 bits (LLP64)");
HEADERS_STATIC_ASSERT(sizeof(LONG) == 4, "LONG is 32 bits (LLP64)");
HEADERS_STATIC_ASSERT(sizeof(LONG64) == 8 && sizeof(ULONG64) == 8, "64-bit types");
HEADERS_STATIC_ASSERT(sizeof(ULONGLONG) == 8 && sizeof(LONGLONG) == 8, "64-bit types");
HEADERS_STATIC_ASSERT(sizeof(SIZE_T) == 8 && sizeof(ULONG_PTR) == 8, "pointer-sized types");
HEADERS_STATIC_ASSERT(sizeof(LARGE_INTEGER) == 8, "LARGE_INTEGER");
HEADERS_STATIC_ASSERT(sizeof(NDK_LOGICAL_ADDRESS) == 8, "NDK_LOGICAL_ADDRESS");
HEADERS_STATIC_ASSERT(sizeof(KIRQL) == 1, "KIRQL");
HEADERS_STATIC_ASSERT(sizeof(SLIST_HEADER) == 16, "SLIST_HEADER");

DRIVER_INITIALIZE HeadersDriverEntry;
static IO_COMPLETION_ROUTINE HeadersCompletion;
static KDEFERRED_ROUTINE HeadersDpc;

_Use_decl_annotations_ static NTSTATUS HeadersCompletion(PDEVICE_OBJECT DeviceObject, PIRP Irp,
                                                         PVOID Context) {
  UNREFERENCED_PARAMETER(DeviceObject);
  UNREFERENCED_PARAMETER(Irp);
  UNREFERENCED_PARAMETER(Context);
  return STATUS_MORE_PROCESSING_REQUIRED;
}

_Use_decl_annotations_ static VOID HeadersDpc(PKDPC Dpc, PVOID Context, PVOID A1, PVOID A2) {
  UNREFERENCED_PARAMETER(Dpc);
  UNREFERENCED_PARAMETER(Context);
  UNREFERENCED_PARAMETER(A1);
  UNREFERENCED_PARAMETER(A2);
}

typedef struct _HEADERS_ITEM {
  ULONG Value;
  LIST_ENTRY Link;
} HEADERS_ITEM;

// 0 if the shapes behave as on Windows.
static inline int headers_check(void) {
  NDK_LOGICAL_ADDRESS la;
  PHYSICAL_ADDRESS pa;
  LIST_ENTRY head;
  HEADERS_ITEM item;
  UNICODE_STRING name = RTL_CONSTANT_STRING(L"\\Device\\Headers");
  IO_STATUS_BLOCK iosb;
  la.QuadPart = 0x0000000500000007LL;
  pa = la;
  if (pa.LowPart != 7 || pa.HighPart != 5 || pa.u.LowPart != 7) return 1;
  InitializeListHead(&head);
  item.Value = 42;
  InsertTailList(&head, &item.Link);
  if (CONTAINING_RECORD(head.Flink, HEADERS_ITEM, Link)->Value != 42) return 2;
  if (name.Length != 15 * sizeof(WCHAR) || !NT_SUCCESS(STATUS_SUCCESS)) return 3;
  iosb.Status = STATUS_PENDING;
  iosb.Information = 0;
  if (NT_SUCCESS(STATUS_CANCELLED) || iosb.Status != STATUS_PENDING) return 4;
  if (FIELD_OFFSET(HEADERS_ITEM, Link) != (LONG)offsetof(HEADERS_ITEM, Link)) return 5;
  (void)HeadersCompletion;
  (void)HeadersDpc;
  return 0;
}
