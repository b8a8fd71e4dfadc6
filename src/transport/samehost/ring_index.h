// SPDX-License-Identifier: Apache-2.0
// transport/samehost/ring_index.h - validation of the indices a same-host peer writes
// into the shared ring (shm_ring.h): pure, header-only, unit-tested
// (tests/samehost) and fuzzed (fuzz/samehost_fuzz.cc). Indices are
// free-running 64-bit byte counts; `size` is the data area (a power of two).
#pragma once

#include <cstdint>

namespace softndk::samehost {

// Bytes the consumer may read, from the producer index it read in shared
// memory and its own consumer index; -1 if that producer index is
// impossible (behind the consumer, or more than `size` ahead).
inline int64_t ring_readable(uint64_t prod, uint64_t cons, uint64_t size) {
  const uint64_t avail = prod - cons;  // free-running: wraps correctly
  if (avail > size) return -1;
  return static_cast<int64_t>(avail);
}

// Bytes the producer may write, from its own producer index, the consumer
// index it read in shared memory and the last valid one it saw; -1 if that
// consumer index is impossible (moved backwards, or beyond the producer).
inline int64_t ring_writable(uint64_t prod, uint64_t cons, uint64_t cons_seen, uint64_t size) {
  // The consumer only moves forward, and never past what was written.
  if (cons - cons_seen > prod - cons_seen) return -1;
  const uint64_t used = prod - cons;
  if (used > size) return -1;
  return static_cast<int64_t>(size - used);
}

}  // namespace softndk::samehost
