// SPDX-License-Identifier: Apache-2.0
// perf_server.cc - the server of ndkperf's measured runs: accepts the
// client's QPs and answers each size's phase (protocol: perf_engine.h, shared
// state: perf_side.h).
#include <optional>

#include "ndkapp/handshake_gate.h"
#include "ndkperf/perf_side.h"

namespace softndk::ndkperf {

using namespace side;

namespace {

unsigned cq_depth_for(const EngineConfig& cfg) {
  return cfg.qps * (std::max(64u, cfg.tx_depth + 2) + cfg.tx_depth + kCtrlSqRoom) + 16;
}

class Server : public Side {
 public:
  Server(const EngineConfig& cfg, size_t max_size, const tools::SockAddr& at)
      : Side(cfg, max_size, cfg.adapter, cq_depth_for(cfg)),
        cq_depth_(cq_depth_for(cfg)),
        listener_(adapter_, at),
        gate_({cfg.max_handshakes, 1, "client", "one client at a time"}) {
    peer_name_ = "the client";
  }

  uint16_t port() const { return listener_.port(); }
  void cancel() {
    cancelled_ = true;
    listener_.cancel();
  }

  // The connections (connectors and QPs) go before the listener: a
  // listener's close waits for the connectors it delivered (NDKPI 6.1).
  ~Server() override {
    while (!cands_.empty()) drop(0);
    qps_.clear();
  }

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
  std::string check_hello(const Hello& h, size_t qp_index) {
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
    if (h.max_size != max_ || h.qp_index != qp_index || h.buf_len < 2 * h.max_size)
      return "inconsistent set-up from the peer";
    if (h.rx_depth < 4 || h.rx_depth > 65536) return "bad receive depth from the peer";
    return "";
  }

  // A client in its handshake: its QPs on a CQ of their own, accepted (or
  // being accepted) and not yet heard from on each of them.
  struct Candidate {
    std::unique_ptr<tools::Cq> cq;
    std::vector<std::unique_ptr<QpState>> qps;  // after cq: closed before it
    Hello hello;                                // QP 0's
    std::string who, ip;
    std::optional<tools::HandshakeGate::Ticket> ticket;
    Deadline deadline;
  };

  // Takes connection requests and runs their handshakes side by side until
  // one client finished its handshake on all its QPs; that one is served.
  void accept_all(double accept_seconds) {
    const Deadline first = deadline_in(accept_seconds > 0 ? accept_seconds : 365.0 * 86400);
    for (;;) {
      if (cancelled_) throw ToolError("cancelled");
      if (cands_.empty() && Clock::now() >= first) throw ToolError("no client came");
      auto conn = listener_.next(deadline_in(cands_.empty() ? 0.2 : 0.005));
      if (cancelled_) throw ToolError("cancelled");
      if (conn) take_request(std::move(conn));
      for (size_t i = 0; i < cands_.size();) {
        std::string why;
        int st = handshake_state(*cands_[i], why);
        if (st > 0) {
          promote(i);
          return;
        }
        if (st < 0) {
          note("dropped " + cands_[i]->who + ": " + why);
          drop(i);
          continue;
        }
        ++i;
      }
    }
  }

  void note(const std::string& what) {
    std::fprintf(stderr, "ndkperf: %s\n", what.c_str());
    std::fflush(stderr);
  }

  void drop(size_t i) {
    for (auto& q : cands_[i]->qps)
      if (q->conn) q->conn->abandon();
    cands_.erase(cands_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void take_request(std::unique_ptr<tools::Connection> conn) {
    std::string who = conn->peer_address().to_string();
    auto hello = decode_hello(conn->peer_data());
    if (!hello) {
      // Not an ndkperf client: refused, and the server waits on.
      conn->reject(encode_refusal("not an ndkperf client (bad hello)"));
      note("refused " + who + ": not an ndkperf client (no ndkperf hello in its MPA Request)");
      return;
    }
    Candidate* c = nullptr;
    if (hello->qp_index == 0) {
      if (std::string why = check_hello(*hello, 0); !why.empty()) {
        conn->reject(encode_refusal(why));
        throw ToolError("refused the client: " + why);
      }
      std::string why;
      auto ticket = gate_.admit(&why);
      if (!ticket) {
        conn->reject(encode_refusal("busy: " + why));
        note("refused " + who + ": " + why);
        return;
      }
      auto fresh = std::make_unique<Candidate>();
      fresh->cq = std::make_unique<tools::Cq>(adapter_, cq_depth_);
      fresh->hello = *hello;
      fresh->who = who;
      fresh->ip = conn->peer_address().ip();
      fresh->ticket = std::move(*ticket);
      fresh->deadline = deadline_in(cfg_.timeout);
      cands_.push_back(std::move(fresh));
      c = cands_.back().get();
    } else {
      // The client's next QP: its candidate names the same buffer from the
      // same address and has accepted the QPs before this one.
      std::string ip = conn->peer_address().ip();
      for (auto& k : cands_)
        if (k->hello.buf_va == hello->buf_va && k->hello.buf_token == hello->buf_token &&
            k->qps.size() == hello->qp_index &&
            k->qps.back()->conn->accept_status() == STATUS_SUCCESS && k->ip == ip)
          c = k.get();
      std::string why =
          c ? check_hello(*hello, hello->qp_index) : "inconsistent set-up from the peer";
      if (!why.empty()) {
        conn->reject(encode_refusal(why));
        note("refused " + who + ": " + why);
        return;
      }
    }
    auto q = make_qp(hello->qp_index, hello->rx_depth, *c->cq);
    q->rva = hello->buf_va;
    q->rtoken = hello->buf_token;
    q->rlen = hello->buf_len;
    const NDK_ADAPTER_INFO& in = adapter_.info();
    ULONG ird = in.MaxInboundReadLimit ? in.MaxInboundReadLimit : 16;
    ULONG ord = in.MaxOutboundReadLimit ? in.MaxOutboundReadLimit : 16;
    AcceptInfo acc{data_.va(), data_.remote_token(), data_.size()};
    q->conn = std::move(conn);
    QpState& added = *q;
    c->qps.push_back(std::move(q));
    added.conn->accept_start(*added.qp, ird, ord, encode_accept(acc));
  }

  // 1: the candidate finished its handshake on every QP; 0: still in it;
  // -1: it failed (`why`).
  int handshake_state(Candidate& c, std::string& why) {
    bool done = c.qps.size() == cfg_.qps;
    for (auto& q : c.qps) {
      NTSTATUS st = q->conn->accept_status();
      if (st != STATUS_PENDING && st != STATUS_SUCCESS) {
        why = tools::with_end_cause(
            "its accept on QP " + std::to_string(q->index) + " failed: " + tools::status_name(st),
            q->conn.get());
        return -1;
      }
      if (q->conn->peer_disconnected()) {
        why = tools::with_end_cause("it disconnected in its handshake", q->conn.get());
        return -1;
      }
      done = done && q->conn->handshake_done(*q->qp);
    }
    if (done) return 1;
    if (Clock::now() < c.deadline) return 0;
    why = c.qps.size() < cfg_.qps
              ? "its QPs " + std::to_string(c.qps.size()) + ".." + std::to_string(cfg_.qps - 1) +
                    " never came within " + fmt_s(cfg_.timeout) + " s"
              : "no message from it within " + fmt_s(cfg_.timeout) +
                    " s of its connection request (handshake timed out)";
    return -1;
  }

  // The candidate at `i` is the client served: its QPs and CQ become the
  // server's; the others in their handshake are dropped.
  void promote(size_t i) {
    std::unique_ptr<Candidate> c = std::move(cands_[i]);
    cands_.erase(cands_.begin() + static_cast<std::ptrdiff_t>(i));
    for (size_t k = 0; k < cands_.size(); ++k)
      note("dropped " + cands_[k]->who + ": serving " + c->who);
    while (!cands_.empty()) drop(0);
    std::string why;
    c->ticket->serve(&why);  // the only one: one client at a time
    qps_ = std::move(c->qps);
    cq_ = std::move(c->cq);
    served_ = std::move(c->ticket);
    peer_events_ = (c->hello.flags & kHelloEvents) != 0;
    credit_batch_ = std::max<uint64_t>(1, (c->hello.rx_depth - 2) / 4);
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
      // Solicited: the client waits for the pong with a SOLICITED arm.
      // -Q: silent but one in cq_mod, as the client's pings (perftest's
      // server runs the same loop).
      ULONG flags = kSolicit | moderate(q, true);
      if (len <= cfg_.inline_size) flags |= NDK_OP_FLAG_INLINE;
      check_posted(q.qp->send(rctx(q.index, kCtrl), &s, 1, flags), "NdkSend", q);
      ++q.sq_out;
    }
    repost_owed(q);  // the ping's receive, after the pong (Side::handle)
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
        // send_lat's data phase waits for pings only (arm_).
        bool pings = cfg_.test == Test{Op::Send, Metric::Lat};
        for (auto& q : qps_) pings &= q->st == QpState::St::Data;
        arm_ = pings ? NDK_CQ_NOTIFY_SOLICITED : NDK_CQ_NOTIFY_ANY;
        // The data phase of write_bw and read_bw brings this side nothing
        // to reap until the client's end mark (the Writes and Reads
        // complete at the client): the server sleeps in its CQ's
        // notification and leaves the CPUs to the client and the
        // transport. A busy-polling server took one of a guest's two vCPUs
        // from rxe's kernel path (docs/verbs.md "Performance").
        bool idle = cfg_.test.metric == Metric::Bw && cfg_.test.op != Op::Send;
        for (auto& q : qps_) idle &= q->st == QpState::St::Data;
        // Short waits, so a cancel or a stall is noticed.
        progressed = pump(std::min(stall, deadline_in(kLivenessSlice)), false, idle);
        arm_ = NDK_CQ_NOTIFY_ANY;
      }
      if (cancelled_) throw ToolError("cancelled");
      // Writes and Reads complete nothing here: bytes moving is the sign.
      if (progressed || wire_moved())
        stall = deadline_in(cfg_.timeout);
      else if (Clock::now() >= stall)
        quiet(std::string("in the ") +
              (qps_[0]->st == QpState::St::Data ? "data phase" : "control exchange"));
    }
    // Let the last Report go out before the connections are torn down.
    Deadline dl = deadline_in(cfg_.timeout);
    for (auto& q : qps_)
      while (q->sq_out > 0)
        if (!pump(dl, false)) break;
    return out;
  }

  unsigned cq_depth_;
  tools::Listener listener_;
  tools::HandshakeGate gate_;
  std::vector<std::unique_ptr<Candidate>> cands_;  // clients in their handshake
  std::optional<tools::HandshakeGate::Ticket> served_;
  std::atomic<bool> cancelled_{false};
  uint64_t credit_batch_ = 16;
  uint64_t cpu_phase_ = 0;
  bool peer_events_ = false;
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
