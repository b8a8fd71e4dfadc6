// SPDX-License-Identifier: Apache-2.0
// host_e2e_test.cc - ndk-nvme (the host) against ndk-nvmet (the target),
// both softndk, as separate processes: over loopback, and across two
// network namespaces joined by a veth pair. What a user sees: exit codes,
// JSON reports, and the bytes in the target's file namespace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pattern.h"
#include "proc.h"
#include "util/netns.h"

namespace {

using json = nlohmann::json;
constexpr const char* kNqn = "nqn.2026-11.org.softndk:host-e2e";
constexpr uint64_t kFileBytes = 8 << 20;

// posix_spawn takes a path: where `ip` lives here.
std::string ip_path() { return softndk::test::netns::sh_out("command -v ip"); }

struct HostRun {
  int rc = -1;
  json doc;
  std::string out, err;
};

class HostE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/nvmf-host-e2e-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(system(("mkdir -p " + dir_).c_str()), 0);
    img_ = dir_ + "/ns2.img";
    { std::ofstream f(img_); }
    ASSERT_EQ(::truncate(img_.c_str(), off_t(kFileBytes)), 0);
    port_ = tools_test::free_port();
  }
  void TearDown() override {
    target_.reset();
    (void)!system(("rm -rf " + dir_).c_str());
  }
  // Namespace 1: 16 MiB of RAM; namespace 2: the file.
  void start_target(const std::vector<std::string>& extra = {}, const std::string& prefix = "",
                    const std::string& addr = "127.0.0.1") {
    std::vector<std::string> argv;
    if (!prefix.empty()) argv = {ip_path(), "netns", "exec", prefix};
    for (const std::string& a :
         {std::string(NDK_NVMET), std::string("-a"), addr, std::string("-p"), std::to_string(port_),
          std::string("-n"), std::string(kNqn), std::string("--ns"), std::string("ram:16M"),
          std::string("--ns"), "file:" + img_, std::string("--allow-any-host"),
          std::string("--duration"), std::string("120")})
      argv.push_back(a);
    argv.insert(argv.end(), extra.begin(), extra.end());
    target_ = std::make_unique<tools_test::Proc>(argv);
  }
  HostRun host(std::vector<std::string> args, double secs = 60, const std::string& prefix = "",
               const std::string& addr = "127.0.0.1") {
    std::vector<std::string> argv;
    if (!prefix.empty()) argv = {ip_path(), "netns", "exec", prefix};
    for (const std::string& a :
         {std::string(NDK_NVME), std::string("-a"), addr, std::string("-s"), std::to_string(port_)})
      argv.push_back(a);
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = tools_test::run(argv, secs);
    HostRun out{r.exit_code, json(), r.out, r.err};
    try {
      if (!r.out.empty() && r.out[0] == '{') out.doc = json::parse(r.out);
    } catch (const std::exception&) {
    }
    return out;
  }
  // Waits until the target accepts a controller (identify succeeds).
  void wait_ready(const std::string& prefix = "", const std::string& addr = "127.0.0.1") {
    for (int i = 0; i < 50; ++i) {
      HostRun r = host({"-n", kNqn, "--json", "identify"}, 20, prefix, addr);
      if (r.rc == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    FAIL() << "the target never served";
  }
  std::vector<uint8_t> file_bytes(uint64_t off, size_t n) {
    std::vector<uint8_t> b(n);
    std::ifstream f(img_, std::ios::binary);
    f.seekg(std::streamoff(off));
    f.read(reinterpret_cast<char*>(b.data()), std::streamsize(n));
    return b;
  }

  std::string dir_, img_;
  int port_ = 0;
  std::unique_ptr<tools_test::Proc> target_;
};

TEST_F(HostE2e, IdentifyShowsBothNamespacesAndTheController) {
  start_target();
  wait_ready();
  HostRun r = host({"-n", kNqn, "--json", "identify"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.doc["subnqn"], kNqn);
  ASSERT_EQ(r.doc["namespaces"].size(), 2u) << r.out;
  EXPECT_EQ(r.doc["namespaces"][0]["nsze"].get<uint64_t>() *
                r.doc["namespaces"][0]["lba_size"].get<uint64_t>(),
            16u << 20);
  EXPECT_EQ(r.doc["namespaces"][1]["nsze"].get<uint64_t>() *
                r.doc["namespaces"][1]["lba_size"].get<uint64_t>(),
            kFileBytes);
  EXPECT_EQ(r.doc["mpa_crc"], false);  // host-local: no CRC by default
  HostRun d = host({"--json", "discover"});
  ASSERT_EQ(d.rc, 0) << d.err;
  bool listed = false;
  for (const auto& e : d.doc["records"]) listed |= e["subnqn"] == kNqn && e["trtype"] == "rdma";
  EXPECT_TRUE(listed) << d.out;
}

// 128 KiB commands (keyed SGLs, remote invalidation) into the file
// namespace: the file holds the pattern afterwards, a read verifies it and
// a read with another seed does not.
TEST_F(HostE2e, WriteLandsInTheFileAndReadsVerify) {
  start_target();
  wait_ready();
  HostRun w = host({"-n", kNqn, "--json", "write", "--nsid", "2", "--lba", "64", "--blocks", "2048",
                    "--bs", "128k", "--iodepth", "4", "--seed", "11"});
  ASSERT_EQ(w.rc, 0) << w.err;
  const json& wj = w.doc["jobs"][0];
  EXPECT_EQ(wj["write"]["io_bytes"], 2048u * 512);
  EXPECT_GT(wj["remote_invalidations"].get<uint64_t>(), 0u);
  EXPECT_EQ(wj["local_invalidations"], 0u);
  auto bytes = file_bytes(64 * 512, 2048 * 512);
  std::string why;
  EXPECT_TRUE(nvmf::host::check_pattern(bytes.data(), 64, 2048, 512, 11, &why)) << why;
  EXPECT_EQ(file_bytes(0, 64 * 512), std::vector<uint8_t>(64 * 512, 0)) << "wrote before the LBA";

  HostRun r = host({"-n", kNqn, "--json", "read", "--nsid", "2", "--lba", "64", "--blocks", "2048",
                    "--bs", "64k", "--iodepth", "8", "--seed", "11"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.doc["jobs"][0]["verify_errors"], 0u);
  HostRun bad =
      host({"-n", kNqn, "read", "--nsid", "2", "--lba", "64", "--blocks", "8", "--seed", "12"});
  EXPECT_EQ(bad.rc, 5) << bad.err;
  EXPECT_NE(bad.err.find("verify: LBA 64"), std::string::npos) << bad.err;
}

TEST_F(HostE2e, SmallWritesGoInTheCapsuleUnlessForbidden) {
  start_target();
  wait_ready();
  HostRun w = host({"-n", kNqn, "--json", "write", "--lba", "0", "--blocks", "256", "--bs", "4k",
                    "--iodepth", "8", "--seed", "3"});
  ASSERT_EQ(w.rc, 0) << w.err;
  EXPECT_GE(w.doc["jobs"][0]["in_capsule_writes"].get<uint64_t>(), 32u);
  HostRun n = host({"-n", kNqn, "--no-inline", "--json", "write", "--lba", "256", "--blocks", "256",
                    "--bs", "4k", "--seed", "3"});
  ASSERT_EQ(n.rc, 0) << n.err;
  EXPECT_EQ(n.doc["jobs"][0]["in_capsule_writes"], 0u);
  HostRun r =
      host({"-n", kNqn, "read", "--lba", "0", "--blocks", "512", "--bs", "16k", "--seed", "3"});
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST_F(HostE2e, WithoutRemoteInvalidationTheHostInvalidates) {
  start_target();
  wait_ready();
  HostRun w = host({"-n", kNqn, "--no-invalidate", "--json", "write", "--lba", "0", "--blocks",
                    "64", "--bs", "8k", "--seed", "5"});
  ASSERT_EQ(w.rc, 0) << w.err;
  EXPECT_EQ(w.doc["jobs"][0]["remote_invalidations"], 0u);
  EXPECT_GT(w.doc["jobs"][0]["local_invalidations"].get<uint64_t>(), 0u);
  HostRun r = host({"-n", kNqn, "--no-invalidate", "read", "--lba", "0", "--blocks", "64", "--bs",
                    "8k", "--seed", "5"});
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST_F(HostE2e, LoadWithVerifyOnTwoQueues) {
  start_target();
  wait_ready();
  HostRun l = host({"-n", kNqn, "--json", "load", "--rw", "randrw", "--bs", "4k", "--iodepth", "8",
                    "--queues", "2", "--size", "4M", "--runtime", "2", "--verify", "--seed", "9"});
  ASSERT_EQ(l.rc, 0) << l.err;
  ASSERT_EQ(l.doc["jobs"].size(), 2u);
  EXPECT_EQ(l.doc["jobs"][0]["write"]["io_bytes"], 4u << 20);  // the prefill
  const json& j = l.doc["jobs"][1];
  EXPECT_GT(j["read"]["total_ios"].get<uint64_t>(), 100u);
  EXPECT_GT(j["write"]["total_ios"].get<uint64_t>(), 100u);
  EXPECT_EQ(j["verify_errors"], 0u);
  EXPECT_GT(j["read"]["clat_ns"]["percentile"]["99.000000"].get<double>(), 0);
  EXPECT_LE(j["read"]["clat_ns"]["min"].get<double>(),
            j["read"]["clat_ns"]["percentile"]["50.000000"].get<double>());
}

TEST_F(HostE2e, MpaCrcOnAndOff) {
  start_target();
  wait_ready();
  for (const char* crc : {"on", "off"}) {
    HostRun w = host({"-n", kNqn, "--crc", crc, "--json", "write", "--lba", "100", "--blocks",
                      "512", "--bs", "32k", "--iodepth", "4", "--seed", "21"});
    ASSERT_EQ(w.rc, 0) << crc << ": " << w.err;
    EXPECT_EQ(w.doc["mpa_crc"], std::string(crc) == "on") << crc;
    HostRun r = host({"-n", kNqn, "--crc", crc, "--json", "read", "--lba", "100", "--blocks", "512",
                      "--bs", "32k", "--iodepth", "4", "--seed", "21"});
    EXPECT_EQ(r.rc, 0) << crc << ": " << r.err;
    EXPECT_EQ(r.doc["mpa_crc"], std::string(crc) == "on") << crc;
  }
}

TEST_F(HostE2e, TheTargetsErrorsReachTheUserWithTheirExitCodes) {
  start_target({"--queue-depth", "16"});
  wait_ready();
  // 16 MiB of 512-byte blocks: LBA 32768 is one past the end.
  HostRun past = host({"-n", kNqn, "read", "--lba", "32768", "--blocks", "1"});
  EXPECT_EQ(past.rc, 4) << past.err;
  EXPECT_NE(past.err.find("LBA Out of Range"), std::string::npos) << past.err;
  HostRun straddle = host({"-n", kNqn, "write", "--lba", "32760", "--blocks", "16", "--bs", "8k"});
  EXPECT_EQ(straddle.rc, 4) << straddle.err;
  HostRun nqn = host({"-n", "nqn.2026-11.org.softndk:nobody", "connect"});
  EXPECT_EQ(nqn.rc, 3) << nqn.err;
  EXPECT_NE(nqn.err.find("Connect"), std::string::npos) << nqn.err;
  // A queue larger than the target allows (CAP.MQES).
  HostRun deep = host({"-n", kNqn, "load", "--iodepth", "64", "--runtime", "1"});
  EXPECT_EQ(deep.rc, 2) << deep.err;
  EXPECT_NE(deep.err.find("CAP.MQES"), std::string::npos) << deep.err;
  HostRun none = host({"-n", kNqn, "read", "--nsid", "9", "--lba", "0"});
  EXPECT_EQ(none.rc, 2) << none.err;
  // The target still serves.
  HostRun ok = host({"-n", kNqn, "write", "--lba", "0", "--blocks", "8"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

TEST_F(HostE2e, TargetGoneMidLoadEndsTheHostWithExit7) {
  start_target();
  wait_ready();
  std::vector<std::string> argv = {
      NDK_NVME, "-a",       "127.0.0.1", "-s", std::to_string(port_), "-n", kNqn,        "load",
      "--rw",   "randread", "--iodepth", "4",  "--runtime",           "20", "--timeout", "5"};
  tools_test::Proc h(argv);
  // Mid-load: the host's first progress line (a second into the load)
  // says its I/O runs; a fixed 1.5 s could end the target before a slow
  // (ASan, busy host) host had even connected.
  ASSERT_TRUE(h.wait_for_err("ndk-nvme: load ", 60)) << h.err_so_far();
  target_->kill_now();
  auto r = h.wait(30);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 7) << r.err;
}

// ndk-nvmet resets its keep-alive timer on any command, so I/O alone keeps
// an association alive: count the host's Keep Alives in the target's
// admin command counter instead (KATO 1 s: one every 0.5 s; KATO 0: none).
TEST_F(HostE2e, KeepAliveEveryHalfKato) {
  auto admin_commands = [&](const char* kato) -> int64_t {
    const std::string stats = dir_ + "/stats-" + kato + ".json";
    start_target({"--json", stats});
    wait_ready();
    HostRun l = host(
        {"-n", kNqn, "-k", kato, "load", "--rw", "randread", "--iodepth", "1", "--runtime", "3"});
    EXPECT_EQ(l.rc, 0) << l.err;
    EXPECT_TRUE(target_->signal(SIGTERM));
    auto r = target_->wait(20);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::ifstream f(stats);
    json j = json::parse(f, nullptr, false);
    if (j.is_discarded()) {
      ADD_FAILURE() << "no stats in " << stats;
      return -1;
    }
    EXPECT_EQ(j["kato_expired"], 0);
    return j["admin_commands"].get<int64_t>();
  };
  const int64_t with = admin_commands("1");
  const int64_t without = admin_commands("0");
  // ~6 in 3 s; the clock of a loaded machine may lose one or two.
  EXPECT_GE(with - without, 4) << "with KATO 1 s: " << with << ", without: " << without;
  EXPECT_LE(with - without, 8) << "with KATO 1 s: " << with << ", without: " << without;
}

TEST_F(HostE2e, AcrossTwoNetworkNamespaces) {
  namespace ns = softndk::test::netns;
  if (!ns::available()) GTEST_SKIP() << "needs root/CAP_NET_ADMIN and ip";
  ns::NetNs a, b;
  ASSERT_TRUE(a.ok() && b.ok());
  ns::Veth v(a, b);
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v.addr_a("10.201.7.1/24"));
  ASSERT_TRUE(v.addr_b("10.201.7.2/24"));
  // Off-host, softndk asks for CRC by default: the target only gives it
  // when asked, so the host's --crc decides.
  start_target({"--crc", "off"}, a.name(), "10.201.7.1");
  wait_ready(b.name(), "10.201.7.1");
  for (const char* crc : {"off", "on"}) {
    HostRun w = host({"-n", kNqn, "--crc", crc, "--json", "write", "--nsid", "2", "--lba", "0",
                      "--blocks", "1024", "--bs", "64k", "--iodepth", "4", "--seed", "77"},
                     60, b.name(), "10.201.7.1");
    ASSERT_EQ(w.rc, 0) << crc << ": " << w.err;
    EXPECT_EQ(w.doc["mpa_crc"], std::string(crc) == "on");
    HostRun l =
        host({"-n",     kNqn,   "--crc",     crc,  "--json",    "load",   "--rw",     "randread",
              "--nsid", "2",    "--bs",      "4k", "--iodepth", "8",      "--queues", "2",
              "--size", "512k", "--runtime", "1",  "--verify",  "--seed", "77"},
             60, b.name(), "10.201.7.1");
    EXPECT_EQ(l.rc, 0) << crc << ": " << l.err;
  }
  auto bytes = file_bytes(0, 1024 * 512);
  std::string why;
  EXPECT_TRUE(nvmf::host::check_pattern(bytes.data(), 0, 1024, 512, 77, &why)) << why;
}

}  // namespace
