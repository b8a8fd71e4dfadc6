// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_loop.h - the verbs backend's own thread: an epoll loop over
// the rdma_cm event channel, the completion channel (both non-blocking
// fds), an eventfd for tasks posted from other threads, and deadlines.
// Every rdma_cm call that can wait for the network, every memory
// registration and every callback into the object model runs here, never
// in a consumer's call.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace softndk::verbs {

class Loop {
 public:
  using Task = std::function<void()>;
  using Clock = std::chrono::steady_clock;
  Loop();
  ~Loop();  // runs what was posted, then joins
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  bool ok() const { return epfd_ >= 0 && evfd_ >= 0; }
  // From any thread; runs on the loop thread in posting order.
  void post(Task t);
  // Loop thread only: `on_readable` runs whenever `fd` is readable.
  bool watch(int fd, Task on_readable);
  void unwatch(int fd);
  // Loop thread only: runs `t` once `ms` passed (returns an id for cancel).
  uint64_t after(int ms, Task t);
  void cancel(uint64_t id);
  bool on_loop_thread() const { return std::this_thread::get_id() == thread_.get_id(); }
  // Posts `t` and waits until it ran (not from the loop thread), at most
  // `bound_ms` for it to start. True once it ran. False if it had not
  // started by then (the loop is stuck in something else): it is then
  // withdrawn - it never runs, so what it captures may go - and the wait is
  // reported on stderr with `what`. A task that started is waited for to
  // its end (it may use the caller's stack), reported each `bound_ms`.
  // On the loop thread itself (a consumer callback the loop delivers) `t`
  // runs at once.
  bool run_sync(Task t, const char* what, int bound_ms = kSyncBoundMs);
  static constexpr int kSyncBoundMs = 10000;
  // From any thread: runs `t` on a second thread, in posting order, for
  // calls that can block in the kernel (rdma_destroy_id of an id whose
  // connect is still pending waits for the CM's own timeout), so the loop
  // keeps serving every other object meanwhile. The destructor waits for
  // what was posted (reported past kSyncBoundMs).
  void post_blocking(Task t);

 private:
  void run();
  int epfd_ = -1, evfd_ = -1;
  std::mutex mu_;  // tasks_, stop_
  std::deque<Task> tasks_;
  bool stop_ = false;
  std::map<int, Task> fds_;                            // loop thread only
  std::multimap<Clock::time_point, uint64_t> timers_;  // loop thread only
  std::map<uint64_t, Task> timer_tasks_;
  uint64_t next_timer_ = 1;
  void run_blocking();
  std::mutex bmu_;  // blocking_, bstop_, bdone_, bthread_
  std::condition_variable bcv_;
  std::deque<Task> blocking_;
  bool bstop_ = false, bdone_ = false;
  std::thread bthread_;  // started by the first post_blocking
  std::thread thread_;
};

}  // namespace softndk::verbs
