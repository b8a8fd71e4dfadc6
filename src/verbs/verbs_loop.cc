// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_loop.cc - see verbs_loop.h.
#include "verbs/verbs_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>

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

void Loop::run_sync(Task t) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  post([&] {
    t();
    std::lock_guard lk(m);
    done = true;
    cv.notify_one();
  });
  std::unique_lock lk(m);
  cv.wait(lk, [&] { return done; });
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
