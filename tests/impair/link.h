// SPDX-License-Identifier: Apache-2.0
// impair/link.h - an impaired IPv4 link between two network namespaces,
// made in user space because this kernel has no sch_netem.
//
//   namespace A  [tun a: 10.N.0.1/24] --fd--> forwarder --fd--> [tun b: 10.N.0.2/24]  namespace B
//                                     <--fd--           <--fd--
//
// Each namespace gets one TUN device (IFF_TUN | IFF_NO_PI, no offloads, so
// every packet carries a full checksum and none is larger than the MTU).
// One forwarder thread reads IPv4 packets from either TUN and writes them
// into the other, applying an Impairment: loss, a delay with jitter (which
// reorders packets), duplication, corruption of TCP payload bytes with the
// TCP checksum fixed up (packet.h: the damage passes TCP), and a black hole
// that drops everything for a while. Non-IPv4 packets (IPv6 router
// solicitations) are dropped. A seeded generator makes a run repeatable up
// to thread timing.
//
// Root (CAP_NET_ADMIN), /dev/net/tun and `ip` are needed; create() says
// why it could not, so tests can GTEST_SKIP. Names carry the pid; the
// destructor stops the thread and deletes both namespaces.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace softndk::test::impair {

struct Impairment {
  double loss = 0;                      // fraction of packets dropped, 0..1
  std::chrono::microseconds delay{0};   // added to every packet
  std::chrono::microseconds jitter{0};  // + uniform 0..jitter: reorders
  double duplicate = 0;                 // fraction sent twice (the copy later)
  double corrupt = 0;                   // fraction of TCP segments with payload damaged
  // Corruption aims at a byte inside a run of `corrupt_run` bytes equal to
  // `corrupt_value` (a test's data pattern) when corrupt_run > 0; else any
  // payload byte. Segments without such a run are left alone.
  uint8_t corrupt_value = 0;
  size_t corrupt_run = 0;
  uint64_t corrupt_max = ~0ull;  // stop after this many corrupted packets
};

struct LinkCounters {
  uint64_t forwarded = 0;   // packets written to the other side (copies included)
  uint64_t dropped = 0;     // lost, black-holed or not IPv4
  uint64_t duplicated = 0;  // extra copies sent
  uint64_t corrupted = 0;   // TCP segments damaged (checksum fixed)
  uint64_t reordered = 0;   // sent before a packet that arrived earlier
};

class ImpairedLink {
 public:
  // net: the second octet of 10.net.0.0/24 (1..254); pick one per test.
  static std::unique_ptr<ImpairedLink> create(int net, std::string* why, uint64_t seed = 1);
  ~ImpairedLink();
  ImpairedLink(const ImpairedLink&) = delete;
  ImpairedLink& operator=(const ImpairedLink&) = delete;

  const std::string& ns_a() const { return ns_a_; }
  const std::string& ns_b() const { return ns_b_; }
  std::string addr_a() const { return prefix_ + "1"; }
  std::string addr_b() const { return prefix_ + "2"; }

  // Applies to both directions from the next packet on.
  void set(const Impairment& imp);
  Impairment get() const;
  // Drops every packet, both ways, for `d` from now.
  void black_hole(std::chrono::milliseconds d);
  LinkCounters counters() const;

  // Runs fn on a new thread inside namespace A or B and waits for it.
  // Sockets it creates, and threads it starts, stay in that namespace.
  bool run_in_a(const std::function<void()>& fn) const { return run_in(ns_a_, fn); }
  bool run_in_b(const std::function<void()>& fn) const { return run_in(ns_b_, fn); }
  static bool run_in(const std::string& ns, const std::function<void()>& fn);

 private:
  ImpairedLink() = default;
  void forward_loop();

  std::string ns_a_, ns_b_, prefix_;
  int tun_a_ = -1, tun_b_ = -1;
  int stop_fd_ = -1;  // eventfd that wakes the forwarder to exit
  uint64_t seed_ = 1;
  mutable std::mutex mu_;
  Impairment imp_;
  std::chrono::steady_clock::time_point hole_until_{};
  LinkCounters counters_;
  std::thread thread_;
};

}  // namespace softndk::test::impair
