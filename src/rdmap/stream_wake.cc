// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_wake.cc - an initiator whose peer stays silent after the MPA
// exchange (docs/compatibility.md note 1, issue 32).
//
// Linux siw 6.1 as responder sends its MPA Reply before it installs the
// receive upcall of its QP (siw_accept()); FPDUs that arrive in between are
// acknowledged by TCP and then sit unread in its socket until more bytes or
// a FIN arrive. An initiator whose protocol waits for an answer to its first
// FPDU (an NVMe-oF Connect, rping's first Send, a Read RTR) waits for ever,
// and its eventual close can crash a 6.1 kernel (iwcm.c BUG(), because siw
// reports CLOSE for a connection it never reported ESTABLISHED).
//
// "More bytes" is the cure: once we have sent a message that may want an
// answer (anything beyond a Write RTR) and the peer has sent not one byte
// for wake_silent_after, the transmitter sends a zero-length RDMA Write (STag 1, TO 0: the bytes of
// the RFC 6581 Write RTR). RDMAP allows a zero-length Write at any time; it names no buffer, places
// nothing, consumes no receive and completes nothing at the peer (RFC 5040 4.3; siw and softndk
// skip the STag check for zero length). Its arrival runs siw's new upcall, which reads everything
// queued. A peer that answers (every working peer does, within a round trip) never sees one. None
// goes to a peer known to be softndk (the same-host rendezvous found it: no race there), on a
// connection that only sent its Write RTR (an idle connection owes nobody an answer), or once
// faults were injected (tests count every frame).
#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <algorithm>

#include "provider/counters.h"
#include "rdmap/stream.h"

namespace softndk::rdmap {

namespace {
// Checks made before we sent anything at all (a consumer that connects and
// then waits): after this many the watch ends.
constexpr uint32_t kMaxIdleChecks = 64;
// A host-local peer may be softndk, which the same-host rendezvous tells
// within milliseconds (its responder retries for ~130 ms); a peer behind a
// local port forward (the interop VM) never answers it, and the rendezvous
// gives up only after 2 s. Wake-ups wait this long for its verdict.
constexpr std::chrono::milliseconds kRendezvousGrace{300};
// A disconnect's wake-up waits at most this long for TCP's acknowledgement
// before the FIN goes anyway (a peer that is gone must not hold the close).
constexpr std::chrono::milliseconds kCloseWakeBound{500};
constexpr std::chrono::milliseconds kCloseWakePoll{2};
}  // namespace

static_assert(kMaxWakeUps == SOFTNDK_MAX_WAKE_UPS);

void Stream::query_activity(SOFTNDK_PEER_ACTIVITY* out) {
  *out = {};
  out->Established = TRUE;
  out->SentFpdu = sent_anything();
  out->PeerSpoke = peer_spoke();
  out->WakeUpsSent = wake_ups_sent();
  out->WakeAfterMs = static_cast<ULONG>(wake_after_.count());
}

bool Stream::peer_spoke() const {
  return leftover_seen_.load(std::memory_order_relaxed) ||
         qc_.rdma_in_octets.load(std::memory_order_relaxed) > 0;
}

bool Stream::sent_anything() const {
  // A Write RTR wants no answer; a Read RTR does (its zero-length Read
  // Response). The connection glue counted the RTR in rdma_out_octets.
  const auto& p = conn_->params();
  const uint64_t quiet = p.p2p && p.rtr != mpa::kRtrRead ? sent_rtr_.size() : 0;
  return qc_.rdma_out_octets.load(std::memory_order_relaxed) > quiet;
}

void Stream::wake_arm(std::chrono::milliseconds d) {
  if (wake_started_ == std::chrono::steady_clock::time_point{})
    wake_started_ = std::chrono::steady_clock::now();
  std::weak_ptr<Stream> weak = weak_from_this();
  wake_timer_.store(conn_->reactor().after(d,
                                           [weak] {
                                             if (auto s = weak.lock()) {
                                               s->wake_timer_.store(0, std::memory_order_relaxed);
                                               s->wake_check();
                                             }
                                           }),
                    std::memory_order_relaxed);
}

void Stream::wake_cancel() {
  if (uint64_t id = wake_timer_.exchange(0, std::memory_order_relaxed)) conn_->reactor().cancel(id);
}

void Stream::wake_check() {
  if (stopped_.load(std::memory_order_acquire) || failed_.load(std::memory_order_acquire) ||
      faults_used_.load(std::memory_order_relaxed) || peer_spoke())
    return;  // the watch ends
  const SamehostStats sh = samehost_stats();
  if (sh.peer_pid != 0) return;  // a softndk peer on this host
  if (!sent_anything()) {
    // Nothing to wake the peer for yet: look again one bound later.
    if (++wake_idle_checks_ < kMaxIdleChecks) wake_arm(wake_after_);
    return;
  }
  if (sh.probing && std::chrono::steady_clock::now() - wake_started_ < kRendezvousGrace) {
    wake_arm(std::max(wake_after_, std::chrono::milliseconds(50)));
    return;
  }
  wake_pending_.store(true, std::memory_order_release);
  kick_tx();
  if (++wake_round_ < kMaxWakeUps) wake_arm(wake_after_ * (1 << wake_round_));
}

bool Stream::add_wake_up() {
  if (!wake_pending_.load(std::memory_order_acquire)) return false;
  // Only between messages: a Write or Read Response half segmented must not
  // be interleaved with another tagged segment (and its own bytes wake the
  // peer anyway). A peer that spoke meanwhile needs none.
  if (msg_.active || resp_off_ != 0) return false;
  wake_pending_.store(false, std::memory_order_relaxed);
  if (peer_spoke() || wake_len_ == 0 || faults_used_.load(std::memory_order_relaxed)) return false;
  Batch& b = *b_;
  b.iov[b.niov++] = {wake_fpdu_, wake_len_};
  b.total = wake_len_;
  if (!tx_hooked_ || !tx_through_faults()) provider::count_qp(qc_.rdma_out_frames);
  wake_ups_sent_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// ---- the last wake-up, before our FIN ----
//
// An initiator that closes a connection on which only its Write RTR went out
// (a consumer that connects and disconnects, or whose protocol lets the
// responder speak first) gets no wake-up while open: nobody owes it an
// answer. But if that RTR landed in siw 6.1's window, siw never read it and
// never reported ESTABLISHED, and our FIN makes it report CLOSE for that
// connection: iw_cm's BUG() (iwcm.c:969, cm_close_handler), and the guest's
// iWARP stack is dead until a reboot. A FIN in the same segment as new data
// does not help (TCP reports the state change before the data). So: one
// wake-up, and the FIN only once TCP says the peer acknowledged every byte.
// The peer's kernel runs the socket's receive upcall under the socket lock
// that its processing of our FIN needs too, so by then siw has read the RTR
// and the wake-up and reported ESTABLISHED. Cost: one 20-byte FPDU and one
// round trip on the close of a connection whose peer never sent a byte.
bool Stream::owes_close_wake_up() const {
  if (wake_len_ == 0 || peer_spoke() || stopped_.load(std::memory_order_acquire) ||
      failed_.load(std::memory_order_acquire) || faults_used_.load(std::memory_order_relaxed))
    return false;
  const SamehostStats sh = samehost_stats();
  return sh.peer_pid == 0 && !sh.ring_tx;  // never to softndk, never off the wire
}

bool Stream::all_sent_acked() {
  std::lock_guard lk(tx_mu_);
  if (wake_pending_.load(std::memory_order_acquire) || b_->sent != b_->total) return false;
  int queued = 0;
  if (sock_.fd() < 0 || ::ioctl(sock_.fd(), SIOCOUTQ, &queued) != 0) return true;  // nothing to wait for
  return queued == 0;
}

void Stream::before_disconnect(std::function<void()> go) {
  if (!owes_close_wake_up()) {
    go();
    return;
  }
  wake_cancel();  // the watch's own checks end here
  wake_pending_.store(true, std::memory_order_release);
  kick_tx();
  close_wake_wait(std::move(go), std::chrono::steady_clock::now() + kCloseWakeBound);
}

void Stream::close_wake_wait(std::function<void()> go, std::chrono::steady_clock::time_point end) {
  if (stopped_.load(std::memory_order_acquire) || failed_.load(std::memory_order_acquire) ||
      peer_spoke() || all_sent_acked() || std::chrono::steady_clock::now() >= end) {
    go();
    return;
  }
  auto self = shared_from_this();
  conn_->reactor().after(kCloseWakePoll, [self, go = std::move(go), end]() mutable {
    self->close_wake_wait(std::move(go), end);
  });
}

}  // namespace softndk::rdmap
