// SPDX-License-Identifier: Apache-2.0
// softndk_wdk/rtl_more.h: bitmaps, characters, counted and UTF-8 strings,
// GUID strings, hashing, time fields, probes and interlocked arithmetic.
#include <wdm.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <cwctype>

namespace {

constexpr ULONG kStringTag = 0x67727453;  // "Strg", what RtlFreeUnicodeString expects
constexpr ULONG kNotFound = 0xFFFFFFFFu;

bool Bit(PRTL_BITMAP b, ULONG i) { return (b->Buffer[i / 32] >> (i % 32)) & 1u; }
void Put(PRTL_BITMAP b, ULONG i, bool v) {
  if (v)
    b->Buffer[i / 32] |= 1u << (i % 32);
  else
    b->Buffer[i / 32] &= ~(1u << (i % 32));
}
bool Run(PRTL_BITMAP b, ULONG start, ULONG n, bool v) {
  if (start > b->SizeOfBitMap || n > b->SizeOfBitMap - start) return false;
  for (ULONG i = start; i < start + n; ++i)
    if (Bit(b, i) != v) return false;
  return true;
}
ULONG Find(PRTL_BITMAP b, ULONG n, ULONG hint, bool v) {
  ULONG size = b->SizeOfBitMap;
  if (n == 0) return hint < size ? hint : 0;
  if (n > size) return kNotFound;
  if (hint >= size) hint = 0;
  // From the hint to the end, then from the start (as Windows searches).
  for (ULONG pass = 0; pass < 2; ++pass) {
    ULONG from = pass == 0 ? hint : 0, to = pass == 0 ? size : hint + n - 1;
    if (to > size) to = size;
    for (ULONG i = from; i + n <= to; ++i)
      if (Run(b, i, n, v)) return i;
  }
  return kNotFound;
}
// Length of the run of value `v` starting at `i`.
ULONG RunLength(PRTL_BITMAP b, ULONG i, bool v) {
  ULONG n = 0;
  while (i + n < b->SizeOfBitMap && Bit(b, i + n) == v) ++n;
  return n;
}

char Upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

}  // namespace

extern "C" {

WCHAR RtlUpcaseUnicodeChar(WCHAR c) { return static_cast<WCHAR>(std::towupper(c)); }
WCHAR RtlDowncaseUnicodeChar(WCHAR c) { return static_cast<WCHAR>(std::towlower(c)); }
CHAR RtlUpperChar(CHAR c) { return Upper(c); }

NTSTATUS RtlInitStringEx(PSTRING d, PCSZ s) {
  d->Length = d->MaximumLength = 0;
  d->Buffer = const_cast<PCHAR>(s);
  if (s == nullptr) return STATUS_SUCCESS;
  size_t n = std::strlen(s);
  if (n > 0xfffe) return STATUS_NAME_TOO_LONG;
  d->Length = static_cast<USHORT>(n);
  d->MaximumLength = static_cast<USHORT>(n + 1);
  return STATUS_SUCCESS;
}

LONG RtlCompareString(const STRING* a, const STRING* b, BOOLEAN ci) {
  USHORT n = a->Length < b->Length ? a->Length : b->Length;
  for (USHORT i = 0; i < n; ++i) {
    char x = a->Buffer[i], y = b->Buffer[i];
    if (ci) {
      x = Upper(x);
      y = Upper(y);
    }
    if (x != y) return static_cast<unsigned char>(x) - static_cast<unsigned char>(y);
  }
  return static_cast<LONG>(a->Length) - static_cast<LONG>(b->Length);
}
BOOLEAN RtlEqualString(const STRING* a, const STRING* b, BOOLEAN ci) {
  return a->Length == b->Length && RtlCompareString(a, b, ci) == 0;
}
VOID RtlCopyString(PSTRING d, const STRING* s) {
  if (s == nullptr) {
    d->Length = 0;
    return;
  }
  USHORT n = s->Length < d->MaximumLength ? s->Length : d->MaximumLength;
  std::memmove(d->Buffer, s->Buffer, n);
  d->Length = n;
  if (n < d->MaximumLength) d->Buffer[n] = 0;
}
VOID RtlUpperString(PSTRING d, const STRING* s) {
  USHORT n = s->Length < d->MaximumLength ? s->Length : d->MaximumLength;
  for (USHORT i = 0; i < n; ++i) d->Buffer[i] = Upper(s->Buffer[i]);
  d->Length = n;
}
BOOLEAN RtlPrefixUnicodeString(PCUNICODE_STRING p, PCUNICODE_STRING s, BOOLEAN ci) {
  if (p->Length > s->Length) return FALSE;
  for (USHORT i = 0; i < p->Length / sizeof(WCHAR); ++i) {
    WCHAR x = p->Buffer[i], y = s->Buffer[i];
    if (ci) {
      x = RtlUpcaseUnicodeChar(x);
      y = RtlUpcaseUnicodeChar(y);
    }
    if (x != y) return FALSE;
  }
  return TRUE;
}
NTSTATUS RtlUpcaseUnicodeString(PUNICODE_STRING d, PCUNICODE_STRING s, BOOLEAN alloc) {
  if (alloc) {
    d->Buffer =
        static_cast<PWCH>(ExAllocatePoolWithTag(PagedPool, s->Length + sizeof(WCHAR), kStringTag));
    if (d->Buffer == nullptr) return STATUS_NO_MEMORY;
    d->MaximumLength = static_cast<USHORT>(s->Length + sizeof(WCHAR));
  } else if (d->MaximumLength < s->Length) {
    return STATUS_BUFFER_OVERFLOW;
  }
  for (USHORT i = 0; i < s->Length / sizeof(WCHAR); ++i)
    d->Buffer[i] = RtlUpcaseUnicodeChar(s->Buffer[i]);
  d->Length = s->Length;
  return STATUS_SUCCESS;
}
ULONG RtlxAnsiStringToUnicodeSize(PCANSI_STRING a) {
  return static_cast<ULONG>((a->Length + 1) * sizeof(WCHAR));
}
ULONG RtlxUnicodeStringToAnsiSize(PCUNICODE_STRING u) {
  return static_cast<ULONG>(u->Length / sizeof(WCHAR) + 1);
}

static NTSTATUS IntToUnicode(ULONGLONG v, ULONG base, PUNICODE_STRING s) {
  if (base == 0) base = 10;
  if (base != 2 && base != 8 && base != 10 && base != 16) return STATUS_INVALID_PARAMETER;
  char buf[72];
  int n = 0;
  do {
    buf[n++] = "0123456789ABCDEF"[v % base];
    v /= base;
  } while (v != 0);
  if (static_cast<ULONG>(n) * sizeof(WCHAR) > s->MaximumLength) return STATUS_BUFFER_OVERFLOW;
  for (int i = 0; i < n; ++i) s->Buffer[i] = static_cast<WCHAR>(buf[n - 1 - i]);
  s->Length = static_cast<USHORT>(n * sizeof(WCHAR));
  if (s->Length + sizeof(WCHAR) <= s->MaximumLength) s->Buffer[n] = 0;
  return STATUS_SUCCESS;
}
NTSTATUS RtlInt64ToUnicodeString(ULONGLONG v, ULONG base, PUNICODE_STRING s) {
  return IntToUnicode(v, base, s);
}
NTSTATUS RtlIntPtrToUnicodeString(ULONG_PTR v, ULONG base, PUNICODE_STRING s) {
  return IntToUnicode(v, base, s);
}

// ---- UTF-8 ---------------------------------------------------------------
VOID RtlInitUTF8String(PUTF8_STRING d, PCSZ s) { (void)RtlInitStringEx(d, s); }
NTSTATUS RtlInitUTF8StringEx(PUTF8_STRING d, PCSZ s) { return RtlInitStringEx(d, s); }

NTSTATUS RtlUnicodeToUTF8N(PCHAR out, ULONG max, PULONG actual, PCWCH in, ULONG in_bytes) {
  if (actual == nullptr || (in == nullptr && in_bytes != 0)) return STATUS_INVALID_PARAMETER;
  ULONG n = 0;
  NTSTATUS st = STATUS_SUCCESS;
  for (ULONG i = 0; i < in_bytes / sizeof(WCHAR); ++i) {
    uint32_t c = static_cast<uint32_t>(in[i]);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
      c = 0xFFFD;  // replaced, as Windows does, and reported
      st = STATUS_SOME_NOT_MAPPED;
    }
    char enc[4];
    int len = 0;
    if (c < 0x80) {
      enc[len++] = static_cast<char>(c);
    } else if (c < 0x800) {
      enc[len++] = static_cast<char>(0xC0 | (c >> 6));
      enc[len++] = static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      enc[len++] = static_cast<char>(0xE0 | (c >> 12));
      enc[len++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      enc[len++] = static_cast<char>(0x80 | (c & 0x3F));
    } else {
      enc[len++] = static_cast<char>(0xF0 | (c >> 18));
      enc[len++] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      enc[len++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      enc[len++] = static_cast<char>(0x80 | (c & 0x3F));
    }
    if (out != nullptr) {
      if (n + len > max) {
        *actual = n;
        return STATUS_BUFFER_TOO_SMALL;
      }
      std::memcpy(out + n, enc, len);
    }
    n += len;
  }
  *actual = n;
  return st;
}

NTSTATUS RtlUTF8ToUnicodeN(PWSTR out, ULONG max, PULONG actual, PCCH in, ULONG in_bytes) {
  if (actual == nullptr || (in == nullptr && in_bytes != 0)) return STATUS_INVALID_PARAMETER;
  ULONG n = 0, i = 0;
  NTSTATUS st = STATUS_SUCCESS;
  auto* p = reinterpret_cast<const unsigned char*>(in);
  while (i < in_bytes) {
    uint32_t c = p[i];
    int more = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (more < 0 || i + static_cast<ULONG>(more) >= in_bytes) {
      c = 0xFFFD;  // invalid or truncated sequence: replaced and reported
      st = STATUS_SOME_NOT_MAPPED;
      more = 0;
    }
    if (more > 0) {
      c &= (0x3F >> more);
      for (int k = 1; k <= more; ++k) {
        if ((p[i + k] & 0xC0) != 0x80) {
          c = 0xFFFD;
          st = STATUS_SOME_NOT_MAPPED;
          more = k - 1;
          break;
        }
        c = (c << 6) | (p[i + k] & 0x3F);
      }
    }
    i += more + 1;
    if (out != nullptr) {
      if ((n + 1) * sizeof(WCHAR) > max) {
        *actual = n * sizeof(WCHAR);
        return STATUS_BUFFER_TOO_SMALL;
      }
      out[n] = static_cast<WCHAR>(c);
    }
    ++n;
  }
  *actual = n * sizeof(WCHAR);
  return st;
}

NTSTATUS RtlUnicodeStringToUTF8String(PUTF8_STRING d, PCUNICODE_STRING s, BOOLEAN alloc) {
  ULONG need = 0;
  NTSTATUS st = RtlUnicodeToUTF8N(nullptr, 0, &need, s->Buffer, s->Length);
  if (!NT_SUCCESS(st)) return st;
  if (need > 0xfffe) return STATUS_INVALID_PARAMETER_2;
  if (alloc) {
    d->Buffer = static_cast<PCHAR>(ExAllocatePoolWithTag(PagedPool, need + 1, kStringTag));
    if (d->Buffer == nullptr) return STATUS_NO_MEMORY;
    d->MaximumLength = static_cast<USHORT>(need + 1);
  } else if (d->MaximumLength < need) {
    return STATUS_BUFFER_OVERFLOW;
  }
  ULONG got = 0;
  st = RtlUnicodeToUTF8N(d->Buffer, d->MaximumLength, &got, s->Buffer, s->Length);
  d->Length = static_cast<USHORT>(got);
  if (got < d->MaximumLength) d->Buffer[got] = 0;
  return st;
}

NTSTATUS RtlUTF8StringToUnicodeString(PUNICODE_STRING d, PCUTF8_STRING s, BOOLEAN alloc) {
  ULONG need = 0;
  NTSTATUS st = RtlUTF8ToUnicodeN(nullptr, 0, &need, s->Buffer, s->Length);
  if (!NT_SUCCESS(st)) return st;
  if (need > 0xfffe - sizeof(WCHAR)) return STATUS_INVALID_PARAMETER_2;
  if (alloc) {
    d->Buffer =
        static_cast<PWCH>(ExAllocatePoolWithTag(PagedPool, need + sizeof(WCHAR), kStringTag));
    if (d->Buffer == nullptr) return STATUS_NO_MEMORY;
    d->MaximumLength = static_cast<USHORT>(need + sizeof(WCHAR));
  } else if (d->MaximumLength < need) {
    return STATUS_BUFFER_OVERFLOW;
  }
  ULONG got = 0;
  st = RtlUTF8ToUnicodeN(d->Buffer, d->MaximumLength, &got, s->Buffer, s->Length);
  d->Length = static_cast<USHORT>(got);
  if (got + sizeof(WCHAR) <= d->MaximumLength) d->Buffer[got / sizeof(WCHAR)] = 0;
  return st;
}

VOID RtlFreeUTF8String(PUTF8_STRING s) { RtlFreeAnsiString(s); }

// ---- GUIDs, hashing --------------------------------------------------------
NTSTATUS RtlGUIDFromString(PCUNICODE_STRING s, GUID* g) {
  if (s == nullptr || g == nullptr || s->Buffer == nullptr || s->Length != 38 * sizeof(WCHAR))
    return STATUS_INVALID_PARAMETER;
  char a[39];
  for (int i = 0; i < 38; ++i) {
    WCHAR c = s->Buffer[i];
    if (c > 0x7f) return STATUS_INVALID_PARAMETER;
    a[i] = static_cast<char>(c);
  }
  a[38] = 0;
  unsigned int d1, d2, d3, b[8];
  char tail;
  if (std::sscanf(a, "{%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x}%c", &d1, &d2, &d3, &b[0], &b[1],
                  &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &tail) != 11 ||
      a[0] != '{' || a[9] != '-' || a[14] != '-' || a[19] != '-' || a[24] != '-' || a[37] != '}')
    return STATUS_INVALID_PARAMETER;
  for (int i = 1; i < 37; ++i)
    if (a[i] != '-' && !std::isxdigit(static_cast<unsigned char>(a[i])))
      return STATUS_INVALID_PARAMETER;
  g->Data1 = d1;
  g->Data2 = static_cast<USHORT>(d2);
  g->Data3 = static_cast<USHORT>(d3);
  for (int i = 0; i < 8; ++i) g->Data4[i] = static_cast<UCHAR>(b[i]);
  return STATUS_SUCCESS;
}

NTSTATUS RtlStringFromGUID(const GUID* g, PUNICODE_STRING s) {
  char a[40];
  std::snprintf(a, sizeof a, "{%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}",
                static_cast<unsigned>(g->Data1), g->Data2, g->Data3, g->Data4[0], g->Data4[1],
                g->Data4[2], g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
  s->Buffer = static_cast<PWCH>(ExAllocatePoolWithTag(PagedPool, 39 * sizeof(WCHAR), kStringTag));
  if (s->Buffer == nullptr) return STATUS_NO_MEMORY;
  for (int i = 0; i < 39; ++i) s->Buffer[i] = static_cast<WCHAR>(a[i]);
  s->Length = 38 * sizeof(WCHAR);
  s->MaximumLength = 39 * sizeof(WCHAR);
  return STATUS_SUCCESS;
}

NTSTATUS RtlHashUnicodeString(PCUNICODE_STRING s, BOOLEAN ci, ULONG alg, PULONG hash) {
  if (s == nullptr || hash == nullptr ||
      (alg != HASH_STRING_ALGORITHM_DEFAULT && alg != HASH_STRING_ALGORITHM_X65599))
    return STATUS_INVALID_PARAMETER;
  ULONG h = 0;
  for (USHORT i = 0; i < s->Length / sizeof(WCHAR); ++i) {
    WCHAR c = ci ? RtlUpcaseUnicodeChar(s->Buffer[i]) : s->Buffer[i];
    h = h * 65599 + static_cast<ULONG>(c);
  }
  *hash = h;
  return STATUS_SUCCESS;
}

// ---- time fields (100 ns units since 1601-01-01) -------------------------
VOID RtlTimeToTimeFields(PLARGE_INTEGER t, PTIME_FIELDS f) {
  LONGLONG ticks = t->QuadPart;
  LONGLONG days = ticks / 864000000000LL;
  LONGLONG rem = ticks % 864000000000LL;
  f->Milliseconds = static_cast<CSHORT>((rem / 10000) % 1000);
  LONGLONG secs = rem / 10000000;
  f->Second = static_cast<CSHORT>(secs % 60);
  f->Minute = static_cast<CSHORT>((secs / 60) % 60);
  f->Hour = static_cast<CSHORT>(secs / 3600);
  f->Weekday = static_cast<CSHORT>((days + 1) % 7);  // 1601-01-01 was a Monday
  // Civil date from days since 1601-01-01 (a 400-year cycle starts there).
  LONGLONG z = days;
  LONGLONG era = z / 146097;
  LONGLONG doe = z - era * 146097;
  LONGLONG yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  LONGLONG doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  // Days before each month in a year that starts 1 January.
  bool leap = ((yoe + 1) % 4 == 0 && ((yoe + 1) % 100 != 0 || (yoe + 1) % 400 == 0));
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int m = 0;
  while (true) {
    int dm = kDays[m] + (m == 1 && leap ? 1 : 0);
    if (doy < dm) break;
    doy -= dm;
    ++m;
  }
  f->Year = static_cast<CSHORT>(1601 + era * 400 + yoe);
  f->Month = static_cast<CSHORT>(m + 1);
  f->Day = static_cast<CSHORT>(doy + 1);
}

BOOLEAN RtlTimeFieldsToTime(PTIME_FIELDS f, PLARGE_INTEGER t) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (f->Year < 1601 || f->Month < 1 || f->Month > 12 || f->Day < 1 || f->Hour < 0 ||
      f->Hour > 23 || f->Minute < 0 || f->Minute > 59 || f->Second < 0 || f->Second > 59 ||
      f->Milliseconds < 0 || f->Milliseconds > 999)
    return FALSE;
  auto leap = [](LONGLONG y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); };
  if (f->Day > kDays[f->Month - 1] + (f->Month == 2 && leap(f->Year) ? 1 : 0)) return FALSE;
  LONGLONG y = f->Year - 1601;
  LONGLONG days = y * 365 + y / 4 - y / 100 + y / 400;
  for (int m = 0; m < f->Month - 1; ++m) days += kDays[m] + (m == 1 && leap(f->Year) ? 1 : 0);
  days += f->Day - 1;
  t->QuadPart = (((days * 24 + f->Hour) * 60 + f->Minute) * 60 + f->Second) * 10000000LL +
                f->Milliseconds * 10000LL;
  return TRUE;
}

// ---- bitmaps ---------------------------------------------------------------
VOID RtlInitializeBitMap(PRTL_BITMAP b, PULONG buffer, ULONG size) {
  b->SizeOfBitMap = size;
  b->Buffer = buffer;
}
VOID RtlClearAllBits(PRTL_BITMAP b) {
  std::memset(b->Buffer, 0, ((b->SizeOfBitMap + 31) / 32) * 4);
}
VOID RtlSetAllBits(PRTL_BITMAP b) {
  std::memset(b->Buffer, 0xff, ((b->SizeOfBitMap + 31) / 32) * 4);
}
VOID RtlClearBit(PRTL_BITMAP b, ULONG i) { Put(b, i, false); }
VOID RtlSetBit(PRTL_BITMAP b, ULONG i) { Put(b, i, true); }
BOOLEAN RtlTestBit(PRTL_BITMAP b, ULONG i) { return Bit(b, i) ? TRUE : FALSE; }
VOID RtlClearBits(PRTL_BITMAP b, ULONG s, ULONG n) {
  for (ULONG i = s; i < s + n; ++i) Put(b, i, false);
}
VOID RtlSetBits(PRTL_BITMAP b, ULONG s, ULONG n) {
  for (ULONG i = s; i < s + n; ++i) Put(b, i, true);
}
BOOLEAN RtlAreBitsClear(PRTL_BITMAP b, ULONG s, ULONG n) { return Run(b, s, n, false); }
BOOLEAN RtlAreBitsSet(PRTL_BITMAP b, ULONG s, ULONG n) { return Run(b, s, n, true); }
ULONG RtlNumberOfSetBits(PRTL_BITMAP b) {
  ULONG n = 0;
  for (ULONG i = 0; i < b->SizeOfBitMap; ++i) n += Bit(b, i);
  return n;
}
ULONG RtlNumberOfClearBits(PRTL_BITMAP b) { return b->SizeOfBitMap - RtlNumberOfSetBits(b); }
ULONG RtlNumberOfSetBitsUlongPtr(ULONG_PTR v) {
  return static_cast<ULONG>(__builtin_popcountll(v));
}
ULONG RtlFindClearBits(PRTL_BITMAP b, ULONG n, ULONG h) { return Find(b, n, h, false); }
ULONG RtlFindSetBits(PRTL_BITMAP b, ULONG n, ULONG h) { return Find(b, n, h, true); }
ULONG RtlFindClearBitsAndSet(PRTL_BITMAP b, ULONG n, ULONG h) {
  ULONG i = Find(b, n, h, false);
  if (i != kNotFound) RtlSetBits(b, i, n);
  return i;
}
ULONG RtlFindSetBitsAndClear(PRTL_BITMAP b, ULONG n, ULONG h) {
  ULONG i = Find(b, n, h, true);
  if (i != kNotFound) RtlClearBits(b, i, n);
  return i;
}
ULONG RtlFindNextForwardRunClear(PRTL_BITMAP b, ULONG from, PULONG start) {
  ULONG i = from;
  while (i < b->SizeOfBitMap && Bit(b, i)) ++i;
  *start = i;
  return i < b->SizeOfBitMap ? RunLength(b, i, false) : 0;
}
ULONG RtlFindFirstRunClear(PRTL_BITMAP b, PULONG start) {
  return RtlFindNextForwardRunClear(b, 0, start);
}
ULONG RtlFindLastBackwardRunClear(PRTL_BITMAP b, ULONG from, PULONG start) {
  if (b->SizeOfBitMap == 0) {
    *start = 0;
    return 0;
  }
  LONGLONG i = from < b->SizeOfBitMap ? from : b->SizeOfBitMap - 1;
  while (i >= 0 && Bit(b, static_cast<ULONG>(i))) --i;
  if (i < 0) {
    *start = 0;
    return 0;
  }
  LONGLONG end = i;
  while (i >= 0 && !Bit(b, static_cast<ULONG>(i))) --i;
  *start = static_cast<ULONG>(i + 1);
  return static_cast<ULONG>(end - i);
}
ULONG RtlFindLongestRunClear(PRTL_BITMAP b, PULONG start) {
  ULONG best = 0, best_at = 0, i = 0;
  while (i < b->SizeOfBitMap) {
    ULONG n = RunLength(b, i, false);
    if (n > best) {
      best = n;
      best_at = i;
    }
    i += n ? n : 1;
  }
  *start = best_at;
  return best;
}
ULONG RtlFindClearRuns(PRTL_BITMAP b, PRTL_BITMAP_RUN runs, ULONG size, BOOLEAN longest) {
  ULONG count = 0, i = 0;
  while (i < b->SizeOfBitMap) {
    ULONG n = RunLength(b, i, false);
    if (n == 0) {
      ++i;
      continue;
    }
    if (count < size) {
      runs[count++] = {i, n};
    } else if (longest) {
      // Replace the shortest kept run.
      ULONG shortest = 0;
      for (ULONG k = 1; k < size; ++k)
        if (runs[k].NumberOfBits < runs[shortest].NumberOfBits) shortest = k;
      if (size != 0 && runs[shortest].NumberOfBits < n) runs[shortest] = {i, n};
    } else {
      break;
    }
    i += n;
  }
  return count;
}
CCHAR RtlFindLeastSignificantBit(ULONGLONG v) {
  return v == 0 ? -1 : static_cast<CCHAR>(__builtin_ctzll(v));
}
CCHAR RtlFindMostSignificantBit(ULONGLONG v) {
  return v == 0 ? -1 : static_cast<CCHAR>(63 - __builtin_clzll(v));
}

// ---- memory, probes, interlocked --------------------------------------------
BOOLEAN RtlConstantTimeEqualMemory(const VOID* a, const VOID* b, ULONG len) {
  auto* x = static_cast<const volatile unsigned char*>(a);
  auto* y = static_cast<const volatile unsigned char*>(b);
  unsigned char diff = 0;
  for (ULONG i = 0; i < len; ++i) diff |= static_cast<unsigned char>(x[i] ^ y[i]);
  return diff == 0;
}

static void Probe(const volatile void* address, SIZE_T length, ULONG alignment) {
  if (length == 0) return;
  auto a = reinterpret_cast<uintptr_t>(address);
  if (alignment != 0 && (a & (alignment - 1)) != 0) ExRaiseStatus(STATUS_DATATYPE_MISALIGNMENT);
  if (a + length < a) ExRaiseStatus(STATUS_ACCESS_VIOLATION);
}
VOID ProbeForRead(const volatile VOID* Address, SIZE_T Length, ULONG Alignment) {
  Probe(Address, Length, Alignment);
}
VOID ProbeForWrite(volatile VOID* Address, SIZE_T Length, ULONG Alignment) {
  Probe(Address, Length, Alignment);
}

ULONG ExInterlockedAddUlong(PULONG Addend, ULONG Increment, PKSPIN_LOCK Lock) {
  (void)Lock;
  return __atomic_fetch_add(Addend, Increment, __ATOMIC_SEQ_CST);
}
LARGE_INTEGER ExInterlockedAddLargeInteger(PLARGE_INTEGER Addend, LARGE_INTEGER Increment,
                                           PKSPIN_LOCK Lock) {
  (void)Lock;
  LARGE_INTEGER old;
  old.QuadPart = __atomic_fetch_add(&Addend->QuadPart, Increment.QuadPart, __ATOMIC_SEQ_CST);
  return old;
}
LONGLONG ExInterlockedCompareExchange64(LONGLONG volatile* Destination, PLONGLONG Exchange,
                                        PLONGLONG Comperand, PKSPIN_LOCK Lock) {
  (void)Lock;
  LONGLONG expected = *Comperand;
  __atomic_compare_exchange_n(Destination, &expected, *Exchange, false, __ATOMIC_SEQ_CST,
                              __ATOMIC_SEQ_CST);
  return expected;
}

}  // extern "C"
