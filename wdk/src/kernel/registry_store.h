// SPDX-License-Identifier: Apache-2.0
// The kit's registry (softndk_wdk/zw.h): an in-memory tree of keys and
// values, case-insensitive names, and the handles ZwOpenKey gives out.
#pragma once

#include <wdm.h>

#include <cstdint>
#include <string>
#include <vector>

namespace softndk::wdk {

struct RegValue {
  std::wstring name;  // as written (case preserved)
  ULONG type = REG_NONE;
  std::vector<uint8_t> data;
};

// True if `handle` was a registry key handle (now closed): ZwClose calls it
// before looking at its own handle kinds.
bool CloseRegistryHandle(HANDLE handle);

// "\Registry\Machine\..." with one backslash between components, from an
// absolute path or one relative to an open key; empty when malformed.
std::wstring NormalizeKeyPath(const std::wstring& path);

// The store, for the Rtl*Registry* calls and the host's loader. Paths are
// absolute ("\Registry\..."), names compare case-insensitively.
NTSTATUS RegistrySetValue(const std::wstring& key_path, const std::wstring& name, ULONG type,
                          const void* data, size_t size, bool create_key);
bool RegistryGetValue(const std::wstring& key_path, const std::wstring& name, RegValue* out);
bool RegistryListValues(const std::wstring& key_path, std::vector<RegValue>* out);
bool RegistryDeleteValue(const std::wstring& key_path, const std::wstring& name);
bool RegistryKeyExists(const std::wstring& key_path);
void RegistryCreateKey(const std::wstring& key_path);
std::wstring RegistryHandlePath(HANDLE h);

}  // namespace softndk::wdk
