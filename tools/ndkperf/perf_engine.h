// SPDX-License-Identifier: Apache-2.0
// perf_engine.h - the measured runs over softndk: a client that drives the
// test and a server that answers it, usable in two processes or, for
// --loopback, on two threads of one.
//
// Per connection (one per QP) the client's Hello and the server's Accept
// travel in MPA private data (perf_wire.h). Then, for every message size of
// the run, one phase:
//   client: BEGIN(size) -> server: READY
//   data:   send_bw  - Sends, flow-controlled by cumulative CREDIT messages
//                      (the server re-posts each receive, then credits it)
//           write_bw - RDMA Writes into the server's buffer
//           read_bw  - RDMA Reads from the server's buffer
//           send_lat - Send ping, Send pong
//           write_lat- Write ping, the server polls its memory for the last
//                      byte, Write pong (as perftest's write_lat)
//           read_lat - one RDMA Read at a time
//   client: zero-length Send (end of data), REPORT -> server: REPORT
// and finally DONE. Every wait is bounded by `timeout` seconds without
// progress; a peer that disconnects ends the run with a one-line error.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ndkapp/session.h"
#include "ndkperf/perf_types.h"

namespace softndk::ndkperf {

struct EngineConfig {
  Test test;
  std::vector<size_t> sizes;  // the phases, in order
  bool all_sizes = false;     // told to the server (it checks it runs -a too)
  uint64_t iters = 1000;      // per phase and QP; 0 = run for `duration`
  double duration = 0;
  unsigned qps = 1;
  unsigned tx_depth = 128;
  unsigned cq_mod = 1;  // send_lat: one ping/pong in cq_mod signaled (cq_mod_for)
  unsigned inline_size = 0;
  bool events = false;
  bool shm_buffers = false;  // the RDMA buffer from SoftNdkAllocateSharedMemory
  double timeout = 10;
  bool progress = true;  // client: progress line on stderr for long phases
  // server: connections in their handshake at once (--max-handshakes); a
  // handshake ends with the client's first message on each of its QPs,
  // within `timeout`.
  size_t max_handshakes = 256;
  // client: called with each size's result as soon as it is measured (the
  // tool prints it then; a later failure keeps what finished).
  std::function<void(const PerfResult&)> on_result;
  tools::AdapterOptions adapter;
};

// Connects to `server` and runs every phase; one result per size.
std::vector<PerfResult> run_client(const EngineConfig& cfg, const tools::SockAddr& server);

// Opens the adapter and listens at construction (so "port in use" is
// reported before anything else), then serves one client with serve().
// Peers in their handshake (MPA, then the client's first message on each
// QP) are taken side by side, up to max_handshakes, each for at most
// `timeout`: the first to finish is the client served, so peers that stall
// in their handshake cannot keep a real client out (issue 28 item 4).
class PerfServer {
 public:
  PerfServer(const EngineConfig& cfg, const tools::SockAddr& listen_at);
  ~PerfServer();
  uint16_t port() const;
  // Waits up to `accept_seconds` for the client (<= 0: a year), then serves
  // it. Results are the server's view (figures from the client's REPORT).
  std::vector<PerfResult> serve(double accept_seconds);
  // Makes a serve() on another thread give up soon (loopback: the client
  // failed before it could connect).
  void cancel();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace softndk::ndkperf
