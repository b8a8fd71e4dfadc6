// SPDX-License-Identifier: Apache-2.0
// ddp/sequence.h — consumer-side helpers for the checks the stream parser
// deliberately leaves to its user: untagged MSN/MO progression per queue
// (RFC 5041 5.x; MSN starts at 1, MO restarts at 0 per message).
// Owns: strict in-order tracking as siw does it (no interleaving of untagged
// messages on one queue); returns the WireError to map to a Terminate.
#pragma once

#include <cstdint>

#include "ddp/wire_error.h"

namespace softndk::wire {

class UntaggedSequence {
 public:
  // Checks one untagged segment of `len` payload bytes and advances.
  WireError on_segment(uint32_t msn, uint32_t mo, uint32_t len, bool last) {
    if (msn != next_msn_) return WireError::kMsnOutOfRange;
    if (mo != next_mo_) return WireError::kMoMismatch;
    next_mo_ += len;
    if (last) {
      ++next_msn_;  // modulo 2^32 by unsigned wrap
      next_mo_ = 0;
    }
    return WireError::kNone;
  }
  uint32_t expected_msn() const { return next_msn_; }
  uint32_t expected_mo() const { return next_mo_; }

 private:
  uint32_t next_msn_ = 1;
  uint32_t next_mo_ = 0;
};

// Next untagged sequence number on the send side (first value 1, IWARP.md 3.4).
class MsnCounter {
 public:
  uint32_t next() { return ++last_; }

 private:
  uint32_t last_ = 0;
};

}  // namespace softndk::wire
