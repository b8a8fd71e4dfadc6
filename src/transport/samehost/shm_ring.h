// SPDX-License-Identifier: Apache-2.0
// transport/samehost/shm_ring.h - the shared-memory byte ring that replaces loopback TCP
// under MPA for one direction of a same-host connection (docs/samehost.md
// "4. The stream through a shared-memory ring").
//
// A single-producer single-consumer byte ring in a sealed memfd, created by
// the sending side and handed to the receiving side in the rendezvous
// (SCM_RIGHTS). It carries exactly the bytes TCP would have carried (FPDUs),
// so the parser, builder and every RDMAP rule stay as they are.
//
// Layout: one 4 KiB header page - producer index, consumer index, "consumer
// sleeping", "producer waiting", each on its own cache line - then
// kRingDataSize bytes of data. Indices are free-running 64-bit byte counts.
// Doorbells are two eventfds: `data` (the producer rings it when the
// consumer said it sleeps) and `space` (the consumer rings it when the
// producer said it waits for room); neither is rung while both sides run.
//
// The peer is not trusted: every index read from the shared header is
// checked by ring_readable()/ring_writable() (pure, fuzzed), bytes are
// copied out before anything parses them, and a bad index makes the call
// fail with EPROTO; nothing ever reads or writes outside the mapping.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "transport/samehost/ring_index.h"

namespace softndk::samehost {

// The data area: a power of two. Like a socket buffer it is what one side
// can get ahead while the other is off its core: on a loaded machine (two
// cores, both ends busy-polling, other work) 64 KiB Sends measured about
// 2x faster with 2 MiB than with 256 KiB or 1 MiB, and faster than loopback
// TCP only from 2 MiB on (docs/samehost.md). The memfd's pages are taken
// as the ring first cycles through them: a quiet connection costs little.
inline constexpr uint64_t kRingDataSize = 2048 * 1024;
inline constexpr size_t kRingHeaderSize = 4096;

class ShmRing {
 public:
  // The producer's side: a new ring (nullptr when a call fails).
  static std::shared_ptr<ShmRing> create();
  // The consumer's side, from the peer's descriptors (taken over, closed on
  // failure): checks that `memfd` is a memfd of the right size sealed
  // against shrinking and growing before mapping it; nullptr if not.
  static std::shared_ptr<ShmRing> attach(int memfd, int data_efd, int space_efd);
  ~ShmRing();
  ShmRing(const ShmRing&) = delete;
  ShmRing& operator=(const ShmRing&) = delete;

  int memfd() const { return memfd_; }
  int data_efd() const { return data_efd_; }
  int space_efd() const { return space_efd_; }

  // ---- producer (one thread at a time) ----
  // Copies as much of iov as fits; returns the bytes written (0: full), or
  // -1 with errno EPROTO when the consumer index is corrupt. `arm`: when
  // not everything fit, ask the consumer to ring `space` once it frees room
  // (event mode; a busy-polling producer retries by itself).
  ssize_t write(const iovec* iov, int niov, bool arm);
  // Everything written has been read by the consumer.
  bool drained() const;

  // ---- consumer (one thread at a time) ----
  // Copies up to the iovecs' total out of the ring; returns the bytes read
  // (0: empty), or -1 with errno EPROTO when the producer index is corrupt.
  ssize_t read(const iovec* iov, int niov);
  // Bytes waiting (0 also when the index is corrupt: read() says so).
  uint64_t readable() const;
  // Event mode: tell the producer to ring `data` for the next bytes. Returns
  // false if bytes arrived meanwhile (read them instead of waiting).
  bool sleep();

  // Empties an eventfd's count (after its readiness woke us).
  static void drain(int efd);
  // Rings an eventfd doorbell.
  static void ring(int efd);

  // Tests: the shared header, to corrupt it like a hostile peer would.
  std::atomic<uint64_t>* shared_prod();
  std::atomic<uint64_t>* shared_cons();
  uint8_t* data() { return data_; }

 private:
  ShmRing() = default;
  bool map();
  struct Header;
  int memfd_ = -1, data_efd_ = -1, space_efd_ = -1;
  void* base_ = nullptr;
  Header* h_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t prod_ = 0;       // producer: own index
  uint64_t cons_seen_ = 0;  // producer: last valid consumer index
  uint64_t cons_ = 0;       // consumer: own index
};

}  // namespace softndk::samehost
