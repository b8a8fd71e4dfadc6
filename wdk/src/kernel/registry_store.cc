// SPDX-License-Identifier: Apache-2.0
// The kit's registry: the key tree, handles, and the Zw*Key calls
// (softndk_wdk/zw.h). Values are stored as Windows stores them (type and
// bytes); strings are arrays of WCHAR (32 bits in the kit) with the
// terminator, so a driver's sizeof(WCHAR) arithmetic stays right.
#include "kernel/registry_store.h"

#include <algorithm>
#include <cstring>
#include <cwctype>
#include <map>
#include <mutex>
#include <set>

#include "irql/checker.h"
#include "irql/irql.h"

namespace softndk::wdk {
namespace {

struct Key {
  std::wstring path;  // as first written
  std::vector<RegValue> values;
};

struct OpenKey {
  static constexpr uint32_t kMagic = 0x4b657948;  // 'HyeK'
  uint32_t magic = kMagic;
  std::wstring lower;  // the key's path, lower case
};

struct Store {
  std::mutex mutex;
  std::map<std::wstring, Key> keys;  // by lower-case path
  std::set<OpenKey*> handles;
};

Store& S() {
  static Store* s = new Store;  // outlives static destructors (late ZwClose)
  return *s;
}

std::wstring Lower(const std::wstring& s) {
  std::wstring r = s;
  for (auto& c : r) c = static_cast<wchar_t>(std::towlower(c));
  return r;
}

std::wstring FromUnicode(PCUNICODE_STRING u) {
  if (u == nullptr || u->Buffer == nullptr) return std::wstring();
  return std::wstring(u->Buffer, u->Length / sizeof(WCHAR));
}

// Creates the key and its parents (caller holds the mutex).
Key& CreateLocked(const std::wstring& path) {
  std::wstring lower = Lower(path);
  size_t pos = 0;
  while ((pos = path.find(L'\\', pos + 1)) != std::wstring::npos) {
    std::wstring parent = path.substr(0, pos);
    S().keys.emplace(Lower(parent), Key{parent, {}});
  }
  auto it = S().keys.emplace(lower, Key{path, {}}).first;
  return it->second;
}

OpenKey* LookupHandle(HANDLE h) {  // caller holds the mutex
  auto* k = static_cast<OpenKey*>(h);
  if (k == nullptr || S().handles.count(k) == 0) return nullptr;
  return k;
}

// The key an open handle names, or null once ZwDeleteKey removed it.
Key* KeyOf(OpenKey* k) {  // caller holds the mutex
  auto it = S().keys.find(k->lower);
  return it == S().keys.end() ? nullptr : &it->second;
}
constexpr NTSTATUS kKeyDeleted = static_cast<NTSTATUS>(0xC000017CL);  // STATUS_KEY_DELETED

// The full path named by ObjectAttributes (absolute, or under RootDirectory).
NTSTATUS ResolvePath(POBJECT_ATTRIBUTES oa, std::wstring* out) {
  if (oa == nullptr || oa->ObjectName == nullptr) return STATUS_INVALID_PARAMETER;
  std::wstring name = FromUnicode(oa->ObjectName);
  std::wstring full;
  if (oa->RootDirectory != nullptr) {
    OpenKey* root = LookupHandle(oa->RootDirectory);
    if (root == nullptr) return STATUS_INVALID_HANDLE;
    Key* key = KeyOf(root);
    if (key == nullptr) return kKeyDeleted;
    full = key->path + L"\\" + name;
  } else {
    full = name;
  }
  *out = NormalizeKeyPath(full);
  return out->empty() ? STATUS_OBJECT_NAME_INVALID : STATUS_SUCCESS;
}

RegValue* FindValue(Key& key, const std::wstring& name) {
  std::wstring lower = Lower(name);
  for (auto& v : key.values)
    if (Lower(v.name) == lower) return &v;
  return nullptr;
}

// Writes a KEY_VALUE_*_INFORMATION; STATUS_BUFFER_TOO_SMALL when even the
// fixed part does not fit, STATUS_BUFFER_OVERFLOW when only it does.
NTSTATUS FillValueInfo(const RegValue& v, KEY_VALUE_INFORMATION_CLASS cls, PVOID buf, ULONG len,
                       PULONG result) {
  ULONG name_bytes = static_cast<ULONG>(v.name.size() * sizeof(WCHAR));
  ULONG data_bytes = static_cast<ULONG>(v.data.size());
  ULONG fixed = 0, need = 0, data_offset = 0;
  switch (cls) {
    case KeyValueBasicInformation:
      fixed = offsetof(KEY_VALUE_BASIC_INFORMATION, Name);
      need = fixed + name_bytes;
      break;
    case KeyValueFullInformation:
    case KeyValueFullInformationAlign64:
      fixed = offsetof(KEY_VALUE_FULL_INFORMATION, Name);
      data_offset = fixed + name_bytes;
      if (cls == KeyValueFullInformationAlign64) data_offset = (data_offset + 7) & ~7u;
      need = data_offset + data_bytes;
      break;
    case KeyValuePartialInformation:
    case KeyValuePartialInformationAlign64:
      fixed = offsetof(KEY_VALUE_PARTIAL_INFORMATION, Data);
      need = fixed + data_bytes;
      break;
    default:
      return STATUS_INVALID_PARAMETER;
  }
  if (result == nullptr) return STATUS_INVALID_PARAMETER;
  *result = need;
  if (len < fixed) return STATUS_BUFFER_TOO_SMALL;
  if (buf == nullptr) return STATUS_INVALID_PARAMETER;
  auto* out = static_cast<uint8_t*>(buf);
  switch (cls) {
    case KeyValueBasicInformation: {
      auto* b = static_cast<PKEY_VALUE_BASIC_INFORMATION>(buf);
      b->TitleIndex = 0;
      b->Type = v.type;
      b->NameLength = name_bytes;
      if (len < need) return STATUS_BUFFER_OVERFLOW;
      std::memcpy(out + fixed, v.name.data(), name_bytes);
      return STATUS_SUCCESS;
    }
    case KeyValueFullInformation:
    case KeyValueFullInformationAlign64: {
      auto* f = static_cast<PKEY_VALUE_FULL_INFORMATION>(buf);
      f->TitleIndex = 0;
      f->Type = v.type;
      f->DataOffset = data_offset;
      f->DataLength = data_bytes;
      f->NameLength = name_bytes;
      if (len < need) return STATUS_BUFFER_OVERFLOW;
      std::memcpy(out + fixed, v.name.data(), name_bytes);
      if (data_bytes) std::memcpy(out + data_offset, v.data.data(), data_bytes);
      return STATUS_SUCCESS;
    }
    default: {
      auto* p = static_cast<PKEY_VALUE_PARTIAL_INFORMATION>(buf);
      p->TitleIndex = 0;
      p->Type = v.type;
      p->DataLength = data_bytes;
      if (len < need) return STATUS_BUFFER_OVERFLOW;
      if (data_bytes) std::memcpy(out + fixed, v.data.data(), data_bytes);
      return STATUS_SUCCESS;
    }
  }
}

std::vector<std::wstring> SubKeysLocked(const std::wstring& lower) {
  std::vector<std::wstring> out;
  std::wstring prefix = lower + L"\\";
  for (auto it = S().keys.lower_bound(prefix); it != S().keys.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    std::wstring rest = it->second.path.substr(prefix.size());
    if (rest.find(L'\\') == std::wstring::npos) out.push_back(rest);
  }
  return out;
}

NTSTATUS FillKeyInfo(const Key& key, size_t subkeys, KEY_INFORMATION_CLASS cls, PVOID buf,
                     ULONG len, PULONG result) {
  std::wstring last = key.path.substr(key.path.rfind(L'\\') + 1);
  ULONG name_bytes = static_cast<ULONG>(last.size() * sizeof(WCHAR));
  ULONG fixed = 0;
  switch (cls) {
    case KeyBasicInformation:
      fixed = offsetof(KEY_BASIC_INFORMATION, Name);
      break;
    case KeyNodeInformation:
      fixed = offsetof(KEY_NODE_INFORMATION, Name);
      break;
    case KeyFullInformation:
      fixed = offsetof(KEY_FULL_INFORMATION, Class);
      name_bytes = 0;
      break;
    default:
      return STATUS_INVALID_PARAMETER;
  }
  if (result == nullptr) return STATUS_INVALID_PARAMETER;
  *result = fixed + name_bytes;
  if (len < fixed) return STATUS_BUFFER_TOO_SMALL;
  if (buf == nullptr) return STATUS_INVALID_PARAMETER;
  std::memset(buf, 0, fixed);
  auto* out = static_cast<uint8_t*>(buf);
  if (cls == KeyBasicInformation) {
    static_cast<PKEY_BASIC_INFORMATION>(buf)->NameLength = name_bytes;
  } else if (cls == KeyNodeInformation) {
    auto* n = static_cast<PKEY_NODE_INFORMATION>(buf);
    n->NameLength = name_bytes;
    n->ClassOffset = 0xffffffffu;
  } else {
    auto* f = static_cast<PKEY_FULL_INFORMATION>(buf);
    f->SubKeys = static_cast<ULONG>(subkeys);
    f->Values = static_cast<ULONG>(key.values.size());
    for (const auto& v : key.values) {
      f->MaxValueNameLen =
          std::max<ULONG>(f->MaxValueNameLen, static_cast<ULONG>(v.name.size() * sizeof(WCHAR)));
      f->MaxValueDataLen = std::max<ULONG>(f->MaxValueDataLen, static_cast<ULONG>(v.data.size()));
    }
    return STATUS_SUCCESS;
  }
  if (len < fixed + name_bytes) return STATUS_BUFFER_OVERFLOW;
  std::memcpy(out + fixed, last.data(), name_bytes);
  return STATUS_SUCCESS;
}

bool Passive(const char* call, const void* site) {
  return RequireIrqlAtMost(PASSIVE_LEVEL, call, site);
}

}  // namespace

std::wstring NormalizeKeyPath(const std::wstring& path) {
  std::wstring out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == L'\\') ++i;
    size_t j = path.find(L'\\', i);
    if (j == std::wstring::npos) j = path.size();
    if (j > i) out += L"\\" + path.substr(i, j - i);
    i = j;
  }
  std::wstring lower = Lower(out);
  if (lower != L"\\registry" && lower.compare(0, 10, L"\\registry\\") != 0) return std::wstring();
  return out;
}

bool CloseRegistryHandle(HANDLE handle) {
  std::lock_guard<std::mutex> lock(S().mutex);
  OpenKey* k = LookupHandle(handle);
  if (k == nullptr) return false;
  S().handles.erase(k);
  delete k;
  return true;
}

// Used by registry_rtl.cc and registry_load.cc.
NTSTATUS RegistrySetValue(const std::wstring& key_path, const std::wstring& name, ULONG type,
                          const void* data, size_t size, bool create_key) {
  std::lock_guard<std::mutex> lock(S().mutex);
  std::wstring norm = NormalizeKeyPath(key_path);
  if (norm.empty()) return STATUS_OBJECT_NAME_INVALID;
  auto it = S().keys.find(Lower(norm));
  if (it == S().keys.end() && !create_key) return STATUS_OBJECT_NAME_NOT_FOUND;
  Key& key = it == S().keys.end() ? CreateLocked(norm) : it->second;
  RegValue* v = FindValue(key, name);
  if (v == nullptr) {
    key.values.push_back(RegValue{name, type, {}});
    v = &key.values.back();
  }
  v->type = type;
  auto* p = static_cast<const uint8_t*>(data);
  v->data.assign(p, p + size);
  return STATUS_SUCCESS;
}

bool RegistryGetValue(const std::wstring& key_path, const std::wstring& name, RegValue* out) {
  std::lock_guard<std::mutex> lock(S().mutex);
  auto it = S().keys.find(Lower(NormalizeKeyPath(key_path)));
  if (it == S().keys.end()) return false;
  RegValue* v = FindValue(it->second, name);
  if (v == nullptr) return false;
  *out = *v;
  return true;
}

bool RegistryListValues(const std::wstring& key_path, std::vector<RegValue>* out) {
  std::lock_guard<std::mutex> lock(S().mutex);
  auto it = S().keys.find(Lower(NormalizeKeyPath(key_path)));
  if (it == S().keys.end()) return false;
  *out = it->second.values;
  return true;
}

bool RegistryDeleteValue(const std::wstring& key_path, const std::wstring& name) {
  std::lock_guard<std::mutex> lock(S().mutex);
  auto it = S().keys.find(Lower(NormalizeKeyPath(key_path)));
  if (it == S().keys.end()) return false;
  auto& vals = it->second.values;
  std::wstring lower = Lower(name);
  for (auto v = vals.begin(); v != vals.end(); ++v) {
    if (Lower(v->name) == lower) {
      vals.erase(v);
      return true;
    }
  }
  return false;
}

bool RegistryKeyExists(const std::wstring& key_path) {
  std::lock_guard<std::mutex> lock(S().mutex);
  return S().keys.count(Lower(NormalizeKeyPath(key_path))) != 0;
}

void RegistryCreateKey(const std::wstring& key_path) {
  std::lock_guard<std::mutex> lock(S().mutex);
  std::wstring norm = NormalizeKeyPath(key_path);
  if (!norm.empty()) CreateLocked(norm);
}

// The path of an open key handle, or empty.
std::wstring RegistryHandlePath(HANDLE h) {
  std::lock_guard<std::mutex> lock(S().mutex);
  OpenKey* k = LookupHandle(h);
  Key* key = k == nullptr ? nullptr : KeyOf(k);
  return key == nullptr ? std::wstring() : key->path;
}

}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

NTSTATUS ZwCreateKey(PHANDLE KeyHandle, ACCESS_MASK DesiredAccess,
                     POBJECT_ATTRIBUTES ObjectAttributes, ULONG TitleIndex, PUNICODE_STRING Class,
                     ULONG CreateOptions, PULONG Disposition) {
  (void)DesiredAccess;
  (void)TitleIndex;
  (void)Class;
  (void)CreateOptions;
  Passive("ZwCreateKey", SOFTNDK_WDK_SITE());
  if (KeyHandle == nullptr) return STATUS_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(S().mutex);
  std::wstring path;
  NTSTATUS st = ResolvePath(ObjectAttributes, &path);
  if (!NT_SUCCESS(st)) return st;
  std::wstring lower = Lower(path);
  bool existed = S().keys.count(lower) != 0;
  CreateLocked(path);
  auto* h = new OpenKey;
  h->lower = lower;
  S().handles.insert(h);
  *KeyHandle = h;
  if (Disposition) *Disposition = existed ? REG_OPENED_EXISTING_KEY : REG_CREATED_NEW_KEY;
  return STATUS_SUCCESS;
}

NTSTATUS ZwOpenKeyEx(PHANDLE KeyHandle, ACCESS_MASK DesiredAccess,
                     POBJECT_ATTRIBUTES ObjectAttributes, ULONG OpenOptions) {
  (void)DesiredAccess;
  (void)OpenOptions;
  Passive("ZwOpenKey", SOFTNDK_WDK_SITE());
  if (KeyHandle == nullptr) return STATUS_INVALID_PARAMETER;
  *KeyHandle = nullptr;
  std::lock_guard<std::mutex> lock(S().mutex);
  std::wstring path;
  NTSTATUS st = ResolvePath(ObjectAttributes, &path);
  if (!NT_SUCCESS(st)) return st;
  std::wstring lower = Lower(path);
  if (S().keys.count(lower) == 0) return STATUS_OBJECT_NAME_NOT_FOUND;
  auto* h = new OpenKey;
  h->lower = lower;
  S().handles.insert(h);
  *KeyHandle = h;
  return STATUS_SUCCESS;
}

NTSTATUS ZwOpenKey(PHANDLE KeyHandle, ACCESS_MASK DesiredAccess,
                   POBJECT_ATTRIBUTES ObjectAttributes) {
  return ZwOpenKeyEx(KeyHandle, DesiredAccess, ObjectAttributes, 0);
}

NTSTATUS ZwQueryValueKey(HANDLE KeyHandle, PUNICODE_STRING ValueName,
                         KEY_VALUE_INFORMATION_CLASS KeyValueInformationClass,
                         PVOID KeyValueInformation, ULONG Length, PULONG ResultLength) {
  Passive("ZwQueryValueKey", SOFTNDK_WDK_SITE());
  std::lock_guard<std::mutex> lock(S().mutex);
  OpenKey* k = LookupHandle(KeyHandle);
  if (k == nullptr) return STATUS_INVALID_HANDLE;
  Key* key = KeyOf(k);
  if (key == nullptr) return kKeyDeleted;
  RegValue* v = FindValue(*key, FromUnicode(ValueName));
  if (v == nullptr) return STATUS_OBJECT_NAME_NOT_FOUND;
  return FillValueInfo(*v, KeyValueInformationClass, KeyValueInformation, Length, ResultLength);
}

NTSTATUS ZwEnumerateValueKey(HANDLE KeyHandle, ULONG Index,
                             KEY_VALUE_INFORMATION_CLASS KeyValueInformationClass,
                             PVOID KeyValueInformation, ULONG Length, PULONG ResultLength) {
  Passive("ZwEnumerateValueKey", SOFTNDK_WDK_SITE());
  std::lock_guard<std::mutex> lock(S().mutex);
  OpenKey* k = LookupHandle(KeyHandle);
  if (k == nullptr) return STATUS_INVALID_HANDLE;
  Key* key = KeyOf(k);
  if (key == nullptr) return kKeyDeleted;
  if (Index >= key->values.size()) return STATUS_NO_MORE_ENTRIES;
  return FillValueInfo(key->values[Index], KeyValueInformationClass, KeyValueInformation, Length,
                       ResultLength);
}

NTSTATUS ZwSetValueKey(HANDLE KeyHandle, PUNICODE_STRING ValueName, ULONG TitleIndex, ULONG Type,
                       PVOID Data, ULONG DataSize) {
  (void)TitleIndex;
  Passive("ZwSetValueKey", SOFTNDK_WDK_SITE());
  if (Data == nullptr && DataSize != 0) return STATUS_INVALID_PARAMETER;
  std::wstring path = RegistryHandlePath(KeyHandle);
  if (path.empty()) return STATUS_INVALID_HANDLE;
  return RegistrySetValue(path, FromUnicode(ValueName), Type, Data, DataSize, false);
}

NTSTATUS ZwDeleteValueKey(HANDLE KeyHandle, PUNICODE_STRING ValueName) {
  Passive("ZwDeleteValueKey", SOFTNDK_WDK_SITE());
  std::wstring path = RegistryHandlePath(KeyHandle);
  if (path.empty()) return STATUS_INVALID_HANDLE;
  return RegistryDeleteValue(path, FromUnicode(ValueName)) ? STATUS_SUCCESS
                                                           : STATUS_OBJECT_NAME_NOT_FOUND;
}

NTSTATUS ZwQueryKey(HANDLE KeyHandle, KEY_INFORMATION_CLASS KeyInformationClass,
                    PVOID KeyInformation, ULONG Length, PULONG ResultLength) {
  Passive("ZwQueryKey", SOFTNDK_WDK_SITE());
  std::lock_guard<std::mutex> lock(S().mutex);
  OpenKey* k = LookupHandle(KeyHandle);
  if (k == nullptr) return STATUS_INVALID_HANDLE;
  Key* key = KeyOf(k);
  if (key == nullptr) return kKeyDeleted;
  return FillKeyInfo(*key, SubKeysLocked(k->lower).size(), KeyInformationClass, KeyInformation,
                     Length, ResultLength);
}

NTSTATUS ZwEnumerateKey(HANDLE KeyHandle, ULONG Index, KEY_INFORMATION_CLASS KeyInformationClass,
                        PVOID KeyInformation, ULONG Length, PULONG ResultLength) {
  Passive("ZwEnumerateKey", SOFTNDK_WDK_SITE());
  std::lock_guard<std::mutex> lock(S().mutex);
  OpenKey* k = LookupHandle(KeyHandle);
  if (k == nullptr) return STATUS_INVALID_HANDLE;
  auto subs = SubKeysLocked(k->lower);
  if (Index >= subs.size()) return STATUS_NO_MORE_ENTRIES;
  auto sub = S().keys.find(k->lower + L"\\" + Lower(subs[Index]));
  if (sub == S().keys.end()) return STATUS_NO_MORE_ENTRIES;
  return FillKeyInfo(sub->second, 0, KeyInformationClass, KeyInformation, Length, ResultLength);
}

NTSTATUS ZwDeleteKey(HANDLE KeyHandle) {
  Passive("ZwDeleteKey", SOFTNDK_WDK_SITE());
  std::lock_guard<std::mutex> lock(S().mutex);
  OpenKey* k = LookupHandle(KeyHandle);
  if (k == nullptr) return STATUS_INVALID_HANDLE;
  if (KeyOf(k) == nullptr) return kKeyDeleted;
  // Windows refuses to delete a key with subkeys (STATUS_CANNOT_DELETE).
  if (!SubKeysLocked(k->lower).empty()) return static_cast<NTSTATUS>(0xC0000121L);
  S().keys.erase(k->lower);
  return STATUS_SUCCESS;
}

NTSTATUS ZwFlushKey(HANDLE KeyHandle) {
  std::lock_guard<std::mutex> lock(S().mutex);
  return LookupHandle(KeyHandle) ? STATUS_SUCCESS : STATUS_INVALID_HANDLE;
}

VOID SoftNdkWdkRegistryReset(void) {
  std::lock_guard<std::mutex> lock(S().mutex);
  S().keys.clear();
}

}  // extern "C"
