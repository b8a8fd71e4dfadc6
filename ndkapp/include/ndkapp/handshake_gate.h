// SPDX-License-Identifier: Apache-2.0
// handshake_gate.h - admission of a server's connections in two groups, so
// that peers stalled in their handshake cannot keep real clients out
// (issue 28 item 4). Used by every server: ndkping -P, ndkperf --server,
// ndk-nvmet and the SMB Direct server.
//
// A connection is "in its handshake" from its connection request until the
// peer's first message after the MPA exchange (with peer-to-peer MPA the RTR
// completes the accept first; without it, the MPA Reply alone does). Only
// then does it take a service slot. The two groups have caps of their own:
// a peer that sends a valid MPA Request, reads the Reply and stalls fills
// only the handshake group, and a real client still finds a service slot.
// Each handshake is timed out by the server's own wait for that first
// message (all our servers use their --timeout); the gate only counts.
//
// Use:
//   HandshakeGate gate({max_handshakes, max_served, "clients", "--max-clients"});
//   // accept loop, per connection request:
//   std::string why;
//   auto t = gate.admit(&why);
//   if (!t) { reject; log "refused <peer>: " + why; }
//   // the connection's worker, when the peer's first message arrived:
//   if (!t->serve(&why)) { drop it: why }
//   // the ticket gives back its count when it is destroyed.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace softndk::tools {

class HandshakeGate {
 public:
  struct Limits {
    size_t max_handshakes = 256;  // connections in their handshake at once
    size_t max_served = 0;        // connections served at once; 0: no cap
    // What is served and the server's option for max_served, for the
    // refusal text: "already serving 64 clients (--max-clients)".
    std::string served_what = "clients";
    std::string served_option = "--max-clients";
  };

  // One connection's place: in the handshake group, then (serve()) in the
  // served group. Move-only; gives its place back when destroyed.
  class Ticket {
   public:
    Ticket(Ticket&& o) noexcept : counts_(std::move(o.counts_)), state_(o.state_) {
      o.state_ = State::kNone;
    }
    Ticket& operator=(Ticket&& o) noexcept;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket() { release(); }
    // The peer finished its handshake: moves to a service slot. false when
    // max_served connections are served (*why says so; the ticket then
    // holds nothing and the caller drops the connection). Call once.
    bool serve(std::string* why);
    bool serving() const { return state_ == State::kServing; }
    // Gives the place back now.
    void release();

   private:
    friend class HandshakeGate;
    struct Counts;
    enum class State { kNone, kHandshake, kServing };
    Ticket(std::shared_ptr<Counts> c, State s) : counts_(std::move(c)), state_(s) {}
    std::shared_ptr<Counts> counts_;
    State state_;
  };

  explicit HandshakeGate(Limits l);

  // For a new connection request: a ticket in the handshake group, or none
  // (*why says which cap is full) when max_handshakes connections are in
  // their handshake or every service slot is taken. Thread-safe.
  std::optional<Ticket> admit(std::string* why);

  size_t handshakes() const;
  size_t served() const;
  const Limits& limits() const;

 private:
  std::shared_ptr<Ticket::Counts> counts_;
};

struct HandshakeGate::Ticket::Counts {
  explicit Counts(Limits l) : limits(std::move(l)) {}
  const Limits limits;
  std::atomic<size_t> handshaking{0};
  std::atomic<size_t> serving{0};
};

}  // namespace softndk::tools
