// SPDX-License-Identifier: Apache-2.0
// link_test.cc - the impaired link itself, with plain TCP sockets: each
// impairment does what it says and TCP still delivers (or, for corruption
// with the checksum fixed up, delivers the damage).
#include "impair/link.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <future>
#include <thread>
#include <vector>

namespace softndk::test::impair {
namespace {

using namespace std::chrono_literals;

sockaddr_in addr_of(const std::string& ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

// Sends `data` from namespace A to a listener in B over the link; returns
// what B received (bounded by SO_RCVTIMEO/SO_SNDTIMEO of `timeout`).
std::vector<uint8_t> transfer(ImpairedLink& l, const std::vector<uint8_t>& data,
                              std::chrono::seconds timeout = 20s) {
  constexpr uint16_t kPort = 7777;
  std::promise<void> listening;
  std::vector<uint8_t> got;
  timeval tv{static_cast<time_t>(timeout.count()), 0};
  std::thread server([&] {
    l.run_in_b([&] {
      int s = ::socket(AF_INET, SOCK_STREAM, 0);
      int one = 1;
      setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      auto a = addr_of(l.addr_b(), kPort);
      bool ok = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(s, 1) == 0;
      setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      listening.set_value();
      int c = ok ? ::accept(s, nullptr, nullptr) : -1;
      if (c >= 0) {
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        uint8_t buf[65536];
        ssize_t n;
        while ((n = ::recv(c, buf, sizeof buf, 0)) > 0) got.insert(got.end(), buf, buf + n);
        ::close(c);
      }
      ::close(s);
    });
  });
  listening.get_future().wait();
  l.run_in_a([&] {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    auto a = addr_of(l.addr_b(), kPort);
    if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      size_t off = 0;
      while (off < data.size()) {
        ssize_t n = ::send(s, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
    }
    ::close(s);  // FIN after the data: the server's recv loop ends
  });
  server.join();
  return got;
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + (i >> 9));
  return v;
}

class ImpairLink : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    link_ = ImpairedLink::create(net_++, &why, 42);
    if (!link_) GTEST_SKIP() << why;
  }
  static inline int net_ = 181;  // 10.181.0.0/24 onwards, one per test
  std::unique_ptr<ImpairedLink> link_;
};

TEST_F(ImpairLink, ForwardsCleanlyWithoutImpairment) {
  auto data = pattern(256 * 1024);
  EXPECT_EQ(transfer(*link_, data), data);
  auto c = link_->counters();
  EXPECT_GT(c.forwarded, 10u);
  EXPECT_EQ(c.corrupted, 0u);
  EXPECT_EQ(c.duplicated, 0u);
  EXPECT_EQ(c.reordered, 0u);
}

TEST_F(ImpairLink, TcpDeliversThroughLossJitterAndDuplicates) {
  Impairment imp;
  imp.loss = 0.02;
  imp.delay = 200us;
  imp.jitter = 1500us;
  imp.duplicate = 0.02;
  link_->set(imp);
  auto data = pattern(1024 * 1024);
  EXPECT_EQ(transfer(*link_, data), data);
  auto c = link_->counters();
  EXPECT_GT(c.dropped, 0u);
  EXPECT_GT(c.duplicated, 0u);
  EXPECT_GT(c.reordered, 0u);
}

// The point of the fixture: a flipped payload byte with the checksum fixed
// up reaches the application. TCP cannot tell.
TEST_F(ImpairLink, CorruptionPassesTcp) {
  Impairment imp;
  imp.corrupt = 1.0;
  imp.corrupt_max = 1;
  imp.corrupt_value = 0xa5;
  imp.corrupt_run = 64;
  link_->set(imp);
  std::vector<uint8_t> data(512 * 1024, 0xa5);
  auto got = transfer(*link_, data);
  ASSERT_EQ(got.size(), data.size());
  size_t diffs = 0;
  for (size_t i = 0; i < got.size(); ++i) diffs += got[i] != data[i];
  EXPECT_EQ(diffs, 1u);
  EXPECT_EQ(link_->counters().corrupted, 1u);
}

TEST_F(ImpairLink, BlackHoleStallsThenTcpRecovers) {
  link_->black_hole(1500ms);
  auto t0 = std::chrono::steady_clock::now();
  auto data = pattern(64 * 1024);
  EXPECT_EQ(transfer(*link_, data), data);
  // The SYN was lost in the hole: TCP's first retransmission (1 s) is still
  // inside it, the second (3 s) gets through.
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 1500ms);
  EXPECT_GT(link_->counters().dropped, 0u);
}

// The CLI: sets the link up, reports its counters, exits 0; a bad value is
// a usage error (2) before anything is created.
TEST(ImpairLinkCli, RunsForItsTimeAndReports) {
  auto run = [](const std::string& args, int* rc) {
    std::string out;
    FILE* p = ::popen((std::string(IMPAIR_LINK_PATH) + " " + args + " 2>&1").c_str(), "r");
    if (!p) return out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    int st = ::pclose(p);
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
  };
  int rc = -1;
  std::string out = run("--loss 2", &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--loss"), std::string::npos) << out;
  std::string why;
  if (!ImpairedLink::create(1, &why)) GTEST_SKIP() << why;
  out = run("--net 188 --seconds 0.3 --loss 0.5", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("address 10.188.0.1"), std::string::npos) << out;
  EXPECT_NE(out.find("forwarded "), std::string::npos) << out;
}

}  // namespace
}  // namespace softndk::test::impair
