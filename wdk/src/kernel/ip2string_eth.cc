// SPDX-License-Identifier: Apache-2.0
// ip2string.h: Ethernet (EUI-48) addresses to and from "XX-XX-XX-XX-XX-XX".
#include <ip2string.h>

namespace {

template <typename C>
C* ToString(const DL_EUI48* a, C* s) {
  static const char kHex[] = "0123456789ABCDEF";
  for (int i = 0; i < 6; ++i) {
    if (i) *s++ = '-';
    *s++ = static_cast<C>(kHex[a->Byte[i] >> 4]);
    *s++ = static_cast<C>(kHex[a->Byte[i] & 15]);
  }
  *s = 0;
  return s;
}

template <typename C>
int HexDigit(C c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

template <typename C>
NTSTATUS FromString(const C* s, const C** terminator, DL_EUI48* a) {
  if (s == nullptr || terminator == nullptr || a == nullptr) return STATUS_INVALID_PARAMETER;
  DL_EUI48 out;
  const C* p = s;
  for (int i = 0; i < 6; ++i) {
    if (i) {
      if (*p != '-') {
        *terminator = p;
        return STATUS_INVALID_PARAMETER;
      }
      ++p;
    }
    int hi = HexDigit(p[0]);
    int lo = hi < 0 ? -1 : HexDigit(p[1]);
    if (lo < 0) {
      *terminator = p;
      return STATUS_INVALID_PARAMETER;
    }
    out.Byte[i] = static_cast<UCHAR>(hi * 16 + lo);
    p += 2;
  }
  *terminator = p;
  *a = out;
  return STATUS_SUCCESS;
}

}  // namespace

extern "C" {

PSTR RtlEthernetAddressToStringA(const DL_EUI48* Addr, PSTR S) { return ToString(Addr, S); }
PWSTR RtlEthernetAddressToStringW(const DL_EUI48* Addr, PWSTR S) { return ToString(Addr, S); }
NTSTATUS RtlEthernetStringToAddressA(PCSTR S, PCSTR* Terminator, DL_EUI48* Addr) {
  return FromString(S, Terminator, Addr);
}
NTSTATUS RtlEthernetStringToAddressW(PCWSTR S, PCWSTR* Terminator, DL_EUI48* Addr) {
  return FromString(S, Terminator, Addr);
}

}  // extern "C"
