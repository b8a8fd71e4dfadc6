// SPDX-License-Identifier: Apache-2.0
// smb_tools_e2e_test.cc - softndk <-> softndk on this host with the real
// tools (issue 29 item 6, "the plain suite"): ndk-smb run as a user runs it
// against ndk-smbd over 127.0.0.1, each as its own process. Every test runs
// twice: with the library's defaults (the same-host fast path, which the
// client's --stats must show) and with SOFTNDK_SAMEHOST=off (loopback TCP).
// Transfers are checked by a digest of the file on the server and of the
// copy read back; the counters of both tools show which channel carried the
// data; the error cases assert exit codes and messages; and a server that
// is killed (or stopped) mid-transfer ends the client with exit 3 and a
// reason within a bound, never a hang.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "proc.h"

namespace {

namespace fs = std::filesystem;
using tools_test::Proc;
using tools_test::ProcResult;
using Clock = std::chrono::steady_clock;

constexpr const char* kUser = "alice";
constexpr const char* kPassword = "E2e-secret-7";

// FNV-1a over a file's bytes: the digest compared between the source, the
// server's copy and the copy read back.
uint64_t digest(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  uint64_t h = 1469598103934665603ull;
  char buf[65536];
  while (f) {
    f.read(buf, sizeof buf);
    for (std::streamsize i = 0; i < f.gcount(); ++i) {
      h ^= uint8_t(buf[i]);
      h *= 1099511628211ull;
    }
  }
  return h;
}

void write_random(const fs::path& p, uint64_t size, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  std::vector<uint64_t> block(8192);
  uint64_t left = size;
  while (left > 0) {
    for (auto& w : block) w = rng();
    const uint64_t n = std::min<uint64_t>(left, block.size() * 8);
    f.write(reinterpret_cast<const char*>(block.data()), std::streamsize(n));
    left -= n;
  }
}

// The value of one key=value counter of ndk-smb's --stats line (-1: none).
int64_t stat_of(const std::string& err, const std::string& key) {
  const std::regex re("(^| )" + key + "=([0-9]+)");
  std::smatch m;
  if (!std::regex_search(err, m, re)) return -1;
  return std::stoll(m[2]);
}
std::string word_of(const std::string& err, const std::string& key) {
  const std::regex re("(^| )" + key + "=([^ \n]+)");
  std::smatch m;
  return std::regex_search(err, m, re) ? std::string(m[2]) : "";
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

class SmbTools : public ::testing::TestWithParam<const char*> {
 protected:
  bool samehost() const { return std::string(GetParam()) == "default"; }
  // Both tools get the library's defaults (SOFTNDK_SAMEHOST unset, as a
  // user's shell has it) or the TCP switch.
  std::vector<std::string> env() const {
    if (samehost()) return {"/usr/bin/env", "-u", "SOFTNDK_SAMEHOST"};
    return {"/usr/bin/env", "SOFTNDK_SAMEHOST=off"};
  }
  // The path --stats reports: TCP with the reason "disabled" when switched
  // off; by default the same-host path. Never "probing": ndk-smb waits
  // (bounded) for the rendezvous' verdict, however short the transfer.
  bool path_ok(const std::string& path) const {
    return samehost() ? path == "samehost" : path == "tcp/disabled";
  }

  void SetUp() override {
    char tmpl[] = "/tmp/smb_e2e_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    share_ = dir_ / "share";
    fs::create_directory(share_);
    std::ofstream(dir_ / "users.txt") << "# e2e\n" << kUser << ":" << kPassword << "\n";
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // ndk-smbd on a free port of 127.0.0.1, waited for until it listens
  // (/proc/net/tcp, bounded); another port if one was taken meanwhile.
  void start_server(const std::vector<std::string>& extra = {},
                    const std::vector<std::string>& server_env = {}) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = tools_test::free_port();
      std::vector<std::string> a = server_env.empty() ? env() : server_env;
      a.insert(a.end(),
               {NDK_SMBD_BIN, "--share", share_.string(), "--users", (dir_ / "users.txt").string(),
                "-p", std::to_string(port_), "-q", "--json", (dir_ / "server.json").string()});
      a.insert(a.end(), extra.begin(), extra.end());
      server_ = std::make_unique<Proc>(a);
      const auto t0 = Clock::now();
      while (since(t0) < 30) {
        if (tools_test::wait_tcp_listening(port_, 0.2)) return;
        if (server_->err_so_far().find("cannot listen") != std::string::npos) break;
      }
      server_.reset();
    }
    FAIL() << "ndk-smbd did not listen on 127.0.0.1";
  }
  // SIGTERM, its exit, its --json counters.
  nlohmann::json stop_server() {
    EXPECT_TRUE(server_->signal(SIGTERM));
    const ProcResult r = server_->wait(30);
    EXPECT_FALSE(r.timed_out) << "ndk-smbd did not stop within 30 s of SIGTERM";
    EXPECT_EQ(r.exit_code, 0) << r.err;
    server_.reset();
    try {
      std::ifstream f(dir_ / "server.json");
      return nlohmann::json::parse(f);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "ndk-smbd --json: " << e.what();
      return {};
    }
  }

  std::string url() const { return "//127.0.0.1:" + std::to_string(port_) + "/share"; }
  std::vector<std::string> client_argv(const std::vector<std::string>& args,
                                       const std::string& password = kPassword) const {
    std::vector<std::string> a = env();
    a.insert(a.end(), {NDK_SMB_BIN, "--stats", "-U", kUser, "-P", password});
    // Options before the URL, the command and its operands after it.
    size_t i = 0;
    for (; i < args.size(); ++i) {
      const std::string& w = args[i];
      if (w == "ls" || w == "stat" || w == "get" || w == "put" || w == "bench") break;
      a.push_back(w);
    }
    a.push_back(url());
    for (; i < args.size(); ++i) a.push_back(args[i]);
    return a;
  }
  ProcResult client(const std::vector<std::string>& args,
                    const std::string& password = kPassword) const {
    ProcResult r = tools_test::run(client_argv(args, password), 120);
    EXPECT_FALSE(r.timed_out) << "ndk-smb " << args.back() << " ran over 120 s";
    return r;
  }

  // put then get of a fresh file of `size` bytes; both checked by digest
  // (the server's copy and the one read back). Returns {put, get}.
  std::pair<ProcResult, ProcResult> roundtrip(const std::string& name, uint64_t size,
                                              const std::vector<std::string>& opts = {}) {
    const fs::path src = dir_ / (name + ".src"), back = dir_ / (name + ".back");
    write_random(src, size, uint32_t(size));
    std::vector<std::string> put = opts;
    put.insert(put.end(), {"put", src.string(), name});
    ProcResult p = client(put);
    EXPECT_EQ(p.exit_code, 0) << name << ": put\n" << p.err;
    EXPECT_EQ(fs::file_size(share_ / name), size) << name;
    EXPECT_EQ(digest(share_ / name), digest(src)) << name << ": the server's copy differs";
    std::vector<std::string> get = opts;
    get.insert(get.end(), {"get", name, back.string()});
    ProcResult g = client(get);
    EXPECT_EQ(g.exit_code, 0) << name << ": get\n" << g.err;
    EXPECT_EQ(fs::file_size(back), size) << name;
    EXPECT_EQ(digest(back), digest(src)) << name << ": the copy read back differs";
    for (const ProcResult* r : {&p, &g})
      EXPECT_TRUE(path_ok(word_of(r->err, "path"))) << name << ": " << r->err;
    return {p, g};
  }

  // Starts ndk-smbd --trace, runs ndk-smb with `args` until the server
  // traced `command` (e.g. "cmd 8 ": a READ), then ends the server: kKilled
  // (SIGKILL) or kStopped (SIGTERM: it closes its connections gracefully).
  // Checks that ndk-smb ended promptly with exit 3 naming the disconnect;
  // `r` gets what ndk-smb reported.
  enum class ServerEnd { kKilled, kStopped };
  void end_server_mid(const std::vector<std::string>& args, const std::string& command,
                      ServerEnd how, ProcResult* r) {
    start_server({"--trace"});
    Proc c(client_argv(args));
    ASSERT_TRUE(server_->wait_for_err(command, 60)) << "no '" << command << "' within 60 s\n"
                                                    << server_->err_so_far();
    if (how == ServerEnd::kKilled)
      server_->kill_now();
    else
      ASSERT_TRUE(server_->signal(SIGTERM));
    const auto t0 = Clock::now();
    *r = c.wait(60);
    const double took = since(t0);
    ASSERT_FALSE(r->timed_out) << "ndk-smb still ran 60 s after the server ended";
    EXPECT_EQ(r->exit_code, 3) << r->err;
    EXPECT_TRUE(std::regex_search(r->err, std::regex("ndk-smb: SMB Direct: .*disconnected")))
        << r->err;
    // Far below the client's answer timeout; a graceful stop takes up to
    // the server's 0.5 s receive poll.
    const double bound = how == ServerEnd::kKilled ? 15 : 10;
    EXPECT_LT(took, bound) << "ndk-smb took " << took << " s to end\n" << r->err;
    if (how == ServerEnd::kStopped) {
      const ProcResult s = server_->wait(30);
      EXPECT_FALSE(s.timed_out);
      server_.reset();
    }
  }

  fs::path dir_, share_;
  int port_ = 0;
  std::unique_ptr<Proc> server_;
};

// 1 B (inline: below the 4 KiB threshold), an odd size (one RDMA I/O) and
// 5 MiB + 11 B (five 1 MiB I/Os by RDMA, the 11-byte tail inline) with the
// default channel (RDMA_V1_INVALIDATE): the server's Send with Invalidate
// names each buffer; the server's own counters agree.
TEST_P(SmbTools, PutGetOneByteOddAndMultiMiBOverTheRdmaChannel) {
  start_server();
  auto [p1, g1] = roundtrip("one.bin", 1);
  EXPECT_EQ(stat_of(p1.err, "inline_writes"), 1) << p1.err;
  EXPECT_EQ(stat_of(p1.err, "rdma_writes"), 0) << p1.err;
  EXPECT_EQ(stat_of(g1.err, "inline_reads"), 1) << g1.err;
  auto [p2, g2] = roundtrip("odd.bin", 100003);
  EXPECT_EQ(stat_of(p2.err, "rdma_write_bytes"), 100003) << p2.err;
  EXPECT_EQ(stat_of(g2.err, "rdma_read_bytes"), 100003) << g2.err;
  EXPECT_EQ(stat_of(g2.err, "remote_invalidations"), 1) << g2.err;
  const uint64_t big = (5u << 20) + 11;
  auto [p3, g3] = roundtrip("big.bin", big);
  EXPECT_NE(p3.err.find("channel=rdma-invalidate "), std::string::npos) << p3.err;
  EXPECT_EQ(stat_of(p3.err, "rdma_writes"), 5) << p3.err;
  EXPECT_EQ(stat_of(p3.err, "rdma_write_bytes"), 5 << 20) << p3.err;
  EXPECT_EQ(stat_of(p3.err, "inline_writes"), 1) << p3.err;
  EXPECT_EQ(stat_of(p3.err, "remote_invalidations"), 5) << p3.err;
  EXPECT_EQ(stat_of(g3.err, "rdma_read_bytes"), 5 << 20) << g3.err;
  EXPECT_EQ(stat_of(g3.err, "remote_invalidations"), 5) << g3.err;
  EXPECT_EQ(stat_of(g3.err, "local_invalidations"), 0) << g3.err;
  const auto j = stop_server();
  ASSERT_TRUE(j.is_object());
  // WRITE data pulled by RDMA Read (1 + 5), READ data pushed by RDMA Write
  // (1 + 5), each answer a Send with Invalidate.
  EXPECT_EQ(j["rdma_reads"].get<uint64_t>(), 6u) << j.dump();
  EXPECT_EQ(j["rdma_writes"].get<uint64_t>(), 6u) << j.dump();
  EXPECT_EQ(j["send_invalidates"].get<uint64_t>(), 12u) << j.dump();
  EXPECT_EQ(j["bytes_written"].get<uint64_t>(), 1 + 100003 + big) << j.dump();
  EXPECT_EQ(j["connections"].get<uint64_t>(), 6u) << j.dump();
}

// RDMA_V1 (no remote invalidation): ndk-smb invalidates each buffer itself;
// dialect 3.0, which has no RDMA_V1_INVALIDATE, says so and does the same.
TEST_P(SmbTools, RdmaChannelWithoutInvalidate) {
  start_server();
  auto [p, g] = roundtrip("noinv.bin", (2u << 20) + 5, {"--channel", "rdma", "--bs", "256k"});
  EXPECT_NE(g.err.find("channel=rdma "), std::string::npos) << g.err;
  EXPECT_EQ(stat_of(g.err, "rdma_reads"), 8) << g.err;
  EXPECT_EQ(stat_of(g.err, "remote_invalidations"), 0) << g.err;
  EXPECT_EQ(stat_of(g.err, "local_invalidations"), 8) << g.err;
  EXPECT_EQ(stat_of(p.err, "local_invalidations"), 8) << p.err;
  auto [p30, g30] = roundtrip("v30.bin", (1u << 20) + 7, {"--vers", "3.0"});
  EXPECT_NE(p30.err.find("note: dialect 3.0 has no"), std::string::npos) << p30.err;
  EXPECT_NE(p30.err.find("dialect=3.0 "), std::string::npos) << p30.err;
  EXPECT_EQ(stat_of(g30.err, "rdma_read_bytes"), 1 << 20) << g30.err;
  EXPECT_EQ(stat_of(g30.err, "remote_invalidations"), 0) << g30.err;
  EXPECT_EQ(stat_of(g30.err, "local_invalidations"), 1) << g30.err;
  const auto j = stop_server();
  EXPECT_EQ(j["send_invalidates"].get<uint64_t>(), 0u) << j.dump();
}

// --stats names the adapter's engine and fast register mode; --fr-register
// (the verbs backend's degraded mode on siw, interop smb_vs_cifs) changes
// nothing where fast register is native: the software backend keeps its
// stable tokens and the server's remote invalidation.
TEST_P(SmbTools, FrRegisterIsNativeFastRegisterOnTheSoftwareBackend) {
  start_server();
  auto [p, g] = roundtrip("fr.bin", (2u << 20) + 3, {"--fr-register"});
  for (const ProcResult* r : {&p, &g}) {
    EXPECT_NE(r->err.find("ndk-smb: adapter: backend=iwarp-sw device=- fast_register=software"),
              std::string::npos)
        << r->err;
    EXPECT_EQ(stat_of(r->err, "remote_invalidations"), 2) << r->err;
    EXPECT_EQ(stat_of(r->err, "local_invalidations"), 0) << r->err;
  }
  stop_server();
}

// --channel inline: the data rides in the SMB2 messages (fragmented over SMB
// Direct); no RDMA I/O on either side. Then a signed session (AES-CMAC).
TEST_P(SmbTools, InlineChannelAndSignedSession) {
  start_server();
  auto [p, g] = roundtrip("inline.bin", (1u << 20) + 3, {"--channel", "inline"});
  EXPECT_EQ(stat_of(p.err, "rdma_writes"), 0) << p.err;
  EXPECT_GE(stat_of(p.err, "inline_writes"), 1) << p.err;
  EXPECT_EQ(stat_of(g.err, "rdma_reads"), 0) << g.err;
  EXPECT_GE(stat_of(g.err, "inline_reads"), 1) << g.err;
  auto [ps, gs] = roundtrip("signed.bin", (3u << 20) + 1, {"--sign"});
  EXPECT_NE(gs.err.find("signing=yes"), std::string::npos) << gs.err;
  EXPECT_GE(stat_of(gs.err, "signatures_verified"), 4) << gs.err;
  EXPECT_EQ(stat_of(gs.err, "rdma_read_bytes"), 3 << 20) << gs.err;
  const auto j = stop_server();
  EXPECT_EQ(j["rdma_reads"].get<uint64_t>(), 3u) << j.dump();
  EXPECT_EQ(j["rdma_writes"].get<uint64_t>(), 3u) << j.dump();
}

// SMB 3.1.1 (the default: both sides' greatest dialect): the preauth
// integrity hash over NEGOTIATE and SESSION_SETUP on both sides, the signing
// key derived from it, the final SESSION_SETUP response signed by the server
// and verified by the client (a wrong hash on either side fails the session
// with "bad signature"), the TREE_CONNECT signed both ways although the
// session does not sign; then every message signed with --sign. 3.0.2 is
// still chosen when the client offers only it, and a guest session at 3.1.1
// is not signed.
TEST_P(SmbTools, Dialect311PreauthIntegrityAndSigning) {
  start_server({"--guest"});
  auto [p, g] = roundtrip("v311.bin", (2u << 20) + 9, {"--vers", "3.1.1"});
  EXPECT_NE(p.err.find("dialect=3.1.1 signing=no guest=no"), std::string::npos) << p.err;
  EXPECT_EQ(stat_of(g.err, "signatures_verified"), 2) << g.err;  // SESSION_SETUP, TREE_CONNECT
  EXPECT_EQ(stat_of(g.err, "signed_sent"), 1) << g.err;          // TREE_CONNECT
  EXPECT_EQ(stat_of(g.err, "rdma_read_bytes"), 2 << 20) << g.err;
  auto [ps, gs] = roundtrip("v311s.bin", (1u << 20) + 1, {"--sign"});
  EXPECT_NE(gs.err.find("dialect=3.1.1 signing=yes"), std::string::npos) << gs.err;
  EXPECT_GE(stat_of(gs.err, "signatures_verified"), 4) << gs.err;
  auto [p2, g2] = roundtrip("v302.bin", 4099, {"--vers", "3.0.2", "--sign"});
  EXPECT_NE(g2.err.find("dialect=3.0.2 signing=yes"), std::string::npos) << g2.err;
  ProcResult bad = client({"--vers", "3.1.1", "ls"}, "not-the-password");
  EXPECT_EQ(bad.exit_code, 4) << bad.err;
  std::vector<std::string> ga = env();
  ga.insert(ga.end(), {NDK_SMB_BIN, "--stats", "--guest", "--vers", "3.1.1", url(), "ls"});
  ProcResult guest = tools_test::run(ga, 120);
  EXPECT_EQ(guest.exit_code, 0) << guest.err;
  EXPECT_NE(guest.err.find("dialect=3.1.1 signing=no guest=yes"), std::string::npos) << guest.err;
  const auto j = stop_server();
  EXPECT_EQ(j["logon_failures"].get<uint64_t>(), 1u) << j.dump();
  // Four user sessions and the guest at 3.1.1, two at 3.0.2.
  EXPECT_EQ(j["sessions"].get<uint64_t>(), 7u) << j.dump();
  EXPECT_EQ(j["sessions_311"].get<uint64_t>(), 5u) << j.dump();
  EXPECT_GT(j["signed_responses"].get<uint64_t>(), 8u) << j.dump();
  EXPECT_EQ(j["bad_signatures"].get<uint64_t>(), 0u) << j.dump();  // every request verified
}

TEST_P(SmbTools, LsAndStat) {
  std::ofstream(share_ / "a.txt") << "hello";
  fs::create_directory(share_ / "sub");
  write_random(share_ / "sub" / "b.bin", 4097, 3);
  start_server();
  ProcResult ls = client({"ls"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_TRUE(std::regex_search(ls.out, std::regex("(^|\n)- +5 [^ ]+ a\\.txt\n"))) << ls.out;
  EXPECT_TRUE(std::regex_search(ls.out, std::regex("(^|\n)d +[0-9]+ [^ ]+ sub\n"))) << ls.out;
  EXPECT_EQ(tools_test::count_lines(ls.out), 2) << ls.out;
  ProcResult sub = client({"ls", "sub"});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_TRUE(std::regex_search(sub.out, std::regex("- +4097 [^ ]+ b\\.bin\n"))) << sub.out;
  ProcResult st = client({"stat", "sub/b.bin"});
  ASSERT_EQ(st.exit_code, 0) << st.err;
  EXPECT_NE(st.out.find("type: file\nsize: 4097\n"), std::string::npos) << st.out;
  ProcResult sd = client({"stat", "sub"});
  ASSERT_EQ(sd.exit_code, 0) << sd.err;
  EXPECT_NE(sd.out.find("type: directory\n"), std::string::npos) << sd.out;
  EXPECT_TRUE(path_ok(word_of(st.err, "path"))) << st.err;
}

// The exit codes of docs/tools.md, each with the reason on stderr.
TEST_P(SmbTools, ErrorsEndWithTheirExitCodes) {
  start_server();
  ProcResult bad = client({"ls"}, "wrong-password");
  EXPECT_EQ(bad.exit_code, 4) << bad.err;
  EXPECT_NE(bad.err.find("refused the session"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("STATUS_LOGON_FAILURE"), std::string::npos) << bad.err;
  ProcResult missing = client({"get", "no-such-file", (dir_ / "x").string()});
  EXPECT_EQ(missing.exit_code, 6) << missing.err;
  EXPECT_NE(missing.err.find("STATUS_OBJECT_NAME_NOT_FOUND"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "x"));
  ProcResult nostat = client({"stat", "nothing-here"});
  EXPECT_EQ(nostat.exit_code, 6) << nostat.err;
  std::vector<std::string> a = env();
  a.insert(a.end(), {NDK_SMB_BIN, "-U", kUser, "-P", kPassword,
                     "//127.0.0.1:" + std::to_string(port_) + "/other", "ls"});
  ProcResult share = tools_test::run(a, 120);
  EXPECT_EQ(share.exit_code, 5) << share.err;
  EXPECT_NE(share.err.find("BAD_NETWORK_NAME"), std::string::npos) << share.err;
  const auto j = stop_server();
  EXPECT_EQ(j["logon_failures"].get<uint64_t>(), 1u) << j.dump();
  // Nobody listening any more: a transport error.
  ProcResult gone = client({"ls"});
  EXPECT_EQ(gone.exit_code, 3) << gone.err;
  EXPECT_NE(gone.err.find("ndk-smb: "), std::string::npos) << gone.err;
}

// A failure while connecting - the session refused, the share unknown -
// ends ndk-smb as promptly as it is known, with the user's --timeout 30:
// the teardown after it (the disconnect and every object's close) is
// bounded by ndk-smb's 3 s after-error limit, not by --timeout per object
// (issue 29): seen 0.01-0.1 s; the bound, 10 s, leaves room for a loaded
// CI host and stays far below one --timeout. Then the same against a
// server that stops answering (SIGSTOP) in the middle of the session
// setup: whichever step the stop
// catches (ndk-smb waiting for the AUTHENTICATE's answer: exit 3 after
// --timeout 3; or already refused: exit 4 with a teardown towards a server
// that never answers the disconnect: 2 s), it ends within --timeout + 7 s.
TEST_P(SmbTools, ErrorsWhileConnectingEndPromptly) {
  start_server({"--trace"});
  const auto timed = [&](const std::vector<std::string>& argv, double* took) {
    const auto t0 = Clock::now();
    ProcResult r = tools_test::run(argv, 120);
    *took = since(t0);
    EXPECT_FALSE(r.timed_out) << "ndk-smb ran over 120 s\n" << r.err;
    return r;
  };
  double took = 0;
  ProcResult bad = timed(client_argv({"--timeout", "30", "ls"}, "wrong-password"), &took);
  EXPECT_EQ(bad.exit_code, 4) << bad.err;
  EXPECT_NE(bad.err.find("STATUS_LOGON_FAILURE"), std::string::npos) << bad.err;
  EXPECT_LT(took, 10) << "a refused session took " << took << " s to end\n" << bad.err;
  std::vector<std::string> a = env();
  a.insert(a.end(), {NDK_SMB_BIN, "--timeout", "30", "-U", kUser, "-P", kPassword,
                     "//127.0.0.1:" + std::to_string(port_) + "/other", "ls"});
  ProcResult share = timed(a, &took);
  EXPECT_EQ(share.exit_code, 5) << share.err;
  EXPECT_NE(share.err.find("BAD_NETWORK_NAME"), std::string::npos) << share.err;
  EXPECT_LT(took, 10) << "an unknown share took " << took << " s to end\n" << share.err;
  // The server stopped once it has answered the first SESSION_SETUP
  // (NTLMSSP NEGOTIATE -> CHALLENGE; its trace line follows the answer).
  const size_t seen = server_->err_so_far().size();
  Proc c(client_argv({"--timeout", "3", "ls"}, "wrong-password"));
  const auto t0 = Clock::now();
  bool stopped = false;
  while (since(t0) < 60) {
    const std::string e = server_->err_so_far();
    if (e.find("cmd 1 mid 1 ", seen) != std::string::npos) {
      stopped = server_->signal(SIGSTOP);
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_TRUE(stopped) << "no SESSION_SETUP within 60 s\n" << server_->err_so_far();
  const auto t_stop = Clock::now();
  const ProcResult r = c.wait(60);
  took = since(t_stop);
  server_->signal(SIGCONT);
  ASSERT_FALSE(r.timed_out) << "ndk-smb still ran 60 s after the server stopped";
  if (r.exit_code == 3) {
    EXPECT_NE(r.err.find("no answer from the server within 3 s (waiting for SESSION_SETUP"),
              std::string::npos)
        << r.err;
  } else {
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("STATUS_LOGON_FAILURE"), std::string::npos) << r.err;
  }
  EXPECT_LT(took, 3 + 7) << "ndk-smb ended " << took << " s after the server stopped\n" << r.err;
}

// ndk-smbd killed (SIGKILL, by its pid) while a get of a 16 GiB (sparse)
// file runs, after its first READ: ndk-smb ends with exit 3 and says that
// the server went, within a bound far below its 30 s answer timeout.
TEST_P(SmbTools, ServerKilledMidGetEndsTheClientWithATransportError) {
  { std::ofstream f(share_ / "huge.bin"); }
  fs::resize_file(share_ / "huge.bin", 16ull << 30);
  ProcResult r;
  ASSERT_NO_FATAL_FAILURE(
      end_server_mid({"get", "huge.bin", "/dev/null"}, "cmd 8 ", ServerEnd::kKilled, &r));
  EXPECT_LT(stat_of(r.err, "rdma_read_bytes"), int64_t(16ull << 30)) << r.err;
}

// The same while ndk-smb writes (bench --rw write over an 8 MiB extent, so
// that the disk use stays bounded whatever the timing).
TEST_P(SmbTools, ServerKilledMidWriteEndsTheClientWithATransportError) {
  ProcResult r;
  ASSERT_NO_FATAL_FAILURE(
      end_server_mid({"bench", "load.bin", "--rw", "write", "--size", "8M", "--runtime", "60"},
                     "cmd 9 ", ServerEnd::kKilled, &r));
}

// A server that stops answering (SIGSTOP) mid-get: ndk-smb's --timeout
// bounds the wait, and the message says what it waited for. The message
// comes when the wait ends, before the teardown (whose graceful disconnect
// waits for a FIN the stopped server never sends): it used to be printed
// only after the teardown, 2 s later here and minutes later against a
// server whose objects never closed (issue 29).
TEST_P(SmbTools, ServerStoppedMidGetTimesOut) {
  { std::ofstream f(share_ / "huge.bin"); }
  fs::resize_file(share_ / "huge.bin", 16ull << 30);
  start_server({"--trace"});
  Proc c(client_argv({"--timeout", "3", "get", "huge.bin", "/dev/null"}));
  ASSERT_TRUE(server_->wait_for_err("cmd 8 ", 60)) << server_->err_so_far();
  ASSERT_TRUE(server_->signal(SIGSTOP));
  const auto t0 = Clock::now();
  // The 3 s wait started before the stop; 1.5 s of slack for a busy machine.
  const bool said = c.wait_for_err("no answer from the server", 60);
  const double said_after = since(t0);
  EXPECT_TRUE(said) << c.err_so_far();
  EXPECT_LT(said_after, 4.5) << "the message came " << said_after << " s after the stop\n"
                             << c.err_so_far();
  const ProcResult r = c.wait(60);
  const double took = since(t0);
  server_->signal(SIGCONT);
  ASSERT_FALSE(r.timed_out) << "ndk-smb still ran 60 s after the server stopped";
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("no answer from the server within 3 s (waiting for READ"), std::string::npos)
      << r.err;
  EXPECT_LT(took, 20) << r.err;
}

// ndk-smbd stopped (SIGTERM) while ndk-smb reads or writes through the
// RDMA channel: the server ends its connections gracefully (NdkDisconnect,
// a FIN, as ksmbd's shutdown does over siw), with READs (its RDMA Writes)
// or WRITEs (its RDMA Reads of our buffers) in flight. ndk-smb ends with
// exit 3 and names the disconnect, promptly: its waits (answers, credits,
// send slots, the RDMA channel's registrations) all end at the disconnect
// event, and the teardown after the error is bounded.
TEST_P(SmbTools, ServerClosingGracefullyMidGetEndsTheClientPromptly) {
  { std::ofstream f(share_ / "huge.bin"); }
  fs::resize_file(share_ / "huge.bin", 16ull << 30);
  ProcResult r;
  ASSERT_NO_FATAL_FAILURE(end_server_mid(
      {"--bs", "64k", "--iodepth", "2", "--timeout", "20", "get", "huge.bin", "/dev/null"},
      "cmd 8 ", ServerEnd::kStopped, &r));
  EXPECT_GT(stat_of(r.err, "rdma_reads"), 0) << r.err;
}

TEST_P(SmbTools, ServerClosingGracefullyMidPutEndsTheClientPromptly) {
  ProcResult r;
  ASSERT_NO_FATAL_FAILURE(
      end_server_mid({"--bs", "64k", "--iodepth", "2", "--timeout", "20", "bench", "load.bin",
                      "--rw", "write", "--size", "8M", "--runtime", "60"},
                     "cmd 9 ", ServerEnd::kStopped, &r));
}

// I/Os larger than one registration: with --bs 4M (ndk-smbd --max-io 4M)
// each of ndk-smb's buffers spans four fast-register MRs (the library's
// FRMRPageCount is 256 pages), so every READ and WRITE carries a list of
// four buffer descriptors, which the server walks; the data round-trips by
// digest and the server's counter shows the lists.
TEST_P(SmbTools, FourMiBIosCarryDescriptorLists) {
  start_server({"--max-io", "4194304"});
  const uint64_t size = (9u << 20) + 3;  // two 4 MiB I/Os, one of 1 MiB + 3 B
  auto [p, g] = roundtrip("lists.bin", size, {"--bs", "4M"});
  EXPECT_EQ(stat_of(p.err, "io_size"), 4 << 20) << p.err;
  EXPECT_EQ(stat_of(p.err, "rdma_writes"), 3) << p.err;
  EXPECT_EQ(stat_of(g.err, "rdma_reads"), 3) << g.err;
  // The reply invalidates each I/O's first descriptor; ndk-smb the others.
  EXPECT_EQ(stat_of(g.err, "remote_invalidations"), 3) << g.err;
  EXPECT_EQ(stat_of(g.err, "local_invalidations"), 3 + 3 + 1) << g.err;
  const auto j = stop_server();
  ASSERT_TRUE(j.is_object());
  // 4 + 4 + 2 descriptors each way (the last I/O spans two MRs).
  EXPECT_EQ(j["rdma_descriptors"].get<uint64_t>(), 20u) << j.dump();
  EXPECT_EQ(j["send_invalidates"].get<uint64_t>(), 6u) << j.dump();
}

// Only one side has the same-host path switched off (issue 29): the client
// reports the path its data really took once the transfer is over. The
// default client meeting a server with SOFTNDK_SAMEHOST=off stays on TCP
// because no peer answers the rendezvous ("tcp/no-peer"); it used to say
// "probing" when the transfer ended before the library gave up (2 s). The
// switched-off client meeting a default server says "tcp/disabled". Both
// with a 1-byte put, the shortest transfer there is.
TEST_P(SmbTools, OneSideOffReportsTheTcpPathNotProbing) {
  // The server gets the other setting than the client.
  start_server({}, samehost() ? std::vector<std::string>{"/usr/bin/env", "SOFTNDK_SAMEHOST=off"}
                              : std::vector<std::string>{"/usr/bin/env", "-u", "SOFTNDK_SAMEHOST"});
  const fs::path src = dir_ / "tiny.src";
  write_random(src, 1, 1);
  ProcResult p = client({"put", src.string(), "tiny.bin"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(digest(share_ / "tiny.bin"), digest(src));
  EXPECT_EQ(word_of(p.err, "path"), samehost() ? "tcp/no-peer" : "tcp/disabled") << p.err;
  // A whole multi-MiB transfer by the RDMA channel says the same.
  const fs::path big = dir_ / "big.src";
  write_random(big, 3u << 20, 2);
  ProcResult q = client({"put", big.string(), "big.bin"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(stat_of(q.err, "rdma_write_bytes"), 3 << 20) << q.err;
  EXPECT_EQ(word_of(q.err, "path"), samehost() ? "tcp/no-peer" : "tcp/disabled") << q.err;
}

INSTANTIATE_TEST_SUITE_P(Path, SmbTools, ::testing::Values("default", "off"), [](const auto& info) {
  return std::string(info.param) == "default" ? "Samehost" : "Tcp";
});

}  // namespace
