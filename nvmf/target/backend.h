// SPDX-License-Identifier: Apache-2.0
// backend.h - what a namespace is stored in: a file, a block device or
// anonymous memory (for benchmarks). 512-byte logical blocks; every call is
// bounds-checked by the caller (NVM command checks) and again here.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace nvmf::target {

inline constexpr uint32_t kBlockSize = 512;
inline constexpr uint32_t kBlockShift = 9;

class Backend {
 public:
  virtual ~Backend() = default;
  uint64_t blocks() const { return bytes_ >> kBlockShift; }
  const std::string& describe() const { return what_; }
  // Each returns 0 or an errno.
  virtual int read(uint64_t offset, void* buf, size_t len) = 0;
  virtual int write(uint64_t offset, const void* buf, size_t len) = 0;
  virtual int flush() = 0;
  virtual int zero(uint64_t offset, uint64_t len) = 0;        // reads back as zeros
  virtual int deallocate(uint64_t offset, uint64_t len) = 0;  // ditto (punch hole)

 protected:
  uint64_t bytes_ = 0;
  std::string what_;
};

// A --ns value that is not file:PATH, blk:DEVICE or ram:SIZE: a usage
// error (exit 2), unlike a namespace that is well formed but cannot be
// opened (exit 1).
struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "file:PATH", "blk:/dev/X" or "ram:SIZE" (SIZE with K/M/G suffix). Throws
// SpecError for a malformed spec, std::runtime_error with a one-line cause
// for one that cannot be opened.
std::unique_ptr<Backend> open_backend(const std::string& spec);

}  // namespace nvmf::target
