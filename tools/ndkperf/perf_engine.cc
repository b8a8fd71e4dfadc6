// perf_engine.cc - client and server of ndkperf's measured runs (see the
// protocol in perf_engine.h).
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
#include "ndkperf/perf_engine.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>

#include "common/status.h"
#include "common/watchdog.h"
#include "ndkperf/perf_wire.h"

namespace softndk::ndkperf {

using tools::Clock;
using tools::Deadline;
using tools::deadline_in;
using tools::ToolError;

namespace {

enum Kind : uintptr_t { kRecv = 1, kData = 2, kCtrl = 3, kEnd = 4 };
void* rctx(unsigned qp, Kind k) { return reinterpret_cast<void*>((uintptr_t{qp} << 4) | k); }
unsigned ctx_qp(void* p) { return static_cast<unsigned>(reinterpret_cast<uintptr_t>(p) >> 4); }
Kind ctx_kind(void* p) { return static_cast<Kind>(reinterpret_cast<uintptr_t>(p) & 15); }

uint64_t thread_cpu_ns() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  auto ns = [](const timeval& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull +
           static_cast<uint64_t>(t.tv_usec) * 1000;
  };
  return ns(u.ru_utime) + ns(u.ru_stime);
}

uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
          .count());
}

uint8_t test_code(Test t) {
  return static_cast<uint8_t>(static_cast<uint8_t>(t.op) * 2 + static_cast<uint8_t>(t.metric));
}
std::optional<Test> test_from_code(uint8_t c) {
  if (c >= 6) return std::nullopt;
  return Test{static_cast<Op>(c / 2), static_cast<Metric>(c % 2)};
}

constexpr unsigned kCtrlSlots = 32;
constexpr unsigned kClientRxDepth = 32;
constexpr unsigned kCtrlSqRoom = 16;
// How often a wait with nothing completing looks at the wire counters.
constexpr double kLivenessSlice = 0.2;

const char* op_text(Op op) {
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
  uint64_t posted = 0, completed = 0, recv_msgs = 0, recv_bytes = 0;
  uint64_t done_bytes = 0;   // BytesTransferred of the completed data requests
  uint64_t credits = 0;      // client: cumulative credit from the server
  uint64_t credit_sent = 0;  // server: cumulative credit sent
  uint64_t rva = 0, rlen = 0;
  uint32_t rtoken = 0;
  unsigned read_limit = 0;  // outstanding reads allowed (ORD)
  // Server phase state.
  enum class St { WaitBegin, Data, WaitReport, Finished } st = St::WaitBegin;
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
        cq_(adapter_, cq_depth),
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
    auto q = std::make_unique<QpState>();
    q->index = static_cast<unsigned>(qps_.size());
    q->rq_depth = rq_depth;
    q->sq_depth = cfg_.tx_depth + kCtrlSqRoom;
    q->rx = std::make_unique<tools::Buffer>(adapter_, pd_, std::max(max_, kCtrlSize),
                                            NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    q->ctrl = std::make_unique<tools::Buffer>(adapter_, pd_, kCtrlSlots * kCtrlSize,
                                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    tools::QpConfig qc;
    qc.receive_depth = rq_depth;
    qc.initiator_depth = q->sq_depth;
    qc.inline_size = cfg_.inline_size;
    q->qp = std::make_unique<tools::Qp>(adapter_, pd_, cq_, cq_,
                                        reinterpret_cast<void*>(uintptr_t{q->index}), qc);
    for (unsigned i = 0; i < rq_depth; ++i) post_recv(*q);
    qps_.push_back(std::move(q));
    return *qps_.back();
  }

  void post_recv(QpState& q) {
    NDK_SGE s = q.rx->sge(0, q.rx->size());
    NTSTATUS st = q.qp->receive(rctx(q.index, kRecv), &s, 1);
    if (st != STATUS_SUCCESS) throw ToolError("NdkReceive: " + tools::status_name(st));
  }

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
      if (!pump_alive(dl)) throw quiet("the send queue stays full");
    m.seq = ++q.tx_seq;
    size_t off = (q.slot++ % kCtrlSlots) * kCtrlSize;
    encode_ctrl(m, q.ctrl->data() + off);
    NDK_SGE s = q.ctrl->sge(off, kCtrlSize);
    check_posted(q.qp->send(rctx(q.index, kCtrl), &s, 1, 0), "NdkSend", q);
    ++q.sq_out;
  }

  // The zero-length Send that ends a data phase.
  void send_end(QpState& q) {
    Deadline dl = deadline_in(cfg_.timeout);
    while (q.sq_out >= q.sq_depth)
      if (!pump_alive(dl)) throw quiet("the send queue stays full");
    NDK_SGE s = q.ctrl->sge(0, 0);
    check_posted(q.qp->send(rctx(q.index, kEnd), &s, 0, 0), "NdkSend", q);
    ++q.sq_out;
  }

  // Handles completions until at least one arrived (true) or the deadline
  // passed (false). `nonblocking` polls once.
  bool pump(Deadline dl, bool nonblocking) {
    NDK_RESULT r[64];
    ULONG n = nonblocking ? cq_.poll(r, 64) : cq_.wait(r, 64, cfg_.events, dl);
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

  // Handles completions until one arrives (true), or until `quiet_until`
  // passes with neither a completion nor a byte moving (false). A completion
  // or moving bytes put `quiet_until` a timeout ahead again.
  bool pump_alive(Deadline& quiet_until) {
    for (;;) {
      if (pump(std::min(quiet_until, deadline_in(kLivenessSlice)), false)) {
        quiet_until = deadline_in(cfg_.timeout);
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
      if (!gone && q->conn && q->conn->peer_disconnected() && q->st != QpState::St::Finished)
        gone = q->conn.get();
    if (!gone) return;
    NDK_RESULT r[64];
    ULONG n = cq_.poll(r, 64);
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
      if (q.st == QpState::St::Finished) {
        // Teardown flush after the run: only the accounting matters.
        if (k != kRecv) --q.sq_out;
        if (k == kData) --q.data_out;
        return;
      }
      // The Terminate or reset behind the failure, when there is one.
      if (q.conn && q.conn->peer_disconnected())
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
            if (m->type == CtrlType::Credit)
              q.credits = std::max(q.credits, m->credits);
            else
              q.inbox.push_back(*m);
          }
        } else {
          throw ToolError("unexpected " + std::to_string(len) + "-byte message from " + peer_name_);
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
        break;
      default:
        --q.sq_out;
        break;
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
      if (!pump_alive(dl)) throw quiet("no answer to a control message");
    }
  }

  // The peer is taken for dead: for a whole timeout nothing completed and
  // no byte moved on any of this side's connections (pump_alive).
  ToolError quiet(const std::string& context) const {
    return ToolError(peer_name_ + " went quiet for " + fmt_s(cfg_.timeout) +
                     " s: no completion and no byte moving (" + context + ")");
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
    }
    SOFTNDK_PATH_INFO pi{};
    if (!qps_.empty() && qps_[0]->conn && qps_[0]->conn->path_info(pi)) {
      const char* name = SoftNdkPathName(pi.Path);
      const char* why = SoftNdkPathReasonName(pi.Reason);
      r.path = name ? name : "?";
      if (pi.Path == SOFTNDK_PATH_TCP && why != nullptr) r.path += std::string(" (") + why + ")";
      // The FPDU stream itself on the same-host ring (docs/samehost.md 4).
      if (pi.RingIn || pi.RingOut)
        r.path += pi.RingIn && pi.RingOut ? " (ring)" : pi.RingOut ? " (ring out)" : " (ring in)";
      // Shared memory (--shm-buffers) copied from a mapping, by either end.
      if (pi.MappedDescriptors > 0 || pi.SegmentDescriptorsSent > 0) r.path += " (mapped)";
    }
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
  tools::Cq cq_;
  tools::Buffer data_;
  std::vector<std::unique_ptr<QpState>> qps_;  // destroyed first
  uint64_t wire_octets_ = 0;                   // wire_moved()'s last sum
  size_t reports_in_round_ = 0;                // server: QP reports of this round so far
};

uint8_t volatile_load(const uint8_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

// ---------------------------------------------------------------------------
// Client

class Client : public Side {
 public:
  Client(const EngineConfig& cfg, size_t max_size)
      : Side(cfg, max_size, cfg.adapter,
             cfg.qps * (kClientRxDepth + cfg.tx_depth + kCtrlSqRoom) + 16) {
    peer_name_ = "the server";
  }

  void connect(const tools::SockAddr& server, const tools::SockAddr& local) {
    const NDK_ADAPTER_INFO& in = adapter_.info();
    unsigned rx_depth = std::max(64u, cfg_.tx_depth + 2);
    for (unsigned i = 0; i < cfg_.qps; ++i) {
      QpState& q = add_qp(kClientRxDepth);
      Hello h;
      h.test = test_code(cfg_.test);
      h.flags = static_cast<uint8_t>((cfg_.all_sizes ? kHelloAllSizes : 0) |
                                     (cfg_.events ? kHelloEvents : 0));
      h.qps = static_cast<uint16_t>(cfg_.qps);
      h.qp_index = static_cast<uint16_t>(i);
      h.tx_depth = static_cast<uint16_t>(cfg_.tx_depth);
      h.rx_depth = rx_depth;
      h.size = cfg_.all_sizes ? 0 : cfg_.sizes.front();
      h.max_size = max_;
      h.buf_va = data_.va();
      h.buf_token = data_.remote_token();
      h.buf_len = data_.size();
      ULONG ord = std::min<ULONG>(
          cfg_.tx_depth, in.MaxOutboundReadLimit ? in.MaxOutboundReadLimit : cfg_.tx_depth);
      ULONG ird = in.MaxInboundReadLimit ? in.MaxInboundReadLimit : 16;
      std::vector<uint8_t> reply, refusal;
      try {
        q.conn = tools::Connection::connect(adapter_, *q.qp, local, server, ird, ord,
                                            encode_hello(h), &reply, &refusal);
      } catch (const ToolError& e) {
        if (auto why = decode_refusal(refusal)) throw ToolError("server refused: " + *why);
        throw;
      }
      if (auto why = decode_refusal(reply)) throw ToolError("server refused: " + *why);
      auto acc = decode_accept(reply);
      if (!acc) throw ToolError("the peer at " + server.to_string() + " is not an ndkperf server");
      if (acc->buf_len < 2 * max_)
        throw ToolError("server buffer too small for size " + std::to_string(max_));
      q.rva = acc->buf_va;
      q.rtoken = acc->buf_token;
      q.rlen = acc->buf_len;
      q.read_limit = cfg_.tx_depth;
      SOFTNDK_CONNECTION_INFO ci{};
      if (q.conn->info(ci) && ci.Ord > 0) q.read_limit = std::min<unsigned>(q.read_limit, ci.Ord);
      rx_depth_ = rx_depth;
    }
  }

  std::vector<PerfResult> run() {
    std::vector<PerfResult> out;
    for (size_t size : cfg_.sizes) out.push_back(phase(size));
    for (auto& q : qps_) send_ctrl(*q, CtrlMsg{CtrlType::Done});
    // Let the Done go out before the connections are torn down.
    Deadline dl = deadline_in(cfg_.timeout);
    for (auto& q : qps_)
      while (q->sq_out > 0)
        if (!pump(dl, false)) break;
    for (auto& q : qps_) q->st = QpState::St::Finished;
    return out;
  }

 private:
  PerfResult phase(size_t size) {
    const Test t = cfg_.test;
    tools::watchdog_kick();
    for (auto& q : qps_) {
      std::memset(data_.data() + max_, 0, size);
      q->posted = q->completed = q->recv_msgs = q->recv_bytes = q->credits = 0;
      q->done_bytes = 0;
      q->data_phase = false;
      send_ctrl(*q, CtrlMsg{CtrlType::Begin, 0, size});
    }
    for (auto& q : qps_) wait_ctrl(*q, CtrlType::Ready);

    std::vector<uint64_t> samples;
    uint64_t cpu0 = thread_cpu_ns();
    auto t0 = Clock::now();
    if (t.metric == Metric::Bw)
      bw_loop(size, t0);
    else
      samples = lat_loop(size, t0);
    auto t1 = Clock::now();
    uint64_t cpu1 = thread_cpu_ns();
    double secs = std::chrono::duration<double>(t1 - t0).count();
    if (progress_shown_) {
      std::fprintf(stderr, "\n");
      progress_shown_ = false;
    }

    PerfResult r;
    r.test = test_name(t);
    r.latency = t.metric == Metric::Lat;
    r.size = size;
    r.seconds = secs;
    r.cpu_client_s = static_cast<double>(cpu1 - cpu0) / 1e9;
    uint64_t server_bytes = 0, done_bytes = 0;
    for (auto& q : qps_) {
      q->data_phase = false;
      send_end(*q);
      CtrlMsg rep{CtrlType::Report};
      rep.iters = q->completed;
      rep.bytes = q->posted * size;
      rep.cpu_ns = cpu1 - cpu0;
      rep.elapsed_ns = static_cast<uint64_t>(secs * 1e9);
      send_ctrl(*q, rep);
    }
    for (auto& q : qps_) {
      CtrlMsg rep = wait_ctrl(*q, CtrlType::Report);
      if (q->index == 0) r.cpu_server_s = static_cast<double>(rep.cpu_ns) / 1e9;
      server_bytes += rep.bytes;
      r.iters += q->completed;
      done_bytes += q->done_bytes;
      r.bytes_sent += q->posted * size;
    }
    // The receiving side's count: the server's for Sends; for Writes and
    // Reads what the completions report (BytesTransferred: an RDMA Write
    // completes once its bytes are with TCP, a Read once they are placed
    // here), so a short or missing completion shows against bytes_sent.
    r.bytes = t.op == Op::Send ? server_bytes : done_bytes;
    if (t.metric == Metric::Lat && t.op == Op::Send) r.bytes = server_bytes;
    finish_rates(r);
    if (r.latency) finish_latency(r, samples, t.op != Op::Read);
    fill_conn_info(r);
    return r;
  }

  bool running(const Clock::time_point& t0, uint64_t done_iters, uint64_t want) {
    if (cfg_.duration > 0) return Clock::now() - t0 < std::chrono::duration<double>(cfg_.duration);
    return done_iters < want;
  }

  void progress(const Clock::time_point& t0, size_t size, uint64_t iters) {
    auto now = Clock::now();
    if (now < next_progress_) return;
    tools::watchdog_kick();
    double el = std::chrono::duration<double>(now - t0).count();
    if (el < 2.0) {
      next_progress_ = t0 + std::chrono::seconds(2);
      return;
    }
    next_progress_ = now + std::chrono::seconds(1);
    if (!cfg_.progress) return;
    bool tty = isatty(STDERR_FILENO);
    std::fprintf(
        stderr, "%sndkperf: %s %zu B: %.0f s, %llu iterations, %.1f MB/s%s", tty ? "\r" : "",
        test_name(cfg_.test).c_str(), size, el, static_cast<unsigned long long>(iters),
        static_cast<double>(iters) * static_cast<double>(size) / el / 1e6, tty ? "   " : "\n");
    progress_shown_ = tty;
  }

  NTSTATUS post_data(QpState& q, size_t size) {
    ULONG flags = (size <= cfg_.inline_size && cfg_.test.op != Op::Read) ? NDK_OP_FLAG_INLINE : 0;
    switch (cfg_.test.op) {
      case Op::Send: {
        NDK_SGE s = data_.sge(0, size);
        return q.qp->send(rctx(q.index, kData), &s, 1, flags);
      }
      case Op::Write: {
        NDK_SGE s = data_.sge(0, size);
        return q.qp->write(rctx(q.index, kData), &s, 1, q.rva + max_, q.rtoken, flags);
      }
      case Op::Read: {
        NDK_SGE s = data_.sge(max_, size);
        return q.qp->read(rctx(q.index, kData), &s, 1, q.rva, q.rtoken, 0);
      }
    }
    return STATUS_INVALID_PARAMETER;
  }

  void bw_loop(size_t size, Clock::time_point t0) {
    const uint64_t want = cfg_.iters;
    const bool send = cfg_.test.op == Op::Send;
    Deadline stall = deadline_in(cfg_.timeout);
    next_progress_ = t0;
    for (;;) {
      uint64_t posted = 0, completed = 0;
      bool outstanding = false;
      for (auto& qp : qps_) {
        QpState& q = *qp;
        unsigned limit = cfg_.test.op == Op::Read ? q.read_limit : cfg_.tx_depth;
        while (q.data_out < limit && running(t0, q.posted, want ? want : UINT64_MAX) &&
               (!send || q.posted < q.credits + (rx_depth_ - 2))) {
          check_posted(post_data(q, size), "posting", q);
          ++q.posted;
          ++q.data_out;
          ++q.sq_out;
        }
        posted += q.posted;
        completed += q.completed;
        outstanding |= q.data_out > 0;
      }
      bool more = false;
      for (auto& q : qps_) more |= running(t0, q->posted, want ? want : UINT64_MAX);
      if (!more && !outstanding) break;
      if (!pump_alive(stall))
        throw quiet(std::to_string(completed) + " of " + std::to_string(posted) + " " +
                    op_text(cfg_.test.op) + "s done");
      progress(t0, size, completed);
    }
  }

  std::vector<uint64_t> lat_loop(size_t size, Clock::time_point t0) {
    QpState& q = *qps_[0];
    const uint64_t want = cfg_.iters;
    std::vector<uint64_t> samples;
    samples.reserve(want ? want : 100000);
    next_progress_ = t0;
    uint8_t tag = 0;
    const uint8_t* sink_last = data_.data() + max_ + size - 1;
    if (cfg_.test.op == Op::Send) q.data_phase = true;
    for (uint64_t i = 0; running(t0, i, want); ++i) {
      Deadline stall = deadline_in(cfg_.timeout);
      uint64_t start = now_ns();
      switch (cfg_.test.op) {
        case Op::Send: {
          uint64_t before = q.recv_msgs;
          check_posted(post_data(q, size), "NdkSend", q);
          ++q.posted, ++q.data_out, ++q.sq_out;
          while (q.recv_msgs == before)
            if (!pump_alive(stall)) throw quiet("waiting for a pong");
          break;
        }
        case Op::Write: {
          tag = static_cast<uint8_t>(tag % 255 + 1);
          data_.data()[size - 1] = tag;
          check_posted(post_data(q, size), "NdkWrite", q);
          ++q.posted, ++q.data_out, ++q.sq_out;
          for (uint32_t spin = 0; volatile_load(sink_last) != tag; ++spin) {
            pump(stall, true);  // drives receive progress, reaps Write completions
            if ((spin & 1023) == 1023 && Clock::now() > stall) {
              if (wire_moved()) {
                stall = deadline_in(cfg_.timeout);
                continue;
              }
              check_peers();
              throw quiet("waiting for the write back");
            }
          }
          ++q.recv_msgs;
          break;
        }
        case Op::Read: {
          uint64_t before = q.completed;
          check_posted(post_data(q, size), "NdkRead", q);
          ++q.posted, ++q.data_out, ++q.sq_out;
          while (q.completed == before)
            if (!pump_alive(stall)) throw quiet("waiting for an RDMA Read");
          break;
        }
      }
      samples.push_back(now_ns() - start);
      progress(t0, size, i + 1);
    }
    // Reap the last Write/Send completions so every posted request is counted.
    Deadline dl = deadline_in(cfg_.timeout);
    while (q.data_out > 0)
      if (!pump_alive(dl)) throw quiet("waiting for the last completions");
    q.data_phase = false;
    return samples;
  }

  unsigned rx_depth_ = 64;
  Clock::time_point next_progress_{};
  bool progress_shown_ = false;
};

}  // namespace

std::vector<PerfResult> run_client(const EngineConfig& cfg, const tools::SockAddr& server) {
  size_t max_size = *std::max_element(cfg.sizes.begin(), cfg.sizes.end());
  Client c(cfg, max_size);
  tools::SockAddr local;
  std::string err;
  if (!tools::resolve(cfg.adapter.name, 0, local, err)) {
    // The adapter was named by interface: let the library pick the address.
    if (!tools::local_address_toward(server, local, err)) throw ToolError(err);
  }
  c.connect(server, local);
  return c.run();
}

// ---------------------------------------------------------------------------
// Server

namespace {

class Server : public Side {
 public:
  Server(const EngineConfig& cfg, size_t max_size, const tools::SockAddr& at)
      : Side(cfg, max_size, cfg.adapter,
             cfg.qps * (std::max(64u, cfg.tx_depth + 2) + cfg.tx_depth + kCtrlSqRoom) + 16),
        listener_(adapter_, at) {
    peer_name_ = "the client";
  }

  uint16_t port() const { return listener_.port(); }
  void cancel() {
    cancelled_ = true;
    listener_.cancel();
  }

  // The connections (connectors and QPs) go before the listener: a
  // listener's close waits for the connectors it delivered (NDKPI 6.1).
  ~Server() override { qps_.clear(); }

  std::vector<PerfResult> serve(double accept_seconds) {
    accept_all(accept_seconds);
    auto out = loop();
    // Disconnect now rather than when the server object goes: a graceful
    // NdkDisconnect completes on the peer's own disconnect, and the client
    // (in loopback mode, on another thread of this process) waits for ours.
    for (auto& q : qps_)
      if (q->conn) q->conn->disconnect();
    return out;
  }

 private:
  std::string check_hello(const Hello& h) {
    auto t = test_from_code(h.test);
    std::string mine = test_name(cfg_.test);
    std::string theirs = t ? test_name(*t) : "an unknown test";
    auto sz = [](bool all, uint64_t s) {
      return all ? std::string("all sizes (-a)") : "size " + std::to_string(s);
    };
    bool all = (h.flags & kHelloAllSizes) != 0;
    std::string my_size = sz(cfg_.all_sizes, cfg_.sizes.front());
    std::string their_size = sz(all, h.size);
    if (!t || !(*t == cfg_.test) || all != cfg_.all_sizes || (!all && h.size != cfg_.sizes.front()))
      return "peer runs " + theirs + " " + their_size + ", this server runs " + mine + " " +
             my_size;
    if (h.qps != cfg_.qps)
      return "peer uses " + std::to_string(h.qps) + " QPs, this server " +
             std::to_string(cfg_.qps) + " (-q)";
    if (h.max_size != max_ || h.qp_index != qps_.size() || h.buf_len < 2 * h.max_size)
      return "inconsistent set-up from the peer";
    if (h.rx_depth < 4 || h.rx_depth > 65536) return "bad receive depth from the peer";
    return "";
  }

  void accept_all(double accept_seconds) {
    for (unsigned i = 0; i < cfg_.qps; ++i) {
      double wait = i == 0 ? (accept_seconds > 0 ? accept_seconds : 365.0 * 86400) : cfg_.timeout;
      auto conn = listener_.next(deadline_in(wait));
      if (!conn && cancelled_) throw ToolError("cancelled");
      if (!conn) throw ToolError(i == 0 ? "no client came" : "the client's other QPs never came");
      auto hello = decode_hello(conn->peer_data());
      if (!hello) {
        conn->reject(encode_refusal("not an ndkperf client (bad hello)"));
        throw ToolError("refused a peer that is not an ndkperf client");
      }
      if (std::string why = check_hello(*hello); !why.empty()) {
        conn->reject(encode_refusal(why));
        throw ToolError("refused the client: " + why);
      }
      if (!events_set_) {
        peer_events_ = (hello->flags & kHelloEvents) != 0;
        events_set_ = true;
      }
      QpState& q = add_qp(hello->rx_depth);
      q.rva = hello->buf_va;
      q.rtoken = hello->buf_token;
      q.rlen = hello->buf_len;
      const NDK_ADAPTER_INFO& in = adapter_.info();
      ULONG ird = in.MaxInboundReadLimit ? in.MaxInboundReadLimit : 16;
      ULONG ord = in.MaxOutboundReadLimit ? in.MaxOutboundReadLimit : 16;
      AcceptInfo acc{data_.va(), data_.remote_token(), data_.size()};
      q.conn = std::move(conn);
      q.conn->accept(*q.qp, ird, ord, encode_accept(acc));
      credit_batch_ = std::max<uint64_t>(1, (hello->rx_depth - 2) / 4);
    }
  }

  void on_receive(QpState& q, ULONG len) override {
    if (len == 0 && q.st == QpState::St::Data) {
      q.st = QpState::St::WaitReport;
      if (q.index == 0) cpu_phase_ = thread_cpu_ns() - q.cpu0;
      return;
    }
    if (q.st == QpState::St::Data && len > 0 && cfg_.test == Test{Op::Send, Metric::Lat}) {
      // Pong: the same size back.
      NDK_SGE s = data_.sge(0, len);
      ULONG flags = len <= cfg_.inline_size ? NDK_OP_FLAG_INLINE : 0;
      check_posted(q.qp->send(rctx(q.index, kCtrl), &s, 1, flags), "NdkSend", q);
      ++q.sq_out;
    }
  }

  void send_credits(QpState& q) {
    if (cfg_.test != Test{Op::Send, Metric::Bw} || q.st != QpState::St::Data) return;
    if (q.recv_msgs - q.credit_sent < credit_batch_ || q.sq_out >= q.sq_depth) return;
    CtrlMsg m{CtrlType::Credit};
    m.credits = q.recv_msgs;
    q.credit_sent = q.recv_msgs;
    send_ctrl(q, m);
  }

  void step(QpState& q, std::vector<PerfResult>& out) {
    while (!q.inbox.empty()) {
      CtrlMsg m = q.inbox.front();
      q.inbox.pop_front();
      if (q.st == QpState::St::WaitBegin && m.type == CtrlType::Begin) {
        if (m.size == 0 || m.size > max_) throw ToolError("client asked for a bad size");
        q.size = m.size;
        q.recv_msgs = q.recv_bytes = q.credit_sent = 0;
        q.expect_tag = 1;
        std::memset(data_.data() + max_, 0, q.size);
        q.cpu0 = thread_cpu_ns();
        q.st = QpState::St::Data;
        q.data_phase = cfg_.test.op == Op::Send;
        send_ctrl(q, CtrlMsg{CtrlType::Ready});
      } else if (q.st == QpState::St::WaitBegin && m.type == CtrlType::Done) {
        q.st = QpState::St::Finished;
      } else if (q.st == QpState::St::WaitReport && m.type == CtrlType::Report) {
        CtrlMsg rep{CtrlType::Report};
        rep.iters = q.recv_msgs;
        rep.bytes = q.recv_bytes;
        rep.cpu_ns = q.index == 0 ? cpu_phase_ : 0;
        send_ctrl(q, rep);
        add_result(q, m, out);
        q.st = QpState::St::WaitBegin;
      } else {
        throw ToolError("protocol error: control message " +
                        std::to_string(static_cast<int>(m.type)) + " out of turn");
      }
    }
  }

  // The QPs of one round report in any order: the first report of a round
  // opens its row, QP 0's report carries the round's time and CPU figures.
  void add_result(QpState& q, const CtrlMsg& client, std::vector<PerfResult>& out) {
    if (reports_in_round_ == 0) {
      PerfResult r;
      r.test = test_name(cfg_.test);
      r.latency = cfg_.test.metric == Metric::Lat;
      r.size = q.size;
      fill_conn_info(r);
      out.push_back(r);
    }
    if (++reports_in_round_ == qps_.size()) reports_in_round_ = 0;
    PerfResult& r = out.back();
    if (q.index == 0) {
      r.seconds = static_cast<double>(client.elapsed_ns) / 1e9;
      r.cpu_client_s = static_cast<double>(client.cpu_ns) / 1e9;
      r.cpu_server_s = static_cast<double>(cpu_phase_) / 1e9;
    }
    r.iters += client.iters;
    r.bytes_sent += client.bytes;
    r.bytes += cfg_.test.op == Op::Send ? q.recv_bytes : client.iters * q.size;
    finish_rates(r);
  }

  // write_lat: the client's Write has landed when the last byte shows its tag.
  void echo_writes() {
    QpState& q = *qps_[0];
    if (q.st != QpState::St::Data) return;
    const uint8_t* last = data_.data() + max_ + q.size - 1;
    if (volatile_load(last) != q.expect_tag) return;
    data_.data()[q.size - 1] = q.expect_tag;
    q.expect_tag = static_cast<uint8_t>(q.expect_tag % 255 + 1);
    NDK_SGE s = data_.sge(0, q.size);
    ULONG flags = q.size <= cfg_.inline_size ? NDK_OP_FLAG_INLINE : 0;
    check_posted(q.qp->write(rctx(q.index, kCtrl), &s, 1, q.rva + max_, q.rtoken, flags),
                 "NdkWrite", q);
    ++q.sq_out;
    ++q.recv_msgs;
    q.recv_bytes += q.size;
  }

  std::vector<PerfResult> loop() {
    std::vector<PerfResult> out;
    const bool write_lat = cfg_.test == Test{Op::Write, Metric::Lat};
    Deadline stall = deadline_in(cfg_.timeout);
    uint32_t spins = 0;
    for (;;) {
      bool all_done = true;
      for (auto& q : qps_) {
        step(*q, out);
        send_credits(*q);
        all_done &= q->st == QpState::St::Finished;
      }
      if (all_done) break;
      bool progressed;
      if (write_lat) {
        progressed = pump(stall, true);
        uint8_t before = qps_[0]->expect_tag;
        echo_writes();
        progressed |= before != qps_[0]->expect_tag;
        if (!progressed && (++spins & 1023) != 0) continue;
        if (!progressed) check_peers();
      } else {
        // Short waits, so a cancel or a stall is noticed.
        progressed = pump(std::min(stall, deadline_in(kLivenessSlice)), false);
      }
      if (cancelled_) throw ToolError("cancelled");
      // Writes and Reads complete nothing here: bytes moving is the sign.
      if (progressed || wire_moved())
        stall = deadline_in(cfg_.timeout);
      else if (Clock::now() >= stall)
        throw quiet(std::string("in the ") +
                    (qps_[0]->st == QpState::St::Data ? "data phase" : "control exchange"));
    }
    // Let the last Report go out before the connections are torn down.
    Deadline dl = deadline_in(cfg_.timeout);
    for (auto& q : qps_)
      while (q->sq_out > 0)
        if (!pump(dl, false)) break;
    return out;
  }

  tools::Listener listener_;
  std::atomic<bool> cancelled_{false};
  uint64_t credit_batch_ = 16;
  uint64_t cpu_phase_ = 0;
  bool peer_events_ = false, events_set_ = false;
};

}  // namespace

struct PerfServer::Impl {
  std::unique_ptr<Server> server;
};

PerfServer::PerfServer(const EngineConfig& cfg, const tools::SockAddr& at) : impl_(new Impl) {
  size_t max_size = *std::max_element(cfg.sizes.begin(), cfg.sizes.end());
  impl_->server = std::make_unique<Server>(cfg, max_size, at);
}

PerfServer::~PerfServer() = default;

uint16_t PerfServer::port() const { return impl_->server->port(); }

void PerfServer::cancel() { impl_->server->cancel(); }

std::vector<PerfResult> PerfServer::serve(double accept_seconds) {
  return impl_->server->serve(accept_seconds);
}

}  // namespace softndk::ndkperf
