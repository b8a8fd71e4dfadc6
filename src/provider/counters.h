// SPDX-License-Identifier: Apache-2.0
// counters.h - the SOFTNDK_COUNTERS set, kept by the adapter (all of its
// connections) and by every QP (its own connection).
//
// The data path bumps them with relaxed atomic adds: one add per sendmsg or
// recv, one per FPDU batch, nothing per byte. The data-path counts (RDMA
// octets and frames, both directions) are bumped on the QP only: an
// adapter-wide line written by every connection's threads cost a cache-line
// transfer between cores per message (the two ends of a loopback ping-pong
// took turns on it). The adapter adds its live QPs' counts when it is read
// and folds a QP's in when the QP is retired (Adapter::read_counters). The
// other counters are rare and bumped on both with count2(). Either way the
// adapter's counters equal the sum over its QPs (closed ones included) until
// a SOFTNDK_MODIFY_ADAPTER_COUNTERS_RESET, which zeroes the adapter's only.
#pragma once

#include <atomic>
#include <cstdint>

#include "softndk/softndk.h"

namespace softndk::provider {

struct Counters {
  std::atomic<uint64_t> connect{0}, accept{0}, connect_failure{0}, connection_error{0},
      active_connection{0}, cq_error{0}, rdma_in_octets{0}, rdma_out_octets{0}, rdma_in_frames{0},
      rdma_out_frames{0}, terminates_sent{0}, terminates_received{0};

  void read(SOFTNDK_COUNTERS* out) const {
    out->Connect = connect.load(std::memory_order_relaxed);
    out->Accept = accept.load(std::memory_order_relaxed);
    out->ConnectFailure = connect_failure.load(std::memory_order_relaxed);
    out->ConnectionError = connection_error.load(std::memory_order_relaxed);
    out->ActiveConnection = active_connection.load(std::memory_order_relaxed);
    out->CQError = cq_error.load(std::memory_order_relaxed);
    out->RDMAInOctets = rdma_in_octets.load(std::memory_order_relaxed);
    out->RDMAOutOctets = rdma_out_octets.load(std::memory_order_relaxed);
    out->RDMAInFrames = rdma_in_frames.load(std::memory_order_relaxed);
    out->RDMAOutFrames = rdma_out_frames.load(std::memory_order_relaxed);
    out->TerminatesSent = terminates_sent.load(std::memory_order_relaxed);
    out->TerminatesReceived = terminates_received.load(std::memory_order_relaxed);
  }
  // Zero the counts; ActiveConnection is a level, not a count: kept.
  void reset() {
    for (auto* c : {&connect, &accept, &connect_failure, &connection_error, &cq_error,
                    &rdma_in_octets, &rdma_out_octets, &rdma_in_frames, &rdma_out_frames,
                    &terminates_sent, &terminates_received})
      c->store(0, std::memory_order_relaxed);
  }
};

// The data-path counts of `c` added to `out` (RDMA octets and frames).
inline void add_data_path(const Counters& c, SOFTNDK_COUNTERS* out) {
  out->RDMAInOctets += c.rdma_in_octets.load(std::memory_order_relaxed);
  out->RDMAOutOctets += c.rdma_out_octets.load(std::memory_order_relaxed);
  out->RDMAInFrames += c.rdma_in_frames.load(std::memory_order_relaxed);
  out->RDMAOutFrames += c.rdma_out_frames.load(std::memory_order_relaxed);
}

// Bumps a data-path count of a QP (see above: not the adapter's). Each has
// one writer at a time - the transmit counts are written under the
// stream's transmit lock, the receive counts under its receive lock - so a
// plain load and store does (no locked instruction per message); readers
// still read an atomic.
inline void count_qp(std::atomic<uint64_t>& c, uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// Bumps the same counter of the QP and of its adapter.
inline void count2(std::atomic<uint64_t>& a, std::atomic<uint64_t>& b, uint64_t n = 1) {
  a.fetch_add(n, std::memory_order_relaxed);
  b.fetch_add(n, std::memory_order_relaxed);
}

}  // namespace softndk::provider
