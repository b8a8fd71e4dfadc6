// SPDX-License-Identifier: Apache-2.0
// watchdog.cc - one detached thread sleeping on a condition variable until
// the deadline; it never touches library state, only stderr and _exit().
#include "ndkapp/watchdog.h"

#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace softndk::tools {

namespace {

struct State {
  std::mutex m;
  std::condition_variable cv;
  bool started = false;
  bool armed = false;
  std::chrono::steady_clock::time_point deadline;
  double seconds = 0;
  std::string tool = "tool";
  std::string phase = "starting";
  int code = 3;
};

State& state() {
  static State* s = new State;  // leaked on purpose: the thread may outlive main
  return *s;
}

void run() {
  State& s = state();
  std::unique_lock lk(s.m);
  for (;;) {
    if (!s.armed) {
      s.cv.wait(lk);
      continue;
    }
    if (s.cv.wait_until(lk, s.deadline) == std::cv_status::timeout && s.armed &&
        std::chrono::steady_clock::now() >= s.deadline) {
      std::fprintf(stderr, "%s: timed out after %.0f s while %s\n", s.tool.c_str(), s.seconds,
                   s.phase.c_str());
      std::fflush(stderr);
      std::fflush(stdout);
      _exit(s.code);
    }
  }
}

}  // namespace

void watchdog_arm(double seconds, std::string tool, int exit_code) {
  State& s = state();
  std::lock_guard lk(s.m);
  s.tool = std::move(tool);
  s.code = exit_code;
  s.seconds = seconds;
  s.armed = seconds > 0;
  s.deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(seconds > 0 ? seconds : 0));
  if (!s.started) {
    s.started = true;
    std::thread(run).detach();
  }
  s.cv.notify_all();
}

void watchdog_phase(const std::string& phase) {
  State& s = state();
  std::lock_guard lk(s.m);
  s.phase = phase;
}

void watchdog_kick() {
  State& s = state();
  std::lock_guard lk(s.m);
  if (!s.armed) return;
  s.deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(s.seconds));
  s.cv.notify_all();
}

void watchdog_disarm() {
  State& s = state();
  std::lock_guard lk(s.m);
  s.armed = false;
  s.cv.notify_all();
}

}  // namespace softndk::tools
