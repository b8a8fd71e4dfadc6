// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_loop.cc - see verbs_loop.h.
#include "verbs/verbs_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>

namespace softndk::verbs {

Loop::Loop() {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  evfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epfd_ >= 0 && evfd_ >= 0) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = evfd_;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, evfd_, &ev);
  }
  thread_ = std::thread([this] { run(); });
}

Loop::~Loop() {
  // The blocking lane first: its tasks may post back to the loop.
  std::thread waiter;
  {
    std::lock_guard lk(bmu_);
    bstop_ = true;
    waiter = std::move(bthread_);
    bcv_.notify_one();
  }
  if (waiter.joinable()) {
    // Reported, not abandoned: what it runs (rdma_destroy_id) ends with the
    // CM's own timeout, and the ids must be gone before their channel is.
    std::unique_lock lk(bmu_);
    int waited = 0;
    while (!bcv_.wait_for(lk, std::chrono::milliseconds(kSyncBoundMs), [this] { return bdone_; })) {
      waited += kSyncBoundMs;
      std::fprintf(stderr,
                   "softndk verbs: closing: still waiting after %d ms for rdma_destroy_id of a "
                   "pending connect (the CM's own timeout ends it)\n",
                   waited);
    }
    lk.unlock();
    waiter.join();
  }
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  uint64_t one = 1;
  if (evfd_ >= 0) (void)!write(evfd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  if (evfd_ >= 0) close(evfd_);
  if (epfd_ >= 0) close(epfd_);
}

void Loop::post(Task t) {
  {
    std::lock_guard lk(mu_);
    tasks_.push_back(std::move(t));
  }
  uint64_t one = 1;
  (void)!write(evfd_, &one, sizeof one);
}

bool Loop::run_sync(Task t, const char* what, int bound_ms) {
  if (on_loop_thread()) {
    // A consumer's call made from a callback the loop delivers (a CQ
    // notification: VerbsProvider::on_comp_channel): waiting for the loop
    // here would wait for ourselves.
    t();
    return true;
  }
  // Shared with the posted task, which may outlive this call when it is
  // withdrawn; `t` runs only while the caller still waits.
  struct Sync {
    std::mutex m;
    std::condition_variable cv;
    bool started = false, done = false, withdrawn = false;
    Task t;
  };
  auto st = std::make_shared<Sync>();
  st->t = std::move(t);
  post([st] {
    {
      std::lock_guard lk(st->m);
      if (st->withdrawn) return;
      st->started = true;
    }
    st->t();
    std::lock_guard lk(st->m);
    st->done = true;
    st->cv.notify_one();
  });
  const auto period = std::chrono::milliseconds(bound_ms > 0 ? bound_ms : kSyncBoundMs);
  std::unique_lock lk(st->m);
  if (!st->cv.wait_for(lk, period, [&] { return st->started; })) {
    st->withdrawn = true;
    std::fprintf(stderr,
                 "softndk verbs: %s: the backend thread did not take the request within %lld ms "
                 "(busy in another call); withdrawn\n",
                 what, static_cast<long long>(period.count()));
    return false;
  }
  int waited = 0;
  while (!st->cv.wait_for(lk, period, [&] { return st->done; })) {
    waited += static_cast<int>(period.count());
    std::fprintf(stderr, "softndk verbs: %s: still running on the backend thread after %d ms\n",
                 what, waited);
  }
  return true;
}

void Loop::post_blocking(Task t) {
  {
    std::lock_guard lk(bmu_);
    if (!bstop_) {
      if (!bthread_.joinable()) bthread_ = std::thread([this] { run_blocking(); });
      blocking_.push_back(std::move(t));
      bcv_.notify_one();
      return;
    }
  }
  t();  // the lane is closed (the loop is stopping): here, in order
}

void Loop::run_blocking() {
  for (;;) {
    Task t;
    {
      std::unique_lock lk(bmu_);
      bcv_.wait(lk, [this] { return bstop_ || !blocking_.empty(); });
      if (blocking_.empty()) {  // stopped and drained
        bdone_ = true;
        bcv_.notify_all();
        return;
      }
      t = std::move(blocking_.front());
      blocking_.pop_front();
    }
    t();
  }
}

bool Loop::watch(int fd, Task on_readable) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) return false;
  fds_[fd] = std::move(on_readable);
  return true;
}

void Loop::unwatch(int fd) {
  epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  fds_.erase(fd);
}

uint64_t Loop::after(int ms, Task t) {
  uint64_t id = next_timer_++;
  timers_.emplace(Clock::now() + std::chrono::milliseconds(ms), id);
  timer_tasks_[id] = std::move(t);
  return id;
}

void Loop::cancel(uint64_t id) { timer_tasks_.erase(id); }

void Loop::run() {
  for (;;) {
    int wait_ms = 200;
    if (!timers_.empty()) {
      auto d = std::chrono::duration_cast<std::chrono::milliseconds>(timers_.begin()->first -
                                                                     Clock::now());
      wait_ms = d.count() < 0 ? 0 : static_cast<int>(std::min<int64_t>(d.count() + 1, 200));
    }
    epoll_event evs[16];
    int n = epoll_wait(epfd_, evs, 16, wait_ms);
    for (int i = 0; i < n; ++i) {
      int fd = evs[i].data.fd;
      if (fd == evfd_) {
        uint64_t v;
        (void)!read(evfd_, &v, sizeof v);
        continue;
      }
      auto it = fds_.find(fd);
      if (it != fds_.end()) {
        Task t = it->second;  // a copy: the handler may unwatch itself
        t();
      }
    }
    for (;;) {
      Task t;
      bool stop;
      {
        std::lock_guard lk(mu_);
        stop = stop_;
        if (!tasks_.empty()) {
          t = std::move(tasks_.front());
          tasks_.pop_front();
        }
      }
      if (!t) {
        if (stop) return;
        break;
      }
      t();
    }
    auto now = Clock::now();
    while (!timers_.empty() && timers_.begin()->first <= now) {
      uint64_t id = timers_.begin()->second;
      timers_.erase(timers_.begin());
      auto it = timer_tasks_.find(id);
      if (it == timer_tasks_.end()) continue;
      Task t = std::move(it->second);
      timer_tasks_.erase(it);
      t();
    }
  }
}

}  // namespace softndk::verbs
