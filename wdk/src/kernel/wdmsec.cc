// SPDX-License-Identifier: Apache-2.0
// wdmsec.h: IoCreateDeviceSecure checks its SDDL string against the subset
// the WDK documents for device objects, then creates the device as
// IoCreateDevice does; IoValidateDeviceIoControlAccess.
#include <wdmsec.h>

#include <cwctype>
#include <string>

#include "irql/irql.h"

namespace {

bool StartsWith(const std::wstring& s, size_t at, const wchar_t* p) {
  return s.compare(at, std::wcslen(p), p) == 0;
}

// Access: 0xHEX, or a run of two-letter rights.
bool ValidAccess(const std::wstring& a) {
  if (a.size() > 2 && a[0] == L'0' && (a[1] == L'x' || a[1] == L'X')) {
    for (size_t i = 2; i < a.size(); ++i)
      if (!std::iswxdigit(a[i])) return false;
    return true;
  }
  if (a.empty() || a.size() % 2 != 0) return false;
  static const wchar_t* kRights[] = {L"GA", L"GR", L"GW", L"GX", L"RC", L"SD", L"WD", L"WO"};
  for (size_t i = 0; i < a.size(); i += 2) {
    bool ok = false;
    for (const wchar_t* r : kRights) ok = ok || StartsWith(a, i, r);
    if (!ok) return false;
  }
  return true;
}

bool ValidSid(const std::wstring& s) {
  static const wchar_t* kAliases[] = {L"SY", L"LS", L"NS", L"BA", L"BU", L"BG", L"AU", L"AN",
                                      L"IU", L"SU", L"WD", L"RC", L"UD", L"AC", L"NU", L"PU"};
  for (const wchar_t* a : kAliases)
    if (s == a) return true;
  if (s.size() > 4 && StartsWith(s, 0, L"S-1-")) {
    for (size_t i = 4; i < s.size(); ++i)
      if (!(std::iswdigit(s[i]) || s[i] == L'-')) return false;
    return true;
  }
  return false;
}

// "D:P" then one or more "(A;;Access;;;SID)" (none for kernel-only access).
bool ValidDeviceSddl(PCUNICODE_STRING sddl) {
  if (sddl == nullptr || sddl->Buffer == nullptr || sddl->Length % sizeof(WCHAR) != 0) return false;
  std::wstring s(sddl->Buffer, sddl->Length / sizeof(WCHAR));
  if (!StartsWith(s, 0, L"D:P")) return false;
  size_t i = 3;
  while (i < s.size()) {
    if (!StartsWith(s, i, L"(A;;")) return false;
    size_t access_end = s.find(L";;;", i + 4);
    if (access_end == std::wstring::npos) return false;
    size_t close = s.find(L')', access_end + 3);
    if (close == std::wstring::npos) return false;
    if (!ValidAccess(s.substr(i + 4, access_end - i - 4))) return false;
    if (!ValidSid(s.substr(access_end + 3, close - access_end - 3))) return false;
    i = close + 1;
  }
  return true;
}

}  // namespace

extern "C" {

NTSTATUS IoCreateDeviceSecure(PDRIVER_OBJECT DriverObject, ULONG DeviceExtensionSize,
                              PUNICODE_STRING DeviceName, DEVICE_TYPE DeviceType,
                              ULONG DeviceCharacteristics, BOOLEAN Exclusive,
                              PCUNICODE_STRING DefaultSDDLString, LPCGUID DeviceClassGuid,
                              PDEVICE_OBJECT* DeviceObject) {
  (void)DeviceClassGuid;  // class-wide registry overrides do not exist here
  softndk::wdk::RequireIrqlAtMost(PASSIVE_LEVEL, "IoCreateDeviceSecure",
                                  __builtin_return_address(0));
  if (!ValidDeviceSddl(DefaultSDDLString)) {
    if (DeviceObject != nullptr) *DeviceObject = nullptr;
    return STATUS_INVALID_PARAMETER;
  }
  return IoCreateDevice(DriverObject, DeviceExtensionSize, DeviceName, DeviceType,
                        DeviceCharacteristics, Exclusive, DeviceObject);
}

NTSTATUS IoValidateDeviceIoControlAccess(PIRP Irp, ULONG RequiredAccess) {
  if (Irp == nullptr || (RequiredAccess & ~(FILE_READ_ACCESS | FILE_WRITE_ACCESS)) != 0)
    return STATUS_INVALID_PARAMETER;
  return STATUS_SUCCESS;
}

}  // extern "C"
