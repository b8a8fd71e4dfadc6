// SPDX-License-Identifier: Apache-2.0
// conn_setup_rate.cc - connection setup rate on loopback (TCP connect +
// accept + MPA exchange + graceful disconnect, `window` in flight) and
// engine memory per idle connection. A benchmark, not a test.
//
//   conn_setup_rate [total=20000] [window=256] [threads=2] [idle=2000]
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "tcp/status.h"
#include "transport/tcp/connector.h"
#include "transport/tcp/listener.h"

using namespace softndk::tcp;
using namespace std::chrono_literals;

namespace {

// Heap bytes in use (glibc), which unlike RSS is not hidden by memory the
// allocator kept from earlier runs.
long heap_bytes() { return static_cast<long>(mallinfo2().uordblks); }

struct Bench {
  Engine engine;
  ConnSettings settings;
  std::shared_ptr<Listener> listener;
  std::mutex mu;
  std::condition_variable cv;
  int done = 0, failed = 0, started = 0;
  int total = 0;
  bool hold = false;  // idle test: keep connections open
  std::vector<std::shared_ptr<Connection>> held;

  explicit Bench(unsigned threads) : engine(threads) {}

  void finish_one(bool ok) {
    std::lock_guard lk(mu);
    ++done;
    if (!ok) ++failed;
    cv.notify_all();
  }

  void start_one() {
    ConnectArgs a;
    a.dst = listener->local();
    a.ird = a.ord = 4;
    NTSTATUS st = ActiveConnect::start(engine.pick(), settings, a, [this](ConnectResult r) {
      if (r.status != STATUS_SUCCESS) {
        std::fprintf(stderr, "connect: %s\n", status_name(r.status));
        return next(false);
      }
      if (hold) {
        {
          std::lock_guard lk(mu);
          held.push_back(r.connection);
        }
        return next(true);
      }
      r.connection->disconnect([this](NTSTATUS d) { next(d == STATUS_SUCCESS); });
    });
    if (st != STATUS_PENDING) next(false);
  }

  void next(bool ok) {
    bool more;
    {
      std::lock_guard lk(mu);
      more = started < total;
      if (more) ++started;
    }
    finish_one(ok);
    if (more) start_one();
  }

  void run(int n, int window) {
    {
      std::lock_guard lk(mu);
      total = n;
      done = failed = 0;
      started = std::min(n, window);
    }
    for (int i = 0; i < std::min(n, window); ++i) start_one();
    std::unique_lock lk(mu);
    cv.wait_for(lk, 120s, [&] { return done >= total; });
  }
};

}  // namespace

int main(int argc, char** argv) {
  int total = argc > 1 ? std::atoi(argv[1]) : 20000;
  int window = argc > 2 ? std::atoi(argv[2]) : 256;
  unsigned threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 2;
  int idle = argc > 4 ? std::atoi(argv[4]) : 2000;

  Bench b(threads);
  b.settings.connect_timeout = 20000ms;
  NTSTATUS st = Listener::create(
      b.engine, b.settings, *SockAddr::parse("127.0.0.1", 0), 4096,
      [](std::shared_ptr<PendingConnection> p) {
        p->accept(4, 4, {}, [](NTSTATUS s, std::shared_ptr<Connection> c) {
          if (s != STATUS_SUCCESS) return;
          // The server answers the client's FIN with its own.
          c->on_peer_close([c](NTSTATUS) { c->disconnect([](NTSTATUS) {}); });
        });
      },
      &b.listener);
  if (st != STATUS_SUCCESS) {
    std::fprintf(stderr, "listen: %s\n", status_name(st));
    return 1;
  }

  b.run(std::min(total, 1000), window);  // warm-up
  auto t0 = std::chrono::steady_clock::now();
  b.run(total, window);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "setup rate: %d connections (connect+accept+MPA+disconnect), window %d, %u "
      "engine threads: %.3f s, %.0f conn/s, %d failed\n",
      total, window, threads, secs, total / secs, b.failed);

  // Idle memory: hold `idle` connected pairs, measure heap growth.
  std::this_thread::sleep_for(200ms);
  long before = heap_bytes();
  b.hold = true;
  b.run(idle, window);
  std::this_thread::sleep_for(200ms);
  long after = heap_bytes();
  std::printf(
      "idle memory: %d connected pairs, heap +%ld KiB = %.0f bytes per connection end "
      "(engine objects only; kernel socket buffers not included)\n",
      idle, (after - before) / 1024, idle ? double(after - before) / (2.0 * idle) : 0.0);
  for (auto& c : b.held) c->abort();
  b.held.clear();
  b.listener->close();
  return b.failed ? 1 : 0;
}
