// SPDX-License-Identifier: Apache-2.0
// netdev_monitor.cc - NetMonitor: link and address changes via rtnetlink.
//
// One thread per process listens on a NETLINK_ROUTE socket bound to the
// link and IPv4/IPv6 address multicast groups. It blocks in poll() on that
// socket and an eventfd, so the last unsubscribe() can wake it and have it
// exit at once. Each subscription keeps its own view of its interface
// (taken when it subscribed, then updated from the messages); a callback
// fires only when that view really changes: a link up/down edge, or an
// address entering or leaving the set.
//
// Locking: mu guards everything below. The monitor thread never holds it
// while it calls a consumer, so callbacks may subscribe/unsubscribe.
//
// Thread life cycle (state):
//   kIdle -> kRunning         first subscribe() opens the socket, starts it
//   kRunning -> kStopping     last unsubscribe(); the eventfd wakes it
//   kStopping -> kRunning     subscribe() from inside a callback (the thread
//                             is still in its loop, so it simply carries on)
//   kStopping -> kExited      the thread leaves its loop
//   kExited -> kIdle          whoever sees kExited first joins the thread
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <variant>

#include "ndk/netdev.h"
#include "ndk/netdev_rtnl.h"
#include "util/bounded_wait.h"

namespace softndk::ndk {

struct NetMonitor::Impl {
  enum class State { kIdle, kRunning, kStopping, kExited };

  struct Sub {
    uint32_t ifindex = 0;
    std::shared_ptr<const Callback> cb;
    NetDevice dev;  // this subscription's view of its interface
  };

  // A change as decoded from one message, in arrival order.
  struct LinkChange {
    rtnl::Link link;
  };
  struct AddrChange {
    rtnl::Addr addr;
    bool added;
  };
  using Change = std::variant<LinkChange, AddrChange>;

  // The callback is looked up again at delivery time (see deliver()).
  struct Delivery {
    uint64_t id;
    NetDevice dev;
    NetEvent ev;
  };

  NetMonitor* owner = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::map<uint64_t, Sub> subs;
  uint64_t next_id = 1;
  State state = State::kIdle;
  std::thread thread;
  std::thread::id tid;  // the monitor thread's id while it runs
  int wake_fd = -1;
  uint64_t in_callback = 0;  // subscription whose callback is running, or 0

  bool on_monitor_thread() const {
    return state != State::kIdle && tid == std::this_thread::get_id();
  }

  // Joins an exited thread. Drops the lock while joining.
  void reap(std::unique_lock<std::mutex>& lk) {
    std::thread t = std::move(thread);
    state = State::kIdle;
    lk.unlock();
    if (t.joinable()) t.join();
    lk.lock();
    cv.notify_all();
  }

  void wake() {
    const uint64_t one = 1;
    if (wake_fd >= 0) {
      [[maybe_unused]] ssize_t n = write(wake_fd, &one, sizeof(one));
    }
  }

  // Opens the multicast socket and starts the thread (state kIdle). The
  // socket is bound before this returns, so the snapshot a subscription
  // takes afterwards cannot miss a change.
  bool start() {
    mnl_socket* nl = mnl_socket_open(NETLINK_ROUTE);
    if (!nl) return false;
    if (mnl_socket_bind(nl, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
                        MNL_SOCKET_AUTOPID) < 0) {
      mnl_socket_close(nl);
      return false;
    }
    // A burst of changes (many interfaces, many addresses) must not overrun
    // the socket; if it still does, resync() recovers.
    const int rcvbuf = 1 << 20;
    const int fd = mnl_socket_get_fd(nl);
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0) {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    }
    const int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (efd < 0) {
      mnl_socket_close(nl);
      return false;
    }
    wake_fd = efd;
    state = State::kRunning;
    thread = std::thread([this, nl, efd] { run(nl, efd); });
    tid = thread.get_id();
    return true;
  }

  void run(mnl_socket* nl, int efd) {
    std::vector<char> buf(rtnl::kRecvBufferSize);
    const int nlfd = mnl_socket_get_fd(nl);
    for (;;) {
      {
        std::lock_guard lk(mu);
        if (state == State::kStopping) {
          state = State::kExited;
          tid = {};
          wake_fd = -1;
          cv.notify_all();
          break;
        }
      }
      pollfd fds[2] = {{nlfd, POLLIN, 0}, {efd, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) continue;  // EINTR; nothing else is expected
      if (fds[1].revents & POLLIN) {
        uint64_t v;
        [[maybe_unused]] ssize_t n = read(efd, &v, sizeof(v));
      }
      if (!(fds[0].revents & (POLLIN | POLLERR))) continue;
      const ssize_t n = recv(nlfd, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n < 0) {
        // ENOBUFS: the kernel dropped notifications; re-read the truth.
        if (errno == ENOBUFS) resync();
        continue;
      }
      std::vector<Change> changes;
      // seq 0 / portid 0: accept notifications caused by anyone.
      mnl_cb_run(buf.data(), static_cast<size_t>(n), 0, 0, collect, &changes);
      if (!changes.empty()) apply(changes);
    }
    close(efd);
    mnl_socket_close(nl);
  }

  static int collect(const nlmsghdr* nlh, void* data) {
    auto* out = static_cast<std::vector<Change>*>(data);
    switch (nlh->nlmsg_type) {
      case RTM_NEWLINK:
      case RTM_DELLINK:
        if (auto l = rtnl::parse_link(nlh)) out->push_back(LinkChange{std::move(*l)});
        break;
      case RTM_NEWADDR:
      case RTM_DELADDR:
        if (auto a = rtnl::parse_addr(nlh)) {
          out->push_back(AddrChange{*a, nlh->nlmsg_type == RTM_NEWADDR});
        }
        break;
      default:
        break;
    }
    return MNL_CB_OK;
  }

  // Updates sub's view with a link message; an edge yields a delivery.
  static void on_link(uint64_t id, Sub& sub, const rtnl::Link& link, std::vector<Delivery>& out) {
    if (!link.name.empty()) sub.dev.name = link.name;
    if (link.mtu != 0) sub.dev.mtu = link.mtu;
    if (link.up == sub.dev.up) return;
    sub.dev.up = link.up;
    sub.dev.speed_mbps = link.up ? rtnl::read_speed_mbps(sub.dev.name) : 0;
    out.push_back({id, sub.dev, link.up ? NetEvent::kLinkUp : NetEvent::kLinkDown});
  }

  static void on_addr(uint64_t id, Sub& sub, const AddrChange& c, std::vector<Delivery>& out) {
    auto& addrs = sub.dev.addrs;
    auto it = std::find_if(addrs.begin(), addrs.end(), [&](const sockaddr_storage& a) {
      return rtnl::same_address(a, c.addr.addr);
    });
    // RTM_NEWADDR also reports flag/lifetime updates of a known address;
    // only membership changes count.
    if (c.added == (it != addrs.end())) return;
    if (c.added) {
      addrs.push_back(c.addr.addr);
    } else {
      addrs.erase(it);
    }
    out.push_back({id, sub.dev, NetEvent::kAddressChange});
  }

  void apply(const std::vector<Change>& changes) {
    std::vector<Delivery> out;
    {
      std::lock_guard lk(mu);
      for (const auto& change : changes) {
        for (auto& [id, sub] : subs) {
          if (const auto* l = std::get_if<LinkChange>(&change)) {
            if (l->link.ifindex == sub.ifindex) on_link(id, sub, l->link, out);
          } else {
            const auto& a = std::get<AddrChange>(change);
            if (a.addr.ifindex == sub.ifindex) on_addr(id, sub, a, out);
          }
        }
      }
    }
    deliver(out);
  }

  // After an overrun: compare every subscription's view with a fresh query
  // and report the net differences.
  void resync() {
    std::set<uint32_t> indexes;
    {
      std::lock_guard lk(mu);
      for (const auto& [id, sub] : subs) indexes.insert(sub.ifindex);
    }
    std::map<uint32_t, std::optional<NetDevice>> now;
    for (uint32_t ifindex : indexes) now[ifindex] = owner->query(ifindex);
    std::vector<Delivery> out;
    {
      std::lock_guard lk(mu);
      for (auto& [id, sub] : subs) {
        auto it = now.find(sub.ifindex);
        if (it == now.end()) continue;  // subscribed during the query
        const std::optional<NetDevice>& cur = it->second;
        rtnl::Link link;
        link.ifindex = sub.ifindex;
        if (cur) {
          link.name = cur->name;
          link.mtu = cur->mtu;
          link.up = cur->up;
        }
        on_link(id, sub, link, out);
        const std::vector<sockaddr_storage> fresh =
            cur ? cur->addrs : std::vector<sockaddr_storage>{};
        if (!same_set(sub.dev.addrs, fresh)) {
          sub.dev.addrs = fresh;
          out.push_back({id, sub.dev, NetEvent::kAddressChange});
        }
      }
    }
    deliver(out);
  }

  static bool same_set(const std::vector<sockaddr_storage>& a,
                       const std::vector<sockaddr_storage>& b) {
    auto contains = [](const std::vector<sockaddr_storage>& v, const sockaddr_storage& x) {
      return std::any_of(v.begin(), v.end(),
                         [&](const sockaddr_storage& y) { return rtnl::same_address(x, y); });
    };
    return a.size() == b.size() &&
           std::all_of(a.begin(), a.end(), [&](const auto& x) { return contains(b, x); });
  }

  // Calls the consumers, one at a time, without the lock. A subscription
  // removed meanwhile gets nothing more; unsubscribe() waits on in_callback.
  // Our reference to the callback is dropped before in_callback clears, so
  // the functor (and what it captured) is destroyed by unsubscribe(), never
  // on this thread after unsubscribe() has returned.
  void deliver(std::vector<Delivery>& out) {
    for (auto& d : out) {
      std::shared_ptr<const Callback> cb;
      {
        std::lock_guard lk(mu);
        auto it = subs.find(d.id);
        if (it == subs.end()) continue;
        cb = it->second.cb;
        in_callback = d.id;
      }
      (*cb)(d.dev, d.ev);
      cb.reset();
      {
        std::lock_guard lk(mu);
        in_callback = 0;
      }
      cv.notify_all();
    }
  }
};

NetMonitor::NetMonitor() : impl_(std::make_unique<Impl>()) { impl_->owner = this; }

NetMonitor::~NetMonitor() {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  m.subs.clear();
  if (m.state == Impl::State::kRunning) {
    m.state = Impl::State::kStopping;
    m.wake();
  }
  if (m.on_monitor_thread()) {
    // exit() called from a callback: the thread cannot join itself.
    m.thread.detach();
    return;
  }
  util::wait_reporting(
      m.cv, lk, [&] { return m.state == Impl::State::kExited || m.state == Impl::State::kIdle; },
      [] { return std::string("the net monitor thread to stop (NetMonitor destructor)"); });
  if (m.state == Impl::State::kExited) m.reap(lk);
}

NetMonitor& NetMonitor::instance() {
  static NetMonitor monitor;
  return monitor;
}

uint64_t NetMonitor::subscribe(uint32_t ifindex, Callback cb, NetDevice* baseline) {
  if (!cb) return 0;
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  if (m.on_monitor_thread()) {
    // Inside a callback: the thread is alive; cancel a pending stop.
    if (m.state == Impl::State::kStopping) {
      m.state = Impl::State::kRunning;
      m.cv.notify_all();
    }
  } else {
    for (;;) {
      if (m.state == Impl::State::kExited) {
        m.reap(lk);
      } else if (m.state == Impl::State::kStopping) {
        util::wait_reporting(
            m.cv, lk, [&] { return m.state != Impl::State::kStopping; },
            [] { return std::string("the net monitor thread to stop before a new subscription"); });
      } else {
        break;
      }
    }
    if (m.state == Impl::State::kIdle && !m.start()) return 0;
  }
  // The snapshot is taken with the lock held and the socket listening: the
  // thread cannot apply a change to this subscription before its baseline.
  Impl::Sub sub;
  sub.ifindex = ifindex;
  sub.cb = std::make_shared<const Callback>(std::move(cb));
  if (auto dev = query(ifindex)) {
    sub.dev = std::move(*dev);
  } else {
    sub.dev.ifindex = ifindex;  // no such link (yet): down, no addresses
  }
  if (baseline) *baseline = sub.dev;
  const uint64_t id = m.next_id++;
  m.subs.emplace(id, std::move(sub));
  return id;
}

void NetMonitor::unsubscribe(uint64_t id) {
  Impl& m = *impl_;
  std::shared_ptr<const Callback> cb;  // destroyed after the lock is dropped
  std::unique_lock lk(m.mu);
  auto it = m.subs.find(id);
  if (it == m.subs.end()) return;
  cb = std::move(it->second.cb);
  m.subs.erase(it);
  const bool self = m.on_monitor_thread();
  // From the monitor thread the running callback is on our own stack.
  if (!self)
    util::wait_reporting(
        m.cv, lk, [&] { return m.in_callback != id; },
        [id] {
          return "net monitor subscription " + std::to_string(id) + "'s callback to return";
        });
  if (m.subs.empty() && m.state == Impl::State::kRunning) {
    m.state = Impl::State::kStopping;
    m.wake();
  }
  if (!self && m.state == Impl::State::kStopping) {
    util::wait_reporting(
        m.cv, lk, [&] { return m.state != Impl::State::kStopping; },
        [] { return std::string("the net monitor thread to stop (last unsubscribe)"); });
    if (m.state == Impl::State::kExited) m.reap(lk);
  }
  lk.unlock();
  cb.reset();
}

}  // namespace softndk::ndk
