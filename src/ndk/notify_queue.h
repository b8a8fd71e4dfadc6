// SPDX-License-Identifier: Apache-2.0
// notify_queue.h - serialized delivery of notification callbacks (CQ, SRQ).
#pragma once

#include <deque>
#include <mutex>

#include "softndk/ndkpi.h"

namespace softndk::ndk {

// NDKPI 8: a notification callback never runs twice at once. Statuses queue
// under the owner's lock; one runner (a reactor task) delivers them in
// order, one at a time, with no provider lock held, so a callback may call
// back into the provider (arm again, post, close).
class NotifyQueue {
 public:
  // Under the owner's lock. True when no runner is active: the caller must
  // start one (post a task that calls run()).
  bool push_locked(NTSTATUS status) {
    due_.push_back(status);
    if (running_) return false;
    running_ = true;
    return true;
  }

  // The runner. `stopped()` is read under `mu`: once it is true, whatever is
  // still queued is dropped. `after` runs after each delivery, unlocked.
  template <class Stopped, class Deliver, class After>
  void run(std::mutex& mu, Stopped stopped, Deliver deliver, After after) {
    for (;;) {
      NTSTATUS s;
      {
        std::lock_guard lk(mu);
        if (due_.empty() || stopped()) {
          due_.clear();
          running_ = false;
          return;
        }
        s = due_.front();
        due_.pop_front();
      }
      deliver(s);
      after();
    }
  }

 private:
  std::deque<NTSTATUS> due_;
  bool running_ = false;
};

}  // namespace softndk::ndk
