// SPDX-License-Identifier: Apache-2.0
// version.cc - the tools' --version line (version.h).
#include "ndkapp/version.h"

#include "softndk/softndk.h"

namespace softndk::tools {

std::string version_text(const char* tool) {
  const char* running = nullptr;
  const ULONG v = SoftNdkGetVersion(&running);
  std::string text = std::string(tool) + " (softndk) " + running;
  if (v != SOFTNDK_VERSION) text += std::string(" [built with ") + SOFTNDK_VERSION_STRING + "]";
  return text;
}

}  // namespace softndk::tools
