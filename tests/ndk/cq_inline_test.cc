// SPDX-License-Identifier: Apache-2.0
// cq_inline_test.cc - CQ notifications delivered inline by the producing
// thread (Cq::begin/end_inline_notifications, the verbs backend's completion
// thread: docs/verbs.md "Performance"): on that thread at the scope's end,
// with no producer lock held, once per arm, never two at a time per CQ,
// NdkArmCq allowed inside, close waiting for a running callback.
#include <condition_variable>
#include <mutex>

#include "ndk_fixture.h"

namespace ndktest {
namespace {

using softndk::ndk::Cq;

// What a callback saw. `lock`, when set, must be free while it runs (the
// producer's stand-in for a QP lock).
struct Seen {
  std::atomic<int> count{0}, in{0}, max_in{0};
  std::atomic<NTSTATUS> last{STATUS_PENDING};
  std::mutex m;  // guards thread, lock_was_free
  std::thread::id thread;
  bool lock_was_free = true;
  std::mutex* lock = nullptr;
  // Optional extra work inside the callback (after counting).
  void (*then)(Seen*) = nullptr;
  NDK_CQ* cq = nullptr;
  void* user = nullptr;

  static void cb(PVOID ctx, NTSTATUS s) {
    auto* e = static_cast<Seen*>(ctx);
    int n = ++e->in;
    int m = e->max_in.load();
    while (n > m && !e->max_in.compare_exchange_weak(m, n)) {
    }
    {
      std::lock_guard lk(e->m);
      e->thread = std::this_thread::get_id();
      if (e->lock != nullptr) {
        if (e->lock->try_lock()) {
          e->lock->unlock();
        } else {
          e->lock_was_free = false;
        }
      }
    }
    e->last = s;
    ++e->count;
    if (e->then != nullptr) e->then(e);
    --e->in;
  }
};

class CqInlineTest : public NdkTest {
 protected:
  NDK_CQ* cq_seen(Seen* s, ULONG depth = 64) {
    NDK_CQ* c = nullptr;
    EXPECT_EQ(softndk::create_and_wait<NDK_CQ>(
                  [&](auto cb, auto ctx, NDK_CQ** o) {
                    return a_->Dispatch->NdkCreateCq(a_, depth, &Seen::cb, s, nullptr, cb, ctx, o);
                  },
                  &c),
              STATUS_SUCCESS);
    s->cq = c;
    return c;
  }
  static void drain(NDK_CQ* c) {
    NDK_RESULT_EX r[64];
    while (c->Dispatch->NdkGetCqResultsEx(c, r, 64) != 0) {
    }
  }
};

// The callback runs on the producing thread when its scope ends, after the
// producer let go of its lock, and not before the end.
TEST_F(CqInlineTest, DeliveredOnTheScopeThreadAtItsEndWithNoProducerLock) {
  Seen s;
  std::mutex qp_lock;
  s.lock = &qp_lock;
  NDK_CQ* q = cq_seen(&s);
  q->Dispatch->NdkArmCq(q, NDK_CQ_NOTIFY_ANY);
  int before_end = -1;
  std::thread producer([&] {
    Cq::begin_inline_notifications();
    {
      std::lock_guard lk(qp_lock);  // the QP's lock around the push
      cq_of(q)->push(result(STATUS_SUCCESS));
    }
    before_end = s.count.load();
    Cq::end_inline_notifications();
  });
  const std::thread::id producer_id = producer.get_id();
  producer.join();
  EXPECT_EQ(before_end, 0);      // not delivered under the producer, nor on the reactor
  EXPECT_EQ(s.count.load(), 1);  // delivered by end(), before it returned
  EXPECT_EQ(s.last.load(), STATUS_SUCCESS);
  std::lock_guard lk(s.m);
  EXPECT_EQ(s.thread, producer_id);
  EXPECT_TRUE(s.lock_was_free);
}

// One notification per arm, however many completions and scopes follow;
// none without an arm; a SOLICITED arm is not met by a plain completion.
TEST_F(CqInlineTest, OncePerArmAndArmTypesHold) {
  Seen s;
  NDK_CQ* q = cq_seen(&s);
  auto scope_push = [&](int n, bool solicited) {
    Cq::begin_inline_notifications();
    for (int i = 0; i < n; ++i) cq_of(q)->push(result(STATUS_SUCCESS), solicited);
    Cq::end_inline_notifications();
  };
  scope_push(3, false);
  EXPECT_EQ(s.count.load(), 0);  // never without an arm
  drain(q);
  q->Dispatch->NdkArmCq(q, NDK_CQ_NOTIFY_ANY);
  scope_push(3, false);
  EXPECT_EQ(s.count.load(), 1);
  scope_push(2, false);  // the arm was used up
  EXPECT_EQ(s.count.load(), 1);
  drain(q);
  q->Dispatch->NdkArmCq(q, NDK_CQ_NOTIFY_SOLICITED);
  scope_push(1, false);
  EXPECT_EQ(s.count.load(), 1);  // a plain completion does not meet SOLICITED
  scope_push(1, true);
  EXPECT_EQ(s.count.load(), 2);
  drain(q);
  q->Dispatch->NdkArmCq(q, NDK_CQ_NOTIFY_ERRORS);
  scope_push(1, true);
  EXPECT_EQ(s.count.load(), 2);  // ERRORS: only a CQ error
  // Nested scopes: only the outermost end delivers.
  drain(q);
  q->Dispatch->NdkArmCq(q, NDK_CQ_NOTIFY_ANY);
  Cq::begin_inline_notifications();
  Cq::begin_inline_notifications();
  cq_of(q)->push(result(STATUS_SUCCESS));
  Cq::end_inline_notifications();
  EXPECT_EQ(s.count.load(), 2);
  Cq::end_inline_notifications();
  EXPECT_EQ(s.count.load(), 3);
  EXPECT_EQ(s.max_in.load(), 1);
}

// NdkArmCq inside the callback, on the scope thread, while other threads
// push in scopes of their own: never two callbacks at a time, and every
// completion is drained by some callback (each re-arm finds the ones that
// arrived meanwhile).
TEST_F(CqInlineTest, ArmInsideCallbackNeverConcurrentAcrossScopeThreads) {
  Seen s;
  std::atomic<int> drained{0};
  s.user = &drained;
  s.then = [](Seen* e) {
    NDK_RESULT_EX r[64];
    ULONG n;
    while ((n = e->cq->Dispatch->NdkGetCqResultsEx(e->cq, r, 64)) != 0)
      static_cast<std::atomic<int>*>(e->user)->fetch_add(static_cast<int>(n));
    std::this_thread::yield();
    e->cq->Dispatch->NdkArmCq(e->cq, NDK_CQ_NOTIFY_ANY);  // allowed inside the callback
  };
  NDK_CQ* q = cq_seen(&s, 1024);
  q->Dispatch->NdkArmCq(q, NDK_CQ_NOTIFY_ANY);
  constexpr int kPerThread = 300;
  auto producer = [&] {
    for (int i = 0; i < kPerThread; ++i) {
      Cq::begin_inline_notifications();
      cq_of(q)->push(result(STATUS_SUCCESS));
      Cq::end_inline_notifications();
    }
  };
  std::thread t1(producer), t2(producer);
  t1.join();
  t2.join();
  // The last push is followed by an arm (the callback's) that fires at once
  // for it, on the reactor or inline: all of them are drained eventually.
  EXPECT_TRUE(eventually([&] { return drained.load() == 2 * kPerThread; })) << drained.load();
  EXPECT_GT(s.count.load(), 0);
  EXPECT_EQ(s.max_in.load(), 1);
  // The callback's last arm may still fire once on the reactor: closed here
  // (close waits for it) before `s` goes.
  EXPECT_EQ(close(q), STATUS_SUCCESS);
}

// A callback that arms another CQ with completions waiting: that CQ's
// notification becomes due inside the callback and is delivered by the same
// end(), on the same thread, after the first callback returned.
TEST_F(CqInlineTest, NotificationDueInsideACallbackDeliveredByTheSameEnd) {
  Seen first, second;
  NDK_CQ* q2 = cq_seen(&second);
  first.user = q2;
  first.then = [](Seen* e) {
    auto* other = static_cast<NDK_CQ*>(e->user);
    other->Dispatch->NdkArmCq(other, NDK_CQ_NOTIFY_ANY);
  };
  NDK_CQ* q1 = cq_seen(&first);
  cq_of(q2)->push(result(STATUS_SUCCESS));  // waiting in q2, no arm yet
  q1->Dispatch->NdkArmCq(q1, NDK_CQ_NOTIFY_ANY);
  int second_inside_first = -1;
  std::thread producer([&] {
    Cq::begin_inline_notifications();
    cq_of(q1)->push(result(STATUS_SUCCESS));
    Cq::end_inline_notifications();
    second_inside_first = second.count.load();
  });
  const std::thread::id producer_id = producer.get_id();
  producer.join();
  EXPECT_EQ(first.count.load(), 1);
  EXPECT_EQ(second_inside_first, 1);  // delivered before end() returned
  std::lock_guard lk(second.m);
  EXPECT_EQ(second.thread, producer_id);
}

// Close while the callback runs on the scope thread: the close pends until
// the callback returned; after the close completion no callback comes.
TEST_F(CqInlineTest, CloseWaitsForTheRunningCallback) {
  struct Gate {
    std::mutex m;
    std::condition_variable cv;
    bool entered = false, go = false;
  } gate;
  Seen s;
  s.user = &gate;
  s.then = [](Seen* e) {
    auto* g = static_cast<Gate*>(e->user);
    std::unique_lock lk(g->m);
    g->entered = true;
    g->cv.notify_all();
    g->cv.wait_for(lk, std::chrono::seconds(10), [&] { return g->go; });
  };
  NDK_CQ* q = cq_seen(&s);
  q->Dispatch->NdkArmCq(q, NDK_CQ_NOTIFY_ANY);
  std::thread producer([&] {
    Cq::begin_inline_notifications();
    cq_of(q)->push(result(STATUS_SUCCESS));
    Cq::end_inline_notifications();
  });
  {
    std::unique_lock lk(gate.m);
    ASSERT_TRUE(gate.cv.wait_for(lk, std::chrono::seconds(10), [&] { return gate.entered; }));
  }
  Waiter done;
  NTSTATUS st = q->Dispatch->NdkCloseCq(&q->Header, &Waiter::close_cb, &done);
  EXPECT_EQ(st, STATUS_PENDING);  // the running callback holds the CQ
  EXPECT_EQ(done.calls(), 0);     // the callback is still running
  {
    std::lock_guard lk(gate.m);
    gate.go = true;
    gate.cv.notify_all();
  }
  producer.join();
  EXPECT_TRUE(done.wait());
  EXPECT_EQ(s.count.load(), 1);
}

// A CQ closed between the push and the scope's end: its notification is
// dropped (no callback after close), and the close still completes.
TEST_F(CqInlineTest, CqClosedBeforeTheScopeEndsGetsNoCallback) {
  Seen s;
  NDK_CQ* q = cq_seen(&s);
  q->Dispatch->NdkArmCq(q, NDK_CQ_NOTIFY_ANY);
  Waiter done;
  Cq::begin_inline_notifications();
  cq_of(q)->push(result(STATUS_SUCCESS));
  NTSTATUS st = q->Dispatch->NdkCloseCq(&q->Header, &Waiter::close_cb, &done);
  EXPECT_EQ(st, STATUS_PENDING);  // the due notification holds it
  Cq::end_inline_notifications();
  EXPECT_TRUE(done.wait());
  EXPECT_EQ(s.count.load(), 0);
}

}  // namespace
}  // namespace ndktest
