// SPDX-License-Identifier: Apache-2.0
// Windows printf formatting for the kit (ntstrsafe.h's RtlString*Printf*):
// the conversions mean what they mean to the Windows kernel's formatter, not
// glibc's (%s in a wide format takes a wide string, %wZ a UNICODE_STRING,
// I64 a 64-bit integer), so a driver's format strings print the same text.
#pragma once

#include <cstdarg>
#include <string>

namespace softndk::wdk {

// Formats `format` with `args`. CharT is char (A functions) or wchar_t (W
// functions): it selects the output type and the default width of %s/%c.
// Returns false for a malformed conversion (the caller reports
// STATUS_INVALID_PARAMETER).
bool FormatWindows(const char* format, va_list args, std::string* out);
bool FormatWindows(const wchar_t* format, va_list args, std::wstring* out);

}  // namespace softndk::wdk
