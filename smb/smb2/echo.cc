// SPDX-License-Identifier: Apache-2.0
#include "echo.h"

#include "smbd/le.h"

namespace smb::smb2 {

namespace le = smbd::le;
using namespace detail;

void append_echo(std::vector<uint8_t>* out) { le::store16(grow(out, 4), 4); }

ParseError parse_echo(std::span<const uint8_t> msg) {
  std::span<const uint8_t> b;
  return body(msg, 4, 4, &b);
}

}  // namespace smb::smb2
