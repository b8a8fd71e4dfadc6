// SPDX-License-Identifier: Apache-2.0
// sample_test.cc - the sample NDK consumer driver (wdk/sample, ndksock.so)
// run by softndk-wdk-run: a server and a client instance, each its own
// process, over loopback and across two network namespaces; both must
// exit 0 after verifying every byte (the driver checks the data and turns
// a mismatch into a failing status).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "util/free_port.h"
#include "util/netns.h"

extern char** environ;

namespace {

namespace ns = softndk::test::netns;

// A launcher process with its stderr (DbgPrint) in a file.
class Driver {
 public:
  Driver(const std::vector<std::string>& prefix, const std::vector<std::string>& args,
         const char* driver = NDKSOCK_SO, const std::vector<std::string>& options = {}) {
    log_ = ::testing::TempDir() + "ndksock-" + std::to_string(::getpid()) + "-" +
           std::to_string(counter_++) + ".log";
    std::vector<std::string> argv = prefix;
    argv.insert(argv.end(), {WDK_RUN, driver});
    argv.insert(argv.end(), options.begin(), options.end());
    argv.push_back("--");
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& s : argv) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawnp(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Driver() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  std::string output() const {
    std::ifstream f(log_);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  // Waits for `text` in the output while the process runs.
  bool wait_for(const std::string& text, int ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      if (output().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // The exit status, or -1 (killed) after `ms`.
  int wait_exit(int ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (pid_ > 0) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      if (std::chrono::steady_clock::now() > end) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  bool started() const { return pid_ > 0; }

 private:
  static inline int counter_ = 0;
  pid_t pid_ = -1;
  std::string log_;
};

int free_port() { return test_util::free_port_below_ephemeral(); }

void run_pair(const std::vector<std::string>& server_prefix,
              const std::vector<std::string>& server_args,
              const std::vector<std::string>& client_prefix,
              const std::vector<std::string>& client_args) {
  Driver server(server_prefix, server_args);
  ASSERT_TRUE(server.started());
  ASSERT_TRUE(server.wait_for("server listening", 15000)) << server.output();
  Driver client(client_prefix, client_args);
  ASSERT_TRUE(client.started());
  int client_rc = client.wait_exit(60000);
  int server_rc = server.wait_exit(30000);
  EXPECT_EQ(client_rc, 0) << client.output();
  EXPECT_EQ(server_rc, 0) << server.output();
  EXPECT_NE(client.output().find("client done, data verified"), std::string::npos)
      << client.output();
  EXPECT_NE(server.output().find("server done, data verified"), std::string::npos)
      << server.output();
}

TEST(NdksockSample, ServerAndClientOverLoopback) {
  std::string port = std::to_string(free_port());
  run_pair({}, {"server", "lo", "127.0.0.1", port}, {},
           {"client", "lo", "127.0.0.1", "127.0.0.1", port});
}

// Every create and close pends (SOFTNDK_WDK_OPEN_FLAGS=3, as a Windows
// provider may choose): the sample's waits on its completions are used.
TEST(NdksockSample, ServerAndClientWithPendingCreatesAndCloses) {
  setenv("SOFTNDK_WDK_OPEN_FLAGS", "3", 1);
  std::string port = std::to_string(free_port());
  run_pair({}, {"server", "lo", "127.0.0.1", port}, {},
           {"client", "lo", "127.0.0.1", "127.0.0.1", port});
  unsetenv("SOFTNDK_WDK_OPEN_FLAGS");
}

TEST(NdksockSample, ServerAndClientInTwoNamespaces) {
  if (!ns::available()) GTEST_SKIP() << "needs root/CAP_NET_ADMIN and ip (network namespaces)";
  ns::NetNs a, b;
  ns::Veth v(a, b);
  ASSERT_TRUE(a.ok() && b.ok() && v.ok());
  ASSERT_TRUE(v.addr_a("10.231.0.1/24"));
  ASSERT_TRUE(v.addr_b("10.231.0.2/24"));
  run_pair({"ip", "netns", "exec", a.name()}, {"server", v.a(), "10.231.0.1", "5011"},
           {"ip", "netns", "exec", b.name()},
           {"client", v.b(), "10.231.0.2", "10.231.0.1", "5011"});
}

// softndk-wdk-run --pcap: every adapter the server opens is traced (FILE,
// FILE.2, ...), and the connection's MPA exchange and FPDUs are in them.
TEST(NdksockSample, PcapRecordsTheAdaptersTraffic) {
  std::string port = std::to_string(free_port());
  std::string pcap = ::testing::TempDir() + "ndksock-" + std::to_string(::getpid()) + ".pcap";
  Driver server({}, {"server", "lo", "127.0.0.1", port}, NDKSOCK_SO, {"--pcap", pcap});
  ASSERT_TRUE(server.wait_for("server listening", 15000)) << server.output();
  Driver client({}, {"client", "lo", "127.0.0.1", "127.0.0.1", port});
  EXPECT_EQ(client.wait_exit(60000), 0) << client.output();
  EXPECT_EQ(server.wait_exit(30000), 0) << server.output();
  std::string log = server.output();
  std::string all;
  int files = 0;
  for (size_t at = log.find("-> "); at != std::string::npos; at = log.find("-> ", at + 3)) {
    std::string path = log.substr(at + 3, log.find('\n', at) - at - 3);
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    std::string bytes = s.str();
    ASSERT_GE(bytes.size(), 24u) << path;
    EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0xd4) << path;  // pcap magic, little endian
    EXPECT_EQ(static_cast<unsigned char>(bytes[3]), 0xa1) << path;
    all += bytes;
    files++;
    std::remove(path.c_str());
  }
  EXPECT_GE(files, 1) << log;
  EXPECT_NE(all.find("MPA ID Req Frame"), std::string::npos) << log;
  EXPECT_NE(all.find("MPA ID Rep Frame"), std::string::npos) << log;
}

// softndk-wdk-run --trace: the NDK calls with arguments and NTSTATUS, the
// callbacks and completions, each with thread and IRQL.
TEST(NdksockSample, TraceRecordsCallsAndCallbacks) {
  std::string port = std::to_string(free_port());
  std::string trace = ::testing::TempDir() + "ndksock-" + std::to_string(::getpid()) + ".trace";
  Driver server({}, {"server", "lo", "127.0.0.1", port});
  ASSERT_TRUE(server.wait_for("server listening", 15000)) << server.output();
  Driver client({}, {"client", "lo", "127.0.0.1", "127.0.0.1", port}, NDKSOCK_SO,
                {"--trace", trace});
  EXPECT_EQ(client.wait_exit(60000), 0) << client.output();
  EXPECT_EQ(server.wait_exit(30000), 0) << server.output();
  std::ifstream f(trace);
  std::stringstream s;
  s << f.rdbuf();
  std::string t = s.str();
  std::remove(trace.c_str());
  EXPECT_NE(t.find("call NdkCreateCq(0x"), std::string::npos) << t.substr(0, 2000);
  EXPECT_NE(t.find("return NdkConnect -> 0x"), std::string::npos) << t.substr(0, 2000);
  EXPECT_TRUE(t.find("call NdkRead(") != std::string::npos ||
              t.find("call NdkWrite(") != std::string::npos ||
              t.find("call NdkSend(") != std::string::npos)
      << t.substr(0, 2000);
  EXPECT_NE(t.find("irql=2 callback"), std::string::npos) << t.substr(0, 2000);
  EXPECT_NE(t.find("call NdkCloseQp("), std::string::npos) << t.substr(0, 2000);
  EXPECT_NE(t.find("tid="), std::string::npos);
}

// A --pcap path that cannot be created is refused before the driver runs.
TEST(NdksockSample, PcapPathIsCheckedUpFront) {
  Driver d({}, {"server", "lo", "127.0.0.1", "1"}, NDKSOCK_SO, {"--pcap", "/nonexistent/x.pcap"});
  EXPECT_EQ(d.wait_exit(20000), 64) << d.output();
  EXPECT_NE(d.output().find("--pcap /nonexistent/x.pcap"), std::string::npos) << d.output();
}

TEST(NdksockSample, BadArgumentsFailCleanly) {
  Driver d({}, {"sideways", "lo"});
  ASSERT_TRUE(d.started());
  int rc = d.wait_exit(20000);
  EXPECT_NE(rc, 0) << d.output();
  EXPECT_NE(rc, -1) << d.output();  // exited by itself
  EXPECT_NE(d.output().find("usage"), std::string::npos) << d.output();
}

// The unload leak check names what a driver left open, per kind, and the
// host says so with its exit status.
TEST(NdkUnloadLeaks, ReportedPerObjectWithTheHostsExitStatus) {
  Driver d({}, {}, LEAKY_SO);
  ASSERT_TRUE(d.started());
  EXPECT_EQ(d.wait_exit(30000), 3) << d.output();  // 3: checker reports
  std::string out = d.output();
  EXPECT_NE(out.find("a WSK registration was not deregistered"), std::string::npos) << out;
  EXPECT_NE(out.find("NDK adapter"), std::string::npos) << out;
  EXPECT_NE(out.find("NDK CQ"), std::string::npos) << out;
}

}  // namespace
