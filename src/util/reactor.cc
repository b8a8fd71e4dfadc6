// SPDX-License-Identifier: Apache-2.0
#include "util/reactor.h"

#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <new>

#include "util/bounded_wait.h"

namespace softndk::util {

namespace {
constexpr uint64_t kWakeToken = ~0ull;
}

Reactor::Reactor(std::string name) : name_(std::move(name)) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  wakefd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epfd_ < 0 || wakefd_ < 0) {
    std::perror("softndk: reactor setup");
    std::abort();  // cannot run the provider without its event loop
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeToken;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, wakefd_, &ev);
  // Wait for the thread to publish its id (on_thread) by sleeping, not by
  // spinning: on a busy machine a yield loop kept the new thread off the
  // CPU for tens of milliseconds, and every adapter open paid for it.
  // The thread owns the promise: set_value may still touch it after the
  // waiter woke and this constructor returned.
  auto started = std::make_shared<std::promise<void>>();
  std::future<void> up = started->get_future();
  thread_ = std::thread([this, started, exit = exit_] {
    thread_id_ = std::this_thread::get_id();
    pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
    started->set_value();
    run();
    std::lock_guard lk(exit->mu);
    exit->done = true;
    exit->cv.notify_all();
  });
  // The thread's first act; past 10 s (a starved machine) say so and wait
  // on: thread_id_ must be set before anyone asks on_thread().
  while (up.wait_for(std::chrono::seconds(10)) != std::future_status::ready)
    util::report_wait("still waiting for reactor thread '" + name_ + "' to start");
}

Reactor::~Reactor() {
  if (!shutdown()) {
    // The memory is about to be freed and the thread still runs on it:
    // here, and only here, waiting on (and saying so every 10 s) is the
    // safe choice. Owners that can keep the reactor alive instead stop it
    // through Engine::stop first (Adapter::close_blocking leaks it).
    std::unique_lock lk(exit_->mu);
    util::wait_reporting(
        exit_->cv, lk, [this] { return exit_->done; },
        [this] {
          return "reactor thread '" + name_ + "' to stop before its reactor is freed (" +
                 state_text() + ")";
        });
    lk.unlock();
    thread_.join();
  }
  discard_pending();
  close(wakefd_);
  close(epfd_);
}

bool Reactor::shutdown(std::chrono::milliseconds bound) {
  if (!thread_.joinable() || on_thread()) return true;
  stop_.store(true);
  wake();
  {
    std::unique_lock lk(exit_->mu);
    if (!exit_->cv.wait_for(lk, bound, [this] { return exit_->done; })) {
      util::report_wait("reactor thread '" + name_ + "' has not stopped after " +
                        std::to_string(bound.count()) + " ms: it is " + state_text());
      return false;
    }
  }
  thread_.join();
  return true;
}

std::string Reactor::state_text() const {
  const int b = busy_.load(std::memory_order_relaxed);
  if (b == kIdle) return "waiting for events";
  const auto since = std::chrono::steady_clock::time_point(
      std::chrono::steady_clock::duration(busy_since_ns_.load(std::memory_order_relaxed)));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - since)
                      .count();
  const char* what = b == kIo      ? "running an I/O handler"
                     : b == kTimer ? "running a timer"
                                   : "running a task";
  return std::string(what) + " for " + std::to_string(ms) + " ms";
}

bool Reactor::discard_pending() {
  std::vector<Task> tasks;
  std::unordered_map<int, std::shared_ptr<Watch>> watches;
  std::unordered_map<uint64_t, std::shared_ptr<Watch>> by_token;
  std::unordered_map<TimerId, std::pair<std::chrono::steady_clock::time_point, Task>> timers;
  {
    std::lock_guard lk(mu_);
    tasks.swap(tasks_);
    watches.swap(watches_);
    by_token.swap(by_token_);
    timers.swap(timers_);
    timer_order_.clear();
  }
  return !tasks.empty() || !watches.empty() || !timers.empty();
}

void Reactor::wake() {
  uint64_t one = 1;
  ssize_t n = write(wakefd_, &one, sizeof one);
  (void)n;  // EAGAIN means a wake is already pending: fine
}

void Reactor::post(Task task) {
  bool was_empty;
  {
    std::lock_guard lk(mu_);
    was_empty = tasks_.empty();
    tasks_.push_back(std::move(task));
  }
  if (was_empty && !on_thread()) wake();
}

bool Reactor::watch(int fd, uint32_t events, IoHandler handler) {
  std::shared_ptr<Watch> w;
  {
    std::lock_guard lk(mu_);
    w = std::make_shared<Watch>(Watch{fd, next_token_++, std::move(handler), events, 0});
    if (auto old = watches_.find(fd); old != watches_.end()) by_token_.erase(old->second->token);
    watches_[fd] = w;
    by_token_[w->token] = w;
  }
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = w->token;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    std::lock_guard lk(mu_);
    watches_.erase(fd);
    by_token_.erase(w->token);
    return false;
  }
  return true;
}

bool Reactor::modify(int fd, uint32_t events) {
  // Under mu_ with mute(), so that the last call wins in epoll too.
  std::lock_guard lk(mu_);
  auto it = watches_.find(fd);
  if (it == watches_.end()) return false;
  Watch& w = *it->second;
  w.events = events;
  return apply_locked(w);
}

bool Reactor::apply_locked(Watch& w) {
  epoll_event ev{};
  ev.events = w.events & ~w.muted;
  ev.data.u64 = w.token;
  // Unmuted, the owner's set goes to epoll as asked (EPOLLRDHUP alone
  // included); muted down to EPOLLRDHUP, the fd leaves epoll (see mute()).
  bool want = w.muted == 0 || (ev.events & ~static_cast<uint32_t>(EPOLLRDHUP)) != 0;
  if (!want) {
    if (w.in_epoll && epoll_ctl(epfd_, EPOLL_CTL_DEL, w.fd, nullptr) != 0) return false;
    w.in_epoll = false;
    return true;
  }
  if (epoll_ctl(epfd_, w.in_epoll ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, w.fd, &ev) != 0) return false;
  w.in_epoll = true;
  return true;
}

bool Reactor::mute(int fd, uint32_t bits, bool on) {
  std::lock_guard lk(mu_);
  auto it = watches_.find(fd);
  if (it == watches_.end()) return false;
  Watch& w = *it->second;
  uint32_t muted = on ? (w.muted | bits) : (w.muted & ~bits);
  if (muted == w.muted) return true;
  w.muted = muted;
  return apply_locked(w);
}

void Reactor::unwatch(int fd) {
  epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  std::lock_guard lk(mu_);
  auto it = watches_.find(fd);
  if (it == watches_.end()) return;
  by_token_.erase(it->second->token);
  watches_.erase(it);
}

Reactor::TimerId Reactor::after(std::chrono::milliseconds delay, Task task) {
  auto when = std::chrono::steady_clock::now() + delay;
  TimerId id;
  bool earliest;
  {
    std::lock_guard lk(mu_);
    id = next_timer_++;
    earliest = timer_order_.empty() || when < timer_order_.begin()->first;
    timer_order_.emplace(when, id);
    timers_.emplace(id, std::make_pair(when, std::move(task)));
  }
  if (earliest && !on_thread()) wake();
  return id;
}

bool Reactor::cancel(TimerId id) {
  std::lock_guard lk(mu_);
  auto it = timers_.find(id);
  if (it == timers_.end()) return false;
  auto range = timer_order_.equal_range(it->second.first);
  for (auto o = range.first; o != range.second; ++o) {
    if (o->second == id) {
      timer_order_.erase(o);
      break;
    }
  }
  timers_.erase(it);
  return true;
}

int Reactor::next_timeout_ms() {
  std::lock_guard lk(mu_);
  if (!tasks_.empty()) return 0;
  if (timer_order_.empty()) return -1;
  auto now = std::chrono::steady_clock::now();
  auto first = timer_order_.begin()->first;
  if (first <= now) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(first - now).count() + 1;
  return static_cast<int>(ms > 60000 ? 60000 : ms);
}

void Reactor::run_due_timers() {
  auto now = std::chrono::steady_clock::now();
  for (;;) {
    Task t;
    {
      std::lock_guard lk(mu_);
      if (timer_order_.empty() || timer_order_.begin()->first > now) return;
      TimerId id = timer_order_.begin()->second;
      timer_order_.erase(timer_order_.begin());
      auto it = timers_.find(id);
      t = std::move(it->second.second);
      timers_.erase(it);
    }
    set_busy(kTimer);
    t();
    tasks_run_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Reactor::linger(std::chrono::microseconds d) {
  auto until = std::chrono::steady_clock::now() + d;
  if (until > linger_until_) linger_until_ = until;
}

namespace {

// Out of memory inside one handler or task (a process under an
// address-space limit): that piece of work is lost - the request it served
// fails or times out at its caller - but the reactor, and with it every
// other connection of the process, goes on. An exception escaping the
// reactor thread would end the process (std::terminate).
template <class F>
void survive_exhaustion(F&& f) {
  try {
    f();
  } catch (const std::bad_alloc&) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      std::fputs("softndk: out of memory in a reactor task; the request it served fails\n", stderr);
  }
}

}  // namespace

void Reactor::run() {
  constexpr int kMaxEvents = 64;
  epoll_event evs[kMaxEvents];
  std::vector<Task> batch;
  bool lingered = false;  // the last look found nothing while lingering
  for (;;) {
    int timeout = next_timeout_ms();
    if (timeout != 0 && linger_until_.time_since_epoch().count() != 0) {
      if (std::chrono::steady_clock::now() < linger_until_) {
        // Give the core to whoever is runnable (the woken consumer may be
        // waiting for it) between looks.
        if (lingered) sched_yield();
        timeout = 0;
      } else {
        linger_until_ = {};
      }
    }
    busy_.store(kIdle, std::memory_order_relaxed);
    int n = epoll_wait(epfd_, evs, kMaxEvents, timeout);
    lingered = n == 0 && timeout == 0;
    if (n < 0 && errno != EINTR) {
      std::perror("softndk: epoll_wait");
      std::abort();
    }
    bool io = false;
    for (int i = 0; i < n; ++i) {
      if (evs[i].data.u64 == kWakeToken) {
        uint64_t v;
        ssize_t r = read(wakefd_, &v, sizeof v);
        (void)r;
        continue;
      }
      if (!io) set_busy(kIo);
      io = true;
      std::shared_ptr<Watch> w;
      {
        std::lock_guard lk(mu_);
        auto it = by_token_.find(evs[i].data.u64);
        if (it != by_token_.end()) w = it->second;
      }
      if (w) survive_exhaustion([&] { w->handler(evs[i].events); });
    }
    if (io) io_wakeups_.fetch_add(1, std::memory_order_relaxed);
    run_due_timers();
    {
      std::lock_guard lk(mu_);
      batch.swap(tasks_);
    }
    if (!batch.empty()) set_busy(kTask);
    for (auto& t : batch) {
      survive_exhaustion(t);
      tasks_run_.fetch_add(1, std::memory_order_relaxed);
    }
    batch.clear();
    if (stop_.load()) {
      std::lock_guard lk(mu_);
      if (tasks_.empty()) break;
    }
  }
}

Engine::Engine(unsigned threads) {
  if (threads == 0) threads = 1;
  for (unsigned i = 0; i < threads; ++i)
    reactors_.push_back(std::make_unique<Reactor>("softndk-eng" + std::to_string(i)));
}

bool Engine::stop(std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  bool all = true;
  for (auto& r : reactors_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left < std::chrono::milliseconds(1)) left = std::chrono::milliseconds(1);
    all = r->shutdown(left) && all;
  }
  return all;
}

Engine::~Engine() {
  if (!stop()) {
    // A thread still runs (reported): freeing the reactors would pull its
    // memory from under it, so they are leaked on purpose, threads and all.
    util::report_wait("an engine thread did not stop: its reactors are left allocated (leaked)");
    for (auto& r : reactors_) (void)r.release();
    return;
  }
  // Dropping one reactor's leftovers may release objects that touch other
  // reactors (unwatch, post); keep all alive until nothing is left.
  for (int pass = 0; pass < 8; ++pass) {
    bool any = false;
    for (auto& r : reactors_) any = r->discard_pending() || any;
    if (!any) break;
  }
  reactors_.clear();
}

Reactor& Engine::pick() {
  return *reactors_[next_.fetch_add(1, std::memory_order_relaxed) % reactors_.size()];
}

}  // namespace softndk::util
