// SPDX-License-Identifier: Apache-2.0
// perf_side.h - what both ends of ndkperf's measured runs share (the
// protocol is in perf_engine.h; the client is perf_client.cc, the server
// perf_server.cc).
//
// Both sides share one CQ for all their QPs (receive and initiator), poll it
// from a single test thread (NDKPI serialises GetCqResults/ArmCq per CQ, and
// busy-polling is what drives receive progress, docs/datapath.md), and use:
//  - one RDMA buffer of 2 x max size: [0, max) is the source of Sends,
//    Writes and read responses, [max, 2 max) the sink of Writes and Reads;
//  - per QP one receive region (all receives point at it, as perftest does)
//    and a ring of 64-byte control slots for outgoing control messages.
// Control messages are parsed when their receive completes. A later message
// can only overwrite the region before that if it is newer (credits are
// cumulative, every message has a sequence number and old ones are skipped),
// so nothing is lost: the protocol otherwise only sends a message after the
// previous one was answered.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>

#include "ndkapp/status.h"
#include "ndkapp/watchdog.h"
#include "ndkperf/perf_engine.h"
#include "ndkperf/perf_wire.h"

// Internal to ndkperf's engine (perf_client.cc, perf_server.cc).
namespace softndk::ndkperf::side {

using tools::Clock;
using tools::Deadline;
using tools::deadline_in;
using tools::ToolError;

enum Kind : uintptr_t { kRecv = 1, kData = 2, kCtrl = 3, kEnd = 4 };
inline void* rctx(unsigned qp, Kind k) { return reinterpret_cast<void*>((uintptr_t{qp} << 4) | k); }
inline unsigned ctx_qp(void* p) {
  return static_cast<unsigned>(reinterpret_cast<uintptr_t>(p) >> 4);
}
inline Kind ctx_kind(void* p) { return static_cast<Kind>(reinterpret_cast<uintptr_t>(p) & 15); }

inline uint64_t thread_cpu_ns() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  auto ns = [](const timeval& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull +
           static_cast<uint64_t>(t.tv_usec) * 1000;
  };
  return ns(u.ru_utime) + ns(u.ru_stime);
}

inline uint64_t ns_of(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}
inline uint64_t now_ns() { return ns_of(Clock::now()); }

inline uint8_t test_code(Test t) {
  return static_cast<uint8_t>(static_cast<uint8_t>(t.op) * 2 + static_cast<uint8_t>(t.metric));
}
inline std::optional<Test> test_from_code(uint8_t c) {
  if (c >= 6) return std::nullopt;
  return Test{static_cast<Op>(c / 2), static_cast<Metric>(c % 2)};
}

constexpr unsigned kCtrlSlots = 32;
constexpr unsigned kClientRxDepth = 32;
constexpr unsigned kCtrlSqRoom = 16;
// How often a wait with nothing completing looks at the wire counters.
constexpr double kLivenessSlice = 0.2;

inline const char* op_text(Op op) {
  return op == Op::Send ? "Send" : op == Op::Write ? "RDMA Write" : "RDMA Read";
}

struct QpState {
  unsigned index = 0;
  std::unique_ptr<tools::Buffer> rx;    // receive region
  std::unique_ptr<tools::Buffer> ctrl;  // control send slots
  std::unique_ptr<tools::Qp> qp;
  std::unique_ptr<tools::Connection> conn;
  unsigned sq_depth = 0, rq_depth = 0;
  unsigned sq_out = 0, data_out = 0;
  uint32_t tx_seq = 0, slot = 0, peer_seq = 0;
  std::deque<CtrlMsg> inbox;
  bool data_phase = false;  // receives are data messages now
  uint64_t end_marks = 0;   // zero-length Sends received
  // send_lat's data phase: receives taken whose buffer is not re-posted
  // yet (Side::handle, repost_owed).
  unsigned recv_owed = 0;
  // send_lat -Q (cq_mod > 1): pings (client) or pongs (server) go silent
  // but one in cq_mod. Each signaled request on the QP records how many
  // silent ones were posted since the one before (covers): its completion,
  // which comes after theirs in queue order, stands for them too.
  unsigned cq_mod = 1, silent_run = 0, silent = 0;
  std::deque<unsigned> covers;
  uint64_t posted = 0, completed = 0, recv_msgs = 0, recv_bytes = 0;
  uint64_t done_bytes = 0;   // BytesTransferred of the completed data requests
  uint64_t credits = 0;      // client: cumulative credit from the server
  uint64_t credit_sent = 0;  // server: cumulative credit sent
  uint64_t rva = 0, rlen = 0;
  uint32_t rtoken = 0;
  unsigned read_limit = 0;  // outstanding reads allowed (ORD)
  // Server phase state.
  enum class St { WaitBegin, Data, WaitReport, Finished } st = St::WaitBegin;
  // The peer's Done arrived (server): its disconnect may follow at once and
  // flush this side's receives and unacknowledged Sends before the Done is
  // acted on (Side::handle).
  bool peer_done = false;
  size_t size = 0;
  uint64_t cpu0 = 0, cpu_phase = 0;
  uint8_t expect_tag = 1;  // write_lat
};

// What both ends have: adapter, PD, CQ, RDMA buffer, QPs and the completion
// pump.
class Side {
 public:
  Side(const EngineConfig& cfg, size_t max_size, const tools::AdapterOptions& aopt,
       unsigned cq_depth)
      : cfg_(cfg),
        max_(max_size),
        adapter_(aopt),
        pd_(adapter_),
        cq_(std::make_unique<tools::Cq>(adapter_, cq_depth)),
        data_(adapter_, pd_, 2 * max_size,
              NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                  NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK,
              cfg.shm_buffers) {
    if (adapter_.info().MaxTransferLength && max_size > adapter_.info().MaxTransferLength)
      throw ToolError("message size " + std::to_string(max_size) +
                      " is above the adapter's MaxTransferLength " +
                      std::to_string(adapter_.info().MaxTransferLength));
    for (size_t i = 0; i < max_size; ++i) data_.data()[i] = static_cast<uint8_t>('a' + i % 26);
  }
  virtual ~Side() = default;

 protected:
  QpState& add_qp(unsigned rq_depth) {
    qps_.push_back(make_qp(static_cast<unsigned>(qps_.size()), rq_depth, *cq_));
    return *qps_.back();
  }

  // A QP with its buffers and posted receives, completing on `cq`.
  std::unique_ptr<QpState> make_qp(unsigned index, unsigned rq_depth, tools::Cq& cq) {
    auto q = std::make_unique<QpState>();
    q->index = index;
    q->rq_depth = rq_depth;
    q->sq_depth = cfg_.tx_depth + kCtrlSqRoom;
    // Silent requests hold their send-queue slots until a later completion
    // (on a device), so at most tx_depth - 1 of them: -Q is clamped to it.
    if (cfg_.test == Test{Op::Send, Metric::Lat})
      q->cq_mod = std::max(1u, std::min(cfg_.cq_mod, cfg_.tx_depth));
    q->rx = std::make_unique<tools::Buffer>(adapter_, pd_, std::max(max_, kCtrlSize),
                                            NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    q->ctrl = std::make_unique<tools::Buffer>(adapter_, pd_, kCtrlSlots * kCtrlSize,
                                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    tools::QpConfig qc;
    qc.receive_depth = rq_depth;
    qc.initiator_depth = q->sq_depth;
    qc.inline_size = cfg_.inline_size;
    q->qp = std::make_unique<tools::Qp>(adapter_, pd_, cq, cq,
                                        reinterpret_cast<void*>(uintptr_t{q->index}), qc);
    for (unsigned i = 0; i < rq_depth; ++i) post_recv(*q);
    return q;
  }

  // Re-posts the receives handle() left owed.
  void repost_owed(QpState& q) {
    for (; q.recv_owed > 0; --q.recv_owed) post_recv(q);
  }

  void post_recv(QpState& q) {
    NDK_SGE s = q.rx->sge(0, q.rx->size());
    NTSTATUS st = q.qp->receive(rctx(q.index, kRecv), &s, 1);
    if (st != STATUS_SUCCESS) throw ToolError("NdkReceive: " + tools::status_name(st));
  }

  // The flags of a request about to be posted on `q` under -Q: silent if
  // `may_be_silent` (a ping or pong) and not the cq_mod-th of a run, as
  // perftest's run_iter_lat_send. Every request of a moderated QP goes
  // through here (and is then posted): the covers queue stays in step.
  static ULONG moderate(QpState& q, bool may_be_silent) {
    if (q.cq_mod <= 1) return 0;
    if (may_be_silent && ++q.silent_run < q.cq_mod) {
      ++q.silent;
      return NDK_OP_FLAG_SILENT_SUCCESS;
    }
    if (may_be_silent) q.silent_run = 0;
    q.covers.push_back(q.silent);
    q.silent = 0;
    return 0;
  }
  // A send-queue completion on `q`: how many silent requests it stands for
  // besides itself.
  static unsigned covered(QpState& q) {
    if (q.covers.empty()) return 0;
    const unsigned n = q.covers.front();
    q.covers.pop_front();
    return n;
  }
  // The silent requests are the data requests of the side that sends them
  // as such (the client's pings; the server's pongs are not counted as data).
  bool silent_are_data_ = false;

  void check_posted(NTSTATUS st, const char* what, QpState& q) {
    if (st == STATUS_SUCCESS) return;
    if (q.conn && q.conn->peer_disconnected())
      throw ToolError(tools::with_end_cause(peer_name_ + " disconnected", q.conn.get()));
    throw ToolError(std::string(what) + " on QP " + std::to_string(q.index) + ": " +
                    tools::status_name(st));
  }

  // Posts a control message, making room in the send queue first.
  void send_ctrl(QpState& q, CtrlMsg m) {
    Deadline dl = deadline_in(cfg_.timeout);
    while (q.sq_out >= q.sq_depth)
      if (!pump_alive(dl)) quiet("the send queue stays full");
    m.seq = ++q.tx_seq;
    size_t off = (q.slot++ % kCtrlSlots) * kCtrlSize;
    encode_ctrl(m, q.ctrl->data() + off);
    NDK_SGE s = q.ctrl->sge(off, kCtrlSize);
    const ULONG flags = kSolicit | moderate(q, false);
    check_posted(q.qp->send(rctx(q.index, kCtrl), &s, 1, flags), "NdkSend", q);
    ++q.sq_out;
  }

  // The zero-length Send that ends a data phase.
  void send_end(QpState& q) {
    Deadline dl = deadline_in(cfg_.timeout);
    while (q.sq_out >= q.sq_depth)
      if (!pump_alive(dl)) quiet("the send queue stays full");
    NDK_SGE s = q.ctrl->sge(0, 0);
    const ULONG flags = kSolicit | moderate(q, false);
    check_posted(q.qp->send(rctx(q.index, kEnd), &s, 0, flags), "NdkSend", q);
    ++q.sq_out;
  }

  // Every message ndkperf sends to its peer solicits an event (control
  // messages, the end mark, pings and pongs): a peer waiting for messages
  // may arm SOLICITED.
  static constexpr ULONG kSolicit = NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT;

  // How pump() arms the CQ in event mode. A send_lat client waiting for its
  // pong arms SOLICITED (pings and pongs solicit an event): its own Send's
  // completion, which usually lands first, then wakes nobody - one wake-up
  // per round trip, like ib_send_lat -e, which signals one Send in cq_mod
  // and waits on a receive-only CQ. The send_lat server does the same in its
  // data phase (its pongs' completions wake nobody).
  // (Only where the peer's messages are what is waited for: a waiter for
  // its own requests' completions arms ANY.)
  ULONG arm_ = NDK_CQ_NOTIFY_ANY;

  // Handles completions until at least one arrived (true) or the deadline
  // passed (false). `nonblocking` polls once; `sleep` waits for the CQ's
  // notification even without -e.
  bool pump(Deadline dl, bool nonblocking, bool sleep = false) {
    NDK_RESULT r[64];
    ULONG n = nonblocking ? cq_->poll(r, 64) : cq_->wait(r, 64, cfg_.events || sleep, dl, arm_);
    for (ULONG i = 0; i < n; ++i) handle(r[i]);
    if (n == 0) check_peers();
    return n > 0;
  }

  // Liveness. The target of RDMA Writes and Reads gets no completion for
  // them (the Writes are placed, the Read Responses sent without a CQE), and
  // one large message over a slow link can take longer than the timeout to
  // complete, so an empty CQ says little about the peer. Bytes moving through
  // this side's QPs do: SoftNdkQueryQpCounters' RDMA octets, both ways (what
  // the data path took from or gave to the TCP sockets). A stopped or hung
  // peer stops them once the socket buffers between the two are full.
  // True if they moved since the previous call.
  bool wire_moved() {
    uint64_t octets = 0;
    for (auto& q : qps_) {
      SOFTNDK_COUNTERS c{};
      if (SoftNdkQueryQpCounters(q->qp->get(), &c) == STATUS_SUCCESS)
        octets += c.RDMAInOctets + c.RDMAOutOctets;
    }
    bool moved = octets != wire_octets_;
    wire_octets_ = octets;
    if (moved) tools::watchdog_kick();
    return moved;
  }

  // A pump_alive() deadline not set yet: the first wait that needs one puts
  // it a timeout ahead (a wait starting as `kQuietUnset` after a completion
  // is what a completion used to set it to, one clock read sooner).
  static constexpr Deadline kQuietUnset = Deadline::min();

  // Handles completions until one arrives (true), or until `quiet_until`
  // passes with neither a completion nor a byte moving (false). A completion
  // or moving bytes put `quiet_until` a timeout ahead again (kQuietUnset:
  // from the start of the next wait). A completion already in the CQ is
  // handled without a clock read: send_lat's round trip takes one
  // (lat_loop), as perftest's does.
  bool pump_alive(Deadline& quiet_until) {
    {
      NDK_RESULT r[64];
      const ULONG n = cq_->poll(r, 64);
      for (ULONG i = 0; i < n; ++i) handle(r[i]);
      if (n > 0) {
        quiet_until = kQuietUnset;
        return true;
      }
    }
    if (quiet_until == kQuietUnset) quiet_until = deadline_in(cfg_.timeout);
    for (;;) {
      if (pump(std::min(quiet_until, deadline_in(kLivenessSlice)), false)) {
        quiet_until = kQuietUnset;
        return true;
      }
      if (wire_moved())
        quiet_until = deadline_in(cfg_.timeout);
      else if (Clock::now() >= quiet_until)
        return false;
    }
  }

  // Called after a poll found nothing. A peer that finished cleanly sent its
  // last message (Done) and then disconnected. The provider completes that
  // receive before it reports the disconnect, but both can land between
  // our empty poll and this check. So look once more before calling it a
  // failure: what this poll finds is handled, and the loop goes on.
  void check_peers() {
    const tools::Connection* gone = nullptr;
    for (auto& q : qps_)
      if (!gone && q->conn && q->conn->peer_disconnected() && q->st != QpState::St::Finished &&
          !q->peer_done)
        gone = q->conn.get();
    if (!gone) return;
    NDK_RESULT r[64];
    ULONG n = cq_->poll(r, 64);
    for (ULONG i = 0; i < n; ++i) handle(r[i]);
    if (n == 0)
      throw ToolError(tools::with_end_cause(peer_name_ + " disconnected during the run", gone));
  }

  void handle(const NDK_RESULT& r) {
    unsigned qi = ctx_qp(r.RequestContext);
    if (qi >= qps_.size()) throw ToolError("completion for an unknown request");
    QpState& q = *qps_[qi];
    Kind k = ctx_kind(r.RequestContext);
    if (r.Status != STATUS_SUCCESS) {
      if (q.st == QpState::St::Finished || q.peer_done) {
        // Teardown flush after the run: only the accounting matters. (Also
        // once the peer's Done is in: on a device whose Send completes only
        // at the peer's acknowledgement, rxe or mlx5, the peer's disconnect
        // can flush this side's last Send, or the receives after the Done,
        // in the same poll that brought the Done, before step() saw it.)
        if (k != kRecv) --q.sq_out;
        if (k == kData) --q.data_out;
        return;
      }
      // The Terminate or reset behind the failure, when there is one. A
      // peer that died (SIGKILL: a reset) flushes our requests before the
      // disconnect event says so: give the event a moment (bounded).
      if (q.conn && (q.conn->peer_disconnected() ||
                     (r.Status == STATUS_CANCELLED && q.conn->wait_disconnected(1.0))))
        throw ToolError(tools::with_end_cause(peer_name_ + " disconnected", q.conn.get()));
      const char* what = k == kRecv ? "receive" : k == kData ? op_text(cfg_.test.op) : "Send";
      throw ToolError(tools::with_end_cause(std::string(what) + " on QP " + std::to_string(qi) +
                                                " completed with " + tools::status_name(r.Status),
                                            q.conn.get()));
    }
    switch (k) {
      case kRecv: {
        ULONG len = r.BytesTransferred;
        if (len == 0) {
          ++q.end_marks;
          q.data_phase = false;
        } else if (q.data_phase) {
          ++q.recv_msgs;
          q.recv_bytes += len;
        } else if (auto m = decode_ctrl(q.rx->data(), std::min<size_t>(len, q.rx->size()))) {
          if (m->seq > q.peer_seq) {
            q.peer_seq = m->seq;
            if (m->type == CtrlType::Done) q.peer_done = true;
            if (m->type == CtrlType::Credit)
              q.credits = std::max(q.credits, m->credits);
            else
              q.inbox.push_back(*m);
          }
        } else {
          throw ToolError("unexpected " + std::to_string(len) + "-byte message from " + peer_name_);
        }
        if (len > 0 && q.data_phase && cfg_.test == Test{Op::Send, Metric::Lat}) {
          // A ping or pong: the reply (server) or the next ping (client)
          // goes first, the receive is re-posted after it (repost_owed),
          // off the round trip: the other receives posted keep the peer's
          // next message from finding none.
          ++q.recv_owed;
          on_receive(q, len);
          break;
        }
        post_recv(q);
        on_receive(q, len);
        break;
      }
      case kData:
        --q.sq_out;
        --q.data_out;
        ++q.completed;
        q.done_bytes += r.BytesTransferred;
        retire_silent(q);
        break;
      default:
        --q.sq_out;
        retire_silent(q);
        break;
    }
  }

  // The silent requests a send-queue completion stands for (-Q).
  void retire_silent(QpState& q) {
    const unsigned n = covered(q);
    if (n == 0) return;
    q.sq_out -= n;
    if (silent_are_data_) {
      q.data_out -= n;
      q.completed += n;
    }
  }

  // Called after each receive completion (the receive is re-posted already).
  virtual void on_receive(QpState&, ULONG) {}

  // Waits for a control message of `type` on `q`.
  CtrlMsg wait_ctrl(QpState& q, CtrlType type) {
    Deadline dl = deadline_in(cfg_.timeout);
    for (;;) {
      while (!q.inbox.empty()) {
        CtrlMsg m = q.inbox.front();
        q.inbox.pop_front();
        if (m.type == type) return m;
        throw ToolError("protocol error: unexpected control message " +
                        std::to_string(static_cast<int>(m.type)) + " from " + peer_name_);
      }
      if (!pump_alive(dl)) quiet("no answer to a control message");
    }
  }

  // The peer is taken for dead: for a whole timeout nothing completed and
  // no byte moved on any of this side's connections (pump_alive). A peer
  // that never sent a byte at all is named as such (PeerSilentError).
  [[noreturn]] void quiet(const std::string& context) const {
    std::string what = peer_name_ + " went quiet for " + fmt_s(cfg_.timeout) +
                       " s: no completion and no byte moving (" + context + ")";
    for (const auto& q : qps_)
      if (q && q->conn) tools::throw_if_silent(what, q->conn.get());
    throw ToolError(what);
  }

  static std::string fmt_s(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", s);
    return b;
  }

  void fill_conn_info(PerfResult& r) {
    SOFTNDK_CONNECTION_INFO ci{};
    if (!qps_.empty() && qps_[0]->conn && qps_[0]->conn->info(ci)) {
      r.crc = ci.Crc != 0;
      r.mpa_revision = ci.MpaRevision;
      r.ord = ci.Ord;
    }
    // The path the data took (samehost (ring), tcp (disabled), ...), once
    // the library's same-host rendezvous answered (bounded).
    if (!qps_.empty() && qps_[0]->conn) r.path = qps_[0]->conn->path_text();
    SOFTNDK_TCP_INFO ti{};
    if (!qps_.empty() && qps_[0]->conn && qps_[0]->conn->tcp_info(ti)) {
      r.tcp_congestion = ti.CongestionControl;
      r.tcp_retransmits = ti.TotalRetransmits;
      r.tcp_bytes_retrans = ti.BytesRetransmitted;
      r.tcp_out_of_order = ti.OutOfOrderReceived;
    }
  }

  const EngineConfig& cfg_;
  size_t max_;
  std::string peer_name_ = "peer";
  tools::Adapter adapter_;
  tools::Pd pd_;
  // The server's is replaced by the CQ of the client it serves (perf_server.cc).
  std::unique_ptr<tools::Cq> cq_;
  tools::Buffer data_;
  std::vector<std::unique_ptr<QpState>> qps_;  // destroyed first
  uint64_t wire_octets_ = 0;                   // wire_moved()'s last sum
  size_t reports_in_round_ = 0;                // server: QP reports of this round so far
};

inline uint8_t volatile_load(const uint8_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

}  // namespace softndk::ndkperf::side
