// SPDX-License-Identifier: Apache-2.0
// perf_run.cc - runs the plan the options describe and reports it.
#include "ndkperf/perf_run.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <thread>

#include "ndkapp/net_util.h"
#include "ndkapp/session.h"
#include "ndkapp/softndk_entry.h"
#include "ndkapp/watchdog.h"
#include "ndkperf/perf_baseline.h"
#include "ndkperf/perf_engine.h"
#include "ndkperf/perf_report.h"
#include "ndkperf/svg_plot.h"

namespace softndk::ndkperf {

namespace {

EngineConfig engine_config(const PerfOptions& o, Test t) {
  EngineConfig c;
  c.test = t;
  c.sizes = sizes_for(o, t);
  c.all_sizes = o.all_sizes;
  c.iters = iters_for(o, t);
  c.duration = o.duration;
  c.qps = o.qps;
  c.tx_depth = tx_depth_for(o, t);
  c.cq_mod = cq_mod_for(o, t);
  c.inline_size = inline_for(o, t);
  c.events = o.events;
  c.shm_buffers = o.shm_buffers;
  c.timeout = o.timeout;
  c.progress = !o.quiet;
  c.max_handshakes = o.max_handshakes;
  c.adapter.crc = o.crc;
  c.adapter.mpa_revision = o.mpa_revision;
  c.adapter.timeout_s = o.timeout;
  // A peer that went quiet never sends its FIN: do not wait longer for it
  // than for anything else (the library's default is 5 s).
  c.adapter.disconnect_timeout_s = std::min(o.timeout, 5.0);
  return c;
}

// Both ends in this process: the server on a thread, the client here.
std::vector<PerfResult> run_loopback(const EngineConfig& cfg, uint16_t port) {
  EngineConfig scfg = cfg;
  scfg.progress = false;
  scfg.adapter.name = cfg.adapter.name.empty() ? "127.0.0.1" : cfg.adapter.name;
  EngineConfig ccfg = cfg;
  ccfg.adapter.name = scfg.adapter.name;
  tools::SockAddr at;
  std::string err;
  if (!tools::address_of_device(scfg.adapter.name, port, at, err)) throw tools::ToolError(err);
  PerfServer server(scfg, at);
  tools::SockAddr target = at;
  target.set_port(server.port());
  std::exception_ptr server_error;
  std::thread th([&] {
    try {
      server.serve(cfg.timeout * 3);
    } catch (...) {
      server_error = std::current_exception();
    }
  });
  std::vector<PerfResult> results;
  std::exception_ptr client_error;
  try {
    results = run_client(ccfg, target);
  } catch (...) {
    client_error = std::current_exception();
    server.cancel();
  }
  th.join();
  // The client's cause is the first one; the server's follows from it.
  if (client_error) std::rethrow_exception(client_error);
  if (server_error) std::rethrow_exception(server_error);
  return results;
}

RunInfo run_info(const PerfOptions& o, const std::string& peer) {
  RunInfo in;
  in.mode = o.role == Role::Loopback ? "loopback" : o.role == Role::Server ? "server" : "client";
  in.peer = peer;
  in.qps = o.qps;
  in.tx_depth = o.tests.empty() ? 0 : tx_depth_for(o, o.tests.front());
  in.inline_size = o.tests.empty() ? 0 : inline_for(o, o.tests.front());
  in.events = o.events;
  in.crc = o.crc;
  in.mpa_revision = o.mpa_revision;
  in.report_gbits = o.report_gbits;
  in.baseline = o.baseline;
  in.duration = o.duration;
  in.iters = o.tests.empty() ? 0 : iters_for(o, o.tests.front());
  for (Test t : o.tests)
    in.per_test.push_back({test_name(t), tx_depth_for(o, t), inline_for(o, t), cq_mod_for(o, t)});
  return in;
}

}  // namespace

int run_ndkperf(const PerfOptions& o, std::ostream& out, std::ostream& err) {
  const bool table = !o.json && !o.csv;
  std::vector<PerfResult> all;
  std::string peer;
  int rc = kExitOk;
  // A hang catcher only: phases kick it, every wait has its own timeout.
  const double window = o.timeout * 3 + 30;
  // The plot's file is opened now, not after the runs: a path that cannot
  // be written fails at once instead of losing the results.
  if (!o.plot.empty()) {
    std::ofstream probe(o.plot, std::ios::app);
    if (!probe) {
      err << "ndkperf: cannot write --plot " << o.plot << ": " << std::strerror(errno) << "\n";
      return kExitFailed;
    }
  }

  // Each size is printed as it finishes (table and CSV; with a baseline
  // the rows wait for its figures), so a run that fails later keeps them.
  const bool stream = o.baseline.empty();
  bool csv_started = false;
  std::string first_error;
  for (Test t : o.tests) {
    EngineConfig cfg = engine_config(o, t);
    cfg.adapter.name = o.device;
    std::vector<PerfResult> res;
    std::vector<PerfResult> finished;  // this test's sizes so far
    size_t shown = 0;                  // characters of this test's table printed
    cfg.on_result = [&](const PerfResult& r) {
      finished.push_back(r);
      if (o.json && !o.quiet) {
        // stdout stays one JSON document: each size is told on stderr.
        char b[160];
        if (r.latency)
          std::snprintf(b, sizeof b, "ndkperf: %s %zu B done: t_median %.2f us\n", r.test.c_str(),
                        r.size, r.lat_p50_us);
        else
          std::snprintf(b, sizeof b, "ndkperf: %s %zu B done: %.2f MB/s\n", r.test.c_str(), r.size,
                        r.mbps);
        err << b;
        err.flush();
      }
      if (!stream) return;
      if (table) {
        std::string t = format_table(finished, run_info(o, peer), false);
        out << t.substr(std::min(shown, t.size()));
        shown = t.size();
      }
      if (o.csv) {
        if (!csv_started) out << csv_header();
        csv_started = true;
        out << csv_row(r);
      }
      out.flush();
    };
    try {
      if (o.role == Role::Loopback) {
        tools::watchdog_arm(window, "ndkperf", kExitHung);
        tools::watchdog_phase("running " + test_name(t) + " in loopback");
        peer = "127.0.0.1";
        res = run_loopback(cfg, o.port);
      } else if (o.role == Role::Client) {
        tools::SockAddr server;
        std::string e;
        if (!tools::resolve(o.host, o.port, server, e)) throw tools::ToolError(e);
        peer = server.to_string();
        if (cfg.adapter.name.empty()) {
          tools::SockAddr local;
          if (!tools::local_address_toward(server, local, e)) throw tools::ToolError(e);
          cfg.adapter.name = local.ip();
        }
        tools::watchdog_arm(window, "ndkperf", kExitHung);
        tools::watchdog_phase("running " + test_name(t) + " against " + peer);
        res = run_client(cfg, server);
      } else {
        // Without -d the server listens on every address, as perftest's
        // servers do (rdma_cm bound to the wildcard); the adapter instance
        // is the first active non-loopback one (else loopback's).
        const bool any = cfg.adapter.name.empty();
        if (any) cfg.adapter.name = tools::default_server_address();
        tools::SockAddr at;
        std::string e;
        if (!tools::address_of_device(any ? "0.0.0.0" : cfg.adapter.name, o.port, at, e))
          throw tools::ToolError(e);
        PerfServer server(cfg, at);
        tools::SockAddr shown = at;
        shown.set_port(server.port());
        peer = shown.to_string();
        err << "ndkperf: " << test_name(t) << " server waiting on " << peer << "\n";
        err.flush();
        res = server.serve(0);
        tools::watchdog_arm(window, "ndkperf", kExitHung);
        tools::watchdog_phase("closing the server");
      }
    } catch (const std::exception& e) {
      tools::watchdog_disarm();
      err << "ndkperf: " << e.what() << "\n";
      const int code =
          dynamic_cast<const tools::PeerSilentError*>(&e) ? kExitPeerSilent : kExitFailed;
      if (first_error.empty()) first_error = e.what();
      if (rc == kExitOk) rc = code;
      // What finished is kept; the size that failed carries the error.
      res = finished;
      PerfResult r;
      r.test = test_name(t);
      r.latency = t.metric == Metric::Lat;
      r.error = e.what();
      if (finished.size() < cfg.sizes.size()) r.size = cfg.sizes[finished.size()];
      // One test that failed before any size (a refused connection, a bad
      // device): the message on stderr says it all; only --json prints a
      // document (with its error).
      if (o.tests.size() > 1 || !finished.empty()) res.push_back(r);
      if (o.tests.size() == 1 && finished.empty() && !o.json) return code;
    }
    tools::watchdog_disarm();
    if (!o.baseline.empty()) {
      for (auto& r : res)
        if (r.error.empty()) {
          tools::watchdog_arm(window + 60, "ndkperf", kExitHung);
          tools::watchdog_phase("running the " + baseline_label(o.baseline) + " baseline");
          run_baseline(r, o.baseline, cfg.iters, cfg.duration, o.events);
          tools::watchdog_disarm();
        }
    }
    if (table) {
      // The rows not printed yet (all of them with a baseline), then the
      // footer.
      std::string t = format_table(res, run_info(o, peer));
      out << (stream ? t.substr(std::min(shown, t.size())) : t);
      out.flush();
    }
    if (o.csv) {
      // The server's rows, failure rows, and with a baseline every row.
      if (!csv_started) out << csv_header();
      csv_started = true;
      size_t from = stream ? finished.size() : 0;
      for (size_t i = from; i < res.size(); ++i) out << csv_row(res[i]);
      out.flush();
    }
    all.insert(all.end(), res.begin(), res.end());
  }

  RunInfo info = run_info(o, peer);
  if (o.json) {
    nlohmann::json doc = results_json(all, info);
    if (!first_error.empty()) doc["error"] = first_error;
    out << doc.dump(2) << "\n";
  }
  if (!o.plot.empty()) {
    std::string e;
    std::string title =
        "ndkperf " + info.mode + ": softndk" +
        (o.baseline.empty() ? std::string() : " vs " + baseline_label(o.baseline) + " baseline");
    if (!write_plot_svg(o.plot, all, title, e)) {
      err << "ndkperf: " << e << "\n";
      rc = kExitFailed;
    } else {
      err << "ndkperf: plot written to " << o.plot << "\n";
    }
  }
  return rc;
}

}  // namespace softndk::ndkperf
