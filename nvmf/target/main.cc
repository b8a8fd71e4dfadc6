// SPDX-License-Identifier: Apache-2.0
// main.cc - ndk-nvmet: listens on a softndk adapter, serves each queue on a
// thread of its own, expires associations whose keep-alive lapsed, stops at
// SIGINT/SIGTERM or --duration.
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ndkapp/handshake_gate.h"
#include "ndkapp/net_util.h"
#include "ndkapp/session.h"
#include "ndkapp/stop_signal.h"
#include "ndkapp/workers.h"
#include "target/backend.h"
#include "target/options.h"
#include "target/queue.h"

using namespace nvmf::target;
namespace tools = softndk::tools;

namespace {

std::atomic<bool> g_stop{false};

nlohmann::json stats_json(Subsystem& s) {
  auto& t = s.stats;
  return {{"connections", t.connections.load()},
          {"cm_rejects", t.cm_rejects.load()},
          {"associations", t.associations.load()},
          {"kato_expired", t.kato_expired.load()},
          {"shutdowns", t.shutdowns.load()},
          {"admin_commands", t.admin_cmds.load()},
          {"io_commands", t.io_cmds.load()},
          {"reads", t.reads.load()},
          {"writes", t.writes.load()},
          {"read_bytes", t.read_bytes.load()},
          {"write_bytes", t.write_bytes.load()},
          {"in_capsule_writes", t.in_capsule.load()},
          {"remote_invalidations", t.invalidations.load()},
          {"error_completions", t.errors.load()}};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string out, err;
  int rc = parse_options(argc, argv, o, out, err);
  std::cout << out;
  std::cerr << err;
  if (rc >= 0) return rc;
  // --json FILE is opened now, not after the run: a path that cannot be
  // written fails at once instead of losing the run's statistics.
  if (!o.json.empty() && o.json != "-") {
    std::ofstream probe(o.json, std::ios::app);
    if (!probe) {
      std::cerr << "ndk-nvmet: cannot write --json " << o.json << ": " << std::strerror(errno)
                << "\n";
      return kExitFailed;
    }
  }
  try {
    std::vector<std::unique_ptr<Backend>> ns;
    for (auto& spec : o.ns) {
      try {
        ns.push_back(open_backend(spec));
      } catch (const SpecError& e) {
        std::cerr << "ndk-nvmet: " << e.what() << "\n";
        return kExitUsage;  // the man page: a bad command line
      }
    }
    tools::SockAddr at;
    std::string e;
    if (!tools::address_of_device(o.address, o.cfg.port, at, e) &&
        !tools::resolve(o.address, o.cfg.port, at, e))
      throw std::runtime_error(e);
    o.cfg.traddr = o.advertise.empty() ? at.ip() : o.advertise;
    o.cfg.advertise_port = o.advertise_port ? o.advertise_port : o.cfg.port;
    tools::AdapterOptions ao;
    ao.name = at.ip();
    ao.crc = o.crc.empty() ? -1 : o.crc == "on" ? 1 : 0;
    ao.disconnect_timeout_s = 2;
    ao.timeout_s = o.timeout;
    tools::Adapter adapter(ao);
    tools::Listener listener(adapter, at);
    // -p 0: the discovery log advertises the port the kernel picked, not 0.
    if (o.advertise_port == 0) o.cfg.advertise_port = listener.port();
    Subsystem sub(o.cfg, std::move(ns));
    // Ctrl-C stops in order; a second one quits at once (stop_signal.h).
    tools::install_stop_signals("ndk-nvmet", &g_stop, kExitForced);
    signal(SIGPIPE, SIG_IGN);
    // With --json - standard output is the JSON document alone: the
    // start-up line goes to standard error.
    std::ostream& banner = o.json == "-" ? std::cerr : std::cout;
    if (!o.quiet) {
      banner << "ndk-nvmet: " << o.cfg.subnqn << " on " << at.ip() << ":" << listener.port() << ", "
             << sub.ns_count() << " namespace(s):";
      for (uint32_t i = 1; i <= sub.ns_count(); ++i)
        banner << " " << i << "=" << sub.ns(i)->describe() << " (" << sub.ns(i)->blocks()
               << " blocks)";
      banner << std::endl;
    }
    auto t_end = o.duration > 0 ? tools::deadline_in(o.duration) : tools::Deadline::max();
    std::atomic<bool> stopping{false};
    // Each queue is served on a worker of its own (the gate below bounds
    // them), on the 8 MiB stack std::thread gave it before: a queue's stack
    // use was never measured against Workers' smaller default.
    tools::Workers workers(0, 8u << 20, 0);
    // Connections in their handshake and queues served are counted apart:
    // hosts that stall before their first capsule cannot keep others out.
    tools::HandshakeGate gate(
        {o.max_handshakes, o.max_connections, "connections", "--max-connections"});
    while (!g_stop && tools::Clock::now() < t_end) {
      auto conn = listener.next(tools::deadline_in(0.1));
      if (conn) {
        std::string why;
        auto ticket = gate.admit(&why);
        if (!ticket) {
          sub.stats.cm_rejects++;
          std::string who = conn->peer_address().to_string();
          conn->reject(nvmf::cm_reject_data(nvmf::kCmNoResources));
          std::cerr << "ndk-nvmet: refused " << who << ": " << why << "\n";
        } else {
          auto holder = std::make_shared<std::unique_ptr<tools::Connection>>(std::move(conn));
          auto place = std::make_shared<tools::HandshakeGate::Ticket>(std::move(*ticket));
          const double handshake_s = o.timeout;
          // serve_connection reports its own failures: it throws nothing.
          auto started = workers.start(
              [&sub, &adapter, &stopping, holder, place, handshake_s] {
                serve_connection(sub, adapter, std::move(*holder), stopping, std::move(*place),
                                 handshake_s);
              },
              &why);
          if (started != tools::Workers::Start::kStarted) {
            // No thread for it (RLIMIT_NPROC, address space): refuse that
            // one host and go on.
            std::string who = (*holder)->peer_address().to_string();
            (*holder)->reject(nvmf::cm_reject_data(nvmf::kCmNoResources));
            std::cerr << "ndk-nvmet: refused " << who << ": " << why << "\n";
          }
        }
      }
      // Keep alive: an association with no command for KATO ends.
      int64_t now = now_ms();
      for (auto& c : sub.controllers()) {
        uint32_t kato = c->kato_ms;
        if (kato && !c->dead && now - c->last_cmd_ms > int64_t(kato)) {
          sub.stats.kato_expired++;
          std::cerr << "ndk-nvmet: controller " << c->cntlid << " (" << c->hostnqn
                    << "): keep alive timeout (" << kato << " ms), association ended\n";
          c->kill();
          sub.remove(c->cntlid);
        }
      }
      workers.reap();
    }
    stopping = true;
    listener.cancel();
    for (auto& c : sub.controllers()) c->kill();
    workers.join_all();
    if (!o.json.empty()) {
      std::string j = stats_json(sub).dump(2) + "\n";
      if (o.json == "-") {
        std::cout << j;
      } else {
        std::ofstream f(o.json);
        f << j;
        if (!f) throw std::runtime_error("cannot write " + o.json);
      }
    }
    return kExitOk;
  } catch (const std::exception& ex) {
    std::cerr << "ndk-nvmet: " << ex.what() << "\n";
    return kExitFailed;
  }
}
