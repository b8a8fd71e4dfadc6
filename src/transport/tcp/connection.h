// SPDX-License-Identifier: Apache-2.0
// transport/tcp/connection.h - an established iWARP stream: a TCP socket whose MPA
// exchange is done, bound to one reactor for life.
//
// Created by ActiveConnect (initiator) or PendingConnection::accept()
// (responder) and handed to the upper layer in their completion callback.
// Until the QP data path attach()es, the engine watches the socket itself:
// it detects the peer's FIN/RST and keeps any bytes that arrive (siw may
// send FPDUs right behind its Reply) in the leftover buffer for the data
// path.
//
// Threading: every method may be called from any thread; work is posted to
// the connection's reactor and every callback runs there, with no engine
// lock held, never from inside the call that registered or triggered it.
// Methods marked "reactor thread" must be called on reactor().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mpa/mpa_negotiator.h"
#include "softndk/ndkpi.h"
#include "tcp/socket.h"
#include "tcp/tcp_stats.h"
#include "util/reactor.h"

namespace softndk::tcp {

using util::Engine;
using util::Reactor;

// Timeouts and MPA policy of one adapter (SOFTNDK_OPEN_PARAMETERS).
struct ConnSettings {
  mpa::Settings mpa;
  std::chrono::milliseconds connect_timeout{10000};    // TCP connect + MPA Reply (siw: 10 s)
  std::chrono::milliseconds request_timeout{5000};     // responder waits for the Request (siw: 5 s)
  std::chrono::milliseconds rtr_timeout{10000};        // P2P responder waits for the RTR
  std::chrono::milliseconds disconnect_timeout{5000};  // graceful close waits for the peer's FIN
  // Initiator: how long to stay silent after the MPA Reply before the
  // connection is reported up (and so before our first FPDU, the RTR
  // included). 0 = at once (RFC 5044 allows it). Linux siw 6.1 as
  // responder installs its QP receive upcall only after sending its Reply;
  // an FPDU arriving in between stays unread in its socket until more data
  // comes (docs/compatibility.md, notes 1 and 8). Capped at kMaxHoldoff.
  std::chrono::milliseconds initiator_holdoff{0};
  static constexpr std::chrono::milliseconds kMaxHoldoff{2000};
  size_t max_pending_handshakes = 4096;  // per listener, before the ULP sees them
  // TCP congestion control of each connection (tcp/socket.h
  // apply_congestion): "" automatic, "system", or an algorithm's name.
  std::string congestion;
  // Request MPA CRC (mpa.crc_request) on connections that leave the host;
  // host-local ones (loopback, our own addresses) have no wire to guard.
  // Decided per connection: by the destination at connect, by the peer's
  // address at accept (docs/wire.md, "CRC by default off-host").
  bool crc_off_host = false;
};

enum class Role : uint8_t { kInitiator, kResponder };

// The QP data path, once attached, owns reading and writing FPDUs.
class ConnectionHandler {
 public:
  virtual ~ConnectionHandler() = default;
  // The socket is readable: read until EAGAIN. On EOF or a socket error
  // call Connection::report_peer_closed().
  virtual void on_readable() = 0;
  virtual void on_writable() {}
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using DoneCallback = std::function<void(NTSTATUS)>;

  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Immutable after creation, safe from any thread.
  Reactor& reactor() const { return reactor_; }
  int fd() const { return fd_; }
  Role role() const { return role_; }
  const mpa::NegotiatedParams& params() const { return params_; }
  const SockAddr& local() const { return local_; }
  const SockAddr& peer() const { return peer_; }

  // The peer closed (FIN: STATUS_CONNECTION_DISCONNECTED) or reset
  // (STATUS_CONNECTION_RESET) the connection, or the data path reported an
  // error. Called exactly once, unless disconnect() or abort() came first.
  // If the peer closed before the callback was set, it runs right after.
  void on_peer_close(DoneCallback cb);

  // Graceful disconnect (NDKPI.md 6.4): shutdown(SHUT_WR) - our FIN -, then
  // wait for the peer's FIN, discarding anything it still sends. cb:
  // STATUS_SUCCESS (peer's FIN seen, possibly before this call),
  // STATUS_CONNECTION_ABORTED (reset), STATUS_IO_TIMEOUT (no FIN in
  // disconnect_timeout: the socket is then reset), STATUS_CONNECTION_INVALID
  // (already disconnecting or closed), STATUS_CANCELLED (abort() came
  // first). The socket is closed when cb runs. The data path is detached.
  // A disconnect in progress keeps the Connection alive until cb; otherwise
  // dropping the last reference to a Connection aborts it (RST).
  void disconnect(DoneCallback cb);

  // Abortive close: SO_LINGER 0 then close -> RST. No on_peer_close after
  // this; a pending disconnect() completes with STATUS_CANCELLED.
  void abort();

  // True once the socket is closed (after disconnect completion or abort).
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  // The socket's TCP state, from any thread; false once it is closed.
  bool tcp_stats(TcpStats* out) const;

  // ---- data path hand-off (reactor thread) ----
  // Bytes read past the MPA frame, or after it while nobody was attached.
  std::vector<uint8_t> take_leftover();
  // The MPA Request and Reply bytes of this connection (for wire traces).
  const std::vector<uint8_t>& mpa_request() const { return mpa_request_; }
  const std::vector<uint8_t>& mpa_reply() const { return mpa_reply_; }
  // Initiator: how long the peer took to answer our MPA Request (its round
  // trip plus its accept); 0 for a responder.
  std::chrono::microseconds mpa_round_trip() const { return mpa_round_trip_; }
  // From now on `h` is told about readiness; the engine stops reading.
  void attach(std::shared_ptr<ConnectionHandler> h);
  void want_write(bool on);
  // The data path saw EOF (err 0) or a socket error (errno).
  void report_peer_closed(int err);

  // Live Connection objects in this process (leak checks in tests).
  static long live_count();

  // ---- engine internal ----
  struct Init {
    Reactor* reactor = nullptr;
    Fd fd;
    Role role = Role::kInitiator;
    mpa::NegotiatedParams params;
    std::vector<uint8_t> leftover;
    // The MPA Request and Reply exactly as they crossed the wire (traces).
    std::vector<uint8_t> mpa_request, mpa_reply;
    std::chrono::milliseconds disconnect_timeout{5000};
    std::function<void()> on_release;  // runs once when the socket closes
    // Initiator: MPA Request fully sent -> Reply parsed (0 responder).
    std::chrono::microseconds mpa_round_trip{0};
  };
  static std::shared_ptr<Connection> create(Init init);

 protected:
  explicit Connection(Init& init);

 private:
  enum class State : uint8_t { kOpen, kPeerClosed, kDisconnecting, kClosed };
  void start_watch();
  void on_event(uint32_t ev);
  void read_engine_mode();
  void peer_closed(int err);
  void drain_for_disconnect();
  void finish_disconnect(NTSTATUS st);
  void close_socket(bool rst);
  void update_events();

  Reactor& reactor_;
  const int fd_;
  const Role role_;
  const mpa::NegotiatedParams params_;
  const SockAddr local_;
  const SockAddr peer_;
  const std::chrono::milliseconds disconnect_timeout_;
  const std::vector<uint8_t> mpa_request_, mpa_reply_;
  const std::chrono::microseconds mpa_round_trip_;
  std::atomic<bool> closed_{false};
  // Held around close(): a stats query from another thread never reads a
  // descriptor number the kernel has already given to another file.
  mutable std::mutex close_mu_;

  // Reactor-thread state.
  State state_ = State::kOpen;
  bool watching_ = false;
  bool want_write_ = false;
  bool reading_ = true;  // engine mode: EPOLLIN on until the leftover cap
  std::vector<uint8_t> leftover_;
  std::shared_ptr<ConnectionHandler> handler_;
  DoneCallback peer_close_cb_;
  bool peer_close_pending_ = false;  // detected before a callback was set
  bool peer_close_reported_ = false;
  NTSTATUS peer_close_status_ = STATUS_SUCCESS;
  DoneCallback disconnect_cb_;
  Reactor::TimerId disconnect_timer_ = 0;
  std::function<void()> on_release_;
  std::shared_ptr<Connection> self_;  // set while a disconnect is in progress
};

}  // namespace softndk::tcp
