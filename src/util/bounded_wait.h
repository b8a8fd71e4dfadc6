// SPDX-License-Identifier: Apache-2.0
// util/bounded_wait.h - a condition-variable wait that is not silent: each
// time `every` passes without the condition it says what it waits for (on
// stderr, or to a test's sink), so a wait that should take microseconds and
// hangs names itself instead of freezing the process without a word.
//
// It keeps waiting past the report: the waits it serves (the net monitor's
// thread stopping, a callback in flight, a reactor thread starting) guard
// objects that the waiter is about to free or use, and giving up would turn
// a hang into a use after free. Waits that can give up safely use a deadline
// of their own (Pending::finish, Adapter::close_blocking).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>

namespace softndk::util {

// Where the reports go; tests replace it (nullptr: stderr).
inline std::function<void(const std::string&)>& wait_report_sink() {
  static std::function<void(const std::string&)> sink;
  return sink;
}

inline void report_wait(const std::string& text) {
  if (auto& s = wait_report_sink()) {
    s(text);
    return;
  }
  std::fprintf(stderr, "softndk: %s\n", text.c_str());
}

// Waits until pred() holds; every `every` without it reports "still waiting
// for <what()> after N s". Returns how many reports it made.
template <class Pred>
int wait_reporting(std::condition_variable& cv, std::unique_lock<std::mutex>& lk, Pred pred,
                   const std::function<std::string()>& what,
                   std::chrono::milliseconds every = std::chrono::seconds(10)) {
  int reports = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (!cv.wait_for(lk, every, pred)) {
    ++reports;
    const auto s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0);
    report_wait("still waiting for " + what() + " after " + std::to_string(s.count()) + " s");
  }
  return reports;
}

}  // namespace softndk::util
