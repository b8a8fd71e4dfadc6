// SPDX-License-Identifier: Apache-2.0
// transport/samehost/samehost.h - same-host detection for one connection (docs/samehost.md).
//
// After MPA, the two softndk ends of a connection look for each other
// through an abstract unix socket whose name is derived from the
// connection's TCP 4-tuple as the MPA initiator sees it (and the network
// namespace): the initiator binds it, the responder connects to it. Each
// side sends a hello with its pid, the address of a random nonce in its own
// memory, and its TCP socket itself (SCM_RIGHTS). The other side accepts
// the peer only if
//   - SO_PEERCRED of the unix socket names the hello's pid and our uid,
//   - the passed TCP socket is the other end of ours (its local address is
//     our peer address and vice versa) in the same network namespace,
//   - process_vm_readv() of the nonce at the advertised address works and
//     returns the nonce (so we can read the peer's memory).
// Nothing goes over the TCP stream: a peer that is not softndk (siw, a
// relay's socket on 127.0.0.1, another namespace) never answers, and the
// connection stays standard iWARP. Everything runs on the connection's
// reactor, non-blocking; the rendezvous gives up after a bounded time.
//
// Results, readable from any thread:
//   rx_ok(): we verified the peer and can pull from it: accept descriptors;
//   tx_ok(): the peer verified us and can pull from us: send descriptors.
// rx_ok is set before we tell the peer, and the peer sets its tx_ok only
// when told, so a descriptor never reaches a side that cannot take it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/samehost/samehost_wire.h"
#include "transport/samehost/shm_ring.h"
#include "util/reactor.h"

namespace softndk::samehost {

// Why a connection stays on TCP (SOFTNDK_PATH_INFO.Reason).
enum class SamehostReason : uint32_t {
  kNone = 0,          // on the fast path, or still probing
  kDisabled = 1,      // SOFTNDK_SAMEHOST=off
  kNoPeer = 2,        // nobody answered: another host, a relay, another netns, not softndk
  kNotVerified = 3,   // a peer answered but is not the other end of this connection
  kNoAccess = 4,      // its memory cannot be read (ptrace policy, non-dumpable)
  kPeerDeclined = 5,  // the peer could not verify or read us (or is switched off)
  kCrc = 6,           // MPA CRC negotiated: the bytes must cross the wire
  kError = 7,         // a socket call failed
  kHooked = 8,        // a pcap trace was on when the stream started
};

class Rendezvous : public std::enable_shared_from_this<Rendezvous> {
 public:
  // On r's thread. Keeps its own duplicate of `tcp_fd` until it is done.
  // `may_pull` false: we take no descriptors (a trace wants the payload on
  // the wire), so the peer sends us payload; we may still send descriptors.
  static std::shared_ptr<Rendezvous> start(util::Reactor& r, int tcp_fd, bool initiator,
                                           bool may_pull = true);
  ~Rendezvous();

  bool rx_ok() const { return rx_ok_.load(std::memory_order_acquire); }
  bool tx_ok() const { return tx_ok_.load(std::memory_order_acquire); }
  // The peer also maps shared segments: descriptors may name them.
  bool tx_map_ok() const { return tx_map_ok_.load(std::memory_order_acquire); }
  bool done() const { return done_.load(std::memory_order_acquire); }
  pid_t peer_pid() const { return peer_pid_.load(std::memory_order_acquire); }
  SamehostReason reason() const { return reason_.load(std::memory_order_acquire); }
  // The shared-memory rings (docs/samehost.md section 4), once agreed:
  // rx_ring() the peer's ring we mapped (and said so), tx_ring() ours that
  // the peer mapped. nullptr until then, or when the peer offered none.
  std::shared_ptr<ShmRing> rx_ring() const {
    return rx_ring_ok_.load(std::memory_order_acquire) ? rx_ring_ : nullptr;
  }
  std::shared_ptr<ShmRing> tx_ring() const {
    return tx_ring_ok_.load(std::memory_order_acquire) ? tx_ring_ : nullptr;
  }
  // A pidfd of the verified peer process (-1 if none): readable once the
  // peer has exited. Owned by the rendezvous; valid while it lives.
  int peer_pidfd() const { return rx_ring_ok_.load(std::memory_order_acquire) ? pidfd_ : -1; }
  // Ends the rendezvous (stream stopped); any thread.
  void cancel();

  // The abstract socket name of a connection (tests): from the initiator's
  // local and peer addresses and the network namespace.
  static std::string socket_name(const void* init_local, unsigned local_len, const void* init_peer,
                                 unsigned peer_len, uint64_t netns);

 private:
  Rendezvous(util::Reactor& r, int tcp_fd, bool initiator, bool may_pull);
  void begin();
  void try_connect();
  void on_listen(uint32_t ev);
  void on_msg(uint32_t ev);
  void send_hello(uint8_t flags);
  void send_ack(uint8_t flags);
  void take_verdict(uint8_t peer_flags);  // the peer's CanPull/CanMap
  // Checks the peer's hello (and its passed TCP socket): true if we can
  // pull from it; otherwise records why.
  bool verify(const wire::SamehostMsg& m, int peer_tcp);
  void finish(SamehostReason why);  // reactor thread: closes everything
  void close_fds();

  util::Reactor& reactor_;
  int tcp_fd_;  // our dup of the connection's socket, closed when done
  const bool initiator_;
  const bool may_pull_;
  std::string name_;
  int listen_fd_ = -1, conn_fd_ = -1;  // reactor thread only
  util::Reactor::TimerId timer_ = 0, retry_timer_ = 0;
  int retries_ = 0;
  bool got_hello_ = false;
  alignas(16) uint8_t nonce_[wire::kSamehostNonceSize] = {};  // read by the peer
  // Written on the reactor before the matching flag is published.
  std::shared_ptr<ShmRing> tx_ring_, rx_ring_;
  int pidfd_ = -1;
  std::atomic<bool> rx_ring_ok_{false}, tx_ring_ok_{false};
  std::atomic<bool> rx_ok_{false}, tx_ok_{false}, tx_map_ok_{false}, done_{false};
  std::atomic<pid_t> peer_pid_{0};
  std::atomic<SamehostReason> reason_{SamehostReason::kNone};
};

// Copies len bytes from `src` in process `pid` to `dst` (process_vm_readv).
// 0 on success, else an errno: ESRCH (the process is gone), EFAULT (the
// range is not mapped there), EPERM (no longer allowed).
int samehost_pull(pid_t pid, uint8_t* dst, uint64_t src, size_t len);

}  // namespace softndk::samehost
