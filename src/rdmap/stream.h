// SPDX-License-Identifier: Apache-2.0
// rdmap/stream.h - the RDMAP endpoint of one connected QP: the QP data path.
//
// A Stream joins a QP (provider::QpHost: its SQ/RQ rings, CQs) and an established
// tcp::Connection (MPA done). It implements
//   - provider::QpEngine: posts kick the transmitter from the posting thread;
//   - tcp::ConnectionHandler: the reactor drives receive (EPOLLIN) and a
//     blocked transmitter (EPOLLOUT);
//   - provider::ProgressSource: NdkGetCqResults on an empty CQ drives receive.
// docs/datapath.md is the design; stream_tx*.cc, stream_local.cc,
// stream_rx.cc and stream_place.cc the halves.
//
// Locks (never held while calling the consumer; CQ notifications run on the
// reactor by the CQ's own mechanism):
//   tx_mu_  transmitter (held by the one runner tx_kicks_ elects);
//   rx_mu_  receiver (try-lock from pollers, blocking on the reactor);
//   q_mu_   the read queues shared by both halves (ORQ, IRQ, Terminate).
// Order: tx_mu_ or rx_mu_ -> q_mu_ -> QP queue locks -> CQ lock. The halves
// never wait for each other. Fatal errors are recorded under a lock and
// acted on (QP to error + flush, connection report) after unlocking.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "ddp/fpdu_builder.h"
#include "ddp/sequence.h"
#include "ddp/stream_parser.h"
#include "provider/provider.h"
#include "rdmap/read_queues.h"
#include "rdmap/terminate.h"
#include "transport/byte_path.h"
#include "transport/samehost/ring_path.h"
#include "transport/samehost/samehost.h"
#include "transport/samehost/samehost_segments.h"
#include "transport/tcp/connection.h"
#include "transport/tcp/socket_path.h"

namespace softndk::rdmap {

// The same-host transport's pieces this engine drives (docs/samehost.md).
using samehost::Rendezvous;
using samehost::RingPath;
using samehost::SamehostReason;
using samehost::SegmentMaps;
using samehost::ShmRing;

struct StreamOptions {
  // Max DDP payload per FPDU (0: the largest that keeps ULPDU <= 65535).
  uint32_t max_fpdu_payload = 0;
  // MPA responder (RFC 5044 7.1.2): send no FPDU until the initiator's first
  // FPDU has arrived. siw as initiator fails the connection (EPROTO) if an
  // FPDU arrives together with or before it has processed the Reply.
  bool await_peer_fpdu = false;
  // The RTR the connection glue sent before the stream started (initiator,
  // RFC 6581): written to wire traces so they show the whole conversation.
  std::vector<uint8_t> sent_rtr;
  // The same-host fast path (docs/samehost.md): 0 off, 1 on. The provider
  // passes its adapter's SOFTNDK_SAMEHOST setting.
  int samehost = 1;
  // Initiator, a peer that stays silent (stream_wake.cc, docs/compatibility.md
  // note 1): once we have sent FPDUs and the peer has sent not one byte since
  // its MPA Reply for this long, a zero-length RDMA Write goes out (Linux siw
  // 6.1 can leave FPDUs that arrived right behind its Reply unread until more
  // bytes come); then again at doubling intervals, kMaxWakeUps in all. 0: off.
  std::chrono::milliseconds wake_silent_after{0};
};

// Wake-ups sent to a silent peer at most (StreamOptions::wake_silent_after):
// at B, 3B, 7B, ... 63B after the first check.
inline constexpr uint32_t kMaxWakeUps = 6;

// What the same-host fast path did on one stream (SOFTNDK_PATH_INFO).
struct SamehostStats {
  bool enabled = false;  // looked for a same-host peer
  bool probing = false;  // rendezvous not finished
  bool rx = false, tx = false;
  SamehostReason reason = SamehostReason::kNone;
  uint32_t peer_pid = 0;
  uint64_t pulled_octets = 0, pulled_messages = 0, descriptors_sent = 0, tcp_fallbacks = 0;
  // The stream moved to the shared-memory ring (docs/samehost.md section 4),
  // per direction, and the bytes that went through it.
  bool ring_rx = false, ring_tx = false;
  uint64_t ring_rx_octets = 0, ring_tx_octets = 0;
  // Of the descriptors pulled: those copied from a mapped shared segment of
  // the peer, and those that named a segment but fell back to
  // process_vm_readv (samehost_segments.h).
  uint64_t mapped_octets = 0, mapped_descriptors = 0, cma_fallbacks = 0;
  uint64_t segment_descriptors_sent = 0;  // of descriptors_sent, naming a segment
};

class WireTap;
struct TxFaults;

class Stream final : public provider::QpEngine,
                     public tcp::ConnectionHandler,
                     public provider::ProgressSource,
                     public std::enable_shared_from_this<Stream> {
 public:
  // Use start_stream().
  Stream(provider::QpHost* qp, std::shared_ptr<tcp::Connection> conn, const StreamOptions& opt);
  ~Stream() override;

  // provider::QpEngine
  void sq_posted(bool deferred, uint64_t bytes) override;
  bool direct_begin() override;
  void direct_end(const provider::WorkRequestHead* wr, uint64_t seq, const NDK_SGE* sgl,
                  ULONG nsge) override;
  void flushing() override;
  void flushed() override;
  // tcp::ConnectionHandler (reactor thread)
  void on_readable() override;
  void on_writable() override;
  // provider::ProgressSource (polling thread)
  void progress() override;
  void cq_armed() override;
  // provider::QpEngine: pcap traces (stream_hooks.cc); any thread.
  void set_trace(TraceSlot slot, std::shared_ptr<util::PcapFile> file) override;

  // SoftNdkInjectConnectionFault DropTx / DelayTx / CorruptTx (stream_hooks.cc).
  NTSTATUS inject_fault(const SOFTNDK_FAULT& f) override;

  // Ends the data path for good (NdkDisconnect, connector/QP close): no
  // more socket I/O, detached from the QP, its CQs and the connection. Call
  // it before Connection::abort() (the stream holds its own descriptor).
  // Blocks briefly for a transmitter/receiver running on another thread.
  void stop() override;

  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // The FPDU stream moved to the shared-memory ring, per direction (tests).
  bool rx_on_ring() const { return rx_on_ring_.load(std::memory_order_acquire); }
  bool tx_on_ring() const { return tx_on_ring_.load(std::memory_order_acquire); }
  // The reactor has seen the ring peer's process exit (tests wait for it).
  bool peer_exited() const { return peer_gone_.load(std::memory_order_acquire); }
  // The rings themselves (tests: corrupt them like a hostile peer would).
  std::shared_ptr<ShmRing> rx_ring_for_tests() {
    std::lock_guard lk(rx_mu_);
    return rx_ring_ != nullptr ? rx_ring_->ring() : nullptr;
  }
  std::shared_ptr<ShmRing> tx_ring_for_tests() {
    std::lock_guard lk(tx_mu_);
    return tx_ring_ != nullptr ? tx_ring_->ring() : nullptr;
  }
  // The same-host fast path of this stream (any thread).
  SamehostStats samehost_stats() const;
  // provider::QpEngine: SoftNdkQueryConnectionPath from samehost_stats().
  void query_path(SOFTNDK_PATH_INFO* out) override;
  // SoftNdkQueryPeerActivity (stream_wake.cc).
  void query_activity(SOFTNDK_PEER_ACTIVITY* out) override;
  // NdkDisconnect of an initiator whose peer never spoke: one wake-up, and
  // `go` once TCP saw it acknowledged (stream_wake.cc).
  void before_disconnect(std::function<void()> go) override;
  // layer<<16 | etype<<8 | code, 0xFFFFFFFF when none (SOFTNDK_CONNECTION_INFO).
  uint32_t last_terminate_sent() const override { return term_sent_.load(); }
  uint32_t last_terminate_received() const override { return term_received_.load(); }
  provider::QpHost* qp() const { return qp_; }
  // Read Response FPDUs received by response_recv()'s batched reads, and
  // the batches whose prediction failed (tests, diagnostics).
  uint64_t rx_batched_fpdus() const { return spec_fpdus_.load(std::memory_order_relaxed); }
  uint64_t rx_batch_misses() const { return spec_misses_.load(std::memory_order_relaxed); }
  // A silent peer (stream_wake.cc; any thread): has the peer sent a byte
  // since the MPA Reply, have we sent an FPDU that may want an answer
  // (beyond a Write RTR), and how many wake-ups went out.
  bool peer_spoke() const;
  bool sent_anything() const;
  uint32_t wake_ups_sent() const { return wake_ups_sent_.load(std::memory_order_relaxed); }
  // Runs f under the receive lock, which every placement into consumer
  // memory holds (tests: look at a half-landed buffer without racing it).
  template <typename F>
  void with_rx_locked(F&& f) {
    std::lock_guard lk(rx_mu_);
    f();
  }
  // Socket reads that returned bytes so far (tests: how many calls a
  // segment took).
  uint64_t rx_reads() {
    std::lock_guard lk(rx_mu_);
    return rx_reads_;
  }
  // Successful sendmsg calls so far, and whether a busy poller drives the
  // stream now (tests, diagnostics).
  uint64_t tx_sendmsgs() const { return tx_beats_.load(std::memory_order_relaxed); }
  bool polled() const { return polled_.load(std::memory_order_relaxed); }
  // Bytes of receive staging held now (0 while idle; tests, diagnostics).
  size_t staging_bytes() {
    std::lock_guard lk(rx_mu_);
    return staging_.capacity();
  }

 private:
  friend std::shared_ptr<Stream> start_stream(provider::QpHost*, std::shared_ptr<tcp::Connection>,
                                              const StreamOptions&);
  void begin();  // reactor thread: leftover, attach everywhere

  // ---- transmit (stream_tx.cc) ----
  void kick_tx();
  // The runner's exit: gives back the kicks it saw, and transmits again for
  // any that arrived meanwhile (kick_tx, direct_end).
  void leave_tx(uint32_t seen);
  void run_tx();          // tx_mu_ held
  void run_local_head();  // tx_mu_ held, gated: local requests at the SQ head
  // (stream_tx_build.cc)
  bool build_batch();   // tx_mu_ held: false if nothing to send
  bool add_sq_work();   // one SQ turn; false if the SQ cannot progress
  bool add_irq_work();  // one Read Response turn
  // add_irq_work() unless the IRQ is empty (no q_mu_ then).
  bool irq_turn() { return !irq_.empty_hint() && add_irq_work(); }
  bool add_message_fpdus(uint64_t budget);
  bool add_read_request();
  // (stream_local.cc)
  void execute_local(const provider::WorkRequest& wr, uint64_t seq);
  // A request failed locally (bad local key, failed FastRegister/Bind/
  // Invalidate): it completes with `st`, the peer gets a Terminate (RDMAP
  // local catastrophic) and the QP goes to error (docs/datapath.md).
  void fail_local(uint64_t seq, NTSTATUS st);
  void retire_marks(bool all);
  bool batch_room(int pieces) const;
  void send_terminate_now();  // tx_mu_ held, batch empty
  void tx_block();            // tx_mu_ held: full socket; EPOLLOUT unless polled
  void disarm_write();        // tx_mu_ held: drop an EPOLLOUT arm, if any

  // ---- receive (stream_rx.cc) ----
  // rx_mu_ held; false: stop reading. stop_on_completion (pollers): return
  // once a completion was produced and the staged bytes are parsed.
  bool run_rx(size_t budget, bool stop_on_completion = false);
  bool feed(std::span<const uint8_t>& in);
  // The parser's callbacks (on_*, place, refuse_*, rx_fail_*) are in
  // stream_place.cc; the reading below in stream_rx.cc.
  bool on_placement(const wire::SegmentInfo& seg);
  bool on_segment_done(const wire::SegmentInfo& seg);
  void place(uint32_t seg_off, const uint8_t* data, size_t n);
  // The receiver's byte path calls (rx_mu_ held): the path's recv into
  // iov, and its peek. A read that returned less than the iovecs hold on
  // a socket sets rx_short_ (it was emptied: run_rx stops); a path that
  // broke the protocol fails the stream here (kRxFailed).
  ssize_t rx_recv(iovec* iov, int niov);
  ssize_t rx_peek();
  ssize_t direct_recv();
  ssize_t response_recv();  // many Read Response FPDUs per recvmsg
  bool on_terminate(const wire::SegmentInfo& seg);
  bool on_read_request(const wire::SegmentInfo& seg);
  // Send with Invalidate of STag 0 (refused by the parser): its receive
  // completes with STATUS_ACCESS_VIOLATION like any refused invalidation.
  void refuse_zero_invalidate(const wire::SegmentInfo& seg);
  void rx_fail_term(const wire::TerminateMessage& t, NTSTATUS st);
  void rx_fail_wire(wire::WireError e, const wire::SegmentInfo* seg);

  // ---- the same-host fast path (stream_samehost.cc, docs/samehost.md) ----
  void samehost_begin();  // begin(): the rendezvous, on the reactor
  // tx_mu_: may this message / response go as a descriptor?
  bool samehost_tx(uint64_t length) const;
  bool add_samehost_write();                                 // tx_mu_: msg_ as descriptors
  bool add_samehost_response(const InboundRead& r);          // tx_mu_: one descriptor
  void add_samehost_ack();                                   // tx_mu_: acks owed to the peer
  bool on_samehost_placement(const wire::SegmentInfo& seg);  // rx_mu_
  bool on_samehost_done(const wire::SegmentInfo& seg);       // rx_mu_
  bool on_samehost_ack(const wire::SegmentInfo& seg);        // rx_mu_
  // tx_mu_: a descriptor body (12 bytes, or 40 naming a shared segment); its size.
  size_t encode_desc(uint64_t source, uint32_t length, uint8_t* body);
  bool pulled(uint32_t length);  // rx_mu_: a descriptor's bytes are in place
  // rx_mu_: a Read Response segment of `len` bytes matches the oldest
  // outstanding Read (else Terminate, false).
  bool match_response(const wire::SegmentInfo& seg, uint32_t len);
  // rx_mu_: the Read Response segment of `len` bytes has landed.
  bool finish_response_segment(uint32_t len, bool last);

  // ---- the stream through a shared-memory ring (stream_ring.cc) ----
  // tx_mu_, batch empty: once the rendezvous is over, decide whether this
  // direction moves to the ring; true if the marker batch was built.
  bool ring_tx_settle();
  void ring_tx_switched();  // tx_mu_: the marker is out
  // tx_mu_: a send through the byte path the transmitter is on (the socket:
  // a direct call; the ring: its path, then its trace and counters).
  ssize_t tx_send(const iovec* iov, int niov);
  bool on_ring_marker(const wire::SegmentInfo& seg);  // rx_mu_
  // rx_mu_: the byte path broke the protocol (a corrupt ring, bytes on TCP
  // after the marker): RDMAP catastrophic error (stream) Terminate, the
  // stream fails.
  void path_protocol_error();
  void ring_watch(int which);  // posts the reactor watch of a doorbell (0 rx, 1 tx)
  void on_ring_data();         // reactor: the data doorbell rang
  void on_peer_exit();         // reactor: the peer process is gone
  // reactor, from stop(): the rx ring's data doorbell, the tx ring's space
  // doorbell, the peer's pidfd (those that exist).
  static void ring_unwatch(
      util::Reactor& r,
      const std::pair<std::shared_ptr<RingPath>, std::shared_ptr<RingPath>>& rings,
      const std::shared_ptr<Rendezvous>& sh);

  // ---- hooks: traces and transmit faults (stream_hooks.cc) ----
  // The data path calls these behind one flag test each (tx_hooked_,
  // rx_hooked_), so they cost one predictable branch when nothing is on.
  // tx_mu_: instead of emit_sendmsg; counts RDMAOutOctets itself (only
  // what reached the socket).
  ssize_t emit_hooked(msghdr* m);
  // tx_mu_: the next batch goes through the fault queue, which counts its
  // frames as they reach the socket (build_batch() does not).
  bool tx_through_faults() const;
  void tx_hook_pass();  // tx_mu_: run_tx start, sends held bytes
  void tx_shutdown();   // tx_mu_: FIN, after held bytes
  void tap_tx(const iovec* iov, int niov, size_t n, bool boundary);
  void tap_rx(const iovec* iov, int niov, size_t n, bool boundary);  // rx_mu_
  void tap_rx_staged(const uint8_t* p, size_t n);                    // rx_mu_
  void tap_rx(const uint8_t* p, size_t n, bool boundary) {
    iovec v{const_cast<uint8_t*>(p), n};
    tap_rx(&v, 1, n, boundary);
  }
  void attach_taps_locked();    // begin(), both locks held
  void update_hooked_locked();  // both locks
  void update_tx_hooked();      // tx_mu_
  void fault_flush();

  // ---- a silent peer (stream_wake.cc) ----
  void wake_arm(std::chrono::milliseconds d);  // reactor thread: a check after d
  void wake_cancel();                          // any thread: drop the pending check
  void wake_check();                           // reactor timer
  bool add_wake_up();                          // tx_mu_, build_batch: the FPDU, if due
  bool owes_close_wake_up() const;             // any thread: before_disconnect's test
  bool all_sent_acked();                       // any thread: nothing queued or unacknowledged
  void close_wake_wait(std::function<void()> go, std::chrono::steady_clock::time_point end);

  // ---- polled mode (stream.cc, docs/datapath.md "Who runs what") ----
  void enter_polled();
  void kick_pending();        // tx_pending_ -> kick_tx()
  void sync_reactor_rx();     // reactor thread: EPOLLIN muted iff polled
  void polled_watchdog();     // reactor thread: polling stopped -> unmute
  uint64_t activity() const;  // polls_ + tx_beats_ + rx_beats_: moves while a poller works

  // ---- errors (stream.cc) ----
  // Records a fatal error: the QP goes to error after the caller unlocks.
  void fail(NTSTATUS status, int sock_err);
  void queue_terminate(const wire::TerminateMessage& t);
  void after_unlock();  // acts on a recorded failure (no lock held)
  // The staging buffer goes back once the connection has been quiet for a
  // while, so a QP that carried traffic and then idles holds none either.
  void arm_staging_release();  // any thread, once per allocation
  void staging_release();      // reactor timer
  // The receive a Send was landing in completes with STATUS_CANCELLED
  // (rx_mu_ held): it left the RQ ring, so the QP's flush cannot reach it.
  // Called before the QP cancels the ring (flushing(), after_unlock()), so
  // that it completes ahead of the later receives.
  void cancel_active_receive_locked();

  provider::QpHost* const qp_;
  std::shared_ptr<tcp::Connection> conn_;
  // The TCP transport's byte path over our own dup of the connection's
  // socket (fd -1 before begin() and after stop(); set under both locks).
  // Each direction's path is this one until it moves to a ring.
  tcp::SocketPath sock_;
  transport::BytePath* rx_path_ = &sock_;  // rx_mu_
  transport::BytePath* tx_path_ = &sock_;  // tx_mu_
  void* tsan_edge_ = nullptr;              // rdmap/tsan_edge.h (TSan builds only)
  const bool crc_;
  const uint16_t ird_, ord_;
  const void* const pd_;
  provider::StagTable& stags_;
  uint32_t max_tagged_ = 0, max_untagged_ = 0;

  std::atomic<bool> failed_{false};
  std::atomic<bool> error_acted_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<bool> peer_closed_{false};
  std::atomic<bool> eof_{false};  // FIN seen, not yet reported
  std::atomic<int> sock_err_{0};
  std::atomic<uint32_t> term_sent_{0xFFFFFFFFu}, term_received_{0xFFFFFFFFu};
  provider::Counters& qc_;  // the QP's own counters (bumped with the adapter's)
  const std::vector<uint8_t> sent_rtr_;

  // ---- a silent peer (stream_wake.cc) ----
  const std::chrono::milliseconds wake_after_;
  std::atomic<bool> leftover_seen_{false};  // bytes came behind the MPA Reply
  std::atomic<bool> wake_pending_{false};   // the transmitter sends a wake-up when idle
  std::atomic<bool> faults_used_{false};    // inject_fault() was called: no wake-ups
  // The pending check's timer (0: none), cancelled once the peer spoke or
  // the stream stopped, so a connection leaves no timer behind.
  std::atomic<uint64_t> wake_timer_{0};
  std::atomic<uint32_t> wake_ups_sent_{0};
  uint32_t wake_round_ = 0;        // reactor thread: checks that found us waiting
  uint32_t wake_idle_checks_ = 0;  // reactor thread: checks before we sent anything
  std::chrono::steady_clock::time_point wake_started_{};  // first wake_arm()
  uint8_t wake_fpdu_[24] = {};                            // the zero-length Write (STag 1, TO 0)
  size_t wake_len_ = 0;

  // ---- same-host fast path (stream_samehost.cc) ----
  const bool samehost_;  // look for a same-host peer (and accept its opcodes)
  // Set in begin() under both locks, before anything is attached.
  std::shared_ptr<Rendezvous> sh_;
  // Write messages the peer pulled and we must acknowledge (rx -> tx).
  std::atomic<uint32_t> sh_acks_owed_{0};
  // Writes sent as descriptors, waiting for the peer's ack: SQ sequence and
  // length, oldest first (q_mu_).
  std::deque<std::pair<uint64_t, ULONG>> sh_writes_;
  uint32_t sh_len_ = 0;  // rx_mu_: bytes the current descriptor pulled
  std::atomic<uint64_t> sh_pulled_octets_{0}, sh_pulled_msgs_{0}, sh_desc_sent_{0};
  // ---- the ring (stream_ring.cc) ----
  // The same-host transport's byte paths, once a direction moved to its
  // ring (then tx_path_/rx_path_ point at them).
  std::shared_ptr<RingPath> tx_ring_;      // tx_mu_: set once the marker is out
  std::shared_ptr<ShmRing> tx_ring_next_;  // tx_mu_: the marker is on its way
  bool tx_ring_settled_ = false;           // tx_mu_: decided (or never)
  std::shared_ptr<RingPath> rx_ring_;      // rx_mu_: set by the marker
  bool rx_marker_ = false;                 // rx_mu_: feed(): the marker was just parsed
  std::atomic<bool> rx_on_ring_{false}, tx_on_ring_{false};
  // The peer process has exited (its pidfd; written under tx_mu_): the
  // tx ring path, now or once the transmitter moves to it, fails sends.
  std::atomic<bool> peer_gone_{false};
  std::atomic<uint64_t> ring_rx_octets_{0}, ring_tx_octets_{0};
  // Reactor thread only: what it watches for the rings.
  bool ring_watched_[2] = {false, false};
  bool pid_watched_ = false;
  // A read made the stream fail (distinct from transport::kBroken, which a
  // path returns and rx_recv turns into this after the Terminate).
  static constexpr ssize_t kRxFailed = -3;
  std::unique_ptr<SegmentMaps> sh_maps_;  // rx_mu_: the peer's segments we mapped
  std::atomic<uint64_t> sh_mapped_octets_{0}, sh_mapped_descs_{0}, sh_cma_fallbacks_{0},
      sh_seg_desc_sent_{0};

  // ---- hooks (stream_hooks.cc) ----
  // taps_ change under tx_mu_ and rx_mu_ together; tx_hooked_ is read and
  // written under tx_mu_, rx_hooked_ under rx_mu_.
  std::unique_ptr<WireTap> taps_[2];  // by TraceSlot
  std::unique_ptr<TxFaults> faults_;  // tx_mu_
  bool tx_hooked_ = false;
  bool rx_hooked_ = false;
  std::atomic<bool> fault_timer_{false};  // a reactor timer will kick the transmitter

  // ---- polled mode ----
  // progress() calls so far, and their count at the last arm of a CQ: this
  // many polls with no arm in between mean a consumer busy-polls, and the
  // reactor stops watching EPOLLIN (a wake-up per message on a core the
  // pollers need) until the CQ is armed or the polling stops.
  std::atomic<uint64_t> polls_{0}, arm_mark_{0};
  // Successful sendmsg calls (written by the runner, under tx_mu_): a poller
  // that became the runner may stay inside one progress() for milliseconds
  // while the peer drains as fast as it sends (a responder streaming 16 MiB
  // of Read Responses). That poller is busy, not gone: the watchdog counts
  // these too, or it handed EPOLLIN back to the reactor every period and
  // the reactor then took a core from the two pollers for each Read Request.
  std::atomic<uint64_t> tx_beats_{0};
  // Same-host payloads pulled (written by the receiver, under rx_mu_): a
  // poller's progress() may likewise take milliseconds pulling a window of
  // large Read Responses (16 x 1 MiB) parsed from one ring read; without
  // these the watchdog handed the ring to the reactor every period or so
  // (50-150 times a second with both pollers on their cores).
  std::atomic<uint64_t> rx_beats_{0};
  std::atomic<bool> polled_{false};
  bool muted_ = false;        // reactor thread: EPOLLIN muted now
  bool watchdog_on_ = false;  // reactor thread: polled_watchdog() scheduled
  uint64_t watchdog_seen_ = 0;

  // ---- transmitter state (tx_mu_) ----
  std::mutex tx_mu_;
  std::atomic<uint32_t> tx_kicks_{0};  // kick_tx(): kicks the runner has not served
  // await_peer_fpdu: nothing arrived yet (the receiver opens it).
  std::atomic<bool> tx_gated_{false};

  bool tx_blocked_ = false;  // EAGAIN: the socket buffer is full
  // EPOLLOUT asked of the reactor. Set by the runner (tx_block), cleared by
  // the runner (drained, or polled) and by the reactor, whose EPOLLOUT is
  // one-shot (on_writable): so atomic.
  std::atomic<bool> write_armed_{false};
  // Mirror of tx_blocked_ for progress(): a busy poller retries the send
  // itself instead of waiting for the reactor's EPOLLOUT wake-up.
  std::atomic<bool> tx_waiting_{false};
  // Polled mode: a large message posted for the consumer's next poll to
  // transmit, together with whatever it posts meanwhile (sq_posted).
  std::atomic<bool> tx_pending_{false};
  // Large posts held for a poll so far (the poster's count), and the count
  // the last poll saw: a poll transmits what is held only once the
  // consumer posted nothing since the previous poll (its burst is over),
  // so a window refilled one completion at a time still leaves in one
  // sendmsg (progress()).
  std::atomic<uint64_t> held_posts_{0}, held_seen_{0};
  bool tx_done_ = false;  // Terminate sent or stream dead: nothing more goes out
  bool sq_turn_ = true;   // fairness: alternate SQ and Read Responses
  struct TxMsg {
    bool active = false;
    provider::WorkRequest wr;
    uint64_t seq = 0;
    uint64_t off = 0;  // message bytes already segmented
    uint32_t sge = 0, sge_off = 0;
    uint32_t msn = 0;
  } msg_;
  wire::MsnCounter send_msn_, rreq_msn_;
  uint64_t resp_off_ = 0;  // bytes of the IRQ head already segmented
  static constexpr int kMaxIov = 256;
  static constexpr int kMaxFpdu = 48;
  static constexpr int kMaxMarks = 64;
  static constexpr size_t kGatherBytes = 4096;
  struct Mark {
    uint64_t end;  // batch byte offset after which it applies
    uint64_t seq;
    ULONG bytes;
  };
  struct Batch {
    iovec iov[kMaxIov];
    int niov = 0, iov_pos = 0;
    wire::FpduScratch scratch[kMaxFpdu];
    int nfpdu = 0;
    Mark marks[kMaxMarks];
    int nmarks = 0, mark_pos = 0;
    uint64_t total = 0, sent = 0;
    bool has_terminate = false;
    uint8_t term[128];
    // Some payload piece points into registered memory (a Send, Write or
    // Read Response that is not inline). Without one, every byte of the
    // batch is softndk's own (headers, trailers, control bodies, inline
    // data) and a small batch is gathered into `gather` and sent whole.
    bool registered = false;
    bool ring_switch = false;  // the same-host ring marker: the ring follows it
    alignas(64) uint8_t gather[kGatherBytes];
    void clear() {  // empty, before a new batch is built
      niov = iov_pos = nfpdu = nmarks = mark_pos = 0;
      total = sent = 0;
      registered = false;
      ring_switch = false;
    }
  };
  std::unique_ptr<Batch> b_;
  uint8_t term_fpdu_[128];
  size_t term_len_ = 0;

  // ---- shared by both halves (q_mu_) ----
  std::mutex q_mu_;
  ReadQueue<OutboundRead> orq_;  // Read Requests we sent, oldest first
  ReadQueue<InboundRead> irq_;   // Read Requests we must answer, in order
  // term_fpdu_ waits for the transmitter. Written under q_mu_; the
  // transmitter reads it without the lock first (nearly always false).
  std::atomic<bool> term_pending_{false};

  // ---- receiver state (rx_mu_) ----
  std::mutex rx_mu_;
  std::atomic<bool> rx_more_{false};
  bool rx_short_ = false;  // run_rx: the last read returned less than asked
  bool rx_done_ = false;
  wire::StreamParser parser_;
  // Taken when the first bytes arrive (or the connection's leftover needs
  // it), so an idle connected QP holds no staging buffer.
  static constexpr size_t kStagingSize = 64 * 1024;
  std::vector<uint8_t> staging_;
  size_t st_pos_ = 0, st_len_ = 0;
  uint64_t rx_reads_ = 0, rx_reads_seen_ = 0;  // reads so far / at the last idle check
  std::atomic<bool> release_timer_{false};
  bool large_ = false;  // last segment was big: read headers with small reads
  wire::UntaggedSequence send_seq_, rreq_seq_;
  enum class Tgt : uint8_t { kNone, kContig, kRecv };
  Tgt tgt_ = Tgt::kNone;
  uint8_t* tgt_ptr_ = nullptr;  // kContig: payload offset 0 of the segment
  uint32_t seg_mo_ = 0;         // kRecv: message offset of the segment
  provider::ReceiveRequest recv_;
  bool recv_active_ = false;
  // Read Response segment being placed, not the last: its payload length
  // (response_recv predicts the next ones from it); 0 otherwise.
  uint32_t resp_len_ = 0;
  static constexpr int kSpecSegments = 16;
  uint8_t spec_hdr_[kSpecSegments][24];  // trailer + next header, per segment
  std::atomic<uint64_t> spec_fpdus_{0}, spec_misses_{0};
  OutboundRead rd_;  // the read whose response is arriving
  bool rd_active_ = false;
  uint64_t rd_off_ = 0;
  bool kick_after_rx_ = false;
  bool rx_completed_ = false;  // run_rx produced a completion
};

// The RDMAP opcode of a Send work request: solicited and/or with
// invalidate (stream_tx.cc; the direct path and the batch builder use it).
wire::Opcode send_opcode(const provider::WorkRequestHead& wr);

// The hook the connection layer calls once the connection is established
// (initiator: after CompleteConnect and the RTR; responder: Accept done).
// Attaches the stream to the QP, its CQs and the connection, seeds the
// receiver with Connection::take_leftover(). Any thread; the attachment
// happens on the connection's reactor (at once when called there). On a
// fatal error or peer close the QP goes to error and is flushed and the
// connection is told (Connection::report_peer_closed), which fires the
// consumer's disconnect event.
std::shared_ptr<Stream> start_stream(provider::QpHost* qp, std::shared_ptr<tcp::Connection> conn,
                                     const StreamOptions& opt = {});

}  // namespace softndk::rdmap
