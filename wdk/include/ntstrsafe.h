// SPDX-License-Identifier: Apache-2.0
/*
 * ntstrsafe.h - the WDK's safe string functions (RtlStringCb*, RtlStringCch*,
 * RtlUnicodeString*), for the softndk WDK kit. Implemented by libsoftndk_wdk
 * (wdk/src/kernel/strsafe*.cc) with the documented results:
 *   STATUS_SUCCESS; STATUS_BUFFER_OVERFLOW when the result was truncated (the
 *   destination then holds the truncated, NUL-terminated string);
 *   STATUS_INVALID_PARAMETER for a zero or too large destination size, a
 *   destination that is not NUL-terminated within its size (Cat), a NULL
 *   pointer without STRSAFE_IGNORE_NULLS, an invalid UNICODE_STRING.
 * The STRSAFE_* flags of the Ex functions work as documented (fill byte in
 * the low 8 bits, IGNORE_NULLS, FILL_BEHIND_NULL, FILL_ON_FAILURE,
 * NULL_ON_FAILURE, NO_TRUNCATION).
 *
 * Printf formats follow Windows, not glibc: in the W functions %s and %c take
 * wide arguments and %S/%C narrow ones (the reverse in the A functions);
 * %ws/%ls and %hs are explicit; %wZ takes a PCUNICODE_STRING and %Z a
 * PCANSI_STRING; I64/I32/I size prefixes are understood. WCHAR is 32 bits
 * here (ntdef.h), so L"..." literals work unchanged.
 */
#ifndef SOFTNDK_WDK_NTSTRSAFE_H_
#define SOFTNDK_WDK_NTSTRSAFE_H_

#include <stdarg.h>

#include "wdm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef CHAR* NTSTRSAFE_PSTR;
typedef const CHAR* NTSTRSAFE_PCSTR;
typedef WCHAR* NTSTRSAFE_PWSTR;
typedef const WCHAR* NTSTRSAFE_PCWSTR;
typedef const WCHAR UNALIGNED* NTSTRSAFE_PCUWSTR;
typedef ULONG STRSAFE_DWORD;

#define NTSTRSAFE_MAX_CCH 2147483647
#define NTSTRSAFE_UNICODE_STRING_MAX_CCH 32767
#define NTSTRSAFE_MAX_LENGTH (NTSTRSAFE_MAX_CCH - 1)

#define STRSAFE_IGNORE_NULLS 0x00000100
#define STRSAFE_FILL_BEHIND_NULL 0x00000200
#define STRSAFE_FILL_ON_FAILURE 0x00000400
#define STRSAFE_NULL_ON_FAILURE 0x00000800
#define STRSAFE_NO_TRUNCATION 0x00001000
#define STRSAFE_IGNORE_NULL_UNICODE_STRINGS 0x00010000
#define STRSAFE_UNICODE_STRING_DEST_NULL_TERMINATED 0x00020000
#define STRSAFE_ZERO_LENGTH_ON_FAILURE 0x00040000
#define STRSAFE_FILL_BYTE(x) ((ULONG)(((x)&0xFF) | STRSAFE_FILL_BEHIND_NULL))
#define STRSAFE_FAILURE_BYTE(x) ((ULONG)(((x)&0xFF) | STRSAFE_FILL_ON_FAILURE))
#define STRSAFE_GET_FILL_PATTERN(dwFlags) ((int)((dwFlags)&0x000000FF))

/* clang-format off */
NTSTATUS RtlStringCchCopyA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc);
NTSTATUS RtlStringCchCopyExA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlStringCchCopyNA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc, size_t cchToCopy);
NTSTATUS RtlStringCchCopyNExA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc, size_t cchToCopy, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlStringCchCatA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc);
NTSTATUS RtlStringCchCatExA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlStringCchCatNA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc, size_t cchToAppend);
NTSTATUS RtlStringCchCatNExA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszSrc, size_t cchToAppend, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlStringCchPrintfA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszFormat, ...);
NTSTATUS RtlStringCchPrintfExA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags, NTSTRSAFE_PCSTR pszFormat, ...);
NTSTATUS RtlStringCchVPrintfA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PCSTR pszFormat, va_list argList);
NTSTATUS RtlStringCchVPrintfExA(NTSTRSAFE_PSTR pszDest, size_t cchDest, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags, NTSTRSAFE_PCSTR pszFormat, va_list argList);
NTSTATUS RtlStringCchLengthA(NTSTRSAFE_PCSTR psz, size_t cchMax, size_t* pcchLength);
NTSTATUS RtlStringCbCopyA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc);
NTSTATUS RtlStringCbCopyExA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlStringCbCopyNA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc, size_t cbToCopy);
NTSTATUS RtlStringCbCopyNExA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc, size_t cbToCopy, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlStringCbCatA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc);
NTSTATUS RtlStringCbCatExA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlStringCbCatNA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc, size_t cbToAppend);
NTSTATUS RtlStringCbCatNExA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszSrc, size_t cbToAppend, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlStringCbPrintfA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszFormat, ...);
NTSTATUS RtlStringCbPrintfExA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags, NTSTRSAFE_PCSTR pszFormat, ...);
NTSTATUS RtlStringCbVPrintfA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PCSTR pszFormat, va_list argList);
NTSTATUS RtlStringCbVPrintfExA(NTSTRSAFE_PSTR pszDest, size_t cbDest, NTSTRSAFE_PSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags, NTSTRSAFE_PCSTR pszFormat, va_list argList);
NTSTATUS RtlStringCbLengthA(NTSTRSAFE_PCSTR psz, size_t cbMax, size_t* pcbLength);
NTSTATUS RtlStringCchCopyW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc);
NTSTATUS RtlStringCchCopyExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlStringCchCopyNW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc, size_t cchToCopy);
NTSTATUS RtlStringCchCopyNExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc, size_t cchToCopy, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlStringCchCatW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc);
NTSTATUS RtlStringCchCatExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlStringCchCatNW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc, size_t cchToAppend);
NTSTATUS RtlStringCchCatNExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszSrc, size_t cchToAppend, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlStringCchPrintfW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTATUS RtlStringCchPrintfExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags, NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTATUS RtlStringCchVPrintfW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PCWSTR pszFormat, va_list argList);
NTSTATUS RtlStringCchVPrintfExW(NTSTRSAFE_PWSTR pszDest, size_t cchDest, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags, NTSTRSAFE_PCWSTR pszFormat, va_list argList);
NTSTATUS RtlStringCchLengthW(NTSTRSAFE_PCWSTR psz, size_t cchMax, size_t* pcchLength);
NTSTATUS RtlStringCbCopyW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc);
NTSTATUS RtlStringCbCopyExW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlStringCbCopyNW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc, size_t cbToCopy);
NTSTATUS RtlStringCbCopyNExW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc, size_t cbToCopy, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlStringCbCatW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc);
NTSTATUS RtlStringCbCatExW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlStringCbCatNW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc, size_t cbToAppend);
NTSTATUS RtlStringCbCatNExW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszSrc, size_t cbToAppend, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlStringCbPrintfW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTATUS RtlStringCbPrintfExW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags, NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTATUS RtlStringCbVPrintfW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PCWSTR pszFormat, va_list argList);
NTSTATUS RtlStringCbVPrintfExW(NTSTRSAFE_PWSTR pszDest, size_t cbDest, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags, NTSTRSAFE_PCWSTR pszFormat, va_list argList);
NTSTATUS RtlStringCbLengthW(NTSTRSAFE_PCWSTR psz, size_t cbMax, size_t* pcbLength);
NTSTATUS RtlStringCchCopyUnicodeString(NTSTRSAFE_PWSTR pszDest, size_t cchDest, PCUNICODE_STRING SourceString);
NTSTATUS RtlStringCchCopyUnicodeStringEx(NTSTRSAFE_PWSTR pszDest, size_t cchDest, PCUNICODE_STRING SourceString, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcchRemaining, ULONG dwFlags);
NTSTATUS RtlUnalignedStringCchLengthW(const WCHAR UNALIGNED* psz, size_t cchMax, size_t* pcchLength);
NTSTATUS RtlStringCbCopyUnicodeString(NTSTRSAFE_PWSTR pszDest, size_t cbDest, PCUNICODE_STRING SourceString);
NTSTATUS RtlStringCbCopyUnicodeStringEx(NTSTRSAFE_PWSTR pszDest, size_t cbDest, PCUNICODE_STRING SourceString, NTSTRSAFE_PWSTR* ppszDestEnd, size_t* pcbRemaining, ULONG dwFlags);
NTSTATUS RtlUnalignedStringCbLengthW(const WCHAR UNALIGNED* psz, size_t cbMax, size_t* pcbLength);
NTSTATUS RtlUnicodeStringInit(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc);
NTSTATUS RtlUnicodeStringInitEx(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, ULONG dwFlags);
NTSTATUS RtlUnicodeStringValidate(PCUNICODE_STRING SourceString);
NTSTATUS RtlUnicodeStringValidateEx(PCUNICODE_STRING SourceString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCopy(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString);
NTSTATUS RtlUnicodeStringCopyEx(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCopyString(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc);
NTSTATUS RtlUnicodeStringCopyStringEx(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCat(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString);
NTSTATUS RtlUnicodeStringCatEx(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCatString(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc);
NTSTATUS RtlUnicodeStringCatStringEx(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCchCopyN(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, size_t cchToCopy);
NTSTATUS RtlUnicodeStringCchCopyNEx(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, size_t cchToCopy, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCchCopyStringN(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, size_t cchToCopy);
NTSTATUS RtlUnicodeStringCchCopyStringNEx(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, size_t cchToCopy, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCchCatN(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, size_t cchToAppend);
NTSTATUS RtlUnicodeStringCchCatNEx(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, size_t cchToAppend, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCchCatStringN(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, size_t cchToAppend);
NTSTATUS RtlUnicodeStringCchCatStringNEx(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, size_t cchToAppend, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCbCopyN(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, size_t cbToCopy);
NTSTATUS RtlUnicodeStringCbCopyNEx(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, size_t cbToCopy, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCbCopyStringN(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, size_t cbToCopy);
NTSTATUS RtlUnicodeStringCbCopyStringNEx(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, size_t cbToCopy, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCbCatN(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, size_t cbToAppend);
NTSTATUS RtlUnicodeStringCbCatNEx(PUNICODE_STRING DestinationString, PCUNICODE_STRING SourceString, size_t cbToAppend, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringCbCatStringN(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, size_t cbToAppend);
NTSTATUS RtlUnicodeStringCbCatStringNEx(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszSrc, size_t cbToAppend, PUNICODE_STRING RemainingString, ULONG dwFlags);
NTSTATUS RtlUnicodeStringPrintf(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTATUS RtlUnicodeStringPrintfEx(PUNICODE_STRING DestinationString, PUNICODE_STRING RemainingString, ULONG dwFlags, NTSTRSAFE_PCWSTR pszFormat, ...);
NTSTATUS RtlUnicodeStringVPrintf(PUNICODE_STRING DestinationString, NTSTRSAFE_PCWSTR pszFormat, va_list argList);
NTSTATUS RtlUnicodeStringVPrintfEx(PUNICODE_STRING DestinationString, PUNICODE_STRING RemainingString, ULONG dwFlags, NTSTRSAFE_PCWSTR pszFormat, va_list argList);
/* clang-format on */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SOFTNDK_WDK_NTSTRSAFE_H_ */
