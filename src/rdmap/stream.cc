// SPDX-License-Identifier: Apache-2.0
// rdmap/stream.cc - stream lifecycle: start, the QpTransport/handler/progress
// entry points, fatal errors (QP to error + flush + connection report), stop.
#include "rdmap/stream.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "mpa/fpdu.h"
#include "rdmap/rtr.h"
#include "rdmap/terminate_fpdu.h"
#include "rdmap/tsan_edge.h"
#include "rdmap/tx_faults.h"
#include "rdmap/wire_tap.h"

namespace softndk::rdmap {

namespace {
constexpr size_t kReactorRxBudget = 4u << 20;
constexpr size_t kPollRxBudget = 1u << 20;
// Polled mode: entered after this many progress() calls with no CQ arm in
// between (an event-mode consumer polls a few times per notification and
// re-arms), left when a CQ is armed or no poll came for a watchdog period.
constexpr uint64_t kPolledAfter = 32;
constexpr std::chrono::milliseconds kPollWatchdog{1};
// Polled mode: Send/Write payloads at least this big are transmitted by the
// consumer's next poll rather than by the post (sq_posted).
constexpr uint64_t kPollTxMin = 16384;
// progress(): held large posts are transmitted at the latest once this many
// arrived between two polls.
constexpr uint64_t kHeldPostsMax = 32;
// Posts this big are not held beyond the next poll (no gain in coalescing).
constexpr uint64_t kHoldMax = 256 * 1024;
// The receive staging buffer is given back after this long with no reads.
constexpr std::chrono::milliseconds kStagingIdle{1000};
// Largest payloads that keep ULPDU <= 65535 and 2 + ULPDU a multiple of 4
// (no pad): ULPDU 65534.
constexpr uint32_t kMaxTaggedPayload = 65534 - 14;
constexpr uint32_t kMaxUntaggedPayload = 65534 - 18;
}  // namespace

Stream::Stream(provider::QpHost* qp, std::shared_ptr<tcp::Connection> conn,
               const StreamOptions& opt)
    : qp_(qp),
      conn_(std::move(conn)),
      crc_(conn_->params().crc),
      ird_(conn_->params().ird),
      ord_(conn_->params().ord),
      pd_(qp->pd_key()),
      stags_(qp->stags()),
      qc_(qp->counters()),
      sent_rtr_(opt.sent_rtr),
      wake_after_(conn_->role() == tcp::Role::kInitiator ? opt.wake_silent_after
                                                         : std::chrono::milliseconds{0}),
      // With CRC the bytes must cross the wire: no fast path (docs/samehost.md).
      samehost_(!conn_->params().crc && opt.samehost != 0),
      parser_(wire::ParserConfig{conn_->params().crc, false, 0xFFFF, /*coalesce=*/true,
                                 /*accept_samehost=*/samehost_}) {
  max_tagged_ = kMaxTaggedPayload;
  max_untagged_ = kMaxUntaggedPayload;
  if (opt.max_fpdu_payload != 0) {
    max_tagged_ = std::min(max_tagged_, opt.max_fpdu_payload);
    max_untagged_ = std::min(max_untagged_, opt.max_fpdu_payload);
  }
  tx_gated_.store(opt.await_peer_fpdu, std::memory_order_relaxed);
  b_ = std::make_unique<Batch>();
  if (wake_after_.count() > 0)
    wake_len_ = wire::encode_rtr_write(std::span<uint8_t>(wake_fpdu_), crc_);
}

Stream::~Stream() {
  if (sock_.fd() >= 0) ::close(sock_.fd());
}

std::shared_ptr<Stream> start_stream(provider::QpHost* qp, std::shared_ptr<tcp::Connection> conn,
                                     const StreamOptions& opt) {
  if (conn == nullptr || conn->closed()) return nullptr;
  auto s = std::make_shared<Stream>(qp, conn, opt);
  const auto& p = conn->params();
  if (conn->role() == tcp::Role::kInitiator && p.p2p && p.rtr == mpa::kRtrRead) {
    // The RTR was a zero-length Read Request with MSN 1 (siw: tracked in
    // its outbound read queue); its zero-length response arrives here.
    s->rreq_msn_.next();
    OutboundRead rtr;
    rtr.seq = UINT64_MAX;  // no work request behind it
    s->orq_.push(rtr);
  }
  if (conn->reactor().on_thread()) {
    s->begin();
  } else {
    conn->reactor().post([s] { s->begin(); });
  }
  return s;
}

void Stream::begin() {
  if (stopped_.load()) return;
  // Our own descriptor is taken here, on the connection's reactor: the
  // connection closes its socket only on this thread, so its number cannot
  // have been closed and reused by another socket meanwhile (a dup taken on
  // the caller's thread could race with an abort and read a stranger's
  // socket).
  int fd = conn_->closed() ? -1 : ::fcntl(conn_->fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    fail(STATUS_CONNECTION_ABORTED, conn_->closed() ? ECONNABORTED : errno);
    after_unlock();
    return;
  }
  std::vector<uint8_t> left = conn_->take_leftover();
  auto self = shared_from_this();
  {
    // Under both halves' locks, like stop(): a stop() racing with us either
    // came first (we attach nothing) or detaches after we attached.
    std::lock_guard tl(tx_mu_);
    std::lock_guard rl(rx_mu_);
    if (stopped_.load()) {
      ::close(fd);
      return;
    }
    sock_.set_fd(fd);
    tsan_edge_ = tsan::edge_of(fd);
    if (!left.empty()) staging_.resize(std::max(left.size(), kStagingSize));
    if (!left.empty()) std::memcpy(staging_.data(), left.data(), left.size());
    if (!left.empty()) arm_staging_release();
    leftover_seen_.store(!left.empty(), std::memory_order_relaxed);
    attach_taps_locked();  // traces asked for before the connection: from the start
    if (rx_hooked_ && !left.empty()) tap_rx(left.data(), left.size(), true);
    st_pos_ = 0;
    st_len_ = left.size();
    samehost_begin();
    qp_->attach(self);
    qp_->add_progress(self);
  }
  conn_->attach(self);
  if (wake_len_ > 0) wake_arm(wake_after_);
  on_readable();  // leftover bytes, and anything already in the socket
  kick_tx();
}

// ---- entry points -------------------------------------------------------------

void Stream::sq_posted(bool deferred, uint64_t bytes) {
  // NDKPI 7: a deferred request waits for the next non-deferred post (or an
  // inline failure, which the QP turns into a non-deferred kick).
  if (deferred) return;
  if (bytes >= kPollTxMin && polled_.load(std::memory_order_relaxed)) {
    // A busy-polling consumer posts a window of large messages and then
    // polls: its next poll (microseconds away) transmits them all in one
    // sendmsg. Each post's own sendmsg of 64 KiB costs TCP on loopback
    // about twice per byte what one of 1 MiB does. Small messages go at
    // once (latency). Stored before polled_ is read again: whoever turns
    // polled mode off (arm, watchdog) reads tx_pending_ after its store,
    // so one of the two kicks.
    // NDKPI 9: one poster per queue at a time, so no read-modify-write. A
    // post of 256 KiB or more is big enough alone: it goes at the next poll.
    if (bytes < kHoldMax)
      held_posts_.store(held_posts_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    tx_pending_.store(true, std::memory_order_seq_cst);
    if (polled_.load(std::memory_order_seq_cst)) return;
    tx_pending_.store(false, std::memory_order_relaxed);
  }
  kick_tx();
}

void Stream::kick_pending() {
  // Also a transmitter blocked on a full socket while polled: it has no
  // EPOLLOUT armed (tx_block), so the one ending polled mode retries it.
  bool waiting = tx_waiting_.load(std::memory_order_seq_cst);
  bool pending = tx_pending_.load(std::memory_order_seq_cst) && tx_pending_.exchange(false);
  if (waiting || pending) kick_tx();
}

void Stream::on_readable() {
  if (stopped_.load(std::memory_order_acquire)) return;
  bool kick;
  {
    // Blocking on the reactor: a polling thread holds the lock only for a
    // bounded budget, and a level-triggered reactor must not spin.
    std::lock_guard lk(rx_mu_);
    // On a ring, the socket's readiness means EOF, an error or stray bytes:
    // the path looks at the socket once it finds itself empty.
    if (rx_path_ != &sock_) rx_path_->socket_readable();
    run_rx(kReactorRxBudget);
    // Receiver state: read and cleared under rx_mu_ (a poller's progress()
    // sets it too).
    kick = kick_after_rx_;
    kick_after_rx_ = false;
  }
  if (kick) kick_tx();
  after_unlock();
}

void Stream::progress() {
  if (stopped_.load(std::memory_order_acquire) || failed_.load(std::memory_order_acquire)) return;
  // Not a read-modify-write (a locked instruction per poll): pollers of the
  // stream's two CQs may race and lose a count, which only delays polled
  // mode by a poll; the watchdog needs the count to move, not to be exact.
  uint64_t polls = polls_.load(std::memory_order_relaxed) + 1;
  polls_.store(polls, std::memory_order_relaxed);
  if (!polled_.load(std::memory_order_relaxed) &&
      polls - arm_mark_.load(std::memory_order_relaxed) >= kPolledAfter)
    enter_polled();
  // Transmit blocked on a full socket: retry from this running thread
  // rather than wait for the reactor's EPOLLOUT wake-up.
  if (tx_waiting_.load(std::memory_order_relaxed)) {
    tx_pending_.store(false, std::memory_order_relaxed);
    kick_tx();
  } else if (tx_pending_.load(std::memory_order_relaxed)) {
    // Held large posts go out once a poll finds no new one since the last
    // poll (the consumer's burst of posts is over), or once there are many:
    // a window of 64 KiB Sends refilled one completion at a time then
    // leaves as one sendmsg of up to a window, not one of 64 KiB per
    // message (raw TCP on loopback: 3.7 GB/s with 64 KiB writes, 6.2 GB/s
    // with 1 MiB ones, same minute). Costs a lone large post one more poll.
    uint64_t posts = held_posts_.load(std::memory_order_relaxed);
    uint64_t seen = held_seen_.load(std::memory_order_relaxed);
    held_seen_.store(posts, std::memory_order_relaxed);
    if (posts == seen || posts - seen >= kHeldPostsMax) kick_pending();
  }
  if (!rx_mu_.try_lock()) return;
  run_rx(kPollRxBudget, true);
  bool kick = kick_after_rx_;
  kick_after_rx_ = false;
  rx_mu_.unlock();
  if (kick) kick_tx();
  after_unlock();
}

void Stream::on_writable() {
  // One-shot: EPOLLOUT is for a transmitter that blocked, and one wake-up
  // is enough; it blocks again (tx_block re-arms) or it drains. Left armed,
  // a level-triggered EPOLLOUT fires on every epoll_wait while the socket
  // has room, so while a poller is the runner the reactor spun, kicking it
  // round its loop for good: its progress() never returned, so it never
  // counted as polling, and its blocks kept arming. Cleared before the kick,
  // so an arm racing it (tx_block) is either seen by this kick's run or
  // posted after this disarm.
  write_armed_.store(false, std::memory_order_release);
  conn_->want_write(false);
  kick_tx();
}

// ---- polled mode ----------------------------------------------------------------
// Every switch posts one task that applies the current state (so racing
// switches end in the last one's state); per message nothing is posted.

void Stream::enter_polled() {
  if (polled_.exchange(true, std::memory_order_acq_rel)) return;
  std::weak_ptr<Stream> weak = weak_from_this();
  conn_->reactor().post([weak] {
    if (auto s = weak.lock()) s->sync_reactor_rx();
  });
}

void Stream::cq_armed() {
  arm_mark_.store(polls_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  bool was = polled_.exchange(false, std::memory_order_seq_cst);
  kick_pending();  // the consumer may wait for a notification now
  if (!was) return;
  std::weak_ptr<Stream> weak = weak_from_this();
  conn_->reactor().post([weak] {
    if (auto s = weak.lock()) s->sync_reactor_rx();
  });
}

void Stream::sync_reactor_rx() {
  // The connection closes its socket only on this thread: fd() is its own.
  if (conn_->closed()) return;
  bool want = polled_.load(std::memory_order_acquire) && !stopped_.load(std::memory_order_acquire);
  // On the ring the socket carries nothing but EOF and errors: never muted.
  const bool ring = rx_on_ring_.load(std::memory_order_acquire);
  const bool mute = want && !ring;
  if (mute != muted_) {
    conn_->reactor().mute(conn_->fd(), EPOLLIN, mute);
    muted_ = mute;
  }
  // Leaving polled mode on the ring: nobody asked for its doorbell while
  // the poller read it; this turn reads what is there and asks.
  if (ring && !want && !stopped_.load(std::memory_order_acquire)) on_ring_data();
  if (want && !watchdog_on_) {
    watchdog_on_ = true;
    watchdog_seen_ = activity();
    std::weak_ptr<Stream> weak = weak_from_this();
    conn_->reactor().after(kPollWatchdog, [weak] {
      if (auto s = weak.lock()) s->polled_watchdog();
    });
  }
}

uint64_t Stream::activity() const {
  return polls_.load(std::memory_order_relaxed) + tx_beats_.load(std::memory_order_relaxed) +
         rx_beats_.load(std::memory_order_relaxed);
}

void Stream::polled_watchdog() {
  watchdog_on_ = false;
  uint64_t polls = polls_.load(std::memory_order_relaxed);
  if (polled_.load(std::memory_order_acquire) && activity() == watchdog_seen_) {
    // Nobody polled for a whole period: the reactor reads again (a level-
    // triggered EPOLLIN fires at once for what is already waiting).
    arm_mark_.store(polls, std::memory_order_relaxed);
    polled_.store(false, std::memory_order_seq_cst);
    kick_pending();
  }
  sync_reactor_rx();
}

void Stream::flushing() {
  if (stopped_.load()) return;
  // The QP is about to cancel its RQ ring: the receive a Send was landing
  // in came from that ring, ahead of everything still in it, so it
  // completes first; and the receiver takes nothing more from the ring
  // (a receive it took after the ring was cancelled would complete out of
  // order). flushed() ends the rest of the stream.
  std::lock_guard lk(rx_mu_);
  cancel_active_receive_locked();
  rx_done_ = true;
}

void Stream::flushed() {
  if (stopped_.load()) return;
  provider::QpState st = qp_->state();
  // NdkFlush, QP close or our own error: requests in flight were cancelled,
  // so the stream cannot continue (a message may be cut). Stop reading the
  // consumer's memory before returning.
  fail(STATUS_CANCELLED, ECONNABORTED);
  {
    std::lock_guard lk(tx_mu_);
    if (b_->sent != b_->total && !b_->has_terminate) {
      b_->niov = b_->iov_pos = 0;
      b_->total = b_->sent = 0;
      b_->nmarks = b_->mark_pos = 0;
    }
    msg_.active = false;
  }
  {
    std::lock_guard lk(rx_mu_);
    cancel_active_receive_locked();
    rx_done_ = true;
  }
  {
    std::lock_guard lk(q_mu_);
    orq_.clear();
    irq_.clear();
  }
  after_unlock();
  if (st == provider::QpState::kClosing) stop();
}

void Stream::stop() {
  if (stopped_.exchange(true)) return;
  wake_cancel();
  std::pair<std::shared_ptr<RingPath>, std::shared_ptr<RingPath>> rings;
  {
    std::lock_guard tl(tx_mu_);
    std::lock_guard rl(rx_mu_);
    if (sh_) sh_->cancel();
    tx_done_ = true;
    rx_done_ = true;
    cancel_active_receive_locked();
    if (sock_.fd() >= 0) ::close(sock_.fd());
    sock_.set_fd(-1);
    rings = {rx_ring_, tx_ring_};
    // Nothing more crosses the socket: close the traces' files now.
    for (auto& t : taps_) t.reset();
    update_hooked_locked();
  }
  qp_->detach();
  qp_->remove_progress(this);
  auto conn = conn_;
  // The reactor stops watching the rings' doorbells and the peer's pidfd
  // (they stay open, held here, until then); nothing if never watched.
  conn->reactor().post([conn, rings, sh = sh_] { ring_unwatch(conn->reactor(), rings, sh); });
  conn->reactor().post([conn] {
    // The connection may drain for its disconnect: it needs EPOLLIN back.
    if (!conn->closed()) conn->reactor().mute(conn->fd(), EPOLLIN, false);
    conn->attach(nullptr);
  });
}

// ---- idle staging release ----------------------------------------------------

void Stream::arm_staging_release() {
  if (release_timer_.exchange(true)) return;
  std::weak_ptr<Stream> weak = weak_from_this();
  conn_->reactor().after(kStagingIdle, [weak] {
    if (auto s = weak.lock()) s->staging_release();
  });
}

void Stream::staging_release() {
  std::lock_guard lk(rx_mu_);
  if (stopped_.load(std::memory_order_acquire)) return;
  if (rx_reads_ == rx_reads_seen_ && st_pos_ == st_len_) {
    // Quiet for a whole period and nothing staged: the parser keeps its own
    // partial header, so the buffer holds nothing it needs. The next bytes
    // take a new one (run_rx).
    std::vector<uint8_t>().swap(staging_);
    st_pos_ = st_len_ = 0;
    release_timer_.store(false);
    return;
  }
  rx_reads_seen_ = rx_reads_;
  std::weak_ptr<Stream> weak = weak_from_this();
  conn_->reactor().after(kStagingIdle, [weak] {
    if (auto s = weak.lock()) s->staging_release();
  });
}

// ---- errors -------------------------------------------------------------------

void Stream::cancel_active_receive_locked() {
  if (!recv_active_) return;
  recv_active_ = false;
  qp_->complete_receive(recv_, STATUS_CANCELLED, 0, false);
}

void Stream::fail(NTSTATUS /*status*/, int sock_err) {
  bool expected = false;
  if (!failed_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) return;
  sock_err_.store(sock_err);
  provider::count2(qp_->adapter_counters().connection_error, qc_.connection_error);
}

void Stream::queue_terminate(const wire::TerminateMessage& t) {
  std::lock_guard lk(q_mu_);
  if (term_pending_.load(std::memory_order_relaxed) || term_sent_.load() != 0xFFFFFFFFu)
    return;  // one Terminate per stream
  size_t n = wire::encode_terminate_fpdu(t, 1, crc_, std::span<uint8_t>(term_fpdu_));
  if (n == 0) return;
  term_len_ = n;
  term_pending_.store(true, std::memory_order_release);
  term_sent_.store(static_cast<uint32_t>(t.code.layer) << 16 |
                   static_cast<uint32_t>(t.code.etype) << 8 | t.code.code);
  provider::count2(qp_->adapter_counters().terminates_sent, qc_.terminates_sent);
}

void Stream::after_unlock() {
  if (!failed_.load(std::memory_order_acquire)) {
    // Read first: an exchange would be a locked write on every call.
    if (eof_.load(std::memory_order_relaxed) && eof_.exchange(false)) {
      // Graceful peer close: report it (the disconnect event), no flush.
      auto conn = conn_;
      conn->reactor().post([conn] { conn->report_peer_closed(0); });
    }
    return;
  }
  if (error_acted_.exchange(true)) return;
  kick_tx();  // the Terminate, if any, then FIN
  {
    // A transmitter on another thread may have handed a message to TCP and
    // not yet completed it: let it finish, so that it completes with
    // success rather than being flushed.
    std::lock_guard lk(tx_mu_);
  }
  {
    // A receive a Send was landing in is no longer in the RQ ring: complete
    // it here, before the flush completes the later ones.
    std::lock_guard lk(rx_mu_);
    cancel_active_receive_locked();
  }
  if (!stopped_.load()) qp_->to_error();
  // The consumer's disconnect event (and the connector's view of the
  // stream) comes from the connection layer.
  auto conn = conn_;
  int err = sock_err_.load();
  conn->reactor().post([conn, err] { conn->report_peer_closed(err); });
}

}  // namespace softndk::rdmap
