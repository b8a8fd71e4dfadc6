// SPDX-License-Identifier: Apache-2.0
// perf_client.cc - the client of ndkperf's measured runs: connects its QPs,
// drives each size's phase and collects the results (protocol: perf_engine.h,
// shared state: perf_side.h).
#include "ndkperf/perf_side.h"

namespace softndk::ndkperf {

using namespace side;

namespace {

class Client : public Side {
 public:
  Client(const EngineConfig& cfg, size_t max_size)
      : Side(cfg, max_size, cfg.adapter,
             cfg.qps * (kClientRxDepth + cfg.tx_depth + kCtrlSqRoom) + 16) {
    peer_name_ = "the server";
    silent_are_data_ = true;  // -Q: silent pings
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
    for (size_t size : cfg_.sizes) {
      out.push_back(phase(size));
      if (cfg_.on_result) cfg_.on_result(out.back());
    }
    // Finished as soon as the Done is posted: the server disconnects when it
    // receives it, and on a device whose Send completes only at the peer's
    // acknowledgement (RC over rxe, mlx5) that disconnect can flush the
    // Done's own completion before the acknowledgement lands. The run is
    // over by then, so that flush is accounted, not reported as a failure
    // (it was, in 2 of 6 send_lat -e runs on rxe0).
    for (auto& q : qps_) {
      send_ctrl(*q, CtrlMsg{CtrlType::Done});
      q->st = QpState::St::Finished;
    }
    // Let the Done go out before the connections are torn down.
    Deadline dl = deadline_in(cfg_.timeout);
    for (auto& q : qps_)
      while (q->sq_out > 0)
        if (!pump(dl, false)) break;
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

  // `now`: the caller's clock read, if it has one (the latency loop's).
  void progress(const Clock::time_point& t0, size_t size, uint64_t iters,
                Clock::time_point now = Clock::now()) {
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

  NTSTATUS post_data(QpState& q, size_t size, ULONG extra = 0) {
    ULONG flags = (size <= cfg_.inline_size && cfg_.test.op != Op::Read) ? NDK_OP_FLAG_INLINE : 0;
    flags |= extra;
    switch (cfg_.test.op) {
      case Op::Send: {
        NDK_SGE s = data_.sge(0, size);
        // A ping solicits: a peer that waits for it armed SOLICITED (arm_).
        if (cfg_.test.metric == Metric::Lat) flags |= kSolicit;
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
        quiet(std::to_string(completed) + " of " + std::to_string(posted) + " " +
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
    // Whether a round trip is the last is decided before its ping is posted
    // (a time limit is looked at once per round trip): the last ping is
    // signaled under -Q, so its completion accounts for every silent one.
    bool last = !running(t0, 0, want);
    // One clock read per round trip, at its post, as perftest's latency
    // tests take it (tposted[i]): sample i runs from round trip i's post to
    // round trip i+1's (the last one's to its reply), so the loop's own work
    // between a reply and the next post is in the figure, as in perftest's.
    uint64_t prev = 0;
    for (uint64_t i = 0; !last; ++i) {
      last = !running(t0, i + 1, want);
      // Set when a wait first needs it (pump_alive); write_lat's spin
      // compares it with the clock itself.
      Deadline stall = Side::kQuietUnset;
      const Clock::time_point at = Clock::now();
      const uint64_t start = ns_of(at);
      if (i > 0) samples.push_back(start - prev);
      prev = start;
      progress(t0, size, i, at);
      switch (cfg_.test.op) {
        case Op::Send: {
          uint64_t before = q.recv_msgs;
          check_posted(post_data(q, size, moderate(q, !last)), "NdkSend", q);
          ++q.posted, ++q.data_out, ++q.sq_out;
          repost_owed(q);  // the last pong's receive, after this ping (Side::handle)
          // The pong wakes us, not our Send's completion (arm_).
          struct Solicited {
            ULONG& arm;
            explicit Solicited(ULONG& a) : arm(a) { arm = NDK_CQ_NOTIFY_SOLICITED; }
            ~Solicited() { arm = NDK_CQ_NOTIFY_ANY; }
          } solicited(arm_);
          while (q.recv_msgs == before)
            if (!pump_alive(stall)) quiet("waiting for a pong");
          break;
        }
        case Op::Write: {
          stall = deadline_in(cfg_.timeout);
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
              quiet("waiting for the write back");
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
            if (!pump_alive(stall)) quiet("waiting for an RDMA Read");
          break;
        }
      }
    }
    if (prev != 0) samples.push_back(now_ns() - prev);
    // Reap the last Write/Send completions so every posted request is counted.
    Deadline dl = deadline_in(cfg_.timeout);
    while (q.data_out > 0)
      if (!pump_alive(dl)) quiet("waiting for the last completions");
    repost_owed(q);
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

}  // namespace softndk::ndkperf
