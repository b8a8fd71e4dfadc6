// SPDX-License-Identifier: Apache-2.0
// RtlQueryRegistryValues and the other Rtl*Registry* calls, over the kit's
// registry (registry_store.cc), as the WDK documents them: RelativeTo
// bases, the query table's flags (SUBKEY, TOPKEY, REQUIRED, NOVALUE,
// NOEXPAND, DIRECT, DELETE, TYPECHECK), defaults, and DIRECT's storage rules
// (UNICODE_STRING for strings, a ULONG for small data, a size-prefixed
// buffer for larger data).
#include <algorithm>
#include <cstring>
#include <cwchar>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/registry_store.h"

namespace softndk::wdk {
namespace {

// RtlFreeUnicodeString frees with the kit's string tag (rtl.cc).
constexpr ULONG kStringTag = 0x67727453;  // "Strg"

bool BasePath(ULONG relative_to, PCWSTR path, std::wstring* out) {
  ULONG base = relative_to & ~static_cast<ULONG>(RTL_REGISTRY_OPTIONAL);
  if (base & RTL_REGISTRY_HANDLE) {
    *out = RegistryHandlePath(const_cast<PWSTR>(path));
    return !out->empty();
  }
  std::wstring p = path ? path : L"";
  switch (base) {
    case RTL_REGISTRY_ABSOLUTE:
      *out = p;
      break;
    case RTL_REGISTRY_SERVICES:
      *out = L"\\Registry\\Machine\\System\\CurrentControlSet\\Services\\" + p;
      break;
    case RTL_REGISTRY_CONTROL:
      *out = L"\\Registry\\Machine\\System\\CurrentControlSet\\Control\\" + p;
      break;
    case RTL_REGISTRY_WINDOWS_NT:
      *out = L"\\Registry\\Machine\\Software\\Microsoft\\Windows NT\\CurrentVersion\\" + p;
      break;
    case RTL_REGISTRY_DEVICEMAP:
      *out = L"\\Registry\\Machine\\Hardware\\DeviceMap\\" + p;
      break;
    case RTL_REGISTRY_USER:
      *out = L"\\Registry\\User\\.Default\\" + p;
      break;
    default:
      return false;
  }
  *out = NormalizeKeyPath(*out);
  return !out->empty();
}

// The number of bytes of a string value's data, terminator included.
ULONG StringBytes(const void* data) {
  return static_cast<ULONG>((std::wcslen(static_cast<const WCHAR*>(data)) + 1) * sizeof(WCHAR));
}

bool IsString(ULONG type) {
  return type == REG_SZ || type == REG_EXPAND_SZ || type == REG_MULTI_SZ;
}

NTSTATUS StoreDirect(const RTL_QUERY_REGISTRY_TABLE& e, ULONG type, const void* data, ULONG len) {
  if (e.EntryContext == nullptr) return STATUS_INVALID_PARAMETER;
  if (IsString(type)) {
    auto* u = static_cast<PUNICODE_STRING>(e.EntryContext);
    // The string without its terminator (a multi-string keeps its inner NULs).
    ULONG bytes = len;
    if (type != REG_MULTI_SZ) {
      const auto* w = static_cast<const WCHAR*>(data);
      ULONG n = 0;
      while (n * sizeof(WCHAR) < len && w[n] != 0) ++n;
      bytes = n * sizeof(WCHAR);
    }
    if (u->Buffer == nullptr) {
      auto* b =
          static_cast<PWCH>(ExAllocatePool2(POOL_FLAG_PAGED, bytes + sizeof(WCHAR), kStringTag));
      if (b == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
      u->Buffer = b;
      u->MaximumLength = static_cast<USHORT>(bytes + sizeof(WCHAR));
    }
    if (bytes + sizeof(WCHAR) > u->MaximumLength) return STATUS_BUFFER_TOO_SMALL;
    std::memcpy(u->Buffer, data, bytes);
    u->Buffer[bytes / sizeof(WCHAR)] = 0;
    u->Length = static_cast<USHORT>(bytes);
    return STATUS_SUCCESS;
  }
  if (len <= sizeof(ULONG)) {
    std::memcpy(e.EntryContext, data, len);
    return STATUS_SUCCESS;
  }
  // Larger data: the buffer starts with a LONG whose magnitude is its size;
  // negative = data only, positive = length, type, then the data.
  LONG head;
  std::memcpy(&head, e.EntryContext, sizeof head);
  ULONG size = static_cast<ULONG>(head < 0 ? -head : head);
  auto* out = static_cast<uint8_t*>(e.EntryContext);
  if (head < 0) {
    if (len > size) return STATUS_BUFFER_TOO_SMALL;
    std::memcpy(out, data, len);
  } else {
    if (len + 2 * sizeof(ULONG) > size) return STATUS_BUFFER_TOO_SMALL;
    ULONG words[2] = {len, type};
    std::memcpy(out, words, sizeof words);
    std::memcpy(out + sizeof words, data, len);
  }
  return STATUS_SUCCESS;
}

NTSTATUS Deliver(const RTL_QUERY_REGISTRY_TABLE& e, PWSTR name, ULONG type, const void* data,
                 ULONG len, PVOID context) {
  if ((e.Flags & RTL_QUERY_REGISTRY_TYPECHECK) && (e.Flags & RTL_QUERY_REGISTRY_DIRECT)) {
    ULONG want =
        (e.DefaultType & RTL_QUERY_REGISTRY_TYPECHECK_MASK) >> RTL_QUERY_REGISTRY_TYPECHECK_SHIFT;
    if (type != want) return STATUS_OBJECT_TYPE_MISMATCH;
  }
  if (e.Flags & RTL_QUERY_REGISTRY_DIRECT) return StoreDirect(e, type, data, len);
  if (e.QueryRoutine == nullptr) return STATUS_INVALID_PARAMETER;
  if (type == REG_MULTI_SZ && !(e.Flags & RTL_QUERY_REGISTRY_NOEXPAND)) {
    // One call per string.
    const auto* w = static_cast<const WCHAR*>(data);
    size_t n = len / sizeof(WCHAR), i = 0;
    while (i < n && w[i] != 0) {
      size_t j = i;
      while (j < n && w[j] != 0) ++j;
      NTSTATUS st =
          e.QueryRoutine(name, REG_SZ, const_cast<WCHAR*>(w + i),
                         static_cast<ULONG>((j - i + 1) * sizeof(WCHAR)), context, e.EntryContext);
      if (!NT_SUCCESS(st)) return st;
      i = j + 1;
    }
    return STATUS_SUCCESS;
  }
  return e.QueryRoutine(name, type, const_cast<void*>(data), len, context, e.EntryContext);
}

}  // namespace
}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

NTSTATUS RtlQueryRegistryValuesEx(ULONG RelativeTo, PCWSTR Path,
                                  PRTL_QUERY_REGISTRY_TABLE QueryTable, PVOID Context,
                                  PVOID Environment) {
  (void)Environment;
  RequireIrqlAtMost(PASSIVE_LEVEL, "RtlQueryRegistryValues", SOFTNDK_WDK_SITE());
  if (QueryTable == nullptr) return STATUS_INVALID_PARAMETER;
  std::wstring base;
  if (!BasePath(RelativeTo, Path, &base)) return STATUS_INVALID_PARAMETER;
  if (!RegistryKeyExists(base)) return STATUS_OBJECT_NAME_NOT_FOUND;
  std::wstring cur = base;
  for (PRTL_QUERY_REGISTRY_TABLE e = QueryTable; e->QueryRoutine != nullptr || e->Name != nullptr;
       ++e) {
    if (e->Flags & RTL_QUERY_REGISTRY_TOPKEY) cur = base;
    if (e->Flags & RTL_QUERY_REGISTRY_SUBKEY) {
      if (e->Name == nullptr) return STATUS_INVALID_PARAMETER;
      cur = NormalizeKeyPath(base + L"\\" + e->Name);
      if (!RegistryKeyExists(cur)) {
        if (e->Flags & RTL_QUERY_REGISTRY_REQUIRED) return STATUS_OBJECT_NAME_NOT_FOUND;
      }
      if (e->QueryRoutine == nullptr) continue;
    }
    if (e->Flags & (RTL_QUERY_REGISTRY_SUBKEY | RTL_QUERY_REGISTRY_TOPKEY)) {
      if (e->QueryRoutine == nullptr) continue;
    }
    bool name_is_key = (e->Flags & RTL_QUERY_REGISTRY_SUBKEY) != 0;
    if (e->Name == nullptr || name_is_key) {
      // Every value of the current key (or one NOVALUE call).
      if (e->Flags & RTL_QUERY_REGISTRY_NOVALUE) {
        NTSTATUS st = e->QueryRoutine(nullptr, REG_NONE, nullptr, 0, Context, e->EntryContext);
        if (!NT_SUCCESS(st)) return st;
        continue;
      }
      std::vector<RegValue> values;
      RegistryListValues(cur, &values);
      for (auto& v : values) {
        std::wstring n = v.name;
        NTSTATUS st = Deliver(*e, n.data(), v.type, v.data.data(),
                              static_cast<ULONG>(v.data.size()), Context);
        if (!NT_SUCCESS(st)) return st;
      }
      continue;
    }
    RegValue v;
    if (RegistryGetValue(cur, e->Name, &v)) {
      NTSTATUS st =
          Deliver(*e, e->Name, v.type, v.data.data(), static_cast<ULONG>(v.data.size()), Context);
      if (!NT_SUCCESS(st)) return st;
      if (e->Flags & RTL_QUERY_REGISTRY_DELETE) RegistryDeleteValue(cur, e->Name);
    } else if (e->Flags & RTL_QUERY_REGISTRY_REQUIRED) {
      return STATUS_OBJECT_NAME_NOT_FOUND;
    } else if ((e->DefaultType & ~RTL_QUERY_REGISTRY_TYPECHECK_MASK) != REG_NONE) {
      ULONG type = e->DefaultType & ~RTL_QUERY_REGISTRY_TYPECHECK_MASK;
      ULONG len = e->DefaultLength;
      if (len == 0 && IsString(type) && e->DefaultData != nullptr)
        len = StringBytes(e->DefaultData);
      // A type check compares against the stored value's type only.
      RTL_QUERY_REGISTRY_TABLE copy = *e;
      copy.Flags &= ~static_cast<ULONG>(RTL_QUERY_REGISTRY_TYPECHECK);
      NTSTATUS st = Deliver(copy, e->Name, type, e->DefaultData, len, Context);
      if (!NT_SUCCESS(st)) return st;
    }
  }
  return STATUS_SUCCESS;
}

NTSTATUS RtlQueryRegistryValues(ULONG RelativeTo, PCWSTR Path, PRTL_QUERY_REGISTRY_TABLE QueryTable,
                                PVOID Context, PVOID Environment) {
  return RtlQueryRegistryValuesEx(RelativeTo, Path, QueryTable, Context, Environment);
}

NTSTATUS RtlWriteRegistryValue(ULONG RelativeTo, PCWSTR Path, PCWSTR ValueName, ULONG ValueType,
                               PVOID ValueData, ULONG ValueLength) {
  RequireIrqlAtMost(PASSIVE_LEVEL, "RtlWriteRegistryValue", SOFTNDK_WDK_SITE());
  std::wstring base;
  if (!BasePath(RelativeTo, Path, &base) || ValueName == nullptr) return STATUS_INVALID_PARAMETER;
  return RegistrySetValue(base, ValueName, ValueType, ValueData, ValueLength, false);
}

NTSTATUS RtlDeleteRegistryValue(ULONG RelativeTo, PCWSTR Path, PCWSTR ValueName) {
  RequireIrqlAtMost(PASSIVE_LEVEL, "RtlDeleteRegistryValue", SOFTNDK_WDK_SITE());
  std::wstring base;
  if (!BasePath(RelativeTo, Path, &base) || ValueName == nullptr) return STATUS_INVALID_PARAMETER;
  return RegistryDeleteValue(base, ValueName) ? STATUS_SUCCESS : STATUS_OBJECT_NAME_NOT_FOUND;
}

NTSTATUS RtlCheckRegistryKey(ULONG RelativeTo, PWSTR Path) {
  std::wstring base;
  if (!BasePath(RelativeTo, Path, &base)) return STATUS_INVALID_PARAMETER;
  return RegistryKeyExists(base) ? STATUS_SUCCESS : STATUS_OBJECT_NAME_NOT_FOUND;
}

NTSTATUS RtlCreateRegistryKey(ULONG RelativeTo, PWSTR Path) {
  RequireIrqlAtMost(PASSIVE_LEVEL, "RtlCreateRegistryKey", SOFTNDK_WDK_SITE());
  std::wstring base;
  if ((RelativeTo & RTL_REGISTRY_HANDLE) || !BasePath(RelativeTo, Path, &base))
    return STATUS_INVALID_PARAMETER;
  RegistryCreateKey(base);
  return STATUS_SUCCESS;
}

}  // extern "C"
