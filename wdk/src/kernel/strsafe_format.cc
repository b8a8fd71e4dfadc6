// SPDX-License-Identifier: Apache-2.0
// Windows printf conversions (see strsafe_format.h): each conversion is
// parsed here; numbers are formatted by snprintf with a rebuilt narrow
// specification, strings and characters are converted and padded here.
#include "kernel/strsafe_format.h"

#include <cstdio>
#include <cstring>

#include "ntdef.h"

namespace softndk::wdk {
namespace {

// Narrow <-> wide for printing: code points below 0x100 map directly, others
// become '?' (as RtlUnicodeToMultiByteN does for unmappable characters).
template <typename Out>
void AppendNarrow(const char* s, size_t n, Out* out) {
  for (size_t i = 0; i < n; ++i) out->push_back(static_cast<unsigned char>(s[i]));
}
template <typename Out>
void AppendWide(const wchar_t* s, size_t n, Out* out) {
  for (size_t i = 0; i < n; ++i) {
    wchar_t c = s[i];
    if (sizeof(typename Out::value_type) == 1 && (c < 0 || c > 0xff)) c = L'?';
    out->push_back(static_cast<typename Out::value_type>(c));
  }
}

size_t Bounded(const char* s, long precision) {
  if (precision < 0) return std::strlen(s);
  size_t n = 0;
  while (n < static_cast<size_t>(precision) && s[n] != 0) ++n;
  return n;
}
size_t Bounded(const wchar_t* s, long precision) {
  if (precision < 0) return std::wcslen(s);
  size_t n = 0;
  while (n < static_cast<size_t>(precision) && s[n] != 0) ++n;
  return n;
}

template <typename CharT, typename Str>
bool Format(const CharT* f, va_list ap, Str* out) {
  constexpr bool kWide = sizeof(CharT) != 1;
  while (*f != 0) {
    if (*f != '%') {
      out->push_back(*f++);
      continue;
    }
    ++f;
    if (*f == '%') {
      out->push_back('%');
      ++f;
      continue;
    }
    std::string spec = "%";
    bool left = false;
    while (*f == '-' || *f == '+' || *f == ' ' || *f == '#' || *f == '0') {
      if (*f == '-') left = true;
      spec.push_back(static_cast<char>(*f++));
    }
    long width = -1;
    if (*f == '*') {
      width = va_arg(ap, int);
      if (width < 0) {
        left = true;
        spec.push_back('-');
        width = -width;
      }
      ++f;
    } else {
      while (*f >= '0' && *f <= '9') width = (width < 0 ? 0 : width * 10) + (*f++ - '0');
    }
    if (width >= 0) spec += std::to_string(width);
    long precision = -1;
    if (*f == '.') {
      ++f;
      precision = 0;
      if (*f == '*') {
        precision = va_arg(ap, int);
        ++f;
      } else {
        while (*f >= '0' && *f <= '9') precision = precision * 10 + (*f++ - '0');
      }
      if (precision >= 0) spec += "." + std::to_string(precision);
    }
    // Size prefix: 0 = int, 'h', 'H' (char), 'l' (32-bit long on Windows),
    // 'L' (64-bit), 'z' (size_t), 'w' (wide string/char).
    char size = 0;
    if (f[0] == 'I' && f[1] == '6' && f[2] == '4') {
      size = 'L';
      f += 3;
    } else if (f[0] == 'I' && f[1] == '3' && f[2] == '2') {
      size = 0;
      f += 3;
    } else if (f[0] == 'I') {
      size = 'z';
      ++f;
    } else if (f[0] == 'l' && f[1] == 'l') {
      size = 'L';
      f += 2;
    } else if (f[0] == 'h' && f[1] == 'h') {
      size = 'H';
      f += 2;
    } else if (*f == 'h' || *f == 'l' || *f == 'w' || *f == 'z' || *f == 'j' || *f == 't' ||
               *f == 'L') {
      size = static_cast<char>(*f == 'j' ? 'L' : *f == 't' ? 'z' : *f);
      ++f;
    }
    CharT conv = *f;
    if (conv == 0) return false;
    ++f;
    Str piece;
    switch (conv) {
      case 'd':
      case 'i':
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        char buf[128];
        bool is_signed = conv == 'd' || conv == 'i';
        std::string s = spec;
        if (size == 'L' || size == 'z') {
          s += "ll";
          s.push_back(static_cast<char>(conv));
          unsigned long long v = size == 'L' ? va_arg(ap, unsigned long long)
                                             : static_cast<unsigned long long>(va_arg(ap, size_t));
          if (is_signed)
            std::snprintf(buf, sizeof buf, s.c_str(), static_cast<long long>(v));
          else
            std::snprintf(buf, sizeof buf, s.c_str(), v);
        } else {
          // Windows' long is 32 bits: 'l' is an int-sized argument here.
          if (size == 'h') s += "h";
          if (size == 'H') s += "hh";
          s.push_back(static_cast<char>(conv));
          unsigned int v = va_arg(ap, unsigned int);
          if (is_signed)
            std::snprintf(buf, sizeof buf, s.c_str(), static_cast<int>(v));
          else
            std::snprintf(buf, sizeof buf, s.c_str(), v);
        }
        AppendNarrow(buf, std::strlen(buf), out);
        continue;
      }
      case 'p': {
        char buf[64];
        // Windows prints pointers as zero-padded upper-case hex.
        std::snprintf(
            buf, sizeof buf, "%016llX",
            static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(va_arg(ap, void*))));
        AppendNarrow(buf, std::strlen(buf), &piece);
        break;
      }
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G':
      case 'a':
      case 'A': {
        char buf[512];
        std::string s = spec;
        s.push_back(static_cast<char>(conv));
        std::snprintf(buf, sizeof buf, s.c_str(), va_arg(ap, double));
        AppendNarrow(buf, std::strlen(buf), out);
        continue;
      }
      case 'c':
      case 'C': {
        bool wide = size == 'w' || size == 'l' || (size != 'h' && (conv == 'c') == kWide);
        int c = va_arg(ap, int);
        if (wide) {
          wchar_t w = static_cast<wchar_t>(c);
          AppendWide(&w, 1, &piece);
        } else {
          char n = static_cast<char>(c);
          AppendNarrow(&n, 1, &piece);
        }
        break;
      }
      case 's':
      case 'S': {
        bool wide = size == 'w' || size == 'l' || (size != 'h' && (conv == 's') == kWide);
        if (wide) {
          const wchar_t* s = va_arg(ap, const wchar_t*);
          if (s == nullptr) s = L"(null)";
          AppendWide(s, Bounded(s, precision), &piece);
        } else {
          const char* s = va_arg(ap, const char*);
          if (s == nullptr) s = "(null)";
          AppendNarrow(s, Bounded(s, precision), &piece);
        }
        break;
      }
      case 'Z': {
        // %wZ: PCUNICODE_STRING; %Z: PCANSI_STRING (Length in bytes).
        if (size == 'w') {
          const UNICODE_STRING* u = va_arg(ap, const UNICODE_STRING*);
          if (u == nullptr || u->Buffer == nullptr)
            AppendNarrow("(null)", 6, &piece);
          else
            AppendWide(u->Buffer, u->Length / sizeof(WCHAR), &piece);
        } else {
          const ANSI_STRING* a = va_arg(ap, const ANSI_STRING*);
          if (a == nullptr || a->Buffer == nullptr)
            AppendNarrow("(null)", 6, &piece);
          else
            AppendNarrow(a->Buffer, a->Length, &piece);
        }
        break;
      }
      case 'n':
        // %n writes through a pointer: the kernel formatter refuses it too.
        return false;
      default:
        return false;
    }
    // Pad strings, characters and pointers to the width.
    long pad = width - static_cast<long>(piece.size());
    if (!left)
      for (long i = 0; i < pad; ++i) out->push_back(' ');
    out->append(piece);
    if (left)
      for (long i = 0; i < pad; ++i) out->push_back(' ');
  }
  return true;
}

}  // namespace

bool FormatWindows(const char* format, va_list args, std::string* out) {
  va_list ap;
  va_copy(ap, args);
  bool ok = Format<char>(format, ap, out);
  va_end(ap);
  return ok;
}

bool FormatWindows(const wchar_t* format, va_list args, std::wstring* out) {
  va_list ap;
  va_copy(ap, args);
  bool ok = Format<wchar_t>(format, ap, out);
  va_end(ap);
  return ok;
}

}  // namespace softndk::wdk
