// SPDX-License-Identifier: Apache-2.0
// transport/tcp/connector.h - the active side: non-blocking TCP connect with a
// deadline, then the MPA Request/Reply exchange as initiator (IWARP.md 9.2),
// and shared endpoints (many connections from one local ip:port).
//
// Threading: start() may be called from any thread; the exchange runs on
// the given reactor and the callback runs there exactly once, with no engine
// lock held, never from inside start().
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "transport/tcp/connection.h"

namespace softndk::tcp {

// One local ip:port shared by many outgoing connections toward distinct
// peers (NdkConnectWithSharedEndpoint). A bound, non-listening socket with
// SO_REUSEADDR|SO_REUSEPORT reserves the port; every connection binds the
// same address with the same options. The peer set makes a duplicate
// 4-tuple fail inline with STATUS_ADDRESS_ALREADY_EXISTS (the kernel would
// also refuse it at connect() with EADDRNOTAVAIL).
class SharedEndpoint {
 public:
  // port 0: the kernel picks one. Statuses: SUCCESS, SHARING_VIOLATION,
  // INVALID_ADDRESS, TOO_MANY_ADDRESSES, INSUFFICIENT_RESOURCES.
  static NTSTATUS create(const SockAddr& local, std::shared_ptr<SharedEndpoint>* out);
  const SockAddr& local() const { return local_; }
  size_t connections() const;

  // Engine internal: reserve / release a peer for one connection.
  bool claim(const SockAddr& peer);
  void release(const SockAddr& peer);

 private:
  SharedEndpoint() = default;
  Fd reserve_;
  SockAddr local_;
  mutable std::mutex mu_;
  std::set<std::string> peers_;
};

struct ConnectArgs {
  SockAddr src;  // optional: empty, or wildcard/port 0, lets the kernel choose
  SockAddr dst;
  std::shared_ptr<SharedEndpoint> shared;  // if set, supplies the local address
  uint16_t ird = 0;                        // consumer's inbound/outbound read limits
  uint16_t ord = 0;
  std::vector<uint8_t> private_data;  // ULP private data for the Request
};

// How far a failed connect got (ConnectResult::phase): a reset means
// different things before and after the MPA exchange
// (docs/compatibility.md, "siw 6.1 traps").
enum class SetupPhase : uint8_t {
  kTcp,       // TCP handshake (a RST here: nothing accepts on that port now)
  kMpa,       // TCP up, MPA Request sent or being sent, no Reply yet
  kAfterMpa,  // the Reply was accepted (initiator hold-off)
};

struct ConnectResult {
  // SUCCESS; CONNECTION_REFUSED (nothing listening, or the peer rejected:
  // then mpa == kRejected and peer_private_data holds the reject's data);
  // NETWORK_UNREACHABLE; HOST_UNREACHABLE; IO_TIMEOUT (TCP or MPA not
  // answered within connect_timeout); CONNECTION_RESET / CONNECTION_ABORTED
  // (peer reset / closed during the exchange); DATA_ERROR (malformed Reply);
  // NOT_SUPPORTED (incompatible MPA options); ADDRESS_ALREADY_EXISTS
  // (kernel-detected duplicate 4-tuple); CANCELLED (cancel()).
  NTSTATUS status = STATUS_PENDING;
  mpa::Status mpa = mpa::Status::kOk;
  std::vector<uint8_t> peer_private_data;
  std::shared_ptr<Connection> connection;  // SUCCESS only
  SetupPhase phase = SetupPhase::kTcp;     // where a failure happened
};

class ActiveConnect : public std::enable_shared_from_this<ActiveConnect> {
 public:
  using Callback = std::function<void(ConnectResult)>;

  // STATUS_PENDING: cb follows exactly once. Any other status failed inline
  // (bad arguments, local address problems, a duplicate shared-endpoint
  // 4-tuple, descriptor limits) and no callback follows. `out` is optional.
  static NTSTATUS start(Reactor& reactor, const ConnSettings& settings, ConnectArgs args,
                        Callback cb, std::shared_ptr<ActiveConnect>* out = nullptr);

  // Stops the attempt (RST if the TCP connection exists); the callback gets
  // STATUS_CANCELLED unless it already ran or is running.
  void cancel();

  static long live_count();
  ~ActiveConnect();

 private:
  enum class State : uint8_t { kConnecting, kSending, kAwaitReply, kHoldoff, kDone };
  ActiveConnect(Reactor& r, const ConnSettings& s, ConnectArgs a, Callback cb);
  void on_event(uint32_t ev);
  void on_connected();
  void flush_request();
  void read_reply();
  void establish();
  void fail(NTSTATUS st, mpa::Status why = mpa::Status::kOk, bool rst = true,
            std::vector<uint8_t> reject_pd = {});
  void finish(ConnectResult r);

  Reactor& reactor_;
  const ConnSettings settings_;
  ConnectArgs args_;
  Callback cb_;
  Fd fd_;
  State state_ = State::kConnecting;
  bool watching_ = false;
  bool claimed_ = false;
  Reactor::TimerId timer_ = 0;
  std::vector<uint8_t> tx_;
  size_t tx_off_ = 0;
  std::vector<uint8_t> rx_;
  std::chrono::steady_clock::time_point request_sent_at_{};
  std::chrono::microseconds mpa_round_trip_{0};
  // Reply accepted, connection not yet handed out (kHoldoff): its outcome
  // and the bytes that came behind it.
  mpa::NegotiatedParams params_;
  std::vector<uint8_t> leftover_;
  std::shared_ptr<ActiveConnect> self_;  // keeps the attempt alive until done
};

// NTSTATUS for a failed MPA step (DATA_ERROR: malformed; NOT_SUPPORTED:
// incompatible options; CONNECTION_REFUSED: rejected).
NTSTATUS status_from_mpa(mpa::Status s);

}  // namespace softndk::tcp
