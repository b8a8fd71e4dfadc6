// SPDX-License-Identifier: Apache-2.0
// version.h - the tools' --version line.
#pragma once

#include <string>

namespace softndk::tools {

// "ndkperf (softndk) 0.1.0" (no newline): the tool's name and the version of the
// libsoftndk it runs with (SoftNdkGetVersion). When that library is not the
// one the tool was built with, the build's version follows in brackets, so a
// mismatched installation shows at once.
std::string version_text(const char* tool);

}  // namespace softndk::tools
