// SPDX-License-Identifier: Apache-2.0
// Reactor::shutdown and Engine::stop are bounded: a thread stuck in a task
// past the bound is reported (what it is running, for how long) and the
// call returns false, leaving the thread running on memory the caller keeps.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "util/bounded_wait.h"
#include "util/reactor.h"

namespace softndk::util {
namespace {

// Collects the wait reports for one test.
class Reports {
 public:
  Reports() {
    wait_report_sink() = [this](const std::string& s) {
      std::lock_guard lk(mu_);
      lines_.push_back(s);
    };
  }
  ~Reports() { wait_report_sink() = nullptr; }
  std::vector<std::string> lines() {
    std::lock_guard lk(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

// A task that blocks its reactor until release().
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, open = false;
  void block() {
    std::unique_lock lk(mu);
    entered = true;
    cv.notify_all();
    cv.wait_for(lk, std::chrono::seconds(50), [&] { return open; });
  }
  bool wait_entered() {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, std::chrono::seconds(30), [&] { return entered; });
  }
  void release() {
    std::lock_guard lk(mu);
    open = true;
    cv.notify_all();
  }
};

TEST(ReactorStop, AStuckTaskIsReportedAndShutdownReturnsFalse) {
  Reports reports;
  auto gate = std::make_shared<Gate>();
  Reactor r("test-stuck");
  r.post([gate] { gate->block(); });
  ASSERT_TRUE(gate->wait_entered());
  EXPECT_FALSE(r.shutdown(std::chrono::milliseconds(50)));
  auto lines = reports.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("reactor thread 'test-stuck' has not stopped after 50 ms"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("it is running a task for "), std::string::npos) << lines[0];
  // The thread still runs the task; once it returns, the stop completes.
  gate->release();
  EXPECT_TRUE(r.shutdown(std::chrono::seconds(30)));
  EXPECT_EQ(reports.lines().size(), 1u);
}

TEST(ReactorStop, AnIdleReactorStopsWithoutAReport) {
  Reports reports;
  Reactor r("test-idle");
  EXPECT_EQ(r.state_text(), "waiting for events");
  EXPECT_TRUE(r.shutdown(std::chrono::seconds(30)));
  EXPECT_TRUE(reports.lines().empty());
}

TEST(ReactorStop, AStuckTimerIsNamed) {
  Reports reports;
  auto gate = std::make_shared<Gate>();
  Reactor r("test-timer");
  r.after(std::chrono::milliseconds(1), [gate] { gate->block(); });
  ASSERT_TRUE(gate->wait_entered());
  EXPECT_FALSE(r.shutdown(std::chrono::milliseconds(20)));
  auto lines = reports.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("running a timer"), std::string::npos) << lines[0];
  gate->release();
  EXPECT_TRUE(r.shutdown());
}

// Engine::stop reports each stuck thread and returns false; the caller
// (Adapter::close_blocking) then keeps the engine: here the test keeps it
// until the task ends, then destroys it normally.
TEST(ReactorStop, EngineStopIsBoundedAndNamesTheStuckThread) {
  Reports reports;
  auto gate = std::make_shared<Gate>();
  auto engine = std::make_unique<Engine>(2);
  engine->at(1).post([gate] { gate->block(); });
  ASSERT_TRUE(gate->wait_entered());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(engine->stop(std::chrono::milliseconds(100)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  auto lines = reports.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("reactor thread 'softndk-eng1' has not stopped"), std::string::npos)
      << lines[0];
  gate->release();
  EXPECT_TRUE(engine->stop());
  engine.reset();
  EXPECT_EQ(reports.lines().size(), 1u);
}

}  // namespace
}  // namespace softndk::util
