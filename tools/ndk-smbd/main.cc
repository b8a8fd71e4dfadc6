// SPDX-License-Identifier: Apache-2.0
// main.cc - ndk-smbd: an SMB2/3 server over SMB Direct on softndk, for
// testing SMB Direct clients (Linux cifs, ndk-smb). One exported
// directory; see ndk-smbd(1) and docs/smb-direct.md.
//
// Service slots: a connection request is first a handshake (MPA, the
// MS-SMBD negotiate, bounded by the transport's timeouts); handshakes are
// counted and bounded apart from established connections (--max-handshakes,
// --max-connections), so peers that stall before negotiating never hold the
// slots of clients being served (issue 28 item 4).
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "connection.h"
#include "ndkapp/net_util.h"
#include "ndkapp/session.h"
#include "ndkapp/stop_signal.h"
#include "ndkapp/version.h"
#include "ndkapp/workers.h"

namespace tools = softndk::tools;
using namespace smb::server;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2;
std::atomic<bool> g_stop{false};

struct Options {
  std::string dir, name = "share", address = "127.0.0.1", users, json;
  uint16_t port = 5445;
  bool guest = false, quiet = false, trace = false, map_writes = false;
  uint32_t max_io = 1u << 20, write_chunk = 0;
  unsigned max_connections = 16, max_handshakes = 256, staging_buffers = 4;
  unsigned map_rewrites = smb::server::ServerConfig{}.map_rewrites;
  bool no_map_reads = false;
  unsigned write_pipeline = smb::server::ServerConfig{}.write_pipeline;
  double duration = 0;
  double hot_spin_us = smbd::TransportConfig{}.hot_spin_us;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "ndk-smbd - SMB2/3 server over SMB Direct (MS-SMBD over softndk's iWARP): exports one\n"
      "directory to SMB Direct clients such as Linux cifs (mount -t cifs -o rdma). For testing\n"
      "SMB Direct clients and RDMA file transfer; not a general file server.",
      "ndk-smbd"};
  app.add_option("--share", o.dir, "the directory to export")->required();
  app.add_option("--name", o.name, "share name clients connect to (default share)");
  app.add_option("-a,--address", o.address,
                 "softndk adapter to listen on: interface name or local address (default "
                 "127.0.0.1)");
  app.add_option("-p,--port", o.port, "TCP port (default 5445, where cifs connects)");
  app.add_option("--users", o.users, "users file: user:password lines (NTLMv2)");
  app.add_flag("--guest", o.guest, "accept unknown and anonymous users as guest");
  app.add_option("--max-io", o.max_io, "MaxReadSize/MaxWriteSize in bytes (default 1048576)")
      ->check(CLI::Range(65536u, 8u << 20));
  app.add_option("--staging-buffers", o.staging_buffers,
                 "RDMA buffers of --max-io bytes per connection (default 4; 1: a READ's RDMA "
                 "Writes complete before its response)")
      ->check(CLI::Range(1u, 16u));
  app.add_option("--write-chunk", o.write_chunk,
                 "RDMA Read a WRITE in pieces of this many bytes, each written to the file while "
                 "the next ones arrive (default 0: read the whole WRITE, then write it)")
      ->check(CLI::Range(0u, 8u << 20));
  app.add_flag("--map-writes", o.map_writes,
               "RDMA Read a WRITE straight into the file's page cache through a mapped, "
               "registered window the process keeps per file (default: into a staging "
               "buffer, then pwrite; faster for rewrites, slower for fresh data)");
  app.add_option("--map-rewrites", o.map_rewrites,
                 "without --map-writes: map a WRITE once every page it covers has had this many "
                 "WRITEs (counted per file window, across opens and connections); 0 never")
      ->check(CLI::Range(0u, 255u));
  app.add_flag("--no-map-reads", o.no_map_reads,
               "answer every READ with pread() (default: a READ over the RDMA channel is written "
               "straight out of a read-only mapping of the file; once an open has had 64 READs "
               "answered inline, they are copied out of a mapping of its file)");
  app.add_option("--write-pipeline", o.write_pipeline,
                 "WRITEs of a connection in flight at once: each RDMA-Read into one of this many "
                 "bounce buffers and written to the file by a worker thread while the next is "
                 "read (default 2; 0: one at a time on the connection's thread)")
      ->check(CLI::Range(0u, 16u));
  app.add_option("--max-connections", o.max_connections,
                 "established connections served at once (default 16)")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--max-handshakes", o.max_handshakes,
                 "connection requests still negotiating at once (default 256)")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--hot-spin-us", o.hot_spin_us,
                 "while a client's requests follow within this many microseconds, wait for the "
                 "next one without yielding the core for up to this long (default 20; 0: yield "
                 "at once, for a host where both ends share one core)")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--duration", o.duration, "stop after this many seconds (default: at SIGINT)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--json", o.json, "write counters as JSON at exit to FILE (- for stdout)");
  app.add_flag("-q,--quiet", o.quiet, "no start-up line");
  app.add_flag("--trace", o.trace, "one line per SMB2 request on stderr");
  bool version = false;
  app.add_flag("-V,--version", version, "print the version and exit");
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "-V" || std::string(argv[i]) == "--version") {
      std::cout << tools::version_text("ndk-smbd") << "\n";
      return kExitOk;
    }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::cerr << "ndk-smbd: " << e.what() << "\n";
    return kExitUsage;
  }
  if (o.users.empty() && !o.guest) {
    std::cerr << "ndk-smbd: give --users FILE, --guest, or both\n";
    return kExitUsage;
  }
  try {
    ServerConfig cfg;
    cfg.share_name = o.name;
    cfg.guest = o.guest;
    cfg.max_io = o.max_io;
    cfg.staging_buffers = o.staging_buffers;
    cfg.write_chunk = o.write_chunk;
    cfg.map_writes = o.map_writes;
    cfg.map_rewrites = o.map_rewrites;
    cfg.map_reads = !o.no_map_reads;
    cfg.write_pipeline = o.write_pipeline;
    cfg.trace = o.trace;
    if (!o.users.empty()) cfg.users = load_users(o.users);
    for (size_t i = 0; i < cfg.server_guid.size(); ++i)
      cfg.server_guid[i] = uint8_t(std::hash<std::string>{}(o.dir + o.name) >> (i % 8 * 8));
    Share share(o.dir);
    tools::SockAddr at;
    std::string e;
    if (!tools::address_of_device(o.address, o.port, at, e) &&
        !tools::resolve(o.address, o.port, at, e))
      throw std::runtime_error(e);
    tools::AdapterOptions ao;
    ao.name = at.ip();
    ao.disconnect_timeout_s = 2;
    tools::Adapter adapter(ao);
    tools::Listener listener(adapter, at);
    smbd::TransportConfig tc;
    // MS-SMBD 3.1.1.1 says the NegotiateTimer SHOULD be 5 s; ndk-smbd waits
    // 30 s (Linux ksmbd 120 s). Linux cifs 6.1 sends its negotiate request
    // only after setting up its caches and workqueue, which took over 6 s in
    // a loaded TCG guest, and a disconnect before that setup is done oopses
    // it (NULL wake-up in smbd_conn_upcall): docs/smb-direct.md. Stalled
    // handshakes stay bounded by --max-handshakes.
    tc.negotiate_timeout_s = 30;
    tc.receive_credits = 64;
    tc.send_credit_target = 64;
    tc.max_read_write_size = o.max_io;
    tc.hot_spin_us = o.hot_spin_us;
    // Ctrl-C stops in order; a second one quits at once (exit 130).
    tools::install_stop_signals("ndk-smbd", &g_stop, 130);
    signal(SIGPIPE, SIG_IGN);
    // With --json - standard output is the JSON document alone.
    if (!o.quiet)
      (o.json == "-" ? std::cerr : std::cout)
          << "ndk-smbd: \\\\" << at.ip() << "\\" << o.name << " = " << o.dir << " on " << at.ip()
          << ":" << listener.port() << " (SMB Direct)" << std::endl;
    ServerStats stats;
    std::atomic<unsigned> handshaking{0}, serving{0};
    std::atomic<uint64_t> refused{0}, failed_handshakes{0};
    const auto t_end = o.duration > 0 ? tools::deadline_in(o.duration) : tools::Deadline::max();
    // Each connection is served on a worker of its own (the counters below
    // bound them), on the 8 MiB stack std::thread gave it before; finished
    // workers are joined as the loop wakes (ndkapp's Workers, as ndk-nvmet).
    tools::Workers workers(0, 8u << 20, 0);
    while (!g_stop && tools::Clock::now() < t_end) {
      auto conn = listener.next(tools::deadline_in(0.1));
      if (conn) {
        if (handshaking >= o.max_handshakes || serving >= o.max_connections) {
          ++refused;  // dropping the request rejects it
          conn.reset();
        } else {
          ++handshaking;
          auto holder = std::make_shared<std::unique_ptr<tools::Connection>>(std::move(conn));
          std::string why;
          auto started = workers.start(
              [&, holder] {
                std::unique_ptr<smbd::Transport> t;
                try {
                  t = smbd::Transport::accept(adapter, std::move(*holder), tc);
                } catch (const std::exception& ex) {
                  ++failed_handshakes;
                  if (!o.quiet) std::cerr << "ndk-smbd: handshake: " << ex.what() << "\n";
                }
                --handshaking;
                if (t) {
                  ++serving;
                  ++stats.connections;
                  std::string ended;
                  try {
                    Connection c(cfg, share, *t, stats);
                    ended = c.serve(g_stop);
                  } catch (const std::exception& ex) {
                    ended = ex.what();
                  }
                  t->disconnect();
                  if (!o.quiet) std::cerr << "ndk-smbd: connection ended: " << ended << "\n";
                  --serving;
                }
              },
              &why);
          if (started != tools::Workers::Start::kStarted) {
            // No thread for it (RLIMIT_NPROC, address space): refuse that
            // one client (dropping the request rejects it) and go on.
            --handshaking;
            ++refused;
            std::cerr << "ndk-smbd: refused a client: " << why << "\n";
            holder->reset();
          }
        }
      }
      workers.reap();
    }
    g_stop = true;
    listener.cancel();
    workers.join_all();
    if (!o.json.empty()) {
      nlohmann::json j = {{"connections", stats.connections.load()},
                          {"refused", refused.load()},
                          {"failed_handshakes", failed_handshakes.load()},
                          {"sessions", stats.sessions.load()},
                          {"logon_failures", stats.logon_failures.load()},
                          {"sessions_311", stats.sessions_311.load()},
                          {"signed_responses", stats.signed_responses.load()},
                          {"bad_signatures", stats.bad_signatures.load()},
                          {"rdma_reads", stats.rdma_reads.load()},
                          {"rdma_writes", stats.rdma_writes.load()},
                          {"inline_reads", stats.inline_reads.load()},
                          {"inline_writes", stats.inline_writes.load()},
                          {"bytes_read", stats.bytes_read.load()},
                          {"bytes_written", stats.bytes_written.load()},
                          {"send_invalidates", stats.send_invalidates.load()},
                          {"rdma_descriptors", stats.rdma_descriptors.load()},
                          {"rdma_read_requests", stats.rdma_read_requests.load()},
                          {"mapped_writes", stats.mapped_writes.load()},
                          {"mapped_reads", stats.mapped_reads.load()},
                          {"mapped_write_faults", stats.mapped_write_faults.load()},
                          {"mapped_rdma_reads", stats.mapped_rdma_reads.load()},
                          {"mapped_read_faults", stats.mapped_read_faults.load()},
                          {"pipelined_writes", stats.pipelined_writes.load()},
                          {"pipeline_waits", stats.pipeline_waits.load()},
                          {"not_supported", stats.not_supported.load()},
                          {"locks_granted", stats.locks_granted.load()},
                          {"locks_refused", stats.locks_refused.load()}};
      const std::string s = j.dump(2) + "\n";
      if (o.json == "-") {
        std::cout << s;
      } else {
        std::ofstream f(o.json);
        f << s;
        if (!f) throw std::runtime_error("cannot write " + o.json);
      }
    }
    return kExitOk;
  } catch (const std::exception& ex) {
    std::cerr << "ndk-smbd: " << ex.what() << "\n";
    return kExitFailed;
  }
}
