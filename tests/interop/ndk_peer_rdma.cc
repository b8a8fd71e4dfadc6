// SPDX-License-Identifier: Apache-2.0
// ndk_peer_rdma.cc - ndk_peer's data path (ndk_peer_rdma.h): the buffer
// advertisements, the active side's ops (Send, Write, Read, invalidations)
// with the passive side's RESULT for each, and the passive side's loop.
#include "ndk_peer_rdma.h"

#include "ndk_peer_endpoint.h"

namespace ndk_peer {

namespace {

struct Remote {
  uint64_t va = 0;
  uint32_t stag = 0;
  uint32_t len = 0;
};

bool exchange_adv(Peer& p, Remote* r, uint32_t seed) {
  if (p.send_ctrl(IVX_ADV, reinterpret_cast<uint64_t>(p.buf()), p.remote_token(),
                  static_cast<uint32_t>(p.size()), seed, 0) != STATUS_SUCCESS)
    return false;
  ivx_ctrl c{};
  if (!p.recv_ctrl(&c) || c.type != IVX_ADV) return false;
  *r = {c.va, c.stag, c.len};
  return true;
}

// Waits for the passive side's RESULT of `op`.
bool result_ok(Peer& p, uint32_t op, uint32_t* detail = nullptr) {
  ivx_ctrl c{};
  if (!p.recv_ctrl(&c) || c.type != IVX_RESULT || c.arg != op) return false;
  if (detail) *detail = c.len;
  return c.seed == 1;
}

int run_active(Peer& p, const RdmaOpts& ro) {
  Remote r;
  if (!exchange_adv(p, &r, 0)) {
    Json().s("op", "adv").b("ok", false).print();
    return 1;
  }
  int rc = 0;
  uint32_t seed = 100;
  for (const auto& op : ro.ops) {
    auto t0 = Clock::now();
    Json j;
    j.s("op", op);
    bool ok = false;
    size_t n = std::min<size_t>(p.size(), r.len);
    ++seed;
    if (op == "write") {
      ivx_fill(p.buf(), n, seed);
      NTSTATUS s = p.post_data(NdkOperationTypeWrite, n, r.va, r.stag);
      if (s == STATUS_SUCCESS) s = p.wait_send();
      j.s("write", status_name(s));
      ok = s == STATUS_SUCCESS &&
           p.send_ctrl(IVX_DONE, 0, 0, static_cast<uint32_t>(n), seed, IVX_OP_WRITE) ==
               STATUS_SUCCESS &&
           result_ok(p, IVX_OP_WRITE);
    } else if (op == "read") {
      ok = p.send_ctrl(IVX_FILL, 0, 0, static_cast<uint32_t>(n), seed, IVX_OP_READ) ==
               STATUS_SUCCESS &&
           result_ok(p, IVX_OP_READ);
      std::memset(p.buf(), 0, n);
      NTSTATUS s = ok ? p.post_data(NdkOperationTypeRead, n, r.va, r.stag) : STATUS_CANCELLED;
      if (s == STATUS_SUCCESS) s = p.wait_send();
      int64_t bad = ivx_check(p.buf(), n, seed);
      j.s("read", status_name(s)).n("first_bad", bad);
      ok = ok && s == STATUS_SUCCESS && bad < 0;
      p.send_ctrl(IVX_DONE, 0, 0, static_cast<uint32_t>(n), ok ? 1 : 0, IVX_OP_READ);
    } else if (op == "send" || op == "sendinv") {
      bool inv = op == "sendinv";
      size_t m = inv ? 64 : n;
      uint32_t code = inv ? IVX_OP_SENDINV : IVX_OP_SEND;
      ivx_fill(p.buf(), m, seed);
      NTSTATUS s = p.send_ctrl(IVX_EXPECT, 0, r.stag, static_cast<uint32_t>(m), seed, code);
      if (s == STATUS_SUCCESS)
        s = p.post_data(inv ? NdkOperationTypeReceiveAndInvalidate : NdkOperationTypeSend, m, 0,
                        r.stag);
      if (s == STATUS_SUCCESS) s = p.wait_send();
      j.s(inv ? "sendinv" : "send", status_name(s));
      uint32_t detail = 0;
      ok = s == STATUS_SUCCESS && result_ok(p, code, &detail);
      if (inv) {
        // siw's user-space completions never carry the invalidated rkey
        // (docs/compatibility.md, note 7): reported here, and the
        // invalidation itself is proven by `invread`.
        j.n("stag", r.stag).b("peer_wc_reported_invalidation", detail == 1);
      }
    } else if (op == "badwrite") {
      // An STag the peer never handed out: its index bits flipped.
      ivx_fill(p.buf(), 64, seed);
      uint32_t bogus = r.stag ^ 0x00ffff00u;
      NTSTATUS s = p.post_data(NdkOperationTypeWrite, 64, r.va, bogus);
      if (s == STATUS_SUCCESS) s = p.wait_send();
      j.s("write", status_name(s)).n("bogus_stag", bogus);
      // The Terminate arrives asynchronously: wait for the QP to fail,
      // bounded by time (30 s), not by a count of rounds: siw sends it from
      // a CM work item, which a TCG guest on a loaded host can run seconds
      // late.
      NTSTATUS s2 = STATUS_SUCCESS;
      const auto give_up = Clock::now() + 30s;
      while (s2 == STATUS_SUCCESS && Clock::now() < give_up) {
        std::this_thread::sleep_for(100ms);
        s2 = p.send_ctrl(IVX_DONE, 0, 0, 0, 0, IVX_OP_BADWRITE);
        if (s2 == STATUS_SUCCESS) {
          ivx_ctrl c{};
          p.recv_ctrl(&c, 200ms);  // the passive side answers nothing
        }
      }
      j.s("later_send", status_name(s2)).b("flushed", s2 != STATUS_SUCCESS);
      j.b("disconnect_event", p.disconnected.load());
      p.add_info(j, p.connector());
      j.b("ok", true).n("ms", ms_since(t0)).print();
      return 0;
    } else if (op == "invread") {
      // After `sendinv`: an RDMA Read of the invalidated STag must be refused
      // by the peer (a Terminate) and complete with an error; nothing lands.
      std::memset(p.buf(), 0xA5, n);
      NTSTATUS s = p.post_data(NdkOperationTypeRead, n, r.va, r.stag);
      if (s == STATUS_SUCCESS) s = p.wait_send();
      bool intact = std::all_of(p.buf(), p.buf() + n, [](uint8_t x) { return x == 0xA5; });
      for (int i = 0; i < 50 && !p.disconnected; ++i) std::this_thread::sleep_for(100ms);
      j.n("stag", r.stag).s("read", status_name(s)).b("buffer_untouched", intact);
      j.b("disconnect_event", p.disconnected.load());
      p.add_info(j, p.connector());
      j.b("ok", s != STATUS_SUCCESS && s != STATUS_IO_TIMEOUT && intact)
          .n("ms", ms_since(t0))
          .print();
      return 0;
    } else if (op == "stream") {
      // Data Sends until the peer goes away (it dies mid-transfer).
      ivx_fill(p.buf(), n, seed);
      unsigned sent = 0, done = 0;
      NTSTATUS last = STATUS_SUCCESS;
      auto end = Clock::now() + 60s;
      while (last == STATUS_SUCCESS && Clock::now() < end) {
        while (sent - done < 8) {
          if (p.post_data(NdkOperationTypeSend, n) != STATUS_SUCCESS) break;
          ++sent;
        }
        last = p.wait_send(1s);
        if (last == STATUS_IO_TIMEOUT) {
          if (p.disconnected) break;  // the peer closed: see below
          last = STATUS_SUCCESS;
          continue;
        }
        ++done;
      }
      // A peer's graceful close flushes nothing until our own NdkDisconnect
      // (NDKPI 6.4); a reset or Terminate flushes at once.
      if (p.disconnected && done < sent) j.s("disconnect", p.disconnect());
      // Everything still outstanding must come back flushed.
      while (done < sent && p.wait_send(5s) != STATUS_IO_TIMEOUT) ++done;
      j.n("sent", sent).n("completed", done).s("first_error", status_name(last));
      j.b("flushed", done == sent && p.flushed > 0);
      for (int i = 0; i < 50 && !p.disconnected; ++i) std::this_thread::sleep_for(100ms);
      if (p.disconnected)
        j.s("disconnect_event", "reason " + std::to_string(p.disconnect_reason.load()));
      p.add_info(j, p.connector());
      j.b("ok", true).n("ms", ms_since(t0)).print();
      return 0;
    } else {
      j.s("error", "unknown op");
    }
    j.b("ok", ok).n("ms", ms_since(t0)).n("size", static_cast<long long>(n)).print();
    if (!ok) rc = 1;
  }
  p.send_ctrl(IVX_BYE, 0, 0, 0, 0, 0);
  return rc;
}

// Passive side: serve the active side's requests until BYE or an error.
int run_passive(Peer& p) {
  Remote r;
  uint32_t seed = 7;
  ivx_fill(p.buf(), p.size(), seed);
  if (!exchange_adv(p, &r, seed)) {
    Json().s("op", "adv").b("ok", false).print();
    return 1;
  }
  uint32_t inv_seed = 0;
  uint64_t inv_len = 0;  // after a Send with Invalidate: what the buffer must keep
  for (;;) {
    ivx_ctrl c{};
    if (!p.recv_ctrl(&c, 60s)) {
      Json j;
      j.s("op", "serve").s("end", "connection failed or timed out");
      p.add_info(j, p.connector());
      if (inv_len) j.b("buffer_kept_after_invalidate", ivx_check(p.buf(), inv_len, inv_seed) < 0);
      j.b("disconnect_event", p.disconnected.load()).print();
      return 0;
    }
    auto t0 = Clock::now();
    Json j;
    j.s("op", ivx_op_name(c.arg));
    if (c.type == IVX_BYE) return 0;
    if (c.type == IVX_FILL) {
      ivx_fill(p.buf(), c.len, c.seed);
      p.send_ctrl(IVX_RESULT, 0, 0, 0, 1, c.arg);
      continue;  // reported by the active side's DONE
    }
    if (c.type == IVX_DONE && c.arg == IVX_OP_WRITE) {
      int64_t bad = ivx_check(p.buf(), c.len, c.seed);
      j.n("first_bad", bad).b("ok", bad < 0);
      p.send_ctrl(IVX_RESULT, 0, 0, 0, bad < 0 ? 1 : 0, c.arg);
    } else if (c.type == IVX_DONE) {
      j.b("ok", c.seed == 1);
    } else if (c.type == IVX_EXPECT) {
      NDK_RESULT_EX rr{};
      uint8_t* d = nullptr;
      bool got = p.wait_recv(&rr, &d);
      bool ok = got && rr.Status == STATUS_SUCCESS && rr.BytesTransferred == c.len &&
                ivx_check(d, c.len, c.seed) < 0;
      bool inv = false;
      if (got && c.arg == IVX_OP_SENDINV) {
        inv = rr.Type == NdkOperationTypeReceiveAndInvalidate &&
              static_cast<uint32_t>(rr.TypeSpecificCompletionOutput) == p.remote_token();
        // `va` is the length the peer RDMA-Wrote into our buffer first.
        int64_t wbad = c.va ? ivx_check(p.buf(), c.va, c.seed) : -1;
        j.b("invalidated", inv)
            .n("completion_type", rr.Type)
            .n("invalidated_token", static_cast<long long>(rr.TypeSpecificCompletionOutput))
            .n("token", p.remote_token())
            .n("written", static_cast<long long>(c.va))
            .n("written_first_bad", wbad);
        ok = ok && inv && wbad < 0;
        if (ok) inv_seed = c.seed, inv_len = c.va;
      }
      if (got) p.repost();
      j.s("status", got ? status_name(rr.Status) : "timeout")
          .n("bytes", got ? rr.BytesTransferred : 0);
      j.b("ok", ok);
      p.send_ctrl(IVX_RESULT, 0, 0, inv ? 1 : 0, ok ? 1 : 0, c.arg);
    }
    j.n("ms", ms_since(t0)).print();
  }
}

}  // namespace

int do_rdma(const Options& o, const RdmaOpts& ro, bool active) {
  Peer p(o, ro.size);
  NTSTATUS s = p.open();
  if (s == STATUS_SUCCESS) s = p.create_qp();
  if (s != STATUS_SUCCESS) {
    Json().s("op", "setup").s("status", status_name(s)).b("ok", false).print();
    return 1;
  }
  if (active) {
    Json j;
    j.s("op", "connect");
    s = p.connect(j);
    j.s("status", status_name(s)).b("ok", s == STATUS_SUCCESS);
    if (s == STATUS_SUCCESS) p.add_info(j, p.connector());
    j.print();
    if (s != STATUS_SUCCESS) return 1;
    int rc = run_active(p, ro);
    p.disconnect();
    return rc;
  }
  // serve: one listener; connections are served one after another, each
  // with its own QP and buffers on the listener's adapter.
  Incoming in;
  Json e;
  e.s("op", "listen");
  NDK_LISTENER* l = start_listener(p.adapter(), o, &in, e);
  if (!l) {
    e.b("ok", false).print();
    return 1;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(o.timeout_ms);
  int rc = 0;
  for (unsigned i = 0; i < o.count; ++i) {
    NDK_CONNECTOR* c = in.wait(deadline);
    if (!c) {
      Json().s("op", "accept").s("status", "timeout").b("ok", false).print();
      rc = 1;
      break;
    }
    Peer cp(o, ro.size, p.adapter());
    Json j;
    j.s("op", "accept");
    NTSTATUS as = cp.create_qp();
    if (as == STATUS_SUCCESS) as = cp.accept(c);
    j.s("status", status_name(as)).b("ok", as == STATUS_SUCCESS);
    if (as == STATUS_SUCCESS) cp.add_info(j, c);
    j.print();
    if (as != STATUS_SUCCESS) {
      close_and_wait(c);
      rc = 1;
      continue;
    }
    if (ro.fr && (as = cp.fast_register_buf()) != STATUS_SUCCESS) {
      Json().s("op", "fast_register").s("status", status_name(as)).b("ok", false).print();
      rc = 1;
      continue;
    }
    if (run_passive(cp) != 0) rc = 1;
    Json end;
    end.s("op", "end");
    cp.add_info(end, c);
    end.s("disconnect", cp.disconnect()).print();
  }
  close_and_wait(l);
  return rc;
}

}  // namespace ndk_peer
