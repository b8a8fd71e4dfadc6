// SPDX-License-Identifier: Apache-2.0
// dp_bench.cc - the issue-5 comparison table: the QP data path beside raw
// TCP, iperf3, libfabric's tcp provider and UCX's ucx_perftest (the
// same-host reference, issue 21), measured in one run and printed as ratios
// (bench/README.md "The issue-5 table"). By default softndk
// takes its same-host path (SOFTNDK_SAMEHOST=off measures loopback TCP) (docs/samehost.md).
//   dp_bench [-D SECS] [-n ITERS] [-r REPS] [--only bw|write|read|send,small,lat,event,rate]
//            [--json FILE]
// Both ends run in this process over 127.0.0.1; every baseline uses the
// same wait discipline as the softndk row it is compared with.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "baseline/tcp_baseline.h"
#include "baseline/ucx_perftest.h"
#include "dp_runs.h"
#include "dp_table.h"
#include "fabric/fi_baseline.h"

namespace {

using namespace softndk::baseline;
using dptable::Row;
using dptable::Section;
using nlohmann::json;

using Figure = double (*)(const BaselineResult&);
double gbs(const BaselineResult& b) { return b.mbps / 1e3; }
double mrate(const BaselineResult& b) { return b.msg_rate / 1e6; }
double p50(const BaselineResult& b) { return b.lat_p50_us; }

struct RefSpec {
  std::string name;
  std::function<BaselineResult()> run;
  Figure figure;
};

// softndk's side of a row: returns the headline figure and may fill
// per-run details (the latency rows' mean, p99 and wake-ups).
using SoftFn = std::function<double(json& details)>;

// Runs every row's references `reps` times each, every reference run between
// two softndk runs (softndk, ref 1, softndk, ref 2, softndk, ref 1, ...):
// figures on the shared 2-core machine swing 2-3x within a minute, and each
// ratio compares a reference with the softndk runs right around it
// (dp_table.h, which also leaves out the repetitions whose softndk brackets
// show that the speed changed). Every row re-measures its own references (a
// shared one such as raw TCP is run again for each row).
struct Runner {
  int reps = 3;
  bool no_refs = false;  // --no-refs: softndk rows only (profiling)
  std::vector<Section> sections;

  void section(const char* key, const char* title, const char* unit) {
    sections.push_back({key, title, unit, {}});
    dptable::print_title(sections.back());
  }

  void row(const char* label, const SoftFn& soft, const std::vector<RefSpec>& all_refs) {
    const std::vector<RefSpec> refs = no_refs ? std::vector<RefSpec>{} : all_refs;
    Row r;
    r.label = label;
    for (const RefSpec& f : refs) r.refs.push_back({f.name, {}, {}, {}, {}});
    auto run_soft = [&] {
      json d;
      r.values.push_back(soft(d));
      if (!d.is_null()) r.details.push_back(d);
      return r.values.back();
    };
    // softndk, ref 1, softndk, ref 2, softndk, ...: every reference run sits
    // between two softndk runs (dp_table.h).
    double last = run_soft();
    for (int i = 0; i < reps; ++i) {
      if (refs.empty() && i > 0) last = run_soft();
      for (size_t k = 0; k < refs.size(); ++k) {
        BaselineResult b = refs[k].run();
        double v = b.ok() ? refs[k].figure(b) : 0;
        if (b.ok() && v <= 0) b.error = "zero figure";
        if (!b.ok())
          std::fprintf(stderr, "dp_bench: %s (run %d): %s\n", refs[k].name.c_str(), i + 1,
                       b.error.c_str());
        r.refs[k].values.push_back(b.ok() ? std::optional<double>(v) : std::nullopt);
        r.refs[k].runs.push_back(std::move(b));
        r.refs[k].before.push_back(last);
        last = run_soft();
        r.refs[k].after.push_back(last);
      }
    }
    dptable::print_row(r);
    sections.back().rows.push_back(std::move(r));
  }

  // The latency rows' extra line: medians over the runs of softndk's mean,
  // p99 and reactor wake-ups per round trip.
  void latency_details() {
    const Row& r = sections.back().rows.back();
    auto med = [&](const char* k) {
      std::vector<double> v;
      for (const json& d : r.details) v.push_back(d.at(k).get<double>());
      return v.empty() ? 0.0 : dptable::median(v);
    };
    std::printf(
        "  (softndk, median of %zu runs: mean %.2f us, p99 %.2f us; %.3f reactor "
        "wake-ups per round trip)\n",
        r.details.size(), med("mean_us"), med("p99_us"), med("wakeups_per_round_trip"));
    std::fflush(stdout);
  }
};

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

RefSpec fi(const char* name, FiTest t, size_t size, double secs, Mode mode = Mode::BusyPoll,
           int iters = 0) {
  FiOptions o;
  o.test = t;
  o.msg_size = size;
  o.limits = iters > 0 ? lat_limits(secs, iters) : bw_limits(secs);
  o.window = 16;
  o.mode = mode;
  Figure fig = iters > 0 ? p50 : (t == FiTest::WriteRate ? mrate : gbs);
  return {name, [o] { return fi_run(o); }, fig};
}

// UCX with posix,cma,self: what a user picks for same-host RDMA-like
// traffic. Bandwidth runs for about `secs`; latency runs `iters` round trips.
RefSpec ucx(const char* name, UcxTest t, size_t size, double secs, Mode mode = Mode::BusyPoll,
            int iters = 0) {
  Limits l = iters > 0 ? lat_limits(secs, iters) : bw_limits(secs);
  Figure fig = ucx_is_latency(t) ? p50 : gbs;
  return {name, [=] { return run_ucx_perftest(t, size, l, mode); }, fig};
}

bool wanted(const std::string& only, const char* group) {
  if (only.empty()) return true;
  std::string list = "," + only + ",";
  return list.find("," + std::string(group) + ",") != std::string::npos;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The 1/5/15-minute load averages: how busy the shared machine was.
std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

int usage() {
  std::fprintf(stderr,
               "usage: dp_bench [-D SECS per test] [-n PING-PONG ITERS] [-r REPETITIONS] "
               "[--only bw|write|read|send,small,lat,event,rate] [--json FILE] [--no-refs]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  double secs = 0;  // 0: the default, 2 s for one repetition, 1 s for more
  int iters = 20000, reps = 3;
  std::string only, json_path;
  bool no_refs = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-D" && i + 1 < argc) {
      secs = std::atof(argv[++i]);
      if (secs <= 0) return usage();
    } else if (a == "-n" && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else if (a == "-r" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--no-refs") {
      no_refs = true;
    } else if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (std::isdigit(static_cast<unsigned char>(a[0]))) {
      secs = std::atof(a.c_str());  // the old form: dp_bench SECS
      if (secs <= 0) return usage();
    } else {
      return usage();
    }
  }
  if (iters <= 0 || reps <= 0) return usage();
  // Three interleaved repetitions of 2 s runs would take ~5 minutes.
  if (secs == 0) secs = reps > 1 ? 1.0 : 2.0;
  // Opened now: a bad path must not cost a whole run.
  std::ofstream json_out;
  if (!json_path.empty()) {
    json_out.open(json_path);
    if (!json_out) {
      std::fprintf(stderr, "dp_bench: cannot write %s\n", json_path.c_str());
      return 2;
    }
  }

  const std::string started = utc_now(), load0 = loadavg();
  auto t0 = std::chrono::steady_clock::now();
  dptest::Bench b;
  b.secs = secs;
  b.setup();
  std::printf(
      "dp_bench: %.1f s per bandwidth/rate test, %d ping-pong round trips, %d repetition%s per "
      "row\n  (every reference run between two softndk runs; figures are medians, ratio = "
      "median over the repetitions of the two softndk runs' geometric mean / ref, (min..max);\n"
      "   a repetition whose softndk runs differ by more than 1.25x saw the machine change "
      "speed and is left out)\n",
      secs, iters, reps, reps > 1 ? "s" : "");
  // softndk picks its own congestion control on loopback (tcp/socket.h); the
  // references use the system's. SOFTNDK_TCP_CONGESTION=system compares like
  // with like, and so does setting the system default to the same algorithm.
  const std::string cc_soft = b.congestion(), cc_ref = dptest::Bench::system_congestion();
  std::printf("  TCP congestion control: softndk %s, references %s (system default)\n",
              cc_soft.c_str(), cc_ref.c_str());
  const std::string path = b.path();
  std::printf("  softndk data path: %s (SOFTNDK_SAMEHOST=off selects loopback TCP)\n",
              path.c_str());

  Runner run;
  run.reps = reps;
  run.no_refs = no_refs;
  auto soft = [](auto f) { return SoftFn([f](json&) { return f(); }); };
  auto tcp_bw = [&](const char* name, size_t size) {
    return RefSpec{name, [=] { return tcp_stream(size, bw_limits(secs), Mode::BusyPoll); }, gbs};
  };

  // Sizes never grow from one softndk test to the next: receives left
  // posted by one test are consumed by the next one's Sends.
  // "write", "read" and "send" pick one bandwidth row (profiling).
  const bool bw_all = wanted(only, "bw");
  auto bw_row = [&](const char* key) { return bw_all || (!only.empty() && wanted(only, key)); };
  if (bw_row("write") || bw_row("read") || bw_row("send")) {
    RefSpec t = tcp_bw("tcp busy 1M", 1 << 20);
    RefSpec ip{"iperf3 -l 1M", [=] { return run_iperf3(secs, 1 << 20); }, gbs};
    run.section("bw",
                "Bandwidth, busy-polled CQs, 16 outstanding, GB/s (ratio = softndk / ref, "
                "target >= 0.9 tcp and >= 1.0 libfabric)",
                "GB/s");
    if (bw_row("write"))
      run.row("RDMA Write 1 MiB", soft([&] { return b.bw(0, 1 << 20); }),
              {t, ip, fi("fi write 1M", FiTest::WriteBw, 1 << 20, secs),
               ucx("ucx put 1M", UcxTest::PutBw, 1 << 20, secs)});
    if (bw_row("read"))
      run.row("RDMA Read 1 MiB", soft([&] { return b.bw(1, 1 << 20); }),
              {t, ip, fi("fi read 1M", FiTest::ReadBw, 1 << 20, secs),
               ucx("ucx get 1M", UcxTest::GetBw, 1 << 20, secs)});
    if (bw_row("send"))
      run.row("Send 64 KiB", soft([&] { return b.bw(2, 64 << 10); }),
              {t, ip, fi("fi send 64K", FiTest::SendBw, 64 << 10, secs),
               ucx("ucx am 64K", UcxTest::AmBw, 64 << 10, secs)});
  }
  if (wanted(only, "small")) {
    RefSpec t = tcp_bw("tcp busy 4K", 4096);
    run.section("small",
                "Small messages, busy-polled CQs, 16 outstanding, GB/s (ratio = softndk / ref)",
                "GB/s");
    run.row("RDMA Write 4 KiB", soft([&] { return b.bw(0, 4096); }),
            {t, fi("fi write 4K", FiTest::WriteBw, 4096, secs)});
    run.row("RDMA Read 4 KiB", soft([&] { return b.bw(1, 4096); }),
            {t, fi("fi read 4K", FiTest::ReadBw, 4096, secs)});
    run.row("Send 4 KiB", soft([&] { return b.bw(2, 4096); }),
            {t, fi("fi send 4K", FiTest::SendBw, 4096, secs)});
  }
  if (wanted(only, "rate")) {
    RefSpec f = fi("fi write rate", FiTest::WriteRate, 8, secs);
    RefSpec t{"tcp msg rate", [=] { return tcp_msg_rate(8, bw_limits(secs), Mode::BusyPoll); },
              mrate};
    run.section("rate",
                "8-byte message rate, 16 outstanding, M msg/s (ratio = softndk / ref; defer must "
                "raise it)",
                "M msg/s");
    run.row("Send inline", soft([&] { return b.rate(8, 1) / 1e6; }), {f, t});
    run.row("Send inline + DEFER (16 per kick)", soft([&] { return b.rate(8, 16) / 1e6; }), {f, t});
  }
  // The ping-pongs' softndk side records its mean, p99 and the reactor's
  // wake-ups per round trip (~0 when polled mode works).
  auto pingpong = [&](int n, int warmup, bool event) {
    return SoftFn([&b, n, warmup, event](json& d) {
      uint64_t wk = 0;
      dptest::Lat l = b.pingpong(8, n, warmup, event, &wk);
      d = {{"mean_us", l.mean_us},
           {"p99_us", l.p99_us},
           {"wakeups_per_round_trip", static_cast<double>(wk) / n}};
      return l.p50_us;
    });
  };
  if (wanted(only, "lat")) {
    run.section("lat",
                "8-byte ping-pong, busy-polled CQ, half round trip p50, us (ratio = softndk / "
                "ref, target <= 1.2 tcp, <= 1.0 fi write)",
                "us");
    run.row("Send ping-pong", pingpong(iters, 1000, false),
            {{"tcp busy", [=] { return tcp_pingpong(8, lat_limits(secs, iters), Mode::BusyPoll); },
              p50},
             fi("fi write_lat", FiTest::WriteLat, 8, secs, Mode::BusyPoll, iters),
             fi("fi send_lat", FiTest::SendLat, 8, secs, Mode::BusyPoll, iters),
             ucx("ucx am_lat", UcxTest::AmLat, 8, secs, Mode::BusyPoll, iters)});
    run.latency_details();
  }
  if (wanted(only, "event")) {
    int ev = std::max(1000, iters / 4);
    run.section("event",
                "8-byte ping-pong, event mode (arm + notification + blocking wait), half round "
                "trip p50, us (ratio = softndk / ref)",
                "us");
    run.row("Send ping-pong", pingpong(ev, 200, true),
            {{"tcp blocking", [=] { return tcp_pingpong(8, lat_limits(secs, ev), Mode::Blocking); },
              p50},
             fi("fi send_lat -e", FiTest::SendLat, 8, secs, Mode::Blocking, ev),
             ucx("ucx am_lat sleep", UcxTest::AmLat, 8, secs, Mode::Blocking, ev)});
    run.latency_details();
  }
  b.teardown();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\ndp_bench: %.0f s\n", took);

  if (json_out.is_open()) {
    json sections = json::array();
    for (const Section& s : run.sections) sections.push_back(dptable::to_json(s));
    json j{{"tool", "dp_bench"},
           {"started_utc", started},
           {"seconds_total", took},
           {"loadavg_start", load0},
           {"loadavg_end", loadavg()},
           {"options",
            {{"seconds", secs}, {"iterations", iters}, {"repetitions", reps}, {"only", only}}},
           {"tcp_congestion", {{"softndk", cc_soft}, {"references", cc_ref}}},
           {"softndk_path", path},
           {"sections", sections}};
    json_out << j.dump(2) << "\n";
    json_out.close();
    if (!json_out) {
      std::fprintf(stderr, "dp_bench: writing %s failed\n", json_path.c_str());
      return 1;
    }
  }
  return 0;
}
