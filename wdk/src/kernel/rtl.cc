// SPDX-License-Identifier: Apache-2.0
// Rtl strings and memory, debug output, assertions (softndk_wdk/rtl.h).
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <cwctype>

#include "irql/checker.h"
#include "kernel/pool.h"

using namespace softndk::wdk;

namespace {
constexpr ULONG kStringTag = 0x67727453;  // 'Strg' as it reads in memory: "Strg"
constexpr USHORT kMaxBytes = 0xfffe;

USHORT WideBytes(PCWSTR s) {
  size_t n = std::wcslen(s) * sizeof(WCHAR);
  return static_cast<USHORT>(n > kMaxBytes - sizeof(WCHAR) ? kMaxBytes - sizeof(WCHAR) : n);
}
}  // namespace

extern "C" {

SIZE_T RtlCompareMemory(const VOID* Source1, const VOID* Source2, SIZE_T Length) {
  auto* a = static_cast<const unsigned char*>(Source1);
  auto* b = static_cast<const unsigned char*>(Source2);
  SIZE_T i = 0;
  while (i < Length && a[i] == b[i]) i++;
  return i;
}

VOID RtlInitUnicodeString(PUNICODE_STRING DestinationString, PCWSTR SourceString) {
  if (SourceString == nullptr) {
    DestinationString->Length = DestinationString->MaximumLength = 0;
    DestinationString->Buffer = nullptr;
    return;
  }
  DestinationString->Length = WideBytes(SourceString);
  DestinationString->MaximumLength = static_cast<USHORT>(DestinationString->Length + sizeof(WCHAR));
  DestinationString->Buffer = const_cast<PWCH>(SourceString);
}

NTSTATUS RtlInitUnicodeStringEx(PUNICODE_STRING DestinationString, PCWSTR SourceString) {
  if (SourceString != nullptr &&
      std::wcslen(SourceString) * sizeof(WCHAR) > kMaxBytes - sizeof(WCHAR)) {
    return STATUS_NAME_TOO_LONG;
  }
  RtlInitUnicodeString(DestinationString, SourceString);
  return STATUS_SUCCESS;
}

VOID RtlInitAnsiString(PANSI_STRING DestinationString, PCSZ SourceString) {
  RtlInitString(DestinationString, SourceString);
}

VOID RtlInitString(PSTRING DestinationString, PCSZ SourceString) {
  if (SourceString == nullptr) {
    DestinationString->Length = DestinationString->MaximumLength = 0;
    DestinationString->Buffer = nullptr;
    return;
  }
  size_t n = std::strlen(SourceString);
  if (n > kMaxBytes - 1) n = kMaxBytes - 1;
  DestinationString->Length = static_cast<USHORT>(n);
  DestinationString->MaximumLength = static_cast<USHORT>(n + 1);
  DestinationString->Buffer = const_cast<PCHAR>(SourceString);
}

VOID RtlCopyUnicodeString(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString) {
  if (SourceString == nullptr) {
    DestinationString->Length = 0;
    return;
  }
  USHORT n = SourceString->Length < DestinationString->MaximumLength
                 ? SourceString->Length
                 : DestinationString->MaximumLength;
  std::memmove(DestinationString->Buffer, SourceString->Buffer, n);
  DestinationString->Length = n;
  if (n + sizeof(WCHAR) <= DestinationString->MaximumLength) {
    DestinationString->Buffer[n / sizeof(WCHAR)] = L'\0';
  }
}

NTSTATUS RtlAppendUnicodeStringToString(PUNICODE_STRING Destination, PCUNICODE_STRING Source) {
  if (Source->Length == 0) return STATUS_SUCCESS;
  if (Destination->Length + Source->Length > Destination->MaximumLength) {
    return STATUS_BUFFER_TOO_SMALL;
  }
  std::memmove(reinterpret_cast<char*>(Destination->Buffer) + Destination->Length, Source->Buffer,
               Source->Length);
  Destination->Length = static_cast<USHORT>(Destination->Length + Source->Length);
  if (Destination->Length + sizeof(WCHAR) <= Destination->MaximumLength) {
    Destination->Buffer[Destination->Length / sizeof(WCHAR)] = L'\0';
  }
  return STATUS_SUCCESS;
}

NTSTATUS RtlAppendUnicodeToString(PUNICODE_STRING Destination, PCWSTR Source) {
  if (Source == nullptr) return STATUS_SUCCESS;
  UNICODE_STRING s;
  RtlInitUnicodeString(&s, Source);
  return RtlAppendUnicodeStringToString(Destination, &s);
}

LONG RtlCompareUnicodeString(PCUNICODE_STRING String1, PCUNICODE_STRING String2,
                             BOOLEAN CaseInSensitive) {
  size_t n1 = String1->Length / sizeof(WCHAR), n2 = String2->Length / sizeof(WCHAR);
  for (size_t i = 0; i < n1 && i < n2; i++) {
    wint_t a = static_cast<wint_t>(String1->Buffer[i]), b = static_cast<wint_t>(String2->Buffer[i]);
    if (CaseInSensitive) {
      a = std::towupper(a);
      b = std::towupper(b);
    }
    if (a != b) return a < b ? -1 : 1;
  }
  return n1 == n2 ? 0 : (n1 < n2 ? -1 : 1);
}

BOOLEAN RtlEqualUnicodeString(PCUNICODE_STRING String1, PCUNICODE_STRING String2,
                              BOOLEAN CaseInSensitive) {
  return String1->Length == String2->Length &&
                 RtlCompareUnicodeString(String1, String2, CaseInSensitive) == 0
             ? TRUE
             : FALSE;
}

NTSTATUS RtlUnicodeStringToAnsiString(PANSI_STRING DestinationString, PCUNICODE_STRING SourceString,
                                      BOOLEAN AllocateDestinationString) {
  size_t n = SourceString->Length / sizeof(WCHAR);
  if (AllocateDestinationString) {
    DestinationString->Buffer = static_cast<PCHAR>(AllocatePool(
        n + 1, kStringTag, true, false, "RtlUnicodeStringToAnsiString", SOFTNDK_WDK_SITE()));
    if (DestinationString->Buffer == nullptr) return STATUS_NO_MEMORY;
    DestinationString->MaximumLength = static_cast<USHORT>(n + 1);
  } else if (n + 1 > DestinationString->MaximumLength) {
    return STATUS_BUFFER_OVERFLOW;
  }
  // Characters outside ASCII become '?', as with a code page that lacks them.
  for (size_t i = 0; i < n; i++) {
    WCHAR c = SourceString->Buffer[i];
    DestinationString->Buffer[i] = (c >= 0 && c < 0x80) ? static_cast<char>(c) : '?';
  }
  DestinationString->Buffer[n] = '\0';
  DestinationString->Length = static_cast<USHORT>(n);
  return STATUS_SUCCESS;
}

NTSTATUS RtlAnsiStringToUnicodeString(PUNICODE_STRING DestinationString, PCANSI_STRING SourceString,
                                      BOOLEAN AllocateDestinationString) {
  size_t n = SourceString->Length;
  size_t bytes = (n + 1) * sizeof(WCHAR);
  if (bytes > kMaxBytes) return STATUS_INVALID_PARAMETER_2;
  if (AllocateDestinationString) {
    DestinationString->Buffer = static_cast<PWCH>(AllocatePool(
        bytes, kStringTag, true, false, "RtlAnsiStringToUnicodeString", SOFTNDK_WDK_SITE()));
    if (DestinationString->Buffer == nullptr) return STATUS_NO_MEMORY;
    DestinationString->MaximumLength = static_cast<USHORT>(bytes);
  } else if (bytes > DestinationString->MaximumLength) {
    return STATUS_BUFFER_OVERFLOW;
  }
  for (size_t i = 0; i < n; i++) {
    DestinationString->Buffer[i] =
        static_cast<WCHAR>(static_cast<unsigned char>(SourceString->Buffer[i]));
  }
  DestinationString->Buffer[n] = L'\0';
  DestinationString->Length = static_cast<USHORT>(n * sizeof(WCHAR));
  return STATUS_SUCCESS;
}

VOID RtlFreeUnicodeString(PUNICODE_STRING UnicodeString) {
  if (UnicodeString->Buffer != nullptr) {
    FreePool(UnicodeString->Buffer, kStringTag, true, "RtlFreeUnicodeString", SOFTNDK_WDK_SITE());
  }
  UnicodeString->Buffer = nullptr;
  UnicodeString->Length = UnicodeString->MaximumLength = 0;
}

VOID RtlFreeAnsiString(PANSI_STRING AnsiString) {
  if (AnsiString->Buffer != nullptr) {
    FreePool(AnsiString->Buffer, kStringTag, true, "RtlFreeAnsiString", SOFTNDK_WDK_SITE());
  }
  AnsiString->Buffer = nullptr;
  AnsiString->Length = AnsiString->MaximumLength = 0;
}

NTSTATUS RtlIntegerToUnicodeString(ULONG Value, ULONG Base, PUNICODE_STRING String) {
  if (Base == 0) Base = 10;
  if (Base != 2 && Base != 8 && Base != 10 && Base != 16) return STATUS_INVALID_PARAMETER;
  WCHAR digits[33];
  int n = 0;
  do {
    ULONG d = Value % Base;
    digits[n++] = static_cast<WCHAR>(d < 10 ? L'0' + d : L'A' + d - 10);
    Value /= Base;
  } while (Value != 0);
  size_t bytes = static_cast<size_t>(n) * sizeof(WCHAR);
  if (bytes > String->MaximumLength) return STATUS_BUFFER_OVERFLOW;
  for (int i = 0; i < n; i++) String->Buffer[i] = digits[n - 1 - i];
  String->Length = static_cast<USHORT>(bytes);
  if (bytes + sizeof(WCHAR) <= String->MaximumLength) String->Buffer[n] = L'\0';
  return STATUS_SUCCESS;
}

static NTSTATUS ParseInteger(const char* s, size_t len, ULONG base, PULONG value) {
  size_t i = 0;
  while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
  bool negative = false;
  if (i < len && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (base == 0) {
    base = 10;
    if (i + 1 < len && s[i] == '0') {
      char p = s[i + 1];
      if (p == 'x') base = 16;
      if (p == 'o') base = 8;
      if (p == 'b') base = 2;
      if (base != 10) i += 2;
    }
  } else if (base != 2 && base != 8 && base != 10 && base != 16) {
    return STATUS_INVALID_PARAMETER;
  }
  ULONG v = 0;
  for (; i < len; i++) {
    char c = s[i];
    ULONG d = c >= '0' && c <= '9'   ? static_cast<ULONG>(c - '0')
              : c >= 'a' && c <= 'f' ? static_cast<ULONG>(c - 'a' + 10)
              : c >= 'A' && c <= 'F' ? static_cast<ULONG>(c - 'A' + 10)
                                     : 99;
    if (d >= base) break;
    v = v * base + d;
  }
  *value = negative ? static_cast<ULONG>(0u - v) : v;
  return STATUS_SUCCESS;
}

NTSTATUS RtlCharToInteger(PCSZ String, ULONG Base, PULONG Value) {
  return ParseInteger(String, std::strlen(String), Base, Value);
}

NTSTATUS RtlUnicodeStringToInteger(PCUNICODE_STRING String, ULONG Base, PULONG Value) {
  char buf[80];
  size_t n = String->Length / sizeof(WCHAR);
  if (n >= sizeof buf) n = sizeof buf - 1;
  for (size_t i = 0; i < n; i++) {
    WCHAR c = String->Buffer[i];
    buf[i] = (c >= 0 && c < 0x80) ? static_cast<char>(c) : '?';
  }
  buf[n] = '\0';
  return ParseInteger(buf, n, Base, Value);
}

NTSTATUS RtlGetVersion(PRTL_OSVERSIONINFOW lpVersionInformation) {
  lpVersionInformation->dwMajorVersion = 10;
  lpVersionInformation->dwMinorVersion = 0;
  lpVersionInformation->dwBuildNumber = 20348;
  lpVersionInformation->dwPlatformId = 2;  // VER_PLATFORM_WIN32_NT
  lpVersionInformation->szCSDVersion[0] = L'\0';
  return STATUS_SUCCESS;
}

ULONG DbgPrint(PCSTR Format, ...) {
  va_list ap;
  va_start(ap, Format);
  std::vfprintf(stderr, Format, ap);
  va_end(ap);
  return STATUS_SUCCESS;
}

ULONG DbgPrintEx(ULONG ComponentId, ULONG Level, PCSTR Format, ...) {
  (void)ComponentId;
  // Levels above DPFLTR_INFO_LEVEL are bit masks; the kit prints levels up
  // to SOFTNDK_WDK_DBG_LEVEL (default: DPFLTR_INFO_LEVEL, everything).
  static const long max_level = [] {
    const char* v = std::getenv("SOFTNDK_WDK_DBG_LEVEL");
    return v ? std::strtol(v, nullptr, 10) : static_cast<long>(DPFLTR_INFO_LEVEL);
  }();
  if (Level <= 31 && static_cast<long>(Level) > max_level) return STATUS_SUCCESS;
  va_list ap;
  va_start(ap, Format);
  std::vfprintf(stderr, Format, ap);
  va_end(ap);
  return STATUS_SUCCESS;
}

VOID DbgBreakPoint(void) {
  Report(SoftNdkWdkRuleAssertion, "DbgBreakPoint", SOFTNDK_WDK_SITE(),
         "a breakpoint (no kernel debugger here)");
}

VOID RtlAssert(PVOID VoidFailedAssertion, PVOID VoidFileName, ULONG LineNumber,
               PSTR MutableMessage) {
  Report(SoftNdkWdkRuleAssertion, "NT_ASSERT", SOFTNDK_WDK_SITE(), "%s%s%s failed at %s:%u",
         MutableMessage ? MutableMessage : "", MutableMessage ? ": " : "",
         static_cast<const char*>(VoidFailedAssertion), static_cast<const char*>(VoidFileName),
         LineNumber);
}

}  // extern "C"
