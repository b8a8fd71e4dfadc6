// SPDX-License-Identifier: Apache-2.0
// ping_output.cc - serialized output lines.
#include "ndkping/ping_output.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <ostream>

namespace softndk::ndkping {

namespace {
std::mutex g_out;
}  // namespace

void line(std::ostream& os, const std::string& s) {
  std::lock_guard lk(g_out);
  os << s << "\n";
  os.flush();
}

void debug(const PingOptions& o, std::ostream& out, const std::string& s) {
  if (o.debug) line(out, s);
}

std::string ping_text(const uint8_t* buf, size_t size) {
  size_t n = strnlen(reinterpret_cast<const char*>(buf), size);
  return std::string(reinterpret_cast<const char*>(buf), n);
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace softndk::ndkping
