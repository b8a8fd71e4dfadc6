// SPDX-License-Identifier: Apache-2.0
// perf_server.cc - the server of ndkperf's measured runs: accepts the
// client's QPs and answers each size's phase (protocol: perf_engine.h, shared
// state: perf_side.h).
#include "ndkperf/perf_side.h"

namespace softndk::ndkperf {

using namespace side;

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
