// SPDX-License-Identifier: Apache-2.0
// verbs_loop_test.cc - the verbs backend's thread (src/verbs/verbs_loop.h):
// run_sync is bounded (a task the stuck loop never took is withdrawn and
// never runs), and the blocking lane keeps the loop serving while a call
// blocks there. No device needed: the loop is epoll and threads.
#include "verbs/verbs_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace softndk::verbs {
namespace {

using namespace std::chrono_literals;

// A gate a task waits on (bounded) until the test opens it.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  bool wait(std::chrono::milliseconds bound) {
    std::unique_lock lk(m);
    return cv.wait_for(lk, bound, [&] { return open; });
  }
  void release() {
    std::lock_guard lk(m);
    open = true;
    cv.notify_all();
  }
};

TEST(VerbsLoop, RunSyncRunsTheTaskOnTheLoopThread) {
  Loop loop;
  ASSERT_TRUE(loop.ok());
  bool on_loop = false;
  EXPECT_TRUE(loop.run_sync([&] { on_loop = loop.on_loop_thread(); }, "test: a quick task"));
  EXPECT_TRUE(on_loop);
}

// A consumer's call made from a callback the loop delivers (a CQ
// notification delivered inline: VerbsProvider::on_comp_channel) may ask
// the loop for something synchronously (NdkListen): it runs at once rather
// than waiting for the loop, which is this very thread.
TEST(VerbsLoop, RunSyncFromTheLoopThreadRunsAtOnce) {
  Loop loop;
  ASSERT_TRUE(loop.ok());
  std::mutex m;
  std::condition_variable cv;
  bool done = false, inner_ran = false, inner_ok = false;
  const auto start = std::chrono::steady_clock::now();
  loop.post([&] {
    // A 5 s bound: were it waited for, the test would see the delay.
    bool ok = loop.run_sync([&] { inner_ran = loop.on_loop_thread(); }, "test: nested", 5000);
    std::lock_guard lk(m);
    inner_ok = ok;
    done = true;
    cv.notify_all();
  });
  std::unique_lock lk(m);
  ASSERT_TRUE(cv.wait_for(lk, 20s, [&] { return done; }));
  EXPECT_TRUE(inner_ok);
  EXPECT_TRUE(inner_ran);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
}

TEST(VerbsLoop, RunSyncPastItsBoundIsWithdrawnAndNeverRuns) {
  Gate gate;
  std::atomic<bool> ran{false};
  {
    Loop loop;
    std::atomic<bool> busy{false};
    loop.post([&] {
      busy = true;
      gate.wait(30s);  // the loop is stuck in another call
    });
    while (!busy.load()) std::this_thread::sleep_for(1ms);
    int local = 0;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(loop.run_sync(
        [&] {
          local = 1;  // would write a dead stack frame if it ran later
          ran = true;
        },
        "test: behind a stuck task", 200));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
    EXPECT_EQ(local, 0);
    gate.release();
    // The loop goes on: a later run_sync works, and the withdrawn task,
    // which came first, did not run.
    EXPECT_TRUE(loop.run_sync([] {}, "test: after the stuck task"));
    EXPECT_FALSE(ran.load());
  }
  EXPECT_FALSE(ran.load());
}

TEST(VerbsLoop, TheBlockingLaneLeavesTheLoopServing) {
  Gate gate;
  std::atomic<bool> lane_done{false};
  Loop loop;
  loop.post_blocking([&] {
    gate.wait(30s);  // like rdma_destroy_id waiting for the CM
    loop.post([&] { lane_done = true; });
  });
  // The loop still serves while the lane blocks.
  EXPECT_TRUE(loop.run_sync([] {}, "test: while the lane blocks", 5000));
  EXPECT_FALSE(lane_done.load());
  gate.release();
  const auto t0 = std::chrono::steady_clock::now();
  while (!lane_done.load() && std::chrono::steady_clock::now() - t0 < 20s)
    std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(lane_done.load());
}

// The provider's close: the lane still holds a destroy whose follow-up
// posts back to the loop (VerbsConnection::destroy); the Loop's destructor
// drains the lane, then runs what it posted.
TEST(VerbsLoop, DestructorWaitsForTheBlockingLaneAndRunsWhatItPosted) {
  std::atomic<bool> done{false}, followed{false};
  {
    Loop loop;
    Loop* lp = &loop;
    loop.post_blocking([&, lp] {
      std::this_thread::sleep_for(50ms);
      done = true;
      lp->post([&] { followed = true; });
    });
  }
  EXPECT_TRUE(done.load());
  EXPECT_TRUE(followed.load());
}

}  // namespace
}  // namespace softndk::verbs
