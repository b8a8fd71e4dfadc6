// SPDX-License-Identifier: Apache-2.0
// tcp_baseline.cc - raw TCP loopback baselines: stream, ping-pong, message
// rate. Both ends are threads of this process; in BusyPoll mode the sockets
// are non-blocking and each thread spins on EAGAIN (the analogue of polling a
// CQ), in Blocking mode the thread sleeps in send/recv (the analogue of a CQ
// notification, and it pays the same thread wake-up).
#include "baseline/tcp_baseline.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <latch>
#include <mutex>
#include <thread>

namespace softndk::baseline {
namespace {

// Watchdog: a run may take 2x its cap (warm-up is not capped, and a starved
// machine stretches it) plus this grace before a stuck peer is a failure.
constexpr double kWatchdogGraceS = 30.0;
// The stream reader's buffer: as large as the reference write, so a 1 MiB
// write can be drained by one recv when the kernel has it all.
constexpr size_t kStreamReadBuf = 1 << 20;

std::string errno_text(const char* what) { return std::string(what) + ": " + strerror(errno); }

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// One connected pair over 127.0.0.1, configured for the mode.
struct Pair {
  Fd client, server;
};

std::string make_pair(Mode mode, double watchdog_s, Pair& out) {
  Fd lst(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (lst.get() < 0) return errno_text("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (bind(lst.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) return errno_text("bind");
  if (listen(lst.get(), 1) < 0) return errno_text("listen");
  if (getsockname(lst.get(), reinterpret_cast<sockaddr*>(&a), &alen) < 0)
    return errno_text("getsockname");
  Fd c(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (c.get() < 0) return errno_text("socket");
  // Loopback connect completes against the backlog; no thread needed.
  if (connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) return errno_text("connect");
  Fd s(accept4(lst.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (s.get() < 0) return errno_text("accept");
  for (int fd : {c.get(), s.get()}) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
      return errno_text("TCP_NODELAY");
    if (mode == Mode::BusyPoll) {
      if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) return errno_text("O_NONBLOCK");
    } else {
      // A blocked thread must still wake up if its peer died.
      timeval tv{};
      tv.tv_sec = static_cast<time_t>(watchdog_s);
      tv.tv_usec = static_cast<suseconds_t>((watchdog_s - static_cast<double>(tv.tv_sec)) * 1e6);
      if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
          setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0)
        return errno_text("SO_RCVTIMEO");
    }
  }
  out.client = std::move(c);
  out.server = std::move(s);
  return {};
}

enum class Io { Ok, Eof, Fail };

// One end's socket with its wait discipline and a watchdog deadline.
struct End {
  int fd;
  Mode mode;
  Clock::time_point deadline;
  std::string err;

  // Returns true to retry after EAGAIN/EINTR; sets err on a real failure.
  bool again(const char* what) {
    if (errno == EINTR) return true;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // Blocking sockets only report EAGAIN when SO_*TIMEO expired.
      if (mode == Mode::BusyPoll && Clock::now() < deadline) return true;
      err = std::string(what) + ": timed out waiting for the peer";
      return false;
    }
    err = errno_text(what);
    return false;
  }

  Io send_all(const char* p, size_t n) {
    while (n > 0) {
      ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
      if (k > 0) {
        p += k;
        n -= static_cast<size_t>(k);
      } else if (!again("send")) {
        return Io::Fail;
      }
    }
    return Io::Ok;
  }

  // Reads up to n bytes; returns the count, 0 at EOF, -1 on failure.
  ssize_t recv_some(char* p, size_t n) {
    for (;;) {
      ssize_t k = ::recv(fd, p, n, 0);
      if (k >= 0) return k;
      if (!again("recv")) return -1;
    }
  }

  // Reads exactly n bytes. EOF before the first byte is a clean end (Eof);
  // EOF in the middle of a message is a failure.
  Io recv_all(char* p, size_t n) {
    size_t got = 0;
    while (got < n) {
      ssize_t k = recv_some(p + got, n - got);
      if (k < 0) return Io::Fail;
      if (k == 0) {
        if (got == 0) return Io::Eof;
        err = "recv: peer closed mid-message";
        return Io::Fail;
      }
      got += static_cast<size_t>(k);
    }
    return Io::Ok;
  }

  // Wakes the peer out of any wait after a failure on this side.
  void abort() { shutdown(fd, SHUT_RDWR); }
};

struct Run {
  Pair pair;
  Clock::time_point deadline;  // watchdog, beyond the run's own cap
  BaselineResult r;
  std::mutex mu;  // guards r across the two threads

  std::string setup(const char* name, size_t msg_size, const Limits& lim, Mode mode) {
    r.name = name;
    r.mode = mode_name(mode);
    r.msg_size = msg_size;
    if (msg_size == 0) return "message size must be at least 1 byte";
    if (lim.iterations == 0 && lim.max_seconds <= 0) return "need an iteration count or a duration";
    double watchdog = 2 * (lim.max_seconds > 0 ? lim.max_seconds : 3600) + kWatchdogGraceS;
    deadline = Clock::now() +
               std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(watchdog));
    return make_pair(mode, watchdog, pair);
  }
  void fail(const std::string& e) {
    std::lock_guard g(mu);
    if (r.error.empty()) r.error = e;
  }
};

Clock::time_point cap_from(Clock::time_point t0, const Limits& lim) {
  if (lim.max_seconds <= 0) return Clock::time_point::max();
  return t0 + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(lim.max_seconds));
}

// Shared by tcp_stream (per_message = false) and tcp_msg_rate (true).
BaselineResult one_way(const char* name, size_t msg_size, const Limits& lim, Mode mode,
                       bool per_message) {
  Run run;
  if (auto e = run.setup(name, msg_size, lim, mode); !e.empty()) {
    run.r.error = e;
    return run.r;
  }
  std::latch go(2);
  Clock::time_point t0, t_last;

  std::thread sender([&] {
    End end{run.pair.client.get(), mode, run.deadline, {}};
    std::vector<char> buf(msg_size, 'x');
    ThreadCpu c0 = ThreadCpu::now();
    go.arrive_and_wait();
    t0 = Clock::now();
    Clock::time_point cap = cap_from(t0, lim);
    uint64_t n = 0, sent = 0;
    while ((lim.iterations == 0 || n < lim.iterations) && Clock::now() < cap) {
      if (end.send_all(buf.data(), msg_size) != Io::Ok) {
        run.fail(end.err);
        end.abort();
        break;
      }
      ++n;
      sent += msg_size;
    }
    // EOF tells the reader the count; it needs no side channel.
    shutdown(end.fd, SHUT_WR);
    std::lock_guard g(run.mu);
    run.r.bytes_sent = sent;
    add_cpu(run.r, ThreadCpu::now() - c0, true);
  });

  std::thread receiver([&] {
    End end{run.pair.server.get(), mode, run.deadline, {}};
    std::vector<char> buf(per_message ? msg_size : std::max(msg_size, kStreamReadBuf));
    ThreadCpu c0 = ThreadCpu::now();
    go.arrive_and_wait();
    uint64_t bytes = 0, msgs = 0;
    Clock::time_point last{};
    for (;;) {
      if (per_message) {
        Io io = end.recv_all(buf.data(), msg_size);
        if (io == Io::Eof) break;
        if (io == Io::Fail) {
          run.fail(end.err);
          end.abort();
          break;
        }
        bytes += msg_size;
        ++msgs;
      } else {
        ssize_t k = end.recv_some(buf.data(), buf.size());
        if (k == 0) break;
        if (k < 0) {
          run.fail(end.err);
          end.abort();
          break;
        }
        bytes += static_cast<uint64_t>(k);
      }
      last = Clock::now();
    }
    if (!per_message) msgs = bytes / msg_size;
    t_last = last;
    std::lock_guard g(run.mu);
    run.r.bytes = bytes;
    run.r.iters = msgs;
    add_cpu(run.r, ThreadCpu::now() - c0, false);
  });

  sender.join();
  receiver.join();
  BaselineResult r = run.r;
  if (r.ok() && r.bytes != r.bytes_sent)
    r.error = "receiver counted " + std::to_string(r.bytes) + " bytes, sender sent " +
              std::to_string(r.bytes_sent);
  if (r.ok() && r.bytes == 0) r.error = "no data moved";
  if (r.ok()) {
    r.seconds = seconds_between(t0, t_last);
    finish_rates(r);
  }
  return r;
}

}  // namespace

BaselineResult tcp_stream(size_t msg_size, const Limits& limits, Mode mode) {
  return one_way("tcp_stream", msg_size, limits, mode, false);
}

BaselineResult tcp_msg_rate(size_t msg_size, const Limits& limits, Mode mode) {
  return one_way("tcp_msg_rate", msg_size, limits, mode, true);
}

BaselineResult tcp_pingpong(size_t msg_size, const Limits& lim, Mode mode) {
  Run run;
  if (auto e = run.setup("tcp_pingpong", msg_size, lim, mode); !e.empty()) {
    run.r.error = e;
    return run.r;
  }
  std::latch go(2);
  std::vector<uint64_t> rtt;
  if (lim.iterations) rtt.reserve(lim.iterations);
  Clock::time_point t0, t1;

  std::thread client([&] {
    End end{run.pair.client.get(), mode, run.deadline, {}};
    std::vector<char> out(msg_size, 'p'), in(msg_size);
    ThreadCpu c0 = ThreadCpu::now();
    go.arrive_and_wait();
    for (uint64_t i = 0; i < lim.warmup; ++i) {
      if (end.send_all(out.data(), msg_size) != Io::Ok ||
          end.recv_all(in.data(), msg_size) != Io::Ok) {
        run.fail(end.err.empty() ? "warm-up: peer closed" : end.err);
        end.abort();
        return;
      }
    }
    t0 = Clock::now();
    Clock::time_point cap = cap_from(t0, lim), t = t0;
    uint64_t n = 0;
    while ((lim.iterations == 0 || n < lim.iterations) && t < cap) {
      if (end.send_all(out.data(), msg_size) != Io::Ok ||
          end.recv_all(in.data(), msg_size) != Io::Ok) {
        run.fail(end.err.empty() ? "peer closed" : end.err);
        end.abort();
        break;
      }
      Clock::time_point t2 = Clock::now();
      rtt.push_back(static_cast<uint64_t>(std::chrono::nanoseconds(t2 - t).count()));
      t = t2;
      ++n;
    }
    t1 = t;
    shutdown(end.fd, SHUT_WR);
    std::lock_guard g(run.mu);
    run.r.bytes_sent = n * msg_size;
    run.r.iters = n;
    add_cpu(run.r, ThreadCpu::now() - c0, true);
  });

  std::thread server([&] {
    End end{run.pair.server.get(), mode, run.deadline, {}};
    std::vector<char> buf(msg_size);
    ThreadCpu c0 = ThreadCpu::now();
    go.arrive_and_wait();
    uint64_t got = 0;
    for (;;) {
      Io io = end.recv_all(buf.data(), msg_size);
      if (io == Io::Eof) break;
      if (io == Io::Ok) io = end.send_all(buf.data(), msg_size);
      if (io != Io::Ok) {
        run.fail(end.err);
        end.abort();
        break;
      }
      ++got;
    }
    std::lock_guard g(run.mu);
    run.r.bytes = got > lim.warmup ? (got - lim.warmup) * msg_size : 0;
    add_cpu(run.r, ThreadCpu::now() - c0, false);
  });

  client.join();
  server.join();
  BaselineResult r = run.r;
  if (r.ok() && r.bytes != r.bytes_sent)
    r.error = "server counted " + std::to_string(r.bytes) + " bytes, client sent " +
              std::to_string(r.bytes_sent);
  if (r.ok() && r.iters == 0) r.error = "no round trips completed";
  if (r.ok()) {
    r.seconds = seconds_between(t0, t1);
    finish_rates(r);
    finish_latency(r, rtt);
  }
  return r;
}

}  // namespace softndk::baseline
