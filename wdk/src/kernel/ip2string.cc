// SPDX-License-Identifier: Apache-2.0
// Textual IPv4/IPv6 addresses (ip2string.h), as the Windows Rtl functions
// document them: non-strict IPv4 takes 1 to 4 parts in decimal, octal (0...)
// or hex (0x...); strict takes exactly four decimal parts. Ports are in
// network byte order.
#include <arpa/inet.h>
#include <ip2string.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

bool IsDigitIn(char c, unsigned base) {
  if (base == 16) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  if (base == 8) return c >= '0' && c <= '7';
  return c >= '0' && c <= '9';
}

unsigned DigitValue(char c) {
  if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
  return static_cast<unsigned>(c - 'A' + 10);
}

NTSTATUS ParseV4(const char* s, bool strict, const char** end, in_addr* addr) {
  unsigned long long parts[4];
  int n = 0;
  const char* p = s;
  for (;;) {
    unsigned base = 10;
    if (!strict && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
      base = 16;
      p += 2;
    } else if (!strict && p[0] == '0' && IsDigitIn(p[1], 10)) {
      base = 8;
      p += 1;
    }
    if (!IsDigitIn(*p, base)) {
      *end = p;
      return STATUS_INVALID_PARAMETER;
    }
    unsigned long long v = 0;
    while (IsDigitIn(*p, base)) {
      v = v * base + DigitValue(*p++);
      if (v > 0xffffffffULL) {
        *end = p;
        return STATUS_INVALID_PARAMETER;
      }
    }
    parts[n++] = v;
    if (*p != '.' || n == 4) break;
    p++;
  }
  *end = p;
  if (strict && n != 4) return STATUS_INVALID_PARAMETER;
  unsigned long long value = 0;
  // The last part fills the remaining bytes (a, a.b24, a.b.c16, a.b.c.d).
  for (int i = 0; i < n - 1; i++) {
    if (parts[i] > 255) return STATUS_INVALID_PARAMETER;
    value |= parts[i] << (24 - 8 * i);
  }
  unsigned long long last_max = 0xffffffffULL >> (8 * (n - 1));
  if (parts[n - 1] > last_max) return STATUS_INVALID_PARAMETER;
  value |= parts[n - 1];
  addr->s_addr = htonl(static_cast<uint32_t>(value));
  return STATUS_SUCCESS;
}

bool ParsePort(const char* p, USHORT* port) {
  if (*p == '\0') return false;
  unsigned long v = 0;
  for (; *p != '\0'; p++) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + static_cast<unsigned long>(*p - '0');
    if (v > 65535) return false;
  }
  *port = htons(static_cast<USHORT>(v));
  return true;
}

NTSTATUS ParseV6(const char* s, const char** end, in6_addr* addr) {
  const char* p = s;
  while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F') ||
         *p == ':' || *p == '.') {
    p++;
  }
  *end = p;
  std::string text(s, p);
  if (text.empty() || inet_pton(AF_INET6, text.c_str(), addr) != 1) return STATUS_INVALID_PARAMETER;
  return STATUS_SUCCESS;
}

NTSTATUS ParseV6Ex(const char* s, in6_addr* addr, ULONG* scope, USHORT* port) {
  bool bracket = *s == '[';
  const char* p = s + (bracket ? 1 : 0);
  const char* end = nullptr;
  if (!NT_SUCCESS(ParseV6(p, &end, addr))) return STATUS_INVALID_PARAMETER;
  p = end;
  unsigned long sc = 0;
  if (*p == '%') {
    p++;
    if (*p < '0' || *p > '9') return STATUS_INVALID_PARAMETER;
    while (*p >= '0' && *p <= '9') {
      sc = sc * 10 + static_cast<unsigned long>(*p++ - '0');
      if (sc > 0xffffffffUL) return STATUS_INVALID_PARAMETER;
    }
  }
  USHORT pt = 0;
  if (bracket) {
    if (*p++ != ']') return STATUS_INVALID_PARAMETER;
    if (*p == ':') {
      if (!ParsePort(p + 1, &pt)) return STATUS_INVALID_PARAMETER;
    } else if (*p != '\0') {
      return STATUS_INVALID_PARAMETER;
    }
  } else if (*p != '\0') {
    return STATUS_INVALID_PARAMETER;
  }
  *scope = static_cast<ULONG>(sc);
  *port = pt;
  return STATUS_SUCCESS;
}

// Wide to narrow for address text: anything outside ASCII cannot be part of
// an address and becomes a character every parser rejects.
std::string Narrow(PCWSTR s) {
  std::string out;
  for (; *s != L'\0'; s++) out += (*s > 0 && *s < 0x80) ? static_cast<char>(*s) : '\x7f';
  return out;
}

PWSTR Widen(const char* s, PWSTR out) {
  while (*s != '\0') *out++ = static_cast<WCHAR>(*s++);
  *out = L'\0';
  return out;
}

std::string V4Text(const in_addr* a, USHORT port) {
  char buf[INET_ADDRSTRLEN + 8];
  inet_ntop(AF_INET, a, buf, sizeof buf);
  std::string s = buf;
  if (port != 0) {
    // Appended piecewise: gcc 12's -Wrestrict misfires on ":" + string.
    s += ':';
    s += std::to_string(ntohs(port));
  }
  return s;
}

std::string V6Text(const in6_addr* a, ULONG scope, USHORT port) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, a, buf, sizeof buf);
  std::string s = buf;
  if (scope != 0) {
    s += '%';
    s += std::to_string(scope);
  }
  if (port != 0) s = "[" + s + "]:" + std::to_string(ntohs(port));
  return s;
}

template <typename Char>
NTSTATUS CopyOut(const std::string& text, Char* out, PULONG length) {
  if (length == nullptr) return STATUS_INVALID_PARAMETER;
  ULONG need = static_cast<ULONG>(text.size() + 1);
  if (out == nullptr || *length < need) {
    *length = need;
    return STATUS_INVALID_PARAMETER;
  }
  for (size_t i = 0; i < text.size(); i++) out[i] = static_cast<Char>(text[i]);
  out[text.size()] = 0;
  *length = need;
  return STATUS_SUCCESS;
}

}  // namespace

extern "C" {

NTSTATUS RtlIpv4StringToAddressA(PCSTR S, BOOLEAN Strict, PCSTR* Terminator, struct in_addr* Addr) {
  const char* end = S;
  NTSTATUS st = ParseV4(S, Strict != FALSE, &end, Addr);
  if (Terminator != nullptr) *Terminator = end;
  return st;
}

NTSTATUS RtlIpv4StringToAddressW(PCWSTR S, BOOLEAN Strict, PCWSTR* Terminator,
                                 struct in_addr* Addr) {
  std::string n = Narrow(S);
  const char* end = n.c_str();
  NTSTATUS st = ParseV4(n.c_str(), Strict != FALSE, &end, Addr);
  if (Terminator != nullptr) *Terminator = S + (end - n.c_str());
  return st;
}

NTSTATUS RtlIpv4StringToAddressExA(PCSTR AddressString, BOOLEAN Strict, struct in_addr* Address,
                                   PUSHORT Port) {
  if (AddressString == nullptr || Address == nullptr || Port == nullptr) {
    return STATUS_INVALID_PARAMETER;
  }
  const char* end = nullptr;
  in_addr a{};
  if (!NT_SUCCESS(ParseV4(AddressString, Strict != FALSE, &end, &a))) {
    return STATUS_INVALID_PARAMETER;
  }
  USHORT port = 0;
  if (*end == ':') {
    if (!ParsePort(end + 1, &port)) return STATUS_INVALID_PARAMETER;
  } else if (*end != '\0') {
    return STATUS_INVALID_PARAMETER;
  }
  *Address = a;
  *Port = port;
  return STATUS_SUCCESS;
}

NTSTATUS RtlIpv4StringToAddressExW(PCWSTR AddressString, BOOLEAN Strict, struct in_addr* Address,
                                   PUSHORT Port) {
  if (AddressString == nullptr) return STATUS_INVALID_PARAMETER;
  return RtlIpv4StringToAddressExA(Narrow(AddressString).c_str(), Strict, Address, Port);
}

NTSTATUS RtlIpv6StringToAddressA(PCSTR S, PCSTR* Terminator, struct in6_addr* Addr) {
  const char* end = S;
  NTSTATUS st = ParseV6(S, &end, Addr);
  if (Terminator != nullptr) *Terminator = end;
  return st;
}

NTSTATUS RtlIpv6StringToAddressW(PCWSTR S, PCWSTR* Terminator, struct in6_addr* Addr) {
  std::string n = Narrow(S);
  const char* end = n.c_str();
  NTSTATUS st = ParseV6(n.c_str(), &end, Addr);
  if (Terminator != nullptr) *Terminator = S + (end - n.c_str());
  return st;
}

NTSTATUS RtlIpv6StringToAddressExA(PCSTR AddressString, struct in6_addr* Address, PULONG ScopeId,
                                   PUSHORT Port) {
  if (AddressString == nullptr || Address == nullptr || ScopeId == nullptr || Port == nullptr) {
    return STATUS_INVALID_PARAMETER;
  }
  in6_addr a{};
  ULONG scope = 0;
  USHORT port = 0;
  if (!NT_SUCCESS(ParseV6Ex(AddressString, &a, &scope, &port))) return STATUS_INVALID_PARAMETER;
  *Address = a;
  *ScopeId = scope;
  *Port = port;
  return STATUS_SUCCESS;
}

NTSTATUS RtlIpv6StringToAddressExW(PCWSTR AddressString, struct in6_addr* Address, PULONG ScopeId,
                                   PUSHORT Port) {
  if (AddressString == nullptr) return STATUS_INVALID_PARAMETER;
  return RtlIpv6StringToAddressExA(Narrow(AddressString).c_str(), Address, ScopeId, Port);
}

PSTR RtlIpv4AddressToStringA(const struct in_addr* Addr, PSTR S) {
  std::string t = V4Text(Addr, 0);
  std::memcpy(S, t.c_str(), t.size() + 1);
  return S + t.size();
}

PWSTR RtlIpv4AddressToStringW(const struct in_addr* Addr, PWSTR S) {
  return Widen(V4Text(Addr, 0).c_str(), S);
}

PSTR RtlIpv6AddressToStringA(const struct in6_addr* Addr, PSTR S) {
  std::string t = V6Text(Addr, 0, 0);
  std::memcpy(S, t.c_str(), t.size() + 1);
  return S + t.size();
}

PWSTR RtlIpv6AddressToStringW(const struct in6_addr* Addr, PWSTR S) {
  return Widen(V6Text(Addr, 0, 0).c_str(), S);
}

NTSTATUS RtlIpv4AddressToStringExA(const struct in_addr* Address, USHORT Port, PSTR AddressString,
                                   PULONG AddressStringLength) {
  if (Address == nullptr) return STATUS_INVALID_PARAMETER;
  return CopyOut(V4Text(Address, Port), AddressString, AddressStringLength);
}

NTSTATUS RtlIpv4AddressToStringExW(const struct in_addr* Address, USHORT Port, PWSTR AddressString,
                                   PULONG AddressStringLength) {
  if (Address == nullptr) return STATUS_INVALID_PARAMETER;
  return CopyOut(V4Text(Address, Port), AddressString, AddressStringLength);
}

NTSTATUS RtlIpv6AddressToStringExA(const struct in6_addr* Address, ULONG ScopeId, USHORT Port,
                                   PSTR AddressString, PULONG AddressStringLength) {
  if (Address == nullptr) return STATUS_INVALID_PARAMETER;
  return CopyOut(V6Text(Address, ScopeId, Port), AddressString, AddressStringLength);
}

NTSTATUS RtlIpv6AddressToStringExW(const struct in6_addr* Address, ULONG ScopeId, USHORT Port,
                                   PWSTR AddressString, PULONG AddressStringLength) {
  if (Address == nullptr) return STATUS_INVALID_PARAMETER;
  return CopyOut(V6Text(Address, ScopeId, Port), AddressString, AddressStringLength);
}

}  // extern "C"
