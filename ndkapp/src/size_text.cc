// SPDX-License-Identifier: Apache-2.0
// size_text.cc - see size_text.h.
#include "ndkapp/size_text.h"

#include <cctype>

namespace softndk::tools {

std::optional<uint64_t> parse_size(std::string_view text, std::string* why) {
  auto bad = [&](const std::string& m) -> std::optional<uint64_t> {
    if (why) *why = m;
    return std::nullopt;
  };
  const std::string shown(text);
  size_t i = 0;
  uint64_t v = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    unsigned d = static_cast<unsigned>(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return bad("'" + shown + "' is too large");
    v = v * 10 + d;
  }
  if (i == 0) return bad("'" + shown + "' is not a size (digits, then K, M, G or T)");
  std::string suf;
  for (char c : text.substr(i))
    suf += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned shift = 0;
  size_t k = 0;
  if (!suf.empty()) {
    switch (suf[0]) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        break;
    }
    if (shift != 0) k = 1;
  }
  std::string rest = suf.substr(k);
  if (!(rest.empty() || rest == "B" || (shift != 0 && rest == "IB")))
    return bad("bad size suffix in '" + shown + "' (K, M, G or T, optionally with B or iB)");
  if (shift != 0 && v > (UINT64_MAX >> shift)) return bad("'" + shown + "' is too large");
  return v << shift;
}

}  // namespace softndk::tools
