// SPDX-License-Identifier: Apache-2.0
// ntstrsafe.h: RtlStringCch*/RtlStringCb* (A and W) and RtlUnicodeString*.
// One template per operation over the character type; the Cb functions
// convert byte counts to characters and back. Results and flags as the WDK
// documents them (ntstrsafe.h's comment).
#include <ntstrsafe.h>

#include <cstring>
#include <cwchar>
#include <string>

#include "kernel/strsafe_format.h"

namespace {

constexpr size_t kMaxCch = NTSTRSAFE_MAX_CCH;
constexpr size_t kMaxUnicodeCch = NTSTRSAFE_UNICODE_STRING_MAX_CCH;
constexpr size_t kAll = static_cast<size_t>(-1);
constexpr ULONG kValidFlags = 0xff | STRSAFE_IGNORE_NULLS | STRSAFE_FILL_BEHIND_NULL |
                              STRSAFE_FILL_ON_FAILURE | STRSAFE_NULL_ON_FAILURE |
                              STRSAFE_NO_TRUNCATION;

template <typename C>
size_t LengthWithin(const C* s, size_t max) {  // max + 1 when not terminated
  for (size_t i = 0; i < max; ++i)
    if (s[i] == 0) return i;
  return max + 1;
}

template <typename C>
void Fill(C* p, size_t cch, ULONG flags) {
  std::memset(static_cast<void*>(p), STRSAFE_GET_FILL_PATTERN(flags), cch * sizeof(C));
}

// The failure handling of the Ex flags, applied to the whole destination.
template <typename C>
void OnFailure(C* dest, size_t cch_dest, ULONG flags, C** end, size_t* remaining) {
  if (dest == nullptr || cch_dest == 0) return;
  if (flags & STRSAFE_FILL_ON_FAILURE) {
    Fill(dest, cch_dest, flags);
    dest[cch_dest - 1] = 0;
    if (end) *end = dest + cch_dest - 1;
    if (remaining) *remaining = 1;
  }
  if (flags & (STRSAFE_NULL_ON_FAILURE | STRSAFE_NO_TRUNCATION)) {
    dest[0] = 0;
    if (end) *end = dest;
    if (remaining) *remaining = cch_dest;
  }
}

// Copies (append = false) or appends at most `max_src` characters of `src`
// into a buffer of `cch_dest` characters. `end` and `remaining` describe the
// result (remaining counts the terminator's slot, as the WDK's do).
template <typename C>
NTSTATUS CopyCat(C* dest, size_t cch_dest, const C* src, size_t max_src, C** end, size_t* remaining,
                 ULONG flags, bool append) {
  if (flags & ~kValidFlags) return STATUS_INVALID_PARAMETER;
  static const C kEmpty[1] = {0};
  if (src == nullptr) {
    if (!(flags & STRSAFE_IGNORE_NULLS)) return STATUS_INVALID_PARAMETER;
    src = kEmpty;
  }
  if (dest == nullptr) {
    if ((flags & STRSAFE_IGNORE_NULLS) && cch_dest == 0) {
      // Nothing to write: only an empty source fits.
      return (src[0] == 0 || max_src == 0) ? STATUS_SUCCESS : STATUS_BUFFER_OVERFLOW;
    }
    return STATUS_INVALID_PARAMETER;
  }
  if (cch_dest == 0 || cch_dest > kMaxCch) return STATUS_INVALID_PARAMETER;
  size_t start = 0;
  if (append) {
    start = LengthWithin(dest, cch_dest);
    if (start >= cch_dest) {
      // Not NUL-terminated within its size.
      return STATUS_INVALID_PARAMETER;
    }
  }
  size_t room = cch_dest - start - 1;
  size_t n = 0;
  while (n < max_src && src[n] != 0 && n < room) {
    dest[start + n] = src[n];
    ++n;
  }
  bool truncated = n < max_src && src[n] != 0;
  if (truncated && (flags & STRSAFE_NO_TRUNCATION)) {
    dest[start] = 0;  // an append leaves the original string as it was
    if (!append) OnFailure(dest, cch_dest, flags, end, remaining);
    if (end) *end = dest + start;
    if (remaining) *remaining = cch_dest - start;
    return STATUS_BUFFER_OVERFLOW;
  }
  dest[start + n] = 0;
  if (end) *end = dest + start + n;
  if (remaining) *remaining = cch_dest - start - n;
  if (truncated) {
    OnFailure(dest, cch_dest, flags & ~STRSAFE_NO_TRUNCATION, end, remaining);
    return STATUS_BUFFER_OVERFLOW;
  }
  if ((flags & STRSAFE_FILL_BEHIND_NULL) && start + n + 1 < cch_dest)
    Fill(dest + start + n + 1, cch_dest - start - n - 1, flags);
  return STATUS_SUCCESS;
}

template <typename C>
NTSTATUS Length(const C* s, size_t cch_max, size_t* length) {
  if (s == nullptr || cch_max == 0 || cch_max > kMaxCch) {
    if (length) *length = 0;
    return STATUS_INVALID_PARAMETER;
  }
  size_t n = LengthWithin(s, cch_max);
  if (n >= cch_max) {
    if (length) *length = 0;
    return STATUS_INVALID_PARAMETER;
  }
  if (length) *length = n;
  return STATUS_SUCCESS;
}

template <typename C>
NTSTATUS VPrintf(C* dest, size_t cch_dest, C** end, size_t* remaining, ULONG flags, const C* format,
                 va_list args) {
  if (format == nullptr) {
    if (!(flags & STRSAFE_IGNORE_NULLS)) return STATUS_INVALID_PARAMETER;
    static const C kEmpty[1] = {0};
    format = kEmpty;
  }
  std::basic_string<C> text;
  if (!softndk::wdk::FormatWindows(format, args, &text)) {
    if (dest != nullptr && cch_dest != 0 && cch_dest <= kMaxCch) dest[0] = 0;
    return STATUS_INVALID_PARAMETER;
  }
  return CopyCat(dest, cch_dest, text.c_str(), kAll, end, remaining, flags & ~STRSAFE_IGNORE_NULLS,
                 false);
}

// Byte counts: a whole number of characters, within the maximum.
template <typename C>
bool CbToCch(size_t cb, size_t* cch) {
  *cch = cb / sizeof(C);
  return cb <= kMaxCch * sizeof(C);
}

template <typename C>
void CchToCb(size_t* remaining) {
  if (remaining) *remaining *= sizeof(C);
}

// ---- UNICODE_STRING -------------------------------------------------------
bool ValidUnicode(PCUNICODE_STRING s, ULONG flags) {
  if (s == nullptr) return (flags & STRSAFE_IGNORE_NULL_UNICODE_STRINGS) != 0;
  if (s->Length % sizeof(WCHAR) != 0 || s->MaximumLength % sizeof(WCHAR) != 0) return false;
  if (s->Length > s->MaximumLength) return false;
  // Never true where WCHAR is 4 bytes (a USHORT cannot reach the cap's
  // bytes); kept, widened, for the rule's sake.
  if (size_t{s->MaximumLength} > kMaxUnicodeCch * sizeof(WCHAR)) return false;
  if (s->Buffer == nullptr && s->MaximumLength != 0) return false;
  return true;
}

void SetRemaining(PUNICODE_STRING dest, PUNICODE_STRING remaining) {
  if (remaining == nullptr) return;
  remaining->Buffer = dest->Buffer + dest->Length / sizeof(WCHAR);
  remaining->Length = 0;
  remaining->MaximumLength = static_cast<USHORT>(dest->MaximumLength - dest->Length);
}

// Copies or appends `n` characters from `src` (not necessarily terminated).
NTSTATUS UnicodeCopyCat(PUNICODE_STRING dest, const WCHAR* src, size_t n, bool append,
                        PUNICODE_STRING remaining, ULONG flags) {
  if (!ValidUnicode(dest, 0) || dest == nullptr) return STATUS_INVALID_PARAMETER;
  size_t start = append ? dest->Length / sizeof(WCHAR) : 0;
  size_t cap = dest->MaximumLength / sizeof(WCHAR);
  size_t room = cap - start;
  size_t take = n < room ? n : room;
  bool truncated = take < n;
  if (truncated && (flags & STRSAFE_NO_TRUNCATION)) {
    if (!append) dest->Length = 0;
    SetRemaining(dest, remaining);
    return STATUS_BUFFER_OVERFLOW;
  }
  if (take != 0) std::memmove(dest->Buffer + start, src, take * sizeof(WCHAR));
  dest->Length = static_cast<USHORT>((start + take) * sizeof(WCHAR));
  if (truncated && (flags & (STRSAFE_NULL_ON_FAILURE | STRSAFE_ZERO_LENGTH_ON_FAILURE)))
    dest->Length = 0;
  if ((flags & (STRSAFE_FILL_BEHIND_NULL | (truncated ? STRSAFE_FILL_ON_FAILURE : 0))) &&
      dest->Length < dest->MaximumLength)
    Fill(dest->Buffer + dest->Length / sizeof(WCHAR), cap - dest->Length / sizeof(WCHAR), flags);
  SetRemaining(dest, remaining);
  return truncated ? STATUS_BUFFER_OVERFLOW : STATUS_SUCCESS;
}

size_t SourceChars(PCUNICODE_STRING s) { return s == nullptr ? 0 : s->Length / sizeof(WCHAR); }

NTSTATUS FromUnicode(PUNICODE_STRING dest, PCUNICODE_STRING src, size_t max, bool append,
                     PUNICODE_STRING remaining, ULONG flags) {
  if (!ValidUnicode(src, flags)) return STATUS_INVALID_PARAMETER;
  size_t n = SourceChars(src);
  if (max < n) n = max;
  return UnicodeCopyCat(dest, src ? src->Buffer : nullptr, n, append, remaining, flags);
}

NTSTATUS FromString(PUNICODE_STRING dest, const WCHAR* src, size_t max, bool append,
                    PUNICODE_STRING remaining, ULONG flags) {
  if (src == nullptr) {
    if (!(flags & STRSAFE_IGNORE_NULLS)) return STATUS_INVALID_PARAMETER;
    src = L"";
  }
  size_t n = 0;
  while (n < max && n <= kMaxUnicodeCch && src[n] != 0) ++n;
  return UnicodeCopyCat(dest, src, n, append, remaining, flags);
}

}  // namespace

extern "C" {

// clang-format off
#define SOFTNDK_STRSAFE_PAIR(C, CharT)                                                            \
  NTSTATUS RtlStringCchCopy##C(CharT* d, size_t n, const CharT* s) {                              \
    return CopyCat(d, n, s, kAll, static_cast<CharT**>(nullptr), nullptr, 0, false); }                                  \
  NTSTATUS RtlStringCchCopyEx##C(CharT* d, size_t n, const CharT* s, CharT** e, size_t* r,        \
                                 ULONG f) {                                                       \
    return CopyCat(d, n, s, kAll, e, r, f, false); }                                              \
  NTSTATUS RtlStringCchCopyN##C(CharT* d, size_t n, const CharT* s, size_t m) {                   \
    if (m > kMaxCch) return STATUS_INVALID_PARAMETER;                                             \
    return CopyCat(d, n, s, m, static_cast<CharT**>(nullptr), nullptr, 0, false); }                                     \
  NTSTATUS RtlStringCchCopyNEx##C(CharT* d, size_t n, const CharT* s, size_t m, CharT** e,        \
                                  size_t* r, ULONG f) {                                           \
    if (m > kMaxCch) return STATUS_INVALID_PARAMETER;                                             \
    return CopyCat(d, n, s, m, e, r, f, false); }                                                 \
  NTSTATUS RtlStringCchCat##C(CharT* d, size_t n, const CharT* s) {                               \
    return CopyCat(d, n, s, kAll, static_cast<CharT**>(nullptr), nullptr, 0, true); }                                   \
  NTSTATUS RtlStringCchCatEx##C(CharT* d, size_t n, const CharT* s, CharT** e, size_t* r,         \
                                ULONG f) {                                                        \
    return CopyCat(d, n, s, kAll, e, r, f, true); }                                               \
  NTSTATUS RtlStringCchCatN##C(CharT* d, size_t n, const CharT* s, size_t m) {                    \
    if (m > kMaxCch) return STATUS_INVALID_PARAMETER;                                             \
    return CopyCat(d, n, s, m, static_cast<CharT**>(nullptr), nullptr, 0, true); }                                      \
  NTSTATUS RtlStringCchCatNEx##C(CharT* d, size_t n, const CharT* s, size_t m, CharT** e,         \
                                 size_t* r, ULONG f) {                                            \
    if (m > kMaxCch) return STATUS_INVALID_PARAMETER;                                             \
    return CopyCat(d, n, s, m, e, r, f, true); }                                                  \
  NTSTATUS RtlStringCchVPrintf##C(CharT* d, size_t n, const CharT* fmt, va_list a) {              \
    return VPrintf(d, n, static_cast<CharT**>(nullptr), nullptr, 0, fmt, a); }                    \
  NTSTATUS RtlStringCchVPrintfEx##C(CharT* d, size_t n, CharT** e, size_t* r, ULONG f,            \
                                    const CharT* fmt, va_list a) {                                \
    return VPrintf(d, n, e, r, f, fmt, a); }                                                      \
  NTSTATUS RtlStringCchPrintf##C(CharT* d, size_t n, const CharT* fmt, ...) {                     \
    va_list a; va_start(a, fmt);                                                                  \
    NTSTATUS st = VPrintf(d, n, static_cast<CharT**>(nullptr), nullptr, 0, fmt, a);               \
    va_end(a); return st; }                                                                       \
  NTSTATUS RtlStringCchPrintfEx##C(CharT* d, size_t n, CharT** e, size_t* r, ULONG f,             \
                                   const CharT* fmt, ...) {                                       \
    va_list a; va_start(a, fmt);                                                                  \
    NTSTATUS st = VPrintf(d, n, e, r, f, fmt, a);                                                 \
    va_end(a); return st; }                                                                       \
  NTSTATUS RtlStringCchLength##C(const CharT* s, size_t m, size_t* l) { return Length(s, m, l); } \
  /* byte-counted */                                                                              \
  NTSTATUS RtlStringCbCopy##C(CharT* d, size_t cb, const CharT* s) {                              \
    size_t n; if (!CbToCch<CharT>(cb, &n)) return STATUS_INVALID_PARAMETER;                       \
    return CopyCat(d, n, s, kAll, static_cast<CharT**>(nullptr), nullptr, 0, false); }                                  \
  NTSTATUS RtlStringCbCopyEx##C(CharT* d, size_t cb, const CharT* s, CharT** e, size_t* r,        \
                                ULONG f) {                                                        \
    size_t n; if (!CbToCch<CharT>(cb, &n)) return STATUS_INVALID_PARAMETER;                       \
    NTSTATUS st = CopyCat(d, n, s, kAll, e, r, f, false); CchToCb<CharT>(r); return st; }         \
  NTSTATUS RtlStringCbCopyN##C(CharT* d, size_t cb, const CharT* s, size_t m) {                   \
    size_t n; if (!CbToCch<CharT>(cb, &n) || m > kMaxCch * sizeof(CharT))                         \
      return STATUS_INVALID_PARAMETER;                                                            \
    return CopyCat(d, n, s, m / sizeof(CharT), static_cast<CharT**>(nullptr), nullptr, 0, false); }                     \
  NTSTATUS RtlStringCbCopyNEx##C(CharT* d, size_t cb, const CharT* s, size_t m, CharT** e,        \
                                 size_t* r, ULONG f) {                                            \
    size_t n; if (!CbToCch<CharT>(cb, &n) || m > kMaxCch * sizeof(CharT))                         \
      return STATUS_INVALID_PARAMETER;                                                            \
    NTSTATUS st = CopyCat(d, n, s, m / sizeof(CharT), e, r, f, false);                            \
    CchToCb<CharT>(r); return st; }                                                               \
  NTSTATUS RtlStringCbCat##C(CharT* d, size_t cb, const CharT* s) {                               \
    size_t n; if (!CbToCch<CharT>(cb, &n)) return STATUS_INVALID_PARAMETER;                       \
    return CopyCat(d, n, s, kAll, static_cast<CharT**>(nullptr), nullptr, 0, true); }                                   \
  NTSTATUS RtlStringCbCatEx##C(CharT* d, size_t cb, const CharT* s, CharT** e, size_t* r,         \
                               ULONG f) {                                                         \
    size_t n; if (!CbToCch<CharT>(cb, &n)) return STATUS_INVALID_PARAMETER;                       \
    NTSTATUS st = CopyCat(d, n, s, kAll, e, r, f, true); CchToCb<CharT>(r); return st; }          \
  NTSTATUS RtlStringCbCatN##C(CharT* d, size_t cb, const CharT* s, size_t m) {                    \
    size_t n; if (!CbToCch<CharT>(cb, &n) || m > kMaxCch * sizeof(CharT))                         \
      return STATUS_INVALID_PARAMETER;                                                            \
    return CopyCat(d, n, s, m / sizeof(CharT), static_cast<CharT**>(nullptr), nullptr, 0, true); }                      \
  NTSTATUS RtlStringCbCatNEx##C(CharT* d, size_t cb, const CharT* s, size_t m, CharT** e,         \
                                size_t* r, ULONG f) {                                             \
    size_t n; if (!CbToCch<CharT>(cb, &n) || m > kMaxCch * sizeof(CharT))                         \
      return STATUS_INVALID_PARAMETER;                                                            \
    NTSTATUS st = CopyCat(d, n, s, m / sizeof(CharT), e, r, f, true);                             \
    CchToCb<CharT>(r); return st; }                                                               \
  NTSTATUS RtlStringCbVPrintf##C(CharT* d, size_t cb, const CharT* fmt, va_list a) {              \
    size_t n; if (!CbToCch<CharT>(cb, &n)) return STATUS_INVALID_PARAMETER;                       \
    return VPrintf(d, n, static_cast<CharT**>(nullptr), nullptr, 0, fmt, a); }                    \
  NTSTATUS RtlStringCbVPrintfEx##C(CharT* d, size_t cb, CharT** e, size_t* r, ULONG f,            \
                                   const CharT* fmt, va_list a) {                                 \
    size_t n; if (!CbToCch<CharT>(cb, &n)) return STATUS_INVALID_PARAMETER;                       \
    NTSTATUS st = VPrintf(d, n, e, r, f, fmt, a); CchToCb<CharT>(r); return st; }                 \
  NTSTATUS RtlStringCbPrintf##C(CharT* d, size_t cb, const CharT* fmt, ...) {                     \
    size_t n; if (!CbToCch<CharT>(cb, &n)) return STATUS_INVALID_PARAMETER;                       \
    va_list a; va_start(a, fmt);                                                                  \
    NTSTATUS st = VPrintf(d, n, static_cast<CharT**>(nullptr), nullptr, 0, fmt, a);               \
    va_end(a); return st; }                                                                       \
  NTSTATUS RtlStringCbPrintfEx##C(CharT* d, size_t cb, CharT** e, size_t* r, ULONG f,             \
                                  const CharT* fmt, ...) {                                        \
    size_t n; if (!CbToCch<CharT>(cb, &n)) return STATUS_INVALID_PARAMETER;                       \
    va_list a; va_start(a, fmt);                                                                  \
    NTSTATUS st = VPrintf(d, n, e, r, f, fmt, a);                                                 \
    va_end(a); CchToCb<CharT>(r); return st; }                                                    \
  NTSTATUS RtlStringCbLength##C(const CharT* s, size_t cb, size_t* l) {                           \
    size_t n; if (!CbToCch<CharT>(cb, &n)) { if (l) *l = 0; return STATUS_INVALID_PARAMETER; }    \
    NTSTATUS st = Length(s, n, l); if (l) *l *= sizeof(CharT); return st; }
// clang-format on

SOFTNDK_STRSAFE_PAIR(A, CHAR)
SOFTNDK_STRSAFE_PAIR(W, WCHAR)

NTSTATUS RtlStringCchCopyUnicodeStringEx(PWSTR d, size_t n, PCUNICODE_STRING s, PWSTR* e, size_t* r,
                                         ULONG f) {
  if (!ValidUnicode(s, f)) return STATUS_INVALID_PARAMETER;
  return CopyCat(d, n, s ? s->Buffer : L"", SourceChars(s), e, r, f | STRSAFE_IGNORE_NULLS, false);
}
NTSTATUS RtlStringCchCopyUnicodeString(PWSTR d, size_t n, PCUNICODE_STRING s) {
  return RtlStringCchCopyUnicodeStringEx(d, n, s, nullptr, nullptr, 0);
}
NTSTATUS RtlStringCbCopyUnicodeStringEx(PWSTR d, size_t cb, PCUNICODE_STRING s, PWSTR* e, size_t* r,
                                        ULONG f) {
  size_t n;
  if (!CbToCch<WCHAR>(cb, &n)) return STATUS_INVALID_PARAMETER;
  NTSTATUS st = RtlStringCchCopyUnicodeStringEx(d, n, s, e, r, f);
  CchToCb<WCHAR>(r);
  return st;
}
NTSTATUS RtlStringCbCopyUnicodeString(PWSTR d, size_t cb, PCUNICODE_STRING s) {
  return RtlStringCbCopyUnicodeStringEx(d, cb, s, nullptr, nullptr, 0);
}
NTSTATUS RtlUnalignedStringCchLengthW(const WCHAR* s, size_t m, size_t* l) {
  return Length(s, m, l);
}
NTSTATUS RtlUnalignedStringCbLengthW(const WCHAR* s, size_t cb, size_t* l) {
  return RtlStringCbLengthW(s, cb, l);
}

// ---- UNICODE_STRING functions --------------------------------------------
NTSTATUS RtlUnicodeStringInitEx(PUNICODE_STRING d, PCWSTR s, ULONG f) {
  if (d == nullptr) return STATUS_INVALID_PARAMETER;
  d->Length = 0;
  d->MaximumLength = 0;
  d->Buffer = const_cast<PWSTR>(s);
  if (s == nullptr) return (f & STRSAFE_IGNORE_NULLS) ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
  size_t n = LengthWithin(s, kMaxUnicodeCch + 1);
  if (n > kMaxUnicodeCch) return STATUS_INVALID_PARAMETER;
  d->Length = static_cast<USHORT>(n * sizeof(WCHAR));
  d->MaximumLength = d->Length;
  return STATUS_SUCCESS;
}
NTSTATUS RtlUnicodeStringInit(PUNICODE_STRING d, PCWSTR s) {
  return RtlUnicodeStringInitEx(d, s, 0);
}
NTSTATUS RtlUnicodeStringValidateEx(PCUNICODE_STRING s, ULONG f) {
  return ValidUnicode(s, f) ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}
NTSTATUS RtlUnicodeStringValidate(PCUNICODE_STRING s) { return RtlUnicodeStringValidateEx(s, 0); }

NTSTATUS RtlUnicodeStringCopyEx(PUNICODE_STRING d, PCUNICODE_STRING s, PUNICODE_STRING r, ULONG f) {
  return FromUnicode(d, s, kAll, false, r, f);
}
NTSTATUS RtlUnicodeStringCopy(PUNICODE_STRING d, PCUNICODE_STRING s) {
  return FromUnicode(d, s, kAll, false, nullptr, 0);
}
NTSTATUS RtlUnicodeStringCopyStringEx(PUNICODE_STRING d, PCWSTR s, PUNICODE_STRING r, ULONG f) {
  return FromString(d, s, kAll, false, r, f);
}
NTSTATUS RtlUnicodeStringCopyString(PUNICODE_STRING d, PCWSTR s) {
  return FromString(d, s, kAll, false, nullptr, 0);
}
NTSTATUS RtlUnicodeStringCatEx(PUNICODE_STRING d, PCUNICODE_STRING s, PUNICODE_STRING r, ULONG f) {
  return FromUnicode(d, s, kAll, true, r, f);
}
NTSTATUS RtlUnicodeStringCat(PUNICODE_STRING d, PCUNICODE_STRING s) {
  return FromUnicode(d, s, kAll, true, nullptr, 0);
}
NTSTATUS RtlUnicodeStringCatStringEx(PUNICODE_STRING d, PCWSTR s, PUNICODE_STRING r, ULONG f) {
  return FromString(d, s, kAll, true, r, f);
}
NTSTATUS RtlUnicodeStringCatString(PUNICODE_STRING d, PCWSTR s) {
  return FromString(d, s, kAll, true, nullptr, 0);
}

#define SOFTNDK_UNICODE_N(Unit, div)                                                        \
  NTSTATUS RtlUnicodeString##Unit##CopyNEx(PUNICODE_STRING d, PCUNICODE_STRING s, size_t m, \
                                           PUNICODE_STRING r, ULONG f) {                    \
    return FromUnicode(d, s, m / (div), false, r, f);                                       \
  }                                                                                         \
  NTSTATUS RtlUnicodeString##Unit##CopyN(PUNICODE_STRING d, PCUNICODE_STRING s, size_t m) { \
    return FromUnicode(d, s, m / (div), false, nullptr, 0);                                 \
  }                                                                                         \
  NTSTATUS RtlUnicodeString##Unit##CopyStringNEx(PUNICODE_STRING d, PCWSTR s, size_t m,     \
                                                 PUNICODE_STRING r, ULONG f) {              \
    return FromString(d, s, m / (div), false, r, f);                                        \
  }                                                                                         \
  NTSTATUS RtlUnicodeString##Unit##CopyStringN(PUNICODE_STRING d, PCWSTR s, size_t m) {     \
    return FromString(d, s, m / (div), false, nullptr, 0);                                  \
  }                                                                                         \
  NTSTATUS RtlUnicodeString##Unit##CatNEx(PUNICODE_STRING d, PCUNICODE_STRING s, size_t m,  \
                                          PUNICODE_STRING r, ULONG f) {                     \
    return FromUnicode(d, s, m / (div), true, r, f);                                        \
  }                                                                                         \
  NTSTATUS RtlUnicodeString##Unit##CatN(PUNICODE_STRING d, PCUNICODE_STRING s, size_t m) {  \
    return FromUnicode(d, s, m / (div), true, nullptr, 0);                                  \
  }                                                                                         \
  NTSTATUS RtlUnicodeString##Unit##CatStringNEx(PUNICODE_STRING d, PCWSTR s, size_t m,      \
                                                PUNICODE_STRING r, ULONG f) {               \
    return FromString(d, s, m / (div), true, r, f);                                         \
  }                                                                                         \
  NTSTATUS RtlUnicodeString##Unit##CatStringN(PUNICODE_STRING d, PCWSTR s, size_t m) {      \
    return FromString(d, s, m / (div), true, nullptr, 0);                                   \
  }

SOFTNDK_UNICODE_N(Cch, 1)
SOFTNDK_UNICODE_N(Cb, sizeof(WCHAR))

NTSTATUS RtlUnicodeStringVPrintfEx(PUNICODE_STRING d, PUNICODE_STRING r, ULONG f, PCWSTR fmt,
                                   va_list a) {
  if (fmt == nullptr) return STATUS_INVALID_PARAMETER;
  std::wstring text;
  if (!softndk::wdk::FormatWindows(fmt, a, &text)) return STATUS_INVALID_PARAMETER;
  return UnicodeCopyCat(d, text.data(), text.size(), false, r, f);
}
NTSTATUS RtlUnicodeStringVPrintf(PUNICODE_STRING d, PCWSTR fmt, va_list a) {
  return RtlUnicodeStringVPrintfEx(d, nullptr, 0, fmt, a);
}
NTSTATUS RtlUnicodeStringPrintfEx(PUNICODE_STRING d, PUNICODE_STRING r, ULONG f, PCWSTR fmt, ...) {
  va_list a;
  va_start(a, fmt);
  NTSTATUS st = RtlUnicodeStringVPrintfEx(d, r, f, fmt, a);
  va_end(a);
  return st;
}
NTSTATUS RtlUnicodeStringPrintf(PUNICODE_STRING d, PCWSTR fmt, ...) {
  va_list a;
  va_start(a, fmt);
  NTSTATUS st = RtlUnicodeStringVPrintfEx(d, nullptr, 0, fmt, a);
  va_end(a);
  return st;
}

}  // extern "C"
