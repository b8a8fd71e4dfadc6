// SPDX-License-Identifier: Apache-2.0
/* Registry.c - the driver's parameters under its service key, read the two
 * ways drivers do: ZwOpenKey/ZwQueryValueKey and RtlQueryRegistryValues. */
#include "registry.h"

#include "precomp.h"

static NTSTATUS PdQueryDword(_In_ HANDLE Key, _In_z_ PCWSTR Name, _Out_ PULONG Value) {
  UCHAR buffer[FIELD_OFFSET(KEY_VALUE_PARTIAL_INFORMATION, Data) + sizeof(ULONG)];
  PKEY_VALUE_PARTIAL_INFORMATION info = (PKEY_VALUE_PARTIAL_INFORMATION)buffer;
  UNICODE_STRING name;
  ULONG length = 0;
  NTSTATUS status;

  RtlInitUnicodeString(&name, Name);
  status = ZwQueryValueKey(Key, &name, KeyValuePartialInformation, info, sizeof(buffer), &length);
  if (!NT_SUCCESS(status)) return status;
  if (info->Type != REG_DWORD || info->DataLength != sizeof(ULONG))
    return STATUS_OBJECT_TYPE_MISMATCH;
  RtlCopyMemory(Value, info->Data, sizeof(ULONG));
  return STATUS_SUCCESS;
}

static NTSTATUS PdQueryString(_In_ HANDLE Key, _In_z_ PCWSTR Name, _Out_writes_(Chars) PWSTR Out,
                              _In_ SIZE_T Chars) {
  UNICODE_STRING name;
  ULONG length = 0;
  PKEY_VALUE_PARTIAL_INFORMATION info;
  NTSTATUS status;

  RtlInitUnicodeString(&name, Name);
  status = ZwQueryValueKey(Key, &name, KeyValuePartialInformation, NULL, 0, &length);
  if (status != STATUS_BUFFER_TOO_SMALL && status != STATUS_BUFFER_OVERFLOW) return status;
  info = (PKEY_VALUE_PARTIAL_INFORMATION)ExAllocatePool2(POOL_FLAG_PAGED, length, PD_TAG);
  if (info == NULL) return STATUS_INSUFFICIENT_RESOURCES;
  status = ZwQueryValueKey(Key, &name, KeyValuePartialInformation, info, length, &length);
  if (NT_SUCCESS(status)) {
    if (info->Type != REG_SZ) {
      status = STATUS_OBJECT_TYPE_MISMATCH;
    } else {
      status = RtlStringCchCopyNW(Out, Chars, (PCWSTR)info->Data, info->DataLength / sizeof(WCHAR));
    }
  }
  ExFreePoolWithTag(info, PD_TAG);
  return status;
}

_Use_decl_annotations_ NTSTATUS PdReadParameters(PCUNICODE_STRING RegistryPath,
                                                 PPD_PARAMETERS Parameters) {
  OBJECT_ATTRIBUTES attributes;
  UNICODE_STRING subkey = RTL_CONSTANT_STRING(L"Parameters");
  HANDLE service = NULL, parameters = NULL;
  WCHAR path[256];
  ULONG defaultFlags = 0x10;
  RTL_QUERY_REGISTRY_TABLE table[3];
  NTSTATUS status;

  PAGED_CODE();
  RtlZeroMemory(Parameters, sizeof(*Parameters));

  /* 1. ZwOpenKey on the RegistryPath, then its Parameters subkey. */
  InitializeObjectAttributes(&attributes, (PUNICODE_STRING)RegistryPath,
                             OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE, NULL, NULL);
  status = ZwOpenKey(&service, KEY_READ, &attributes);
  PD_LOG_IF_FAILED(status, "ZwOpenKey(RegistryPath)");
  if (!NT_SUCCESS(status)) return status;
  InitializeObjectAttributes(&attributes, &subkey, OBJ_CASE_INSENSITIVE | OBJ_KERNEL_HANDLE,
                             service, NULL);
  status = ZwOpenKey(&parameters, KEY_READ, &attributes);
  PD_LOG_IF_FAILED(status, "ZwOpenKey(Parameters)");
  if (NT_SUCCESS(status)) status = PdQueryDword(parameters, L"Port", &Parameters->Port);
  if (NT_SUCCESS(status))
    status = PdQueryString(parameters, L"Endpoint", Parameters->Endpoint,
                           RTL_NUMBER_OF(Parameters->Endpoint));
  PD_LOG_IF_FAILED(status, "ZwQueryValueKey");
  if (parameters != NULL) ZwClose(parameters);
  ZwClose(service);
  if (!NT_SUCCESS(status)) return status;

  /* 2. RtlQueryRegistryValues with an absolute path built by ntstrsafe. */
  status = RtlStringCbPrintfW(path, sizeof(path), L"%wZ\\Parameters", RegistryPath);
  if (!NT_SUCCESS(status)) return status;
  RtlZeroMemory(table, sizeof(table));
  table[0].Flags = RTL_QUERY_REGISTRY_DIRECT | RTL_QUERY_REGISTRY_REQUIRED;
  table[0].Name = L"Greeting";
  table[0].EntryContext = &Parameters->Greeting; /* Buffer NULL: allocated for us */
  table[1].Flags = RTL_QUERY_REGISTRY_DIRECT;
  table[1].Name = L"Flags";
  table[1].EntryContext = &Parameters->Flags;
  table[1].DefaultType = REG_DWORD;
  table[1].DefaultData = &defaultFlags;
  table[1].DefaultLength = sizeof(ULONG);
  status = RtlQueryRegistryValues(RTL_REGISTRY_ABSOLUTE, path, table, NULL, NULL);
  PD_LOG_IF_FAILED(status, "RtlQueryRegistryValues");
  return status;
}
