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
#include <condition_variable>
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

  // How long shutdown() waits for the thread by default: its work takes
  // microseconds, so 10 s means a task or callback that blocks.
  static constexpr std::chrono::milliseconds kStopBound{10000};
  // Stops the thread after running the tasks already posted; idempotent.
  // Returns false, after reporting what the thread is busy with (a task, an
  // I/O handler or a timer, and for how long), when the thread has not
  // stopped within `bound`; the thread is then left running and the caller
  // must keep this reactor alive (Engine::stop, Adapter::close_blocking:
  // they leak it on purpose rather than free it under the thread).
  bool shutdown(std::chrono::milliseconds bound = kStopBound);
  // What the thread is doing now, for reports: "waiting for events" or
  // "running a task for 12034 ms".
  std::string state_text() const;
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

  // What run() is doing (reports only: relaxed stores, a few per loop).
  enum Busy : int { kIdle, kIo, kTimer, kTask };
  void set_busy(Busy b) {
    busy_since_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                         std::memory_order_relaxed);
    busy_.store(b, std::memory_order_relaxed);
  }
  // Set by the thread as its last act; owned jointly so the thread never
  // touches the reactor after saying it is done.
  struct Exit {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };

  std::string name_;
  std::shared_ptr<Exit> exit_ = std::make_shared<Exit>();
  std::atomic<int> busy_{kIdle};
  std::atomic<int64_t> busy_since_ns_{0};
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
  // Stops every thread, waiting at most `bound` in all. False (each stuck
  // thread reported) when one is still running: the caller must then keep
  // the engine alive (leak it) - its threads may still touch it.
  bool stop(std::chrono::milliseconds bound = Reactor::kStopBound);
  Reactor& pick();
  Reactor& primary() { return *reactors_.front(); }
  unsigned size() const { return static_cast<unsigned>(reactors_.size()); }
  Reactor& at(unsigned i) { return *reactors_.at(i); }

 private:
  std::vector<std::unique_ptr<Reactor>> reactors_;
  std::atomic<unsigned> next_{0};
};

}  // namespace softndk::util
