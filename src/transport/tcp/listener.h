// SPDX-License-Identifier: Apache-2.0
// transport/tcp/listener.h - the passive side: a listening socket, the MPA responder
// (IWARP.md 9.3) and the incoming request the upper layer accepts or
// rejects.
//
// Each accepted TCP connection runs its Request read on a reactor of the
// engine (round robin). Malformed or timed-out handshakes are dropped there
// without bothering the upper layer; the listener keeps serving others. A
// valid Request becomes a PendingConnection handed to the request callback
// on that reactor.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "transport/tcp/connection.h"

namespace softndk::tcp {

class Listener;

class PendingConnection : public std::enable_shared_from_this<PendingConnection> {
 public:
  using AcceptCallback = std::function<void(NTSTATUS, std::shared_ptr<Connection>)>;
  ~PendingConnection();

  // Immutable once presented; safe from any thread.
  const mpa::PeerRequest& request() const { return req_; }
  const SockAddr& local() const { return local_; }
  const SockAddr& peer() const { return peer_; }
  Reactor& reactor() const { return reactor_; }

  // Accept with the ULP's read limits and private data. STATUS_PENDING: cb
  // follows exactly once on reactor(): SUCCESS with the Connection (after
  // the Reply is sent; with P2P only once the initiator's RTR - its first
  // FPDU - arrived, which bytes stay in the socket for the data path),
  // CONNECTION_ABORTED (initiator gone or misbehaved), IO_TIMEOUT (no RTR
  // within rtr_timeout), CANCELLED (abandon()). Inline, no callback:
  // INVALID_PARAMETER (private data too long), CONNECTION_INVALID (already
  // accepted/rejected/abandoned).
  NTSTATUS accept(uint16_t ird, uint16_t ord, std::vector<uint8_t> private_data, AcceptCallback cb);
  // Sends an MPA reject (R=1 + private data) and closes. SUCCESS,
  // CONNECTION_ABORTED (the initiator already left), CONNECTION_INVALID,
  // INVALID_PARAMETER (private data too long).
  NTSTATUS reject(std::span<const uint8_t> private_data);
  // The upper layer drops the request (connector closed): reset.
  void abandon();
  // True once the reactor has seen the initiator close, reset or misbehave
  // (then reject() is CONNECTION_ABORTED): what a caller - a test - waits
  // for, as the reactor learns it a moment after the initiator acted.
  bool peer_gone() const {
    std::lock_guard lk(mu_);
    return peer_gone_;
  }

  static long live_count();

 private:
  friend class Listener;
  enum class State : uint8_t { kReading, kPresented, kReplying, kAwaitRtr, kDone };
  PendingConnection(Reactor& r, Fd fd, std::shared_ptr<Listener> l, const ConnSettings& s);
  void start();
  void on_event(uint32_t ev);
  void read_request();
  void watch_presented();
  void check_presented();
  void do_accept(uint16_t ird, uint16_t ord, std::vector<uint8_t> pd, AcceptCallback cb);
  void check_rtr();
  void drop(bool rst);
  void complete_accept(NTSTATUS st);
  bool send_all(const std::vector<uint8_t>& bytes);

  Reactor& reactor_;
  Fd fd_;
  std::weak_ptr<Listener> listener_;
  const ConnSettings settings_;
  SockAddr local_, peer_;
  mpa::PeerRequest req_;

  // Reactor-thread state.
  State state_ = State::kReading;
  bool watching_ = false;
  Reactor::TimerId timer_ = 0;
  std::vector<uint8_t> rx_;
  std::vector<uint8_t> req_bytes_, reply_bytes_;  // the MPA exchange, for traces
  mpa::NegotiatedParams params_;
  AcceptCallback accept_cb_;
  std::shared_ptr<PendingConnection> self_;  // alive while the engine drives it

  // Shared between the ULP's thread and the reactor.
  mutable std::mutex mu_;
  bool decided_ = false;    // accept/reject/abandon called
  bool peer_gone_ = false;  // initiator closed, reset or misbehaved
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  using RequestCallback = std::function<void(std::shared_ptr<PendingConnection>)>;

  // Binds and listens (SO_REUSEADDR, as siw). Port 0 picks one. Statuses:
  // SUCCESS, SHARING_VIOLATION (address in use), INVALID_ADDRESS (not a
  // local address), TOO_MANY_ADDRESSES (no free port), INSUFFICIENT_RESOURCES.
  // Handshakes run on engine.pick(); on_request runs on that reactor.
  static NTSTATUS create(Engine& engine, const ConnSettings& settings, const SockAddr& addr,
                         int backlog, RequestCallback on_request, std::shared_ptr<Listener>* out);
  ~Listener();

  const SockAddr& local() const { return local_; }

  // Paused: "as if no listener existed" (NdkControlConnectEvents): the
  // socket stops listening, so SYNs get RST (CONNECTION_REFUSED at the
  // initiator), and handshakes in progress are not presented. Resuming
  // listens again on the same port.
  NTSTATUS pause(bool paused);
  // Stops accepting at once; handshakes not yet presented are reset.
  // Presented PendingConnections stay with their owner.
  void close();

  struct Stats {
    std::atomic<uint64_t> accepted{0};   // TCP connections accepted
    std::atomic<uint64_t> presented{0};  // valid Requests shown to the ULP
    std::atomic<uint64_t> dropped{0};    // malformed / early data / closed before the Request
    std::atomic<uint64_t> timed_out{0};  // no whole Request within request_timeout
    std::atomic<uint64_t> refused{0};    // answered with an internal reject (M=1, CRC policy...)
    std::atomic<uint64_t> overflow{0};   // reset: too many handshakes in progress
  };
  const Stats& stats() const { return stats_; }

 private:
  friend class PendingConnection;
  Listener(Engine& e, const ConnSettings& s, RequestCallback cb);
  void on_accept_ready();
  void handshake_done(PendingConnection* p);
  bool presenting() const { return !closed_.load() && !paused_.load(); }

  Engine& engine_;
  Reactor& reactor_;
  const ConnSettings settings_;
  const RequestCallback on_request_;
  Fd fd_;
  SockAddr local_;
  int backlog_ = 128;
  Stats stats_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> paused_{false};
  std::mutex mu_;  // guards fd_ state changes and handshakes_
  std::unordered_map<PendingConnection*, std::weak_ptr<PendingConnection>> handshakes_;
};

}  // namespace softndk::tcp
