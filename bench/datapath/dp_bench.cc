// dp_bench.cc - QP data path throughput/latency vs raw TCP, same run.
//   dp_bench [seconds-per-test]
// Both ends in this process over 127.0.0.1, each end's CQ busy-polled by
// its own thread (perftest's default discipline).
#include <cstdio>
#include <cstdlib>
#include <deque>

#include "baseline/tcp_baseline.h"
#include "dp_fixture.h"

namespace dptest {

struct Bench : DpTest {
  void TestBody() override {}
  void teardown() { TearDown(); }
  Side A, B;
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
    make_side(A, c);
    make_side(B, c);
    connect(A, B, 16, 16);
  }

  // Busy-polls B's CQ (drives its receive progress) until `stop`.
  std::thread peer_poller(std::atomic<bool>& stop, std::atomic<uint64_t>* recvs = nullptr,
                          Buf* rb = nullptr, size_t rlen = 0) {
    return std::thread([&, recvs, rb, rlen] {
      NDK_RESULT r[64];
      NDK_SGE rs{};
      if (rb) rs = rb->sge(0, rlen);
      while (!stop.load(std::memory_order_relaxed)) {
        ULONG k = B.cq->Dispatch->NdkGetCqResults(B.cq, r, 64);
        if (recvs && k) {
          for (ULONG i = 0; i < k; ++i) B.d()->NdkReceive(B.qp, nullptr, &rs, 1);
          recvs->fetch_add(k, std::memory_order_release);
        }
      }
    });
  }

  double bw(int op, size_t size) {  // 0 write, 1 read, 2 send
    Buf &src = buf(A.pd, size, 1), &dst = buf(B.pd, size);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> recvs{0};
    if (op == 2) {
      NDK_SGE rs = dst.sge(0, size);
      for (int i = 0; i < 512; ++i) B.d()->NdkReceive(B.qp, nullptr, &rs, 1);
    }
    std::thread peer = peer_poller(stop, op == 2 ? &recvs : nullptr, &dst, size);
    NDK_SGE s = src.sge(0, size);
    const int window = 16;
    int outstanding = 0;
    uint64_t done = 0, posted = 0;
    NDK_RESULT r[64];
    auto t0 = std::chrono::steady_clock::now();
    auto end = t0 + std::chrono::duration<double>(secs);
    while (true) {
      auto now = std::chrono::steady_clock::now();
      bool timeup = now >= end;
      if (timeup && outstanding == 0) break;
      while (!timeup && outstanding < window &&
             (op != 2 || posted < recvs.load(std::memory_order_acquire) + 500)) {
        NTSTATUS st = op == 0   ? A.d()->NdkWrite(A.qp, nullptr, &s, 1, dst.addr(), dst.token, 0)
                      : op == 1 ? A.d()->NdkRead(A.qp, nullptr, &s, 1, dst.addr(), dst.token, 0)
                                : A.d()->NdkSend(A.qp, nullptr, &s, 1, 0);
        if (st != STATUS_SUCCESS) break;
        ++outstanding;
        ++posted;
      }
      ULONG k = A.cq->Dispatch->NdkGetCqResults(A.cq, r, 64);
      for (ULONG i = 0; i < k; ++i)
        if (r[i].Status != STATUS_SUCCESS) {
          std::fprintf(stderr, "completion error %x\n", (unsigned)r[i].Status);
          std::exit(1);
        }
      outstanding -= static_cast<int>(k);
      done += k;
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stop = true;
    peer.join();
    return static_cast<double>(done) * static_cast<double>(size) / dt / 1e9;
  }

  double pingpong(size_t size, int iters) {
    Buf &sa = buf(A.pd, size), &sb = buf(B.pd, size);
    Buf &ra = buf(A.pd, size), &rb = buf(B.pd, size);
    NDK_SGE sas = sa.sge(0, size), sbs = sb.sge(0, size), ras = ra.sge(0, size),
            rbs = rb.sge(0, size);
    for (int i = 0; i < 64; ++i) {
      A.d()->NdkReceive(A.qp, nullptr, &ras, 1);
      B.d()->NdkReceive(B.qp, nullptr, &rbs, 1);
    }
    std::thread pong([&] {
      NDK_RESULT r[4];
      for (int n = 0; n < iters;) {
        ULONG k = B.cq->Dispatch->NdkGetCqResults(B.cq, r, 4);
        for (ULONG i = 0; i < k; ++i) {
          if (r[i].RequestContext == (void*)1) continue;  // our own send
          B.d()->NdkReceive(B.qp, nullptr, &rbs, 1);
          B.d()->NdkSend(B.qp, (void*)1, &sbs, 1, NDK_OP_FLAG_INLINE);
          ++n;
        }
      }
    });
    NDK_RESULT r[4];
    auto t0 = std::chrono::steady_clock::now();
    for (int n = 0; n < iters; ++n) {
      A.d()->NdkSend(A.qp, (void*)1, &sas, 1, NDK_OP_FLAG_INLINE);
      bool got = false;
      while (!got) {
        ULONG k = A.cq->Dispatch->NdkGetCqResults(A.cq, r, 4);
        for (ULONG i = 0; i < k; ++i)
          if (r[i].RequestContext != (void*)1) {
            got = true;
            A.d()->NdkReceive(A.qp, nullptr, &ras, 1);
          }
      }
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    pong.join();
    return dt / iters / 2 * 1e6;
  }
};

}  // namespace dptest

int main(int argc, char** argv) {
  using namespace softndk::baseline;
  double secs = argc > 1 ? std::atof(argv[1]) : 2.0;
  Limits lim;
  lim.max_seconds = secs;
  lim.iterations = 1u << 30;
  auto tcp = tcp_stream(1 << 20, lim, Mode::BusyPoll);
  Limits pl;
  pl.iterations = 20000;
  pl.warmup = 1000;
  pl.max_seconds = secs * 2;
  auto tpp = tcp_pingpong(8, pl, Mode::BusyPoll);
  dptest::Bench b;
  b.secs = secs;
  b.setup();
  double w = b.bw(0, 1 << 20);
  std::fprintf(stderr, "write done\n");
  double r = b.bw(1, 1 << 20);
  std::fprintf(stderr, "read done\n");
  double s = b.bw(2, 64 << 10);
  std::fprintf(stderr, "send done\n");
  double lat = b.pingpong(8, 3000);
  double tcp_gbs = tcp.mbps / 1e3;
  std::printf("%-28s %10s %10s %8s\n", "test", "softndk", "tcp", "ratio");
  std::printf("%-28s %8.2f GB/s %8.2f GB/s %8.2f\n", "RDMA Write 1 MiB", w, tcp_gbs, w / tcp_gbs);
  std::printf("%-28s %8.2f GB/s %8.2f GB/s %8.2f\n", "RDMA Read 1 MiB", r, tcp_gbs, r / tcp_gbs);
  std::printf("%-28s %8.2f GB/s %8.2f GB/s %8.2f\n", "Send 64 KiB", s, tcp_gbs, s / tcp_gbs);
  std::printf("%-28s %8.2f us   %8.2f us   %8.2f\n", "Send 8 B ping-pong (half RTT)", lat,
              tpp.lat_p50_us, lat / (tpp.lat_p50_us));
  b.teardown();
  return 0;
}
