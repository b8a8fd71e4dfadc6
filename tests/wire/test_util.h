// SPDX-License-Identifier: Apache-2.0
// tests/wire/test_util.h — hex helpers shared by the wire tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace softndk::wire::test {

// "00 0e c1 40" or "000ec140" -> bytes (spaces ignored).
inline std::vector<uint8_t> hex(std::string_view s) {
  std::vector<uint8_t> out;
  int hi = -1;
  for (char c : s) {
    int v;
    if (c >= '0' && c <= '9')
      v = c - '0';
    else if (c >= 'a' && c <= 'f')
      v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      v = c - 'A' + 10;
    else
      continue;
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<uint8_t>(hi << 4 | v));
      hi = -1;
    }
  }
  return out;
}

inline std::string to_hex(std::span<const uint8_t> b) {
  std::string s;
  char buf[4];
  for (uint8_t x : b) {
    std::snprintf(buf, sizeof buf, "%02x", x);
    s += buf;
  }
  return s;
}

inline std::vector<uint8_t> concat(std::vector<uint8_t> a, std::span<const uint8_t> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace softndk::wire::test
