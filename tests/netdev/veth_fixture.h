// SPDX-License-Identifier: Apache-2.0
// veth_fixture.h - a throw-away veth pair for link-state tests.
//
// The end the tests watch ("root end") stays in the test's own network
// namespace, because that is where softndk's rtnetlink sockets live; its
// peer goes into a fresh namespace so the pair disturbs nothing else. Names
// and the address are derived from the pid and a counter, so parallel ctest
// runs do not collide. The destructor deletes the pair and the namespace,
// so a failing test leaves nothing behind. Needs root (CAP_NET_ADMIN);
// create() reports why it could not, so tests can GTEST_SKIP.
#pragma once

#include <arpa/inet.h>
#include <net/if.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "ndk/netdev.h"

namespace softndk::test {

// Runs a shell command; returns its exit status and combined output.
inline int run_cmd(const std::string& cmd, std::string* output = nullptr) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) out += buf;
  const int status = pclose(p);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class VethPair {
 public:
  // nullptr with *why set if the pair cannot be made (not root, no netns).
  static std::unique_ptr<VethPair> create(std::string* why) {
    static int counter = 0;
    const int pid = static_cast<int>(getpid());
    const int n = ++counter;
    std::unique_ptr<VethPair> v(new VethPair);
    v->ns_ = "softndk-netdev-" + std::to_string(pid) + "-" + std::to_string(n);
    v->root_ = "snd" + std::to_string(pid) + "r" + std::to_string(n);
    v->peer_ = "snd" + std::to_string(pid) + "p" + std::to_string(n);
    // 198.18.0.0/15 is reserved for benchmarking (RFC 2544): never routed.
    const uint32_t host =
        (static_cast<uint32_t>(pid) * 8u + static_cast<uint32_t>(n)) % 131070u + 1;
    v->addr_ = "198." + std::to_string(18 + (host >> 16)) + "." +
               std::to_string((host >> 8) & 0xff) + "." + std::to_string(host & 0xff);
    std::string out;
    if (run_cmd("ip netns add " + v->ns_, &out) != 0) {
      *why = "needs root and CAP_NET_ADMIN: `ip netns add` failed: " + out;
      return nullptr;
    }
    v->have_ns_ = true;
    if (run_cmd("ip link add " + v->root_ + " type veth peer name " + v->peer_ + " netns " + v->ns_,
                &out) != 0) {
      *why = "cannot create a veth pair: " + out;
      return nullptr;
    }
    v->have_link_ = true;
    // No IPv6 on the watched end: DAD and link-local addresses would add
    // address events the tests do not ask for.
    std::ofstream("/proc/sys/net/ipv6/conf/" + v->root_ + "/disable_ipv6") << "1";
    if (run_cmd("ip -n " + v->ns_ + " link set " + v->peer_ + " up", &out) != 0 ||
        run_cmd("ip addr add " + v->addr_ + "/32 dev " + v->root_, &out) != 0 ||
        run_cmd("ip link set " + v->root_ + " up", &out) != 0) {
      *why = "cannot configure the veth pair: " + out;
      return nullptr;
    }
    v->ifindex_ = if_nametoindex(v->root_.c_str());
    if (v->ifindex_ == 0 || !v->wait_up(true)) {
      *why = "veth " + v->root_ + " did not come up";
      return nullptr;
    }
    return v;
  }

  ~VethPair() {
    if (have_link_) run_cmd("ip link del " + root_);  // deletes the peer too
    if (have_ns_) run_cmd("ip netns del " + ns_);
  }
  VethPair(const VethPair&) = delete;
  VethPair& operator=(const VethPair&) = delete;

  const std::string& name() const { return root_; }
  const std::string& address() const { return addr_; }  // IPv4 on the root end
  uint32_t ifindex() const { return ifindex_; }

  bool set_up(bool up) { return run_cmd("ip link set dev " + root_ + (up ? " up" : " down")) == 0; }
  bool set_peer_up(bool up) {
    return run_cmd("ip -n " + ns_ + " link set dev " + peer_ + (up ? " up" : " down")) == 0;
  }
  bool add_address(const std::string& cidr) {
    return run_cmd("ip addr add " + cidr + " dev " + root_) == 0;
  }
  bool del_address(const std::string& cidr) {
    return run_cmd("ip addr del " + cidr + " dev " + root_) == 0;
  }
  bool set_mtu(int mtu) {
    return run_cmd("ip link set dev " + root_ + " mtu " + std::to_string(mtu)) == 0;
  }
  bool remove() {
    if (!have_link_) return true;
    have_link_ = run_cmd("ip link del " + root_) != 0;
    return !have_link_;
  }

  // Carrier follows the kernel's linkwatch, which may lag up to a second.
  bool wait_up(bool want, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      auto dev = ndk::NetMonitor::instance().query(ifindex_);
      if (dev && dev->up == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  VethPair() = default;
  std::string ns_, root_, peer_, addr_;
  uint32_t ifindex_ = 0;
  bool have_ns_ = false;
  bool have_link_ = false;
};

}  // namespace softndk::test
