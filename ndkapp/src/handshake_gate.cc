// SPDX-License-Identifier: Apache-2.0
// handshake_gate.cc - see handshake_gate.h.
#include "ndkapp/handshake_gate.h"

namespace softndk::tools {

namespace {

// Takes one from `n` unless it is at `cap` (0: no cap); true if taken.
bool take(std::atomic<size_t>& n, size_t cap) {
  size_t v = n.load();
  do {
    if (cap != 0 && v >= cap) return false;
  } while (!n.compare_exchange_weak(v, v + 1));
  return true;
}

}  // namespace

HandshakeGate::HandshakeGate(Limits l) : counts_(std::make_shared<Ticket::Counts>(std::move(l))) {}

std::optional<HandshakeGate::Ticket> HandshakeGate::admit(std::string* why) {
  const Limits& l = counts_->limits;
  // Refused at once while every service slot is taken: its handshake would
  // only end in a refusal.
  if (l.max_served != 0 && counts_->serving.load() >= l.max_served) {
    if (why)
      *why = "already serving " + std::to_string(l.max_served) + " " + l.served_what + " (" +
             l.served_option + ")";
    return std::nullopt;
  }
  if (!take(counts_->handshaking, l.max_handshakes)) {
    if (why)
      *why = "already " + std::to_string(l.max_handshakes) +
             " connections in their handshake (--max-handshakes)";
    return std::nullopt;
  }
  return Ticket(counts_, Ticket::State::kHandshake);
}

size_t HandshakeGate::handshakes() const { return counts_->handshaking.load(); }
size_t HandshakeGate::served() const { return counts_->serving.load(); }
const HandshakeGate::Limits& HandshakeGate::limits() const { return counts_->limits; }

HandshakeGate::Ticket& HandshakeGate::Ticket::operator=(Ticket&& o) noexcept {
  if (this != &o) {
    release();
    counts_ = std::move(o.counts_);
    state_ = o.state_;
    o.state_ = State::kNone;
  }
  return *this;
}

bool HandshakeGate::Ticket::serve(std::string* why) {
  if (state_ == State::kServing) return true;
  if (state_ != State::kHandshake) {
    if (why) *why = "no handshake to finish";
    return false;
  }
  counts_->handshaking.fetch_sub(1);
  state_ = State::kNone;
  const Limits& l = counts_->limits;
  if (!take(counts_->serving, l.max_served)) {
    if (why)
      *why = "dropped after its handshake: already serving " + std::to_string(l.max_served) + " " +
             l.served_what + " (" + l.served_option + ")";
    return false;
  }
  state_ = State::kServing;
  return true;
}

void HandshakeGate::Ticket::release() {
  if (state_ == State::kHandshake) counts_->handshaking.fetch_sub(1);
  if (state_ == State::kServing) counts_->serving.fetch_sub(1);
  state_ = State::kNone;
}

}  // namespace softndk::tools
