// SPDX-License-Identifier: Apache-2.0
// backoff.h - how the transport's poll loops wait for the peer (transport.cc:
// receive, send slots, credits, poll_until). Here so that its rules are
// tested on their own (tests/smb/smbd_backoff_test.cc).
//
// After 64 empty polls of the CQ a loop spins for up to kSpin after the
// last completion (or its start), then sleeps 20 us, then, once idle for
// long, sleeps on the CQ's notification (long_idle()). An answer usually comes within the spin: a
// sleep there costs a timer wake-up (~60-100 us with timer slack) per message, which was most of a
// 4 KiB QD1 I/O's latency on one host.
//
// Whether the spin yields its core on each empty poll depends on how
// promptly the peer answered the previous wait (Pace, kept per transport):
// - within the hot bound (TransportConfig::hot_spin_us, default 20 us): the
//   peer has a core of its own; spin without yielding for up to 4x that
//   answer time + 4 us (at most the bound), then yield. A yield hands the
//   core to any other runnable task for up to a scheduler slice, and at
//   4 KiB QD1 the switches were 40-45% of both processes' samples;
// - later, only after a yield that ran another task, or never (the wait
//   went to sleep): the peer needs our core (a loaded host, both on one
//   CPU) or is idle; every empty poll yields. A
//   spin that kept the core for 50 us made the QD1 p50 5x worse at load 14
//   (20 -> 115 us): the peer could not run to answer. The hot spin is
//   bounded by the last answer time, so one slow answer switches it off
//   for the next wait.
// A yield that returns at once (within kSwitched) ran nobody: no other task
// wanted this CPU, so the peer runs on a core of its own and the answer's
// time is its own pace. Counting such yields as "the yield let the peer
// run" switched the hot spin off for good after the first answer slower
// than the free polls (~3 us): every later wait yielded first, so every
// later answer came "after a yield" (sched_yield costs ~1.4 us here even
// when it returns at once).
// The clock is read every 8th empty poll only (it was a seventh of a
// spinning client's time).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

namespace smbd {

// What the waits of one transport learned about the peer.
struct Pace {
  using Clock = std::chrono::steady_clock;
  Clock::duration answer = Clock::duration::max();  // the last wait's, max: unknown or idle
  Clock::duration hot_max{};                        // the bound of a hot spin; 0: never
  uint64_t yields = 0;                              // empty polls that yielded the core
  uint64_t switches = 0;     // those yields that ran another task (took kSwitched or more)
  uint64_t sleeps = 0;       // empty polls that slept
  uint64_t hot_polls = 0;    // empty polls past the first 64 that kept the core
  uint64_t event_waits = 0;  // long idle: slept on the CQ's notification
};

// The clock and the two ways of giving the core up. A parameter so that the
// rules are tested with a clock the test moves (no timing in the tests).
struct SystemPoll {
  static Pace::Clock::time_point now() { return Pace::Clock::now(); }
  static void yield() { std::this_thread::yield(); }
  static void sleep(std::chrono::microseconds d) { std::this_thread::sleep_for(d); }
};

template <class Env>
class BasicBackoff {
 public:
  using Clock = Pace::Clock;
  static constexpr auto kSpin = std::chrono::microseconds(200);
  static constexpr unsigned kFreePolls = 64;   // empty polls before any of the rules
  static constexpr unsigned kLongIdle = 1024;  // sleeps of 20 us before the 200 us ones
  // A yield at least this long ran another task on our CPU (an idle one
  // returns in ~1.4 us on the measured host, 2.9 us at p99).
  static constexpr auto kSwitched = std::chrono::microseconds(10);

  explicit BasicBackoff(Pace& p) : pace_(p), since_(Env::now()), hot_for_(budget(p)) {}

  // The spin without yielding that the last answer time earns.
  static Clock::duration budget(const Pace& p) {
    if (p.hot_max <= Clock::duration::zero() || p.answer > p.hot_max)
      return Clock::duration::zero();
    return std::min<Clock::duration>(p.hot_max, 4 * p.answer + std::chrono::microseconds(4));
  }

  // A poll found completions. `answer`: one of them came from the peer (a
  // receive, an RDMA transfer), after (now - since); our own Sends'
  // completions say nothing of the peer's pace (on one host they complete
  // at once) and only restart the spin.
  void hit(bool answer = true) {
    idle_ = sleeps_ = 0;
    spinning_ = true;
    if (!answer) return;
    const auto now = Env::now();
    // An answer that came only after a yield ran another task may have
    // needed our core (both ends on one CPU: the yield let the peer run):
    // it earns no hot spin, or the next wait would keep the core from the
    // peer (measured: QD1 p50 30-39 us against 24 us with yields, at load
    // 11).
    pace_.answer = yielded_ ? Clock::duration::max() : now - since_;
    yielded_ = false;
    hot_ = true;
    since_ = now;
    hot_for_ = budget(pace_);
  }

  // A poll found none.
  void wait() {
    if (++idle_ < kFreePolls) return;
    if (spinning_) {
      if (idle_ % 8 == 0) {
        const auto waited = Env::now() - since_;
        if (waited >= kSpin) {
          spinning_ = false;
          pace_.answer = Clock::duration::max();  // the peer went quiet
        } else if (hot_ && waited >= hot_for_) {
          hot_ = false;
        }
      }
      if (spinning_) {
        if (hot_ && hot_for_ > Clock::duration::zero()) {
          ++pace_.hot_polls;
        } else {
          ++pace_.yields;
          const auto t0 = Env::now();
          Env::yield();
          if (Env::now() - t0 >= kSwitched) {
            ++pace_.switches;
            yielded_ = true;
          }
        }
        return;
      }
    }
    ++sleeps_;
    ++pace_.sleeps;
    Env::sleep(std::chrono::microseconds(sleeps_ < kLongIdle ? 20 : 200));
  }

  // Time for the periodic work of an empty poll (timers, deadlines, the
  // disconnect event): every 64th while spinning, each time once sleeping
  // (a sleep costs far more than the clock; timers such as the keepalive
  // keep their precision).
  bool periodic() const { return !spinning_ || idle_ % 64 == 0; }

  // Idle past the short sleeps (kLongIdle of them, ~20-80 ms): the caller
  // sleeps on the CQ's notification instead of polling (event_wait()).
  // Polling every 200 us from here on cost each idle connection ~5000
  // wake-ups a second: 200 peers stalled before their negotiate request
  // kept both cores of a 2-core host busy and a real client waited 6 s
  // (30 s under ASan) for its turn.
  bool long_idle() const { return !spinning_ && sleeps_ >= kLongIdle; }
  // The caller slept on the notification; the wait stays idle (periodic()
  // holds) until a poll finds a completion (hit()).
  void event_wait() { ++pace_.event_waits; }

  Clock::duration hot_for() const { return hot_for_; }
  bool spinning() const { return spinning_; }

 private:
  Pace& pace_;
  unsigned idle_ = 0, sleeps_ = 0;
  bool spinning_ = true, hot_ = true;
  bool yielded_ = false;  // a yield ran another task, since the start or the last answer
  Clock::time_point since_;
  Clock::duration hot_for_;
};

using Backoff = BasicBackoff<SystemPoll>;

}  // namespace smbd
