// SPDX-License-Identifier: Apache-2.0
// dp_runs.h - the softndk side of dp_bench: one QP pair on loopback (both
// ends in this process, one adapter, dp_fixture.h), measured the way the
// baselines in bench/baseline and bench/fabric measure their side.
//   bw()        16 outstanding Write/Read/Send, the target's CQ busy-polled
//   pingpong()  8-byte Send ping-pong, busy-polled or event mode (CQ arm +
//               notification callback + blocking wait), half round trips
//   rate()      small Sends, optionally DEFERred in batches, messages/s as
//               counted by the receiver
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <semaphore>
#include <thread>
#include <vector>

#include "dp_fixture.h"

namespace dptest {

struct Lat {
  double p50_us = 0, mean_us = 0, p99_us = 0;
};

// Event mode: the CQ's notification callback releases the waiting thread.
struct Waiter {
  std::counting_semaphore<(1 << 30)> sem{0};
  static void notify(void* ctx, NTSTATUS) { static_cast<Waiter*>(ctx)->sem.release(); }
};

struct Bench : DpTest {
  void TestBody() override {}
  void teardown() { TearDown(); }
  Side A, B;
  Waiter wa, wb;
  double secs = 2.0;
  // Buffers stay registered and alive to the end: receives posted for one
  // test may still be queued when the next one runs.
  std::deque<Buf> keep;
  Buf& buf(NDK_PD* pd, size_t n, uint8_t fill = 0) {
    keep.push_back(reg(pd, n, kAll, fill));
    return keep.back();
  }

  void setup() {
    SetUp();
    SideConfig c;
    c.rq = 1024;
    c.sq = 1024;
    c.cq_depth = 4096;
    c.notify = &Waiter::notify;
    c.notify_ctx = &wa;
    make_side(A, c);
    c.notify_ctx = &wb;
    make_side(B, c);
    connect(A, B, 16, 16);
    // With SOFTNDK_SAMEHOST=on the two ends look for each other after MPA
    // (docs/samehost.md); measure only once that has settled, so every row
    // runs on the path the run reports.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (A.stream->samehost_stats().probing && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  // "samehost" or "tcp (<reason>)": the connection's data path.
  std::string path() const {
    rdmap::SamehostStats s = A.stream->samehost_stats();
    if (s.probing) return "probing";
    if (s.tx && s.rx) return "samehost";
    if (s.tx || s.rx) return std::string("samehost (") + (s.tx ? "A to B" : "B to A") + " only)";
    const char* why = SoftNdkPathReasonName(static_cast<ULONG>(s.reason));
    return std::string("tcp (") + (why ? why : "?") + ")";
  }

  // Epoll wake-ups of the engine that carried socket readiness (diagnostic:
  // with busy-polled CQs there should be next to none per message).
  uint64_t reactor_wakeups() { return adapter_->engine().at(0).io_wakeups(); }

  // The congestion control of this bench's loopback connection (the
  // adapter's SOFTNDK_TCP_CONGESTION policy applied to a host-local pair).
  std::string congestion() const {
    const std::string& policy = adapter_->tcp_congestion();
    if (policy.empty()) return tcp::kLocalCongestion;
    if (policy == "system") return system_congestion();
    return policy;
  }
  // What every other socket here gets: the references' algorithm.
  static std::string system_congestion() {
    std::ifstream f("/proc/sys/net/ipv4/tcp_congestion_control");
    std::string name;
    f >> name;
    return name;
  }

  static ULONG poll(Side& s, NDK_RESULT* r, ULONG n) {
    ULONG k = s.cq->Dispatch->NdkGetCqResults(s.cq, r, n);
    for (ULONG i = 0; i < k; ++i)
      if (r[i].Status != STATUS_SUCCESS) {
        std::fprintf(stderr, "dp_bench: completion error %x\n", (unsigned)r[i].Status);
        std::exit(1);
      }
    return k;
  }

  // Busy-polls B's CQ (drives its receive progress) until `stop`; with
  // `recvs`, every completion is a receive: reposted and counted.
  std::thread peer_poller(std::atomic<bool>& stop, std::atomic<uint64_t>* recvs = nullptr,
                          Buf* rb = nullptr, size_t rlen = 0) {
    return std::thread([&, recvs, rb, rlen] {
      NDK_RESULT r[64];
      NDK_SGE rs{};
      if (rb) rs = rb->sge(0, rlen);
      while (!stop.load(std::memory_order_relaxed)) {
        ULONG k = poll(B, r, 64);
        if (recvs && k) {
          for (ULONG i = 0; i < k; ++i) B.d()->NdkReceive(B.qp, nullptr, &rs, 1);
          recvs->fetch_add(k, std::memory_order_release);
        }
      }
    });
  }

  // GB/s (1e9) of op 0 Write, 1 Read, 2 Send with `window` outstanding.
  double bw(int op, size_t size, int window = 16) {
    Buf &src = buf(A.pd, size, 1), &dst = buf(B.pd, size);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> recvs{0};
    constexpr uint64_t kPrepost = 512;
    if (op == 2) {
      NDK_SGE rs = dst.sge(0, size);
      for (uint64_t i = 0; i < kPrepost; ++i) B.d()->NdkReceive(B.qp, nullptr, &rs, 1);
    }
    std::thread peer = peer_poller(stop, op == 2 ? &recvs : nullptr, &dst, size);
    NDK_SGE s = src.sge(0, size);
    int outstanding = 0;
    uint64_t done = 0, posted = 0;
    NDK_RESULT r[64];
    auto t0 = std::chrono::steady_clock::now();
    auto end = t0 + std::chrono::duration<double>(secs);
    for (;;) {
      bool timeup = std::chrono::steady_clock::now() >= end;
      if (timeup && outstanding == 0) break;
      while (!timeup && outstanding < window &&
             (op != 2 || posted < recvs.load(std::memory_order_acquire) + kPrepost - 12)) {
        NTSTATUS st = op == 0   ? A.d()->NdkWrite(A.qp, nullptr, &s, 1, dst.addr(), dst.token, 0)
                      : op == 1 ? A.d()->NdkRead(A.qp, nullptr, &s, 1, dst.addr(), dst.token, 0)
                                : A.d()->NdkSend(A.qp, nullptr, &s, 1, 0);
        if (st != STATUS_SUCCESS) break;
        ++outstanding;
        ++posted;
      }
      ULONG k = poll(A, r, 64);
      outstanding -= static_cast<int>(k);
      done += k;
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Send completes when TCP took the bytes: keep B's poller reposting until
    // every message landed, or the next test's receive accounting starts
    // with completions it never posted for (and overruns B's RQ: Terminate).
    auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (op == 2 && recvs.load(std::memory_order_acquire) < posted &&
           std::chrono::steady_clock::now() < limit)
      std::this_thread::yield();
    stop = true;
    peer.join();
    // Send: B still has receives posted for this buffer; they stay queued
    // (harmless, the buffer is kept) and the next Sends consume them.
    return static_cast<double>(done) * static_cast<double>(size) / dt / 1e9;
  }

  // Waits for one receive completion on `s` (skipping its own Send
  // completions, RequestContext 1), busy-polling or in event mode.
  static void wait_recv(Side& s, Waiter& w, bool event) {
    NDK_RESULT r[4];
    for (;;) {
      bool got = false;
      ULONG k = poll(s, r, 4);
      for (ULONG i = 0; i < k; ++i) got = got || r[i].RequestContext != (void*)1;
      if (got) return;
      if (!event) continue;
      // perftest -e: arm, look once more (a completion may have landed
      // before the arm), then sleep until the notification.
      s.cq->Dispatch->NdkArmCq(s.cq, NDK_CQ_NOTIFY_ANY);
      k = poll(s, r, 4);
      for (ULONG i = 0; i < k; ++i) got = got || r[i].RequestContext != (void*)1;
      if (got) return;  // a notification may still come: the next wait absorbs it
      w.sem.acquire();
    }
  }

  Lat pingpong(size_t size, int iters, int warmup, bool event, uint64_t* wakeups = nullptr) {
    Buf &sa = buf(A.pd, size), &sb = buf(B.pd, size);
    Buf &ra = buf(A.pd, size), &rb = buf(B.pd, size);
    NDK_SGE sas = sa.sge(0, size), sbs = sb.sge(0, size), ras = ra.sge(0, size),
            rbs = rb.sge(0, size);
    for (int i = 0; i < 64; ++i) {
      A.d()->NdkReceive(A.qp, nullptr, &ras, 1);
      B.d()->NdkReceive(B.qp, nullptr, &rbs, 1);
    }
    const int total = iters + warmup;
    std::thread pong([&] {
      for (int n = 0; n < total; ++n) {
        wait_recv(B, wb, event);
        B.d()->NdkReceive(B.qp, nullptr, &rbs, 1);
        B.d()->NdkSend(B.qp, (void*)1, &sbs, 1, NDK_OP_FLAG_INLINE);
      }
    });
    std::vector<double> rt;
    rt.reserve(static_cast<size_t>(iters));
    uint64_t w0 = 0;
    for (int n = 0; n < total; ++n) {
      if (n == warmup) w0 = reactor_wakeups();
      auto t0 = std::chrono::steady_clock::now();
      A.d()->NdkSend(A.qp, (void*)1, &sas, 1, NDK_OP_FLAG_INLINE);
      wait_recv(A, wa, event);
      A.d()->NdkReceive(A.qp, nullptr, &ras, 1);
      if (n >= warmup)
        rt.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (wakeups) *wakeups = reactor_wakeups() - w0;
    pong.join();
    drain();
    Lat l;
    if (rt.empty()) return l;
    double sum = 0;
    for (double x : rt) sum += x;
    std::sort(rt.begin(), rt.end());
    l.p50_us = rt[rt.size() / 2] / 2 * 1e6;
    l.p99_us = rt[rt.size() * 99 / 100] / 2 * 1e6;
    l.mean_us = sum / static_cast<double>(rt.size()) / 2 * 1e6;
    return l;
  }

  // Messages/s the receiver counted: `size`-byte inline Sends, `window`
  // outstanding; with batch > 1 each group of `batch` posts carries
  // NDK_OP_FLAG_DEFER on all but its last (NDKPI 7: one kick per batch).
  double rate(size_t size, int batch, int window = 16) {
    Buf &src = buf(A.pd, size, 1), &dst = buf(B.pd, size);
    NDK_SGE rs = dst.sge(0, size);
    constexpr uint64_t kPrepost = 1000;
    for (uint64_t i = 0; i < kPrepost; ++i) B.d()->NdkReceive(B.qp, nullptr, &rs, 1);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> recvs{0};
    std::thread peer = peer_poller(stop, &recvs, &dst, size);
    NDK_SGE s = src.sge(0, size);
    const ULONG inl = size <= 256 ? NDK_OP_FLAG_INLINE : 0;
    int outstanding = 0;
    uint64_t posted = 0;
    NDK_RESULT r[64];
    auto t0 = std::chrono::steady_clock::now();
    auto end = t0 + std::chrono::duration<double>(secs);
    for (;;) {
      bool timeup = std::chrono::steady_clock::now() >= end;
      if (timeup && outstanding == 0) break;
      while (!timeup && outstanding + batch <= window &&
             posted + static_cast<uint64_t>(batch) + 12 <=
                 recvs.load(std::memory_order_acquire) + kPrepost) {
        for (int i = 0; i < batch; ++i) {
          ULONG f = inl | (i + 1 < batch ? NDK_OP_FLAG_DEFER : 0);
          NTSTATUS st = A.d()->NdkSend(A.qp, nullptr, &s, 1, f);
          if (st != STATUS_SUCCESS) {
            std::fprintf(stderr,
                         "dp_bench: NdkSend failed: %x (Terminate sent by B %x, received by "
                         "A %x, sent by A %x)\n",
                         (unsigned)st, B.stream->last_terminate_sent(),
                         A.stream->last_terminate_received(), A.stream->last_terminate_sent());
            std::exit(1);
          }
        }
        outstanding += batch;
        posted += static_cast<uint64_t>(batch);
      }
      outstanding -= static_cast<int>(poll(A, r, 64));
    }
    // Counted by the receiver once every message arrived.
    while (recvs.load(std::memory_order_acquire) < posted) std::this_thread::yield();
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stop = true;
    peer.join();
    return static_cast<double>(posted) / dt;
  }

  // Leftover completions of a run (a late Send completion) must not be
  // taken for the next run's.
  void drain() {
    NDK_RESULT r[64];
    for (int i = 0; i < 100; ++i) {
      ULONG k = poll(A, r, 64) + poll(B, r, 64);
      if (k == 0 && i > 2) break;
    }
  }
};

}  // namespace dptest
