// SPDX-License-Identifier: Apache-2.0
// samehost_env.h - sets SOFTNDK_SAMEHOST for the adapters opened while it
// lives and restores what the environment said before. The fast path is on
// by default (docs/samehost.md); tests of a property of the TCP path itself
// open their adapters with it off, and the suites run in both modes.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace softndk_test {

class SamehostEnv {
 public:
  explicit SamehostEnv(const char* v) {
    if (const char* old = std::getenv("SOFTNDK_SAMEHOST")) old_ = old;
    ::setenv("SOFTNDK_SAMEHOST", v, 1);
  }
  ~SamehostEnv() {
    if (old_) {
      ::setenv("SOFTNDK_SAMEHOST", old_->c_str(), 1);
    } else {
      ::unsetenv("SOFTNDK_SAMEHOST");
    }
  }
  SamehostEnv(const SamehostEnv&) = delete;
  SamehostEnv& operator=(const SamehostEnv&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace softndk_test
