// dp_bench.cc - the issue-5 comparison table: the QP data path beside raw
// TCP, iperf3 and libfabric's tcp provider, measured in one run and printed
// as ratios (bench/README.md "The issue-5 table").
//   dp_bench [-D SECS] [-n ITERS] [--only bw,small,lat,event,rate]
// Both ends run in this process over 127.0.0.1; every baseline uses the
// same wait discipline as the softndk row it is compared with.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "baseline/tcp_baseline.h"
#include "dp_runs.h"
#include "fabric/fi_baseline.h"

namespace {

using namespace softndk::baseline;

struct Ref {
  std::string name;
  double value = 0;  // 0: failed (error printed)
};

struct Row {
  std::string label;
  double value;
  std::vector<Ref> refs;
};

struct Section {
  std::string title;  // with unit and how to read the ratio
  std::vector<Row> rows;
};

void print(const Section& s) {
  std::printf("\n%s\n", s.title.c_str());
  for (const Row& r : s.rows) {
    std::printf("  %-34s %9.3f", r.label.c_str(), r.value);
    for (const Ref& f : r.refs) {
      if (f.value > 0)
        std::printf("  | %-15s %9.3f  ratio %5.2f", f.name.c_str(), f.value, r.value / f.value);
      else
        std::printf("  | %-15s %9s  ratio %5s", f.name.c_str(), "failed", "-");
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

Ref ref(const char* name, const BaselineResult& b, double v) {
  if (!b.ok()) std::fprintf(stderr, "dp_bench: %s: %s\n", name, b.error.c_str());
  return {name, b.ok() ? v : 0};
}

Limits bw_limits(double secs) {
  Limits l;
  l.max_seconds = secs;
  return l;
}

Limits lat_limits(double secs, int iters) {
  Limits l;
  l.iterations = static_cast<uint64_t>(iters);
  l.warmup = 1000;
  l.max_seconds = secs * 3;
  return l;
}

BaselineResult fi(FiTest t, size_t size, double secs, Mode mode = Mode::BusyPoll, int iters = 0) {
  FiOptions o;
  o.test = t;
  o.msg_size = size;
  o.limits = iters > 0 ? lat_limits(secs, iters) : bw_limits(secs);
  o.window = 16;
  o.mode = mode;
  return fi_run(o);
}

bool wanted(const std::string& only, const char* group) {
  if (only.empty()) return true;
  std::string list = "," + only + ",";
  return list.find("," + std::string(group) + ",") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  double secs = 2.0;
  int iters = 20000;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-D" && i + 1 < argc) {
      secs = std::atof(argv[++i]);
    } else if (a == "-n" && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (std::isdigit(static_cast<unsigned char>(a[0]))) {
      secs = std::atof(a.c_str());  // the old form: dp_bench SECS
    } else {
      std::fprintf(stderr,
                   "usage: dp_bench [-D SECS per test] [-n PING-PONG ITERS] "
                   "[--only bw,small,lat,event,rate]\n");
      return 2;
    }
  }
  if (secs <= 0 || iters <= 0) return 2;

  dptest::Bench b;
  b.secs = secs;
  b.setup();
  std::printf("dp_bench: %.1f s per bandwidth/rate test, %d ping-pong round trips\n", secs, iters);

  // Sizes never grow from one softndk test to the next: receives left
  // posted by one test are consumed by the next one's Sends.
  if (wanted(only, "bw")) {
    auto tcp = tcp_stream(1 << 20, bw_limits(secs), Mode::BusyPoll);
    auto ip = run_iperf3(secs, 1 << 20);
    auto fw = fi(FiTest::WriteBw, 1 << 20, secs);
    auto fr = fi(FiTest::ReadBw, 1 << 20, secs);
    auto fs = fi(FiTest::SendBw, 64 << 10, secs);
    double w = b.bw(0, 1 << 20), r = b.bw(1, 1 << 20), s = b.bw(2, 64 << 10);
    Ref t = ref("tcp busy 1M", tcp, tcp.mbps / 1e3), i = ref("iperf3 -l 1M", ip, ip.mbps / 1e3);
    print(
        {"Bandwidth, busy-polled CQs, 16 outstanding, GB/s (ratio = softndk / ref, "
         "target >= 0.9 tcp and >= 1.0 libfabric)",
         {{"RDMA Write 1 MiB", w, {t, i, ref("fi write 1M", fw, fw.mbps / 1e3)}},
          {"RDMA Read 1 MiB", r, {t, i, ref("fi read 1M", fr, fr.mbps / 1e3)}},
          {"Send 64 KiB", s, {t, i, ref("fi send 64K", fs, fs.mbps / 1e3)}}}});
  }
  if (wanted(only, "small")) {
    auto tcp = tcp_stream(4096, bw_limits(secs), Mode::BusyPoll);
    auto fw = fi(FiTest::WriteBw, 4096, secs);
    auto fr = fi(FiTest::ReadBw, 4096, secs);
    auto fs = fi(FiTest::SendBw, 4096, secs);
    double w = b.bw(0, 4096), r = b.bw(1, 4096), s = b.bw(2, 4096);
    Ref t = ref("tcp busy 4K", tcp, tcp.mbps / 1e3);
    print({"Small messages, busy-polled CQs, 16 outstanding, GB/s (ratio = softndk / ref)",
           {{"RDMA Write 4 KiB", w, {t, ref("fi write 4K", fw, fw.mbps / 1e3)}},
            {"RDMA Read 4 KiB", r, {t, ref("fi read 4K", fr, fr.mbps / 1e3)}},
            {"Send 4 KiB", s, {t, ref("fi send 4K", fs, fs.mbps / 1e3)}}}});
  }
  if (wanted(only, "rate")) {
    auto fw = fi(FiTest::WriteRate, 8, secs);
    auto tr = tcp_msg_rate(8, bw_limits(secs), Mode::BusyPoll);
    double plain = b.rate(8, 1) / 1e6, defer = b.rate(8, 16) / 1e6;
    Ref f = ref("fi write rate", fw, fw.msg_rate / 1e6),
        t = ref("tcp msg rate", tr, tr.msg_rate / 1e6);
    print(
        {"8-byte message rate, 16 outstanding, M msg/s (ratio = softndk / ref; defer must raise "
         "it)",
         {{"Send inline", plain, {f, t}}, {"Send inline + DEFER (16 per kick)", defer, {f, t}}}});
  }
  if (wanted(only, "lat")) {
    auto tcp = tcp_pingpong(8, lat_limits(secs, iters), Mode::BusyPoll);
    auto fw = fi(FiTest::WriteLat, 8, secs, Mode::BusyPoll, iters);
    auto fs = fi(FiTest::SendLat, 8, secs, Mode::BusyPoll, iters);
    uint64_t wk = 0;
    dptest::Lat l = b.pingpong(8, iters, 1000, false, &wk);
    print(
        {"8-byte ping-pong, busy-polled CQ, half round trip p50, us (ratio = softndk / ref, "
         "target <= 1.2 tcp, <= 1.0 fi write)",
         {{"Send ping-pong",
           l.p50_us,
           {ref("tcp busy", tcp, tcp.lat_p50_us), ref("fi write_lat", fw, fw.lat_p50_us),
            ref("fi send_lat", fs, fs.lat_p50_us)}}}});
    std::printf("  (softndk mean %.2f us, p99 %.2f us; %.3f reactor wake-ups per round trip)\n",
                l.mean_us, l.p99_us, static_cast<double>(wk) / iters);
  }
  if (wanted(only, "event")) {
    int ev_iters = std::max(1000, iters / 4);
    auto tcp = tcp_pingpong(8, lat_limits(secs, ev_iters), Mode::Blocking);
    auto fs = fi(FiTest::SendLat, 8, secs, Mode::Blocking, ev_iters);
    uint64_t wk = 0;
    dptest::Lat l = b.pingpong(8, ev_iters, 200, true, &wk);
    print(
        {"8-byte ping-pong, event mode (arm + notification + blocking wait), half round trip "
         "p50, us (ratio = softndk / ref)",
         {{"Send ping-pong",
           l.p50_us,
           {ref("tcp blocking", tcp, tcp.lat_p50_us), ref("fi send_lat -e", fs, fs.lat_p50_us)}}}});
    std::printf("  (softndk mean %.2f us, p99 %.2f us; %.3f reactor wake-ups per round trip)\n",
                l.mean_us, l.p99_us, static_cast<double>(wk) / ev_iters);
  }
  b.teardown();
  return 0;
}
