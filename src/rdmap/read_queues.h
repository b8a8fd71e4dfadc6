// SPDX-License-Identifier: Apache-2.0
// rdmap/read_queues.h - the outbound (ORQ) and inbound (IRQ) read queues of
// one stream, bounded by the negotiated ORD and IRD (RFC 6581, NDKPI 12).
//
// ORQ: Read Requests we sent and whose responses are not all placed yet;
// Read Responses must match its head exactly (IWARP.md 4.5). IRQ: Read
// Requests the peer sent that we still have to answer, in request order. A
// fixed ring each (IRD/ORD <= 128): no allocation on the data path.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace softndk::rdmap {

struct OutboundRead {
  uint64_t seq = 0;  // the Read's SQ sequence number
  uint32_t sink_stag = 0;
  uint64_t sink_to = 0;
  uint32_t size = 0;
  uint8_t* sink = nullptr;  // process address of sink_to
  bool local_invalidate = false;
};

struct InboundRead {
  const uint8_t* source = nullptr;  // checked when the request arrived
  uint32_t size = 0;
  uint32_t sink_stag = 0;
  uint64_t sink_to = 0;
};

template <typename T>
class ReadQueue {
 public:
  static constexpr size_t kCapacity = 128;
  // Everything under the stream's q_mu_, except empty_hint().
  size_t size() const { return n(); }
  bool empty() const { return n() == 0; }
  bool full(size_t limit) const { return n() >= limit || n() >= kCapacity; }
  T& front() { return ring_[head_]; }
  void push(const T& v) {
    ring_[(head_ + n()) % kCapacity] = v;
    n_.store(n() + 1, std::memory_order_release);
  }
  void pop() {
    head_ = (head_ + 1) % kCapacity;
    n_.store(n() - 1, std::memory_order_relaxed);
  }
  void clear() {
    head_ = 0;
    n_.store(0, std::memory_order_relaxed);
  }
  // Without the lock: the transmitter's "anything to do?" after every
  // batch. A push it misses is followed by a kick (the receiver's
  // kick_after_rx_), so a stale "empty" costs nothing.
  bool empty_hint() const { return n_.load(std::memory_order_acquire) == 0; }

 private:
  size_t n() const { return n_.load(std::memory_order_relaxed); }
  std::array<T, kCapacity> ring_{};
  size_t head_ = 0;
  std::atomic<size_t> n_{0};  // written under q_mu_ only (plain stores)
};

}  // namespace softndk::rdmap
