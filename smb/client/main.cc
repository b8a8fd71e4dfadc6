// SPDX-License-Identifier: Apache-2.0
// main.cc - ndk-smb, an SMB 3.x client over SMB Direct on softndk's public
// NDK ABI: ls, stat, get, put and a bench (docs/smb-direct.md, "Client";
// man page tools/man/ndk-smb.1; exit codes in client_error.h).
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <iostream>
#include <thread>

#include "bench.h"
#include "client.h"
#include "ndkapp/version.h"
#include "smb2/create.h"

using namespace smb::client;
namespace tools = softndk::tools;

namespace {

struct Cli {
  std::string url, user, password, domain, vers = "any", channel = "rdma-invalidate", local;
  bool guest = false, sign = false, strict_signing = false, stats = false, fr_register = false;
  std::string bs_text = "1M", threshold_text = "4k", size_text = "64M";
  unsigned iodepth = 4;
  double timeout_s = 30;
  double hot_spin_us = smbd::TransportConfig{}.hot_spin_us;
  // commands
  std::string path, remote, local_file;
  BenchOptions bench;
};

bool parse_size(const std::string& t, uint64_t& out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
  if (end == t.c_str()) return false;
  const std::string suf(end);
  uint64_t m = 1;
  if (suf == "k" || suf == "K" || suf == "KiB")
    m = 1024;
  else if (suf == "m" || suf == "M" || suf == "MiB")
    m = 1024 * 1024;
  else if (suf == "g" || suf == "G" || suf == "GiB")
    m = 1024ull * 1024 * 1024;
  else if (!suf.empty())
    return false;
  out = v * m;
  return true;
}

// //HOST[:PORT]/SHARE
void parse_url(const std::string& u, Options& o) {
  if (u.rfind("//", 0) != 0) throw ClientError(kExitUsage, "expected //HOST[:PORT]/SHARE: " + u);
  const size_t slash = u.find('/', 2);
  if (slash == std::string::npos || slash + 1 >= u.size())
    throw ClientError(kExitUsage, "no share in " + u);
  std::string host = u.substr(2, slash - 2);
  o.share = u.substr(slash + 1);
  if (o.share.find('/') != std::string::npos)
    throw ClientError(kExitUsage, "a share name has no '/': " + o.share);
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']') == std::string::npos) {
    const unsigned long p = std::strtoul(host.c_str() + colon + 1, nullptr, 10);
    if (p == 0 || p > 65535) throw ClientError(kExitUsage, "bad port in " + u);
    o.port = uint16_t(p);
    host = host.substr(0, colon);
  }
  if (host.empty()) throw ClientError(kExitUsage, "no host in " + u);
  o.host = host;
}

std::string filetime_text(uint64_t ft) {
  if (ft < 116444736000000000ull) return "-";
  const time_t t = time_t((ft - 116444736000000000ull) / 10000000ull);
  char b[32];
  tm tmv{};
  gmtime_r(&t, &tmv);
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  return b;
}

// Which path the connection's data took: samehost (softndk's shared-memory
// fast path, both ends on this machine), tcp (with the reason the fast path
// was not taken, e.g. tcp/disabled for SOFTNDK_SAMEHOST=off), probing, or
// "?" when the library cannot tell.
//
// The same-host rendezvous runs beside the first messages and, when the peer
// does not take part (a server with SOFTNDK_SAMEHOST=off, or not softndk),
// only ends when the library gives up on it, 2 s after the connection
// (docs/samehost.md 2). A transfer shorter than that used to report
// "probing" although its data went by TCP and the outcome was already
// certain; so, like ndkperf's header (Connection::path_text), wait a bounded
// while for the verdict. "probing" is left only if it never comes.
constexpr double kPathSettleSeconds = 3.0;

std::string path_text(const Client& c) {
  SOFTNDK_PATH_INFO pi{};
  const auto* conn = c.transport().connection();
  if (conn == nullptr || !conn->path_info(pi)) return "?";
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kPathSettleSeconds);
  while (pi.Path == SOFTNDK_PATH_PROBING && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!conn->path_info(pi)) return "?";
  }
  const char* name = SoftNdkPathName(pi.Path);
  std::string t = name ? name : "?";
  const char* why = SoftNdkPathReasonName(pi.Reason);
  if (pi.Path == SOFTNDK_PATH_TCP && why != nullptr && pi.Reason != SOFTNDK_PATH_REASON_NONE)
    t += std::string("/") + why;
  for (char& ch : t)
    if (ch == ' ') ch = '-';  // one word in the key=value line ("tcp/no-peer")
  return t;
}

// With --stats: which engine serves the adapter (software iWARP or the
// verbs backend and its device) and how it fast-registers the RDMA
// channel's buffers, so a run says what it measured.
void print_backend(tools::Adapter& adapter) {
  SOFTNDK_BACKEND_INFO bi{};
  bi.Size = sizeof bi;
  if (SoftNdkQueryBackend(adapter.get(), &bi) != STATUS_SUCCESS) return;
  // First words only (Device: "siw0 [siw, iwarp] on eth0 ..."; FastRegister:
  // the mode, then why): one word per key in the key=value line.
  auto first_word = [](const char* text, size_t cap) {
    const std::string t(text, strnlen(text, cap));
    return t.empty() ? std::string("-") : t.substr(0, t.find_first_of(" :"));
  };
  std::fprintf(stderr, "ndk-smb: adapter: backend=%s device=%s fast_register=%s\n",
               bi.Backend == SOFTNDK_BACKEND_VERBS ? "verbs" : "iwarp-sw",
               first_word(bi.Device, sizeof bi.Device).c_str(),
               first_word(bi.FastRegister, sizeof bi.FastRegister).c_str());
}

void print_stats(const Client& c) {
  const auto& s = c.stats();
  const auto& ts = c.transport().stats();
  std::fprintf(
      stderr,
      "ndk-smb: stats: transport=smb-direct path=%s dialect=%s signing=%s guest=%s channel=%s "
      "io_size=%u rdma_reads=%" PRIu64 " rdma_read_bytes=%" PRIu64 " rdma_writes=%" PRIu64
      " rdma_write_bytes=%" PRIu64 " inline_reads=%" PRIu64 " inline_writes=%" PRIu64
      " remote_invalidations=%" PRIu64 " local_invalidations=%" PRIu64 " signed_sent=%" PRIu64
      " signatures_verified=%" PRIu64 " ksmbd_read_signatures=%" PRIu64
      " unverified_errors=%" PRIu64 " smbd_messages_sent=%" PRIu64
      " smbd_messages_received=%" PRIu64 " poll_hot=%" PRIu64 " poll_yields=%" PRIu64
      " poll_switches=%" PRIu64 " poll_sleeps=%" PRIu64 " poll_events=%" PRIu64 "\n",
      path_text(c).c_str(), dialect_name(c.dialect()).c_str(), c.signing() ? "yes" : "no",
      c.guest() ? "yes" : "no", channel_name(c.channel()), c.io_size(), s.rdma_reads,
      s.rdma_read_bytes, s.rdma_writes, s.rdma_write_bytes, s.inline_reads, s.inline_writes,
      c.remote_invalidations(), c.local_invalidations(), s.signed_sent, s.signatures_verified,
      s.ksmbd_read_signatures, s.unverified_errors, ts.messages_sent, ts.messages_received,
      ts.poll_hot, ts.poll_yields, ts.poll_switches, ts.poll_sleeps, ts.poll_events);
}

void cmd_ls(Client& c, const std::string& path) {
  const auto d = c.open(path, smb::smb2::kFileReadData | smb::smb2::kFileReadAttributes,
                        smb::smb2::kFileOpen, smb::smb2::kFileDirectoryFile);
  auto entries = c.list(d);
  c.close(d);
  for (const auto& e : entries) {
    const std::string name = utf8_from_utf16le(e.name);
    if (name == "." || name == "..") continue;
    const bool dir = e.file_attributes & smb::smb2::kFileAttributeDirectory;
    std::printf("%c %12" PRIu64 " %s %s\n", dir ? 'd' : '-', e.end_of_file,
                filetime_text(e.times.last_write_time).c_str(), name.c_str());
  }
}

void cmd_stat(Client& c, const std::string& path) {
  const auto f = c.open(path, smb::smb2::kFileReadAttributes, smb::smb2::kFileOpen, 0);
  const auto n = c.query_network_open(f);
  const auto s = c.query_standard(f);
  c.close(f);
  std::printf("path: %s\ntype: %s\nsize: %" PRIu64 "\nallocation: %" PRIu64
              "\nlinks: %u\nattributes: 0x%08x\ncreated: %s\nmodified: %s\naccessed: %s\n"
              "changed: %s\n",
              path.c_str(), s.directory ? "directory" : "file", n.end_of_file, n.allocation_size,
              s.number_of_links, n.file_attributes, filetime_text(n.times.creation_time).c_str(),
              filetime_text(n.times.last_write_time).c_str(),
              filetime_text(n.times.last_access_time).c_str(),
              filetime_text(n.times.change_time).c_str());
}

// Pipelined whole-file copies: up to `depth` I/Os of io_size() bytes in
// flight, one slot each.
void cmd_get(Client& c, const std::string& remote, const std::string& local, unsigned depth) {
  smb::smb2::CreateResponse info;
  const auto f = c.open(remote, smb::smb2::kFileReadData | smb::smb2::kFileReadAttributes,
                        smb::smb2::kFileOpen, smb::smb2::kFileNonDirectoryFile, &info);
  const int fd = local == "-" ? 1 : ::open(local.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw ClientError(kExitLocal, "cannot create " + local + ": " + strerror(errno));
  const uint64_t size = info.end_of_file, io = c.io_size();
  struct P {
    uint64_t id, off;
    uint32_t len;
    unsigned slot;
  };
  std::deque<P> q;
  uint64_t next = 0;
  unsigned slot = 0;
  while (next < size || !q.empty()) {
    while (next < size && q.size() < depth) {
      const uint32_t len = uint32_t(std::min(io, size - next));
      q.push_back({c.start_read(f, next, len, slot), next, len, slot});
      slot = (slot + 1) % depth;
      next += len;
    }
    const P p = q.front();
    q.pop_front();
    std::span<const uint8_t> data;  // where the bytes arrived: no copy into the slot
    const uint32_t n = c.finish(p.id, &data);
    if (n != p.len)
      throw ClientError(kExitStatus, "short READ of " + remote + " at " + std::to_string(p.off) +
                                         ": " + std::to_string(n) + " of " + std::to_string(p.len) +
                                         " bytes (file changed?)");
    if (pwrite(fd, data.data(), n, off_t(p.off)) != ssize_t(n) && fd != 1)
      throw ClientError(kExitLocal, "write to " + local + ": " + strerror(errno));
  }
  c.close(f);
  if (fd != 1 && ::close(fd) != 0)
    throw ClientError(kExitLocal, "close " + local + ": " + strerror(errno));
}

void cmd_put(Client& c, const std::string& local, const std::string& remote, unsigned depth) {
  const int fd = ::open(local.c_str(), O_RDONLY);
  if (fd < 0) throw ClientError(kExitLocal, "cannot open " + local + ": " + strerror(errno));
  const off_t end = lseek(fd, 0, SEEK_END);
  if (end < 0) throw ClientError(kExitLocal, local + ": not a regular file");
  const uint64_t size = uint64_t(end), io = c.io_size();
  const auto f = c.open(remote, smb::smb2::kFileWriteData | smb::smb2::kFileReadAttributes,
                        smb::smb2::kFileOverwriteIf, smb::smb2::kFileNonDirectoryFile);
  struct P {
    uint64_t id, off;
    uint32_t len;
  };
  std::deque<P> q;
  uint64_t next = 0;
  unsigned slot = 0;
  while (next < size || !q.empty()) {
    while (next < size && q.size() < depth) {
      const uint32_t len = uint32_t(std::min(io, size - next));
      if (pread(fd, c.slot_data(slot), len, off_t(next)) != ssize_t(len))
        throw ClientError(kExitLocal, "read " + local + ": " + strerror(errno));
      q.push_back({c.start_write(f, next, len, slot), next, len});
      slot = (slot + 1) % depth;
      next += len;
    }
    const P p = q.front();
    q.pop_front();
    const uint32_t n = c.finish(p.id);
    if (n != p.len)
      throw ClientError(kExitStatus, "short WRITE to " + remote + " at " + std::to_string(p.off) +
                                         ": " + std::to_string(n) + " of " + std::to_string(p.len) +
                                         " bytes");
  }
  c.flush(f);
  c.close(f);
  ::close(fd);
}

// How long the teardown after a failure may take in all (disconnect and
// every close): the server may be gone, and a close that waits for it the
// full --timeout per object delayed the exit by minutes (issue 29).
constexpr double kTeardownAfterError = 3;

// A failure once connected: said at once, then the connection is torn down
// within kTeardownAfterError (the exit code is the error's).
int report_and_end(const Cli& cli, Client& c, tools::Adapter& adapter, const ClientError& e) {
  if (cli.stats && c.has_transport()) print_stats(c);
  std::fprintf(stderr, "ndk-smb: %s\n", e.what());
  std::fflush(stderr);
  adapter.limit_teardown(kTeardownAfterError);
  return e.exit_code();
}

int run(Cli& cli, const std::string& command) {
  Options o;
  parse_url(cli.url, o);
  o.user = cli.user;
  o.password = cli.password;
  if (o.password.empty())
    if (const char* p = std::getenv("NDK_SMB_PASSWORD")) o.password = p;
  o.domain = cli.domain;
  o.guest = cli.guest;
  if (!o.guest && o.user.empty())
    throw ClientError(kExitUsage, "give --user (and --password) or --guest");
  if (cli.vers != "any") {
    const uint16_t d = dialect_from(cli.vers);
    if (!d) throw ClientError(kExitUsage, "--vers: 3.0, 3.0.2, 3.1.1 or any");
    o.dialects = {d};
  }
  o.require_signing = cli.sign;
  o.strict_signing = cli.strict_signing;
  if (cli.channel == "inline")
    o.channel = Channel::kInline;
  else if (cli.channel == "rdma")
    o.channel = Channel::kRdma;
  else if (cli.channel == "rdma-invalidate")
    o.channel = Channel::kRdmaInvalidate;
  else
    throw ClientError(kExitUsage, "--channel: rdma, rdma-invalidate or inline");
  uint64_t v = 0;
  if (!parse_size(cli.threshold_text, v) || v > (1u << 30))
    throw ClientError(kExitUsage, "--threshold: a size");
  o.rdma_threshold = uint32_t(v);
  if (!parse_size(cli.bs_text, v) || v == 0 || v > (64u << 20))
    throw ClientError(kExitUsage, "--bs: a size from 1 to 64M");
  o.io_size = uint32_t(v);
  if (cli.iodepth == 0 || cli.iodepth > 64) throw ClientError(kExitUsage, "--iodepth: 1..64");
  o.slots = cli.iodepth;
  o.timeout_s = cli.timeout_s;
  o.transport.timeout_s = cli.timeout_s;
  o.transport.hot_spin_us = cli.hot_spin_us;

  tools::SockAddr peer, local;
  std::string err;
  if (!tools::resolve(o.host, o.port, peer, err)) throw ClientError(kExitUsage, err);
  if (!cli.local.empty()) {
    if (!tools::address_of_device(cli.local, 0, local, err)) throw ClientError(kExitUsage, err);
  } else {
    if (!tools::local_address_toward(peer, local, err))
      throw ClientError(kExitTransport, "no route to " + o.host + ": " + err);
    local.set_port(0);
  }
  tools::AdapterOptions ao;
  ao.name = local.ip();
  ao.timeout_s = cli.timeout_s;
  ao.disconnect_timeout_s = 2;
  if (cli.fr_register) ao.open_flags |= SOFTNDK_OPEN_FLAG_FR_REGISTER;
  tools::Adapter adapter(ao);
  if (cli.stats) print_backend(adapter);
  // Declared after the adapter: destroyed (its connection torn down) first.
  auto c = std::make_unique<Client>(o);
  // A failure while connecting (refused session, unknown share, a server
  // that stops answering) ends like one later on: said at once, then a
  // teardown bounded by kTeardownAfterError, not --timeout per object.
  try {
    c->connect(adapter, local, peer);
  } catch (const smbd::TransportError& e) {
    return report_and_end(
        cli, *c, adapter,
        ClientError(kExitTransport, std::string("SMB Direct to ") + o.host + ":" +
                                        std::to_string(o.port) + ": " + e.what()));
  } catch (const ClientError& e) {
    return report_and_end(cli, *c, adapter, e);
  }
  for (const auto& n : c->notes()) std::fprintf(stderr, "ndk-smb: note: %s\n", n.c_str());
  int rc = kExitOk;
  try {
    if (command == "ls") {
      cmd_ls(*c, cli.path);
    } else if (command == "stat") {
      cmd_stat(*c, cli.path);
    } else if (command == "get") {
      std::string dst = cli.local_file;
      if (dst.empty()) {
        const size_t s = cli.remote.find_last_of("/\\");
        dst = s == std::string::npos ? cli.remote : cli.remote.substr(s + 1);
      }
      cmd_get(*c, cli.remote, dst, std::min(cli.iodepth, c->slots()));
    } else if (command == "put") {
      cmd_put(*c, cli.local_file, cli.remote, std::min(cli.iodepth, c->slots()));
    } else if (command == "bench") {
      BenchOptions b = cli.bench;
      b.path = cli.remote;
      b.bs = o.io_size;
      b.iodepth = cli.iodepth;
      if (!parse_size(cli.size_text, b.size) || b.size == 0)
        throw ClientError(kExitUsage, "--size: a size");
      if (b.rw != "read" && b.rw != "write" && b.rw != "randread" && b.rw != "randwrite")
        throw ClientError(kExitUsage, "--rw: read, write, randread or randwrite");
      if (b.bs > c->io_size())
        throw ClientError(kExitUsage, "--bs " + std::to_string(b.bs) +
                                          " is more than the negotiated I/O size " +
                                          std::to_string(c->io_size()));
      const auto r = run_bench(*c, b);
      std::fputs(bench_report(b, r).c_str(), stdout);
      if (r.verify_errors) rc = kExitVerify;
    }
  } catch (const smbd::TransportError& e) {
    // An RDMA channel request that failed because the server went: say so
    // first (the transport's own failures already do).
    const std::string what = e.what();
    if (what.find("the peer disconnected") == std::string::npos && c->transport().peer_gone(0.5))
      return report_and_end(
          cli, *c, adapter,
          ClientError(kExitTransport, "SMB Direct: the server disconnected (" + what + ")"));
    return report_and_end(cli, *c, adapter,
                          ClientError(kExitTransport, std::string("SMB Direct: ") + what));
  } catch (const ClientError& e) {
    return report_and_end(cli, *c, adapter, e);
  }
  if (cli.stats) print_stats(*c);
  c->logoff();
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ndk-smb: an SMB 3.x client over SMB Direct (RDMA) on softndk"};
  app.set_version_flag("--version", softndk::tools::version_text("ndk-smb"));
  app.require_subcommand(1);
  Cli cli;
  app.add_option("server", cli.url, "//HOST[:PORT]/SHARE (PORT: 5445, SMB Direct over iWARP)")
      ->required();
  app.add_option("-U,--user", cli.user, "user name (NTLMv2)");
  app.add_option("-P,--password", cli.password, "password (or NDK_SMB_PASSWORD)");
  app.add_option("-W,--domain", cli.domain, "domain for NTLMv2 (default: none)");
  app.add_flag("--guest", cli.guest, "guest session (no password)");
  app.add_option("--vers", cli.vers, "dialect: 3.0, 3.0.2, 3.1.1 or any (default)");
  app.add_flag("--sign", cli.sign, "require signing (AES-CMAC)");
  app.add_flag("--strict-signing", cli.strict_signing,
               "refuse ksmbd's signature of RDMA READ responses (see the man page)");
  app.add_option("--channel", cli.channel,
                 "READ/WRITE data path: rdma-invalidate (default), rdma or inline");
  app.add_option("--threshold", cli.threshold_text,
                 "I/O up to this size goes inline on an RDMA channel (default 4k)");
  app.add_option("--bs", cli.bs_text, "I/O size (default 1M; capped by the server)");
  app.add_option("--iodepth", cli.iodepth, "I/Os in flight (default 4)");
  app.add_option("--timeout", cli.timeout_s, "seconds to wait for any answer (default 30)");
  app.add_option("--hot-spin-us", cli.hot_spin_us,
                 "while the server answers within this many microseconds, wait for its answer "
                 "without yielding the core for up to this long (default 20; 0: yield at once, "
                 "for a host where both ends share one core)")
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--local", cli.local, "local address or interface (adapter)");
  app.add_flag("--fr-register", cli.fr_register,
               "verbs backend on a device without type-2 memory windows (siw): fast register "
               "by registering each buffer anew (SOFTNDK_OPEN_FLAG_FR_REGISTER, a new token "
               "per I/O)");
  app.add_flag("--stats", cli.stats, "print the transfer counters on stderr at the end");
  auto* ls = app.add_subcommand("ls", "list a directory");
  ls->add_option("path", cli.path, "directory (default: the share's root)");
  auto* st = app.add_subcommand("stat", "show a file's size, type and times");
  st->add_option("path", cli.path)->required();
  auto* get = app.add_subcommand("get", "copy a remote file here");
  get->add_option("remote", cli.remote)->required();
  get->add_option("local", cli.local_file, "local file ('-': stdout; default: its name)");
  auto* put = app.add_subcommand("put", "copy a local file to the share");
  put->add_option("local", cli.local_file)->required();
  put->add_option("remote", cli.remote)->required();
  auto* bench = app.add_subcommand("bench", "load one remote file (fio vocabulary)");
  bench->add_option("remote", cli.remote)->required();
  bench->add_option("--rw", cli.bench.rw, "read, write, randread or randwrite (default read)");
  bench->add_option("--size", cli.size_text, "extent of the file to load (default 64M)");
  bench->add_option("--runtime", cli.bench.runtime_s, "seconds (default 5; 0: one pass)");
  bench->add_flag("--verify", cli.bench.verify, "write a pattern, check it on reads");
  bench->add_option("--seed", cli.bench.seed, "pattern seed (default 1)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  const std::string command = app.get_subcommands().front()->get_name();
  try {
    return run(cli, command);
  } catch (const ClientError& e) {
    std::fprintf(stderr, "ndk-smb: %s\n", e.what());
    return e.exit_code();
  } catch (const smbd::TransportError& e) {
    std::fprintf(stderr, "ndk-smb: SMB Direct: %s\n", e.what());
    return kExitTransport;
  } catch (const tools::ToolError& e) {
    std::fprintf(stderr, "ndk-smb: %s\n", e.what());
    return kExitTransport;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ndk-smb: %s\n", e.what());
    return kExitLocal;
  }
}
