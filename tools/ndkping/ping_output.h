// SPDX-License-Identifier: Apache-2.0
// ping_output.h - ndkping's output lines: whole lines only, one at a time
// (a persistent server's clients print from several threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "ndkping/ping_options.h"

namespace softndk::ndkping {

void line(std::ostream& os, const std::string& s);
// line() under -d only.
void debug(const PingOptions& o, std::ostream& out, const std::string& s);
// The ping text of a buffer: up to its first NUL.
std::string ping_text(const uint8_t* buf, size_t size);
std::string hex(uint64_t v);

}  // namespace softndk::ndkping
