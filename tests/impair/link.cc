// SPDX-License-Identifier: Apache-2.0
// impair/link.cc - two namespaces, two TUN devices, one forwarder thread.
#include "impair/link.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <random>
#include <vector>

#include "impair/packet.h"

namespace softndk::test::impair {

namespace {

using Clock = std::chrono::steady_clock;

int sh(const std::string& cmd) {
  int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// A TUN device named `name` in the calling thread's namespace; -errno.
int open_tun(const std::string& name) {
  int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -errno;
  ifreq ifr{};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(ifr.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd, TUNSETIFF, &ifr) != 0) {
    int e = errno;
    ::close(fd);
    return -e;
  }
  return fd;
}

// A packet waiting for its release time. `seq` is the arrival order in its
// direction (reorder count); `order` breaks ties so equal times keep order.
struct Held {
  Clock::time_point due;
  uint64_t order;
  uint64_t seq;
  int dir;  // 0: a -> b, 1: b -> a
  std::vector<uint8_t> bytes;
  bool operator>(const Held& o) const { return due != o.due ? due > o.due : order > o.order; }
};

// Past this many held packets new ones are dropped: a stalled receiver
// cannot make the forwarder grow without bound.
constexpr size_t kMaxHeld = 65536;
constexpr size_t kMaxPacket = 65536;

}  // namespace

bool ImpairedLink::run_in(const std::string& ns, const std::function<void()>& fn) {
  bool entered = false;
  std::thread t([&] {
    int fd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    entered = ::setns(fd, CLONE_NEWNET) == 0;
    ::close(fd);
    if (entered) fn();
  });
  t.join();
  return entered;
}

std::unique_ptr<ImpairedLink> ImpairedLink::create(int net, std::string* why, uint64_t seed) {
  static std::atomic<unsigned> counter{0};
  if (net < 1 || net > 254) {
    *why = "net must be 1..254";
    return nullptr;
  }
  if (::access("/dev/net/tun", R_OK | W_OK) != 0) {
    *why = "no /dev/net/tun";
    return nullptr;
  }
  if (sh("command -v ip") != 0) {
    *why = "no `ip` tool";
    return nullptr;
  }
  std::unique_ptr<ImpairedLink> l(new ImpairedLink);
  l->seed_ = seed;
  const std::string id = std::to_string(::getpid() % 100000) + "x" + std::to_string(counter++);
  l->ns_a_ = "snimpa" + id;
  l->ns_b_ = "snimpb" + id;
  l->prefix_ = "10." + std::to_string(net) + ".0.";
  const std::string tun_a = "tia" + id, tun_b = "tib" + id;
  if (sh("ip netns add " + l->ns_a_) != 0) {
    *why = "needs root/CAP_NET_ADMIN: `ip netns add` failed";
    l->ns_a_.clear();
    return nullptr;
  }
  if (sh("ip netns add " + l->ns_b_) != 0) {
    *why = "`ip netns add` failed";
    l->ns_b_.clear();
    return nullptr;
  }
  run_in(l->ns_a_, [&] { l->tun_a_ = open_tun(tun_a); });
  run_in(l->ns_b_, [&] { l->tun_b_ = open_tun(tun_b); });
  if (l->tun_a_ < 0 || l->tun_b_ < 0) {
    *why = std::string("cannot create a TUN device: ") +
           std::strerror(-(l->tun_a_ < 0 ? l->tun_a_ : l->tun_b_));
    return nullptr;
  }
  auto setup = [&](const std::string& ns, const std::string& tun, const std::string& addr) {
    const std::string in = "ip -n " + ns + " ";
    return sh(in + "link set lo up") == 0 && sh(in + "addr add " + addr + "/24 dev " + tun) == 0 &&
           sh(in + "link set " + tun + " up") == 0;
  };
  if (!setup(l->ns_a_, tun_a, l->addr_a()) || !setup(l->ns_b_, tun_b, l->addr_b())) {
    *why = "cannot configure the TUN devices";
    return nullptr;
  }
  l->stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (l->stop_fd_ < 0) {
    *why = "eventfd failed";
    return nullptr;
  }
  l->thread_ = std::thread([p = l.get()] { p->forward_loop(); });
  return l;
}

ImpairedLink::~ImpairedLink() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  for (int fd : {tun_a_, tun_b_, stop_fd_})
    if (fd >= 0) ::close(fd);
  // Closing a TUN's last descriptor removes the device; then the namespaces.
  if (!ns_a_.empty()) sh("ip netns del " + ns_a_);
  if (!ns_b_.empty()) sh("ip netns del " + ns_b_);
}

void ImpairedLink::set(const Impairment& imp) {
  std::lock_guard lk(mu_);
  imp_ = imp;
}

Impairment ImpairedLink::get() const {
  std::lock_guard lk(mu_);
  return imp_;
}

void ImpairedLink::black_hole(std::chrono::milliseconds d) {
  std::lock_guard lk(mu_);
  hole_until_ = Clock::now() + d;
}

LinkCounters ImpairedLink::counters() const {
  std::lock_guard lk(mu_);
  return counters_;
}

void ImpairedLink::forward_loop() {
  std::mt19937_64 rng(seed_);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held;
  uint64_t order = 0;
  uint64_t next_seq[2] = {0, 0};  // arrival numbering per direction
  uint64_t max_sent[2] = {0, 0};  // highest arrival number written, + 1
  const int out_fd[2] = {tun_b_, tun_a_};
  std::vector<uint8_t> buf(kMaxPacket);

  auto emit = [&](const Held& h) {
    const bool ok = ::write(out_fd[h.dir], h.bytes.data(), h.bytes.size()) >= 0;
    std::lock_guard lk(mu_);
    if (!ok) {
      ++counters_.dropped;
      return;
    }
    ++counters_.forwarded;
    if (h.seq + 1 < max_sent[h.dir]) ++counters_.reordered;
    max_sent[h.dir] = std::max(max_sent[h.dir], h.seq + 1);
  };

  // One packet read from direction `dir`: decide its fate.
  auto take = [&](int dir, std::span<uint8_t> pkt) {
    Impairment imp;
    bool hole;
    {
      std::lock_guard lk(mu_);
      imp = imp_;
      hole = Clock::now() < hole_until_;
    }
    const uint64_t seq = next_seq[dir]++;
    if ((pkt[0] >> 4) != 4 || hole || (imp.loss > 0 && coin(rng) < imp.loss) ||
        held.size() >= kMaxHeld) {
      std::lock_guard lk(mu_);
      ++counters_.dropped;
      return;
    }
    if (imp.corrupt > 0 && coin(rng) < imp.corrupt) {
      auto v = parse_ipv4_tcp(pkt);
      std::lock_guard lk(mu_);
      if (v && v->payload_len > 0 && counters_.corrupted < imp.corrupt_max) {
        auto payload = pkt.subspan(v->payload_offset, v->payload_len);
        std::optional<size_t> at;
        if (imp.corrupt_run > 0) {
          at = find_run(payload, imp.corrupt_value, imp.corrupt_run);
        } else {
          at = static_cast<size_t>(rng() % v->payload_len);
        }
        // A mask that never leaves the byte unchanged.
        const uint8_t mask = static_cast<uint8_t>(1u << (rng() % 8));
        if (at && corrupt_tcp_payload(pkt, *at, mask)) ++counters_.corrupted;
      }
    }
    auto due = Clock::now() + imp.delay;
    if (imp.jitter.count() > 0)
      due += std::chrono::microseconds(static_cast<int64_t>(rng() % (imp.jitter.count() + 1)));
    const bool dup = imp.duplicate > 0 && coin(rng) < imp.duplicate;
    Held h{due, order++, seq, dir, {pkt.begin(), pkt.end()}};
    if (dup) {
      Held copy = h;
      copy.order = order++;
      copy.due += std::chrono::microseconds(100) + imp.jitter / 2;
      held.push(std::move(copy));
      std::lock_guard lk(mu_);
      ++counters_.duplicated;
    }
    if (held.empty() && due <= Clock::now()) {
      emit(h);
    } else {
      held.push(std::move(h));
    }
  };

  pollfd fds[3] = {{tun_a_, POLLIN, 0}, {tun_b_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    while (!held.empty() && held.top().due <= Clock::now()) {
      emit(held.top());
      held.pop();
    }
    int timeout_ms = -1;
    if (!held.empty()) {
      auto wait =
          std::chrono::duration_cast<std::chrono::microseconds>(held.top().due - Clock::now());
      timespec ts{0, std::max<int64_t>(0, wait.count()) * 1000};
      if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec = ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
      }
      if (::ppoll(fds, 3, &ts, nullptr) < 0 && errno != EINTR) return;
    } else if (::poll(fds, 3, timeout_ms) < 0 && errno != EINTR) {
      return;
    }
    if (fds[2].revents) return;
    for (int dir = 0; dir < 2; ++dir) {
      if (!(fds[dir].revents & POLLIN)) continue;
      // A bounded batch per wake-up so one busy direction cannot starve
      // the other or the held queue.
      for (int i = 0; i < 64; ++i) {
        ssize_t n = ::read(fds[dir].fd, buf.data(), buf.size());
        if (n <= 0) break;
        take(dir, std::span<uint8_t>(buf.data(), static_cast<size_t>(n)));
      }
    }
  }
}

}  // namespace softndk::test::impair
