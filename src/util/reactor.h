// SPDX-License-Identifier: Apache-2.0
// util/reactor.h - the progress engine's event loop: one thread, one epoll set.
//
// A Reactor owns a thread that waits on epoll and runs three kinds of work,
// always on that thread and never while holding a lock of its own:
//   - posted tasks (post(): from any thread, FIFO),
//   - readiness handlers of file descriptors (watch(): sockets),
//   - timers (after()).
// Provider callbacks into the consumer run from here, which is what lets
// every NDK call made inside a callback go through without deadlock: the
// reactor holds nothing while a task runs.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace softndk::util {

class Reactor {
 public:
  using Task = std::function<void()>;
  using IoHandler = std::function<void(uint32_t epoll_events)>;
  using TimerId = uint64_t;

  explicit Reactor(std::string name);
  ~Reactor();  // stops the thread after running the tasks already posted
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  // Queue a task; thread-safe, never blocks on the reactor thread's work.
  void post(Task task);

  // True when called from this reactor's thread.
  bool on_thread() const { return std::this_thread::get_id() == thread_id_; }

  // Watch fd for epoll events (EPOLLIN/EPOLLOUT/...); the handler runs on the
  // reactor thread. Thread-safe. A handler may unwatch its own fd; after
  // unwatch() returns on the reactor thread the handler never runs again.
  bool watch(int fd, uint32_t events, IoHandler handler);
  bool modify(int fd, uint32_t events);
  void unwatch(int fd);
  // Keeps the `bits` (e.g. EPOLLIN) out of fd's interest set while `on`,
  // whatever modify() asks meanwhile; a new watch() of fd starts unmuted.
  // Lets a data path that is being busy-polled by the consumer keep the
  // reactor from waking for every message (docs/datapath.md "Who runs
  // what"). While muting leaves nothing but EPOLLRDHUP, fd leaves epoll
  // altogether (and rejoins when a bit comes back): a socket on an epoll
  // wait queue costs every arriving packet an epoll callback under the
  // socket lock, which the busy-polling reader then waits for; the poller
  // sees the peer's close in recv() itself. Like modify(), call it where fd
  // cannot be closed meanwhile (the owner's reactor thread).
  bool mute(int fd, uint32_t bits, bool on);

  // Reactor thread only: keep looking at epoll without sleeping until `d`
  // from now (yielding the core between looks). After a CQ notification the
  // woken consumer usually answers within microseconds; the answer's
  // readiness is then picked up by a thread that is already running rather
  // than by waking this one (docs/datapath.md "Event mode").
  void linger(std::chrono::microseconds d);

  // Diagnostics: epoll wake-ups that carried I/O readiness, and handler calls.
  uint64_t io_wakeups() const { return io_wakeups_.load(std::memory_order_relaxed); }

  // Run task after delay on the reactor thread; cancel() before it fires
  // prevents it (returns false if it already ran or is running).
  TimerId after(std::chrono::milliseconds delay, Task task);
  bool cancel(TimerId id);

  // Stops the thread after running the tasks already posted; idempotent.
  void shutdown();
  // After shutdown(): drops queued tasks, timers and watches (their
  // captured objects are destroyed here, outside the lock). Returns true if
  // anything was dropped (destructors may have queued more).
  bool discard_pending();

  // Number of tasks run so far (diagnostics, tests).
  uint64_t tasks_run() const { return tasks_run_.load(std::memory_order_relaxed); }

 private:
  // epoll carries a per-watch token, not the fd: a handler that closes fd A
  // and opens a new socket that reuses A's number must not receive A's
  // stale events from the same epoll_wait batch.
  struct Watch {
    int fd;
    uint64_t token;
    IoHandler handler;
    uint32_t events = 0;   // what the owner asked for (watch/modify)
    uint32_t muted = 0;    // kept out of epoll by mute()
    bool in_epoll = true;  // false: left epoll while muted (apply_locked)
  };
  // Hands w's interest set (events minus muted) to epoll, under mu_.
  bool apply_locked(Watch& w);
  void run();
  void wake();
  int next_timeout_ms();
  void run_due_timers();

  std::string name_;
  int epfd_ = -1;
  int wakefd_ = -1;
  std::thread thread_;
  std::thread::id thread_id_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> tasks_run_{0};
  std::atomic<uint64_t> io_wakeups_{0};
  std::chrono::steady_clock::time_point linger_until_{};  // reactor thread only

  std::mutex mu_;  // guards everything below
  std::vector<Task> tasks_;
  std::unordered_map<int, std::shared_ptr<Watch>> watches_;        // by fd
  std::unordered_map<uint64_t, std::shared_ptr<Watch>> by_token_;  // by epoll token
  uint64_t next_token_ = 1;
  std::multimap<std::chrono::steady_clock::time_point, TimerId> timer_order_;
  std::unordered_map<TimerId, std::pair<std::chrono::steady_clock::time_point, Task>> timers_;
  TimerId next_timer_ = 1;
};

// A small pool of reactors. Objects are bound to one reactor for life
// (connections pick one round-robin) so their state needs no locking
// against itself.
class Engine {
 public:
  explicit Engine(unsigned threads);
  // Stops every thread before destroying any reactor: objects bound to one
  // reactor may be released by a task of another.
  ~Engine();
  Reactor& pick();
  Reactor& primary() { return *reactors_.front(); }
  unsigned size() const { return static_cast<unsigned>(reactors_.size()); }
  Reactor& at(unsigned i) { return *reactors_.at(i); }

 private:
  std::vector<std::unique_ptr<Reactor>> reactors_;
  std::atomic<unsigned> next_{0};
};

}  // namespace softndk::util
