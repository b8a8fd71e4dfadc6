// SPDX-License-Identifier: Apache-2.0
// tests/util/netns.h - network namespaces, veth pairs and netem for tests
// that need real routing outcomes (no route, no such host, silence).
//
// Header-only, RAII: every object removes what it created. Names are unique
// per process so parallel test runs do not collide. Needs root or
// CAP_NET_ADMIN plus the `ip` and `tc` tools; tests call
// netns::available() and GTEST_SKIP otherwise.
//
// Running code inside a namespace: NetNs::run(fn) runs fn on a dedicated
// thread that setns()'d into the namespace and waits for it; sockets created
// there stay in that namespace for life, so they can be handed to threads
// (reactors) in the root namespace afterwards.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

namespace softndk::test::netns {

// Runs a shell command quietly; returns its exit status.
inline int sh(const std::string& cmd) {
  int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// Output of a shell command (first line, trimmed).
inline std::string sh_out(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r")) {
    char buf[256];
    if (std::fgets(buf, sizeof buf, p)) out = buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// A name unique in this process and across processes (pid), <= 15 chars
// so it also works as an interface name.
inline std::string unique_name(const char* prefix) {
  static std::atomic<unsigned> n{0};
  return std::string(prefix) + std::to_string(::getpid() % 100000) + "x" +
         std::to_string(n.fetch_add(1));
}

// True when namespaces can be created here (root / CAP_NET_ADMIN, tools).
inline bool available() {
  static const bool ok = [] {
    if (sh("command -v ip") != 0 || sh("command -v tc") != 0) return false;
    std::string probe = unique_name("snp");
    bool made = sh("ip netns add " + probe) == 0;
    if (made) sh("ip netns del " + probe);
    return made;
  }();
  return ok;
}

class NetNs {
 public:
  NetNs() : name_(unique_name("sn")) {
    ok_ = sh("ip netns add " + name_) == 0 && sh(exec("ip link set lo up")) == 0;
  }
  ~NetNs() { sh("ip netns del " + name_); }
  NetNs(const NetNs&) = delete;
  NetNs& operator=(const NetNs&) = delete;

  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  // A command line that runs `cmd` inside the namespace.
  std::string exec(const std::string& cmd) const { return "ip netns exec " + name_ + " " + cmd; }

  // Runs fn on a thread inside the namespace; false if setns failed.
  bool run(const std::function<void()>& fn) const {
    bool entered = false;
    std::thread t([&] {
      int fd = ::open(("/var/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) return;
      entered = ::setns(fd, CLONE_NEWNET) == 0;
      ::close(fd);
      if (entered) fn();
    });
    t.join();
    return entered;
  }

 private:
  std::string name_;
  bool ok_ = false;
};

// A veth pair with one end in namespace `a` and the other in `b`.
class Veth {
 public:
  Veth(const NetNs& a, const NetNs& b) : a_(a), b_(b) {
    name_a_ = unique_name("va");
    name_b_ = unique_name("vb");
    ok_ = sh("ip link add " + name_a_ + " netns " + a.name() + " type veth peer name " + name_b_ +
             " netns " + b.name()) == 0 &&
          sh(a.exec("ip link set " + name_a_ + " up")) == 0 &&
          sh(b.exec("ip link set " + name_b_ + " up")) == 0;
  }
  ~Veth() { sh(a_.exec("ip link del " + name_a_)); }  // deletes both ends
  Veth(const Veth&) = delete;
  Veth& operator=(const Veth&) = delete;

  bool ok() const { return ok_; }
  const std::string& a() const { return name_a_; }
  const std::string& b() const { return name_b_; }
  // "10.1.2.3/24" on either end.
  bool addr_a(const std::string& cidr) {
    return sh(a_.exec("ip addr add " + cidr + " dev " + name_a_)) == 0;
  }
  bool addr_b(const std::string& cidr) {
    return sh(b_.exec("ip addr add " + cidr + " dev " + name_b_)) == 0;
  }
  std::string mac_b() const {
    return sh_out(b_.exec("cat /sys/class/net/" + name_b_ + "/address"));
  }
  // Drop everything leaving a's end (tc netem loss 100%). Needs sch_netem,
  // which not every kernel has; silent_peer_a() needs nothing.
  bool netem_loss_a() {
    return sh(a_.exec("tc qdisc add dev " + name_a_ + " root netem loss 100%")) == 0;
  }
  // Makes `ip` (on a's subnet) a silent peer: a permanent neighbour entry
  // with a MAC nobody owns, so frames reach b's end and are dropped there
  // as PACKET_OTHERHOST. No ARP, no answer, no ICMP: pure silence.
  bool silent_peer_a(const std::string& ip) { return static_neighbor_a(ip, "02:00:5e:00:53:01"); }
  // A permanent neighbour entry on a's end, so no ARP is needed.
  bool static_neighbor_a(const std::string& ip, const std::string& mac) {
    return sh(a_.exec("ip neigh replace " + ip + " lladdr " + mac + " dev " + name_a_ +
                      " nud permanent")) == 0;
  }

 private:
  const NetNs& a_;
  const NetNs& b_;
  std::string name_a_, name_b_;
  bool ok_ = false;
};

}  // namespace softndk::test::netns
