// SPDX-License-Identifier: Apache-2.0
// Code addresses to names for the bug-check analysis: function and
// file:line from the debug info (GCC's libbacktrace, when the build found
// it), else the nearest exported symbol (dladdr). Usable from a signal
// handler once SymbolizerInit has run: no allocation on the lookup path
// (libbacktrace allocates with mmap), output into caller buffers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace softndk::wdk {

struct SymbolizedFrame {
  char module[128] = "";    // file name of the object, without its directory
  char function[160] = "";  // "" when unknown
  char file[192] = "";      // "" when there is no debug info
  int line = 0;
  uintptr_t offset = 0;  // from the function (or the module when unnamed)
  bool in_kit = false;   // libsoftndk_wdk / libsoftndk / libc: not the driver's code
};

// Prepares the debug-info reader for the objects loaded now (call after the
// driver is loaded, before anything can fault).
void SymbolizerInit();
// `return_address`: pc is a return address (look up the call, pc - 1).
void Symbolize(uintptr_t pc, bool return_address, SymbolizedFrame* out);
// "module!function+0xoff (file:line)" into buf.
void FormatFrame(const SymbolizedFrame& f, char* buf, size_t n);

}  // namespace softndk::wdk
