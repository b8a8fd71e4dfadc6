// SPDX-License-Identifier: Apache-2.0
// The host's side of the kit's registry: the driver's service key, values
// from a file (a subset of .reg syntax plus NAME=TYPE:VALUE lines) and from
// the command line (softndk-wdk-run --registry FILE / --reg SPEC).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "kernel/registry_store.h"

namespace softndk::wdk {
namespace {

std::mutex g_mutex;
std::wstring g_service_key = L"\\Registry\\Machine\\System\\CurrentControlSet\\Services\\driver";

std::wstring Widen(const std::string& s) {
  std::wstring w;
  for (unsigned char c : s) w.push_back(static_cast<wchar_t>(c));
  return w;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return std::string();
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string LowerA(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A key named in a file or spec: absolute, or under the service key.
std::wstring KeyPath(const std::string& name) {
  std::string lower = LowerA(name);
  std::wstring service;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    service = g_service_key;
  }
  if (lower.compare(0, 19, "hkey_local_machine\\") == 0)
    return NormalizeKeyPath(L"\\Registry\\Machine\\" + Widen(name.substr(19)));
  if (lower.compare(0, 5, "hklm\\") == 0)
    return NormalizeKeyPath(L"\\Registry\\Machine\\" + Widen(name.substr(5)));
  if (lower.compare(0, 10, "\\registry\\") == 0) return NormalizeKeyPath(Widen(name));
  return NormalizeKeyPath(service + (name.empty() ? L"" : L"\\" + Widen(name)));
}

bool ParseNumber(const std::string& s, int base, unsigned long long* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *out = std::strtoull(s.c_str(), &end, base);
  return errno == 0 && end != nullptr && *end == 0;
}

bool ParseHexBytes(const std::string& s, std::vector<uint8_t>* out) {
  std::string t;
  for (char c : s)
    if (c != ' ' && c != '\\' && c != '\t') t.push_back(c);
  size_t i = 0;
  while (i < t.size()) {
    size_t j = t.find(',', i);
    if (j == std::string::npos) j = t.size();
    unsigned long long b;
    if (j - i == 0 || j - i > 2 || !ParseNumber(t.substr(i, j - i), 16, &b)) return false;
    out->push_back(static_cast<uint8_t>(b));
    i = j + 1;
  }
  return true;
}

void AppendString(std::vector<uint8_t>* data, const std::wstring& s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.c_str());
  data->insert(data->end(), p, p + (s.size() + 1) * sizeof(WCHAR));
}

// UTF-16LE bytes (.reg hex(2)/hex(7)) to the kit's WCHAR strings.
std::vector<uint8_t> FromUtf16(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < in.size(); i += 2) {
    WCHAR c = static_cast<WCHAR>(in[i] | (in[i + 1] << 8));
    const auto* p = reinterpret_cast<const uint8_t*>(&c);
    out.insert(out.end(), p, p + sizeof c);
  }
  return out;
}

// TYPE:VALUE of a NAME=TYPE:VALUE specification.
bool ParseTyped(const std::string& typed, ULONG* type, std::vector<uint8_t>* data) {
  size_t colon = typed.find(':');
  if (colon == std::string::npos) return false;
  std::string t = LowerA(typed.substr(0, colon));
  if (t.compare(0, 4, "reg_") == 0) t = t.substr(4);
  std::string v = typed.substr(colon + 1);
  unsigned long long n;
  if (t == "sz" || t == "expand_sz") {
    *type = t == "sz" ? REG_SZ : REG_EXPAND_SZ;
    AppendString(data, Widen(v));
  } else if (t == "multi_sz") {
    *type = REG_MULTI_SZ;
    size_t i = 0;
    while (i <= v.size() && !v.empty()) {
      size_t j = v.find(',', i);
      if (j == std::string::npos) j = v.size();
      AppendString(data, Widen(v.substr(i, j - i)));
      i = j + 1;
    }
    AppendString(data, L"");
  } else if (t == "dword" || t == "qword") {
    bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
    if (!ParseNumber(hex ? v.substr(2) : v, hex ? 16 : 10, &n)) return false;
    if (t == "dword" && n > 0xffffffffull) return false;
    *type = t == "dword" ? REG_DWORD : REG_QWORD;
    size_t size = t == "dword" ? 4 : 8;
    for (size_t i = 0; i < size; ++i) data->push_back(static_cast<uint8_t>(n >> (8 * i)));
  } else if (t == "binary") {
    *type = REG_BINARY;
    std::string hex;
    for (char c : v)
      if (c != ' ' && c != ',') hex.push_back(c);
    if (hex.size() % 2 != 0) return false;
    for (size_t i = 0; i < hex.size(); i += 2) {
      if (!ParseNumber(hex.substr(i, 2), 16, &n)) return false;
      data->push_back(static_cast<uint8_t>(n));
    }
  } else {
    return false;
  }
  return true;
}

// NAME=TYPE:VALUE, NAME possibly SUBKEY\NAME, under `key`.
bool SetSpec(const std::wstring& key, const std::string& spec) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  std::string name = spec.substr(0, eq);
  std::wstring k = key;
  size_t slash = name.rfind('\\');
  if (slash != std::string::npos) {
    k = NormalizeKeyPath(key + L"\\" + Widen(name.substr(0, slash)));
    name = name.substr(slash + 1);
  }
  ULONG type;
  std::vector<uint8_t> data;
  if (k.empty() || !ParseTyped(spec.substr(eq + 1), &type, &data)) return false;
  return NT_SUCCESS(RegistrySetValue(k, Widen(name), type, data.data(), data.size(), true));
}

// A .reg value line: "Name"=... or @=...
bool SetRegLine(const std::wstring& key, const std::string& line) {
  std::string name;
  size_t i = 0;
  if (line[0] == '@') {
    i = 1;
  } else {
    i = 1;
    while (i < line.size() && line[i] != '"') {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      name.push_back(line[i++]);
    }
    if (i >= line.size()) return false;
    ++i;
  }
  if (i >= line.size() || line[i] != '=') return false;
  std::string v = Trim(line.substr(i + 1));
  ULONG type;
  std::vector<uint8_t> data;
  if (!v.empty() && v[0] == '"') {
    std::string s;
    size_t j = 1;
    while (j < v.size() && v[j] != '"') {
      if (v[j] == '\\' && j + 1 < v.size()) ++j;
      s.push_back(v[j++]);
    }
    if (j >= v.size()) return false;
    type = REG_SZ;
    AppendString(&data, Widen(s));
  } else if (LowerA(v.substr(0, 6)) == "dword:") {
    unsigned long long n;
    if (!ParseNumber(v.substr(6), 16, &n) || n > 0xffffffffull) return false;
    type = REG_DWORD;
    for (int b = 0; b < 4; ++b) data.push_back(static_cast<uint8_t>(n >> (8 * b)));
  } else if (LowerA(v.substr(0, 4)) == "hex:") {
    type = REG_BINARY;
    if (!ParseHexBytes(v.substr(4), &data)) return false;
  } else if (LowerA(v.substr(0, 4)) == "hex(") {
    size_t close = v.find("):");
    unsigned long long t;
    std::vector<uint8_t> raw;
    if (close == std::string::npos || !ParseNumber(v.substr(4, close - 4), 16, &t) ||
        !ParseHexBytes(v.substr(close + 2), &raw))
      return false;
    type = static_cast<ULONG>(t);
    data = (type == REG_SZ || type == REG_EXPAND_SZ || type == REG_MULTI_SZ) ? FromUtf16(raw) : raw;
  } else {
    return false;
  }
  return NT_SUCCESS(RegistrySetValue(key, Widen(name), type, data.data(), data.size(), true));
}

}  // namespace
}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

NTSTATUS SoftNdkWdkRegistrySetServiceKey(PCUNICODE_STRING RegistryPath) {
  if (RegistryPath == nullptr || RegistryPath->Buffer == nullptr) return STATUS_INVALID_PARAMETER;
  std::wstring path =
      NormalizeKeyPath(std::wstring(RegistryPath->Buffer, RegistryPath->Length / sizeof(WCHAR)));
  if (path.empty()) return STATUS_INVALID_PARAMETER;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_service_key = path;
  }
  RegistryCreateKey(path);
  return STATUS_SUCCESS;
}

NTSTATUS SoftNdkWdkRegistrySet(PCSTR Spec) {
  if (Spec == nullptr || !SetSpec(KeyPath(""), Spec)) {
    std::fprintf(stderr,
                 "softndk-wdk: registry value '%s' is not [SUBKEY\\]NAME=TYPE:VALUE with TYPE "
                 "sz|expand_sz|multi_sz|dword|qword|binary\n",
                 Spec ? Spec : "(null)");
    return STATUS_INVALID_PARAMETER;
  }
  return STATUS_SUCCESS;
}

NTSTATUS SoftNdkWdkRegistryLoad(PCSTR Path) {
  if (Path == nullptr) return STATUS_INVALID_PARAMETER;
  std::ifstream in(Path);
  if (!in) {
    std::fprintf(stderr, "softndk-wdk: registry file %s: %s\n", Path, std::strerror(errno));
    return STATUS_OBJECT_NAME_NOT_FOUND;
  }
  std::wstring key = KeyPath("");
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';' || t == "REGEDIT4" ||
        t.compare(0, 31, "Windows Registry Editor Version") == 0)
      continue;
    bool ok;
    if (t[0] == '[') {
      ok = t.back() == ']' && t.size() > 2 && t[1] != '-';
      if (ok) {
        key = KeyPath(t.substr(1, t.size() - 2));
        ok = !key.empty();
        if (ok) RegistryCreateKey(key);
      }
    } else if (t[0] == '"' || t[0] == '@') {
      ok = SetRegLine(key, t);
    } else {
      ok = SetSpec(key, t);
    }
    if (!ok) {
      std::fprintf(stderr, "softndk-wdk: registry file %s line %d is not understood: %s\n", Path,
                   number, t.c_str());
      return STATUS_INVALID_PARAMETER;
    }
  }
  return STATUS_SUCCESS;
}

}  // extern "C"
