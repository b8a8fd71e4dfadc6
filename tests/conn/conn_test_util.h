// SPDX-License-Identifier: Apache-2.0
// conn_test_util.h - helpers for the connection engine tests: bounded waits,
// raw TCP peers that misbehave on purpose, fd counting.
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tcp/socket.h"

namespace softndk::tcp::test {

using namespace std::chrono_literals;
using Bytes = std::vector<uint8_t>;

// A value set once from a callback thread and awaited with a deadline.
template <typename T>
class Slot {
 public:
  void set(T v) {
    std::lock_guard lk(mu_);
    ++sets_;
    if (!v_) v_ = std::move(v);
    cv_.notify_all();
  }
  std::optional<T> wait(std::chrono::milliseconds d = 5000ms) {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, d, [&] { return v_.has_value(); });
    return v_;
  }
  int sets() {
    std::lock_guard lk(mu_);
    return sets_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<T> v_;
  int sets_ = 0;
};

// Counts and waits for a number of events.
class Counter {
 public:
  void add(int n = 1) {
    std::lock_guard lk(mu_);
    n_ += n;
    cv_.notify_all();
  }
  bool wait_for_count(int target, std::chrono::milliseconds d = 10000ms) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, d, [&] { return n_ >= target; });
  }
  int get() {
    std::lock_guard lk(mu_);
    return n_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_ = 0;
};

inline SockAddr loopback(uint16_t port = 0) { return *SockAddr::parse("127.0.0.1", port); }

// A port nothing listens on (bound then closed).
inline uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  auto a = loopback();
  ::bind(fd, a.sa(), a.len);
  uint16_t p = local_address(fd).port();
  ::close(fd);
  return p;
}

// Blocking raw TCP socket with a receive timeout, for misbehaving peers.
class RawSocket {
 public:
  RawSocket() = default;
  explicit RawSocket(int fd) : fd_(fd) { set_timeout(); }
  static RawSocket connect_to(const SockAddr& a) {
    int fd = ::socket(a.family(), SOCK_STREAM, 0);
    if (::connect(fd, a.sa(), a.len) != 0) {
      ::close(fd);
      return RawSocket();
    }
    return RawSocket(fd);
  }
  bool valid() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }
  bool send(const Bytes& b) {
    return ::send(fd_.get(), b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size());
  }
  // Reads until `n` bytes, EOF/error or the timeout.
  Bytes recv_n(size_t n, std::chrono::milliseconds t = 3000ms) {
    Bytes out;
    auto deadline = std::chrono::steady_clock::now() + t;
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      uint8_t buf[4096];
      ssize_t r = ::recv(fd_.get(), buf, std::min(sizeof buf, n - out.size()), 0);
      if (r <= 0) break;
      out.insert(out.end(), buf, buf + r);
    }
    return out;
  }
  // True when the peer closed (EOF or reset) within the timeout.
  bool wait_closed(std::chrono::milliseconds t = 3000ms) {
    auto deadline = std::chrono::steady_clock::now() + t;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      uint8_t buf[4096];
      ssize_t r = ::recv(fd_.get(), buf, sizeof buf, 0);
      if (r <= 0) return true;
    }
    return false;
  }

 private:
  void set_timeout() {
    timeval tv{3, 0};
    setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  Fd fd_;
};

// A raw listening socket (kernel completes handshakes; nobody answers MPA
// unless the test accept()s and writes).
class RawListener {
 public:
  RawListener() {
    fd_.reset(::socket(AF_INET, SOCK_STREAM, 0));
    int one = 1;
    setsockopt(fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    auto a = loopback();
    ::bind(fd_.get(), a.sa(), a.len);
    ::listen(fd_.get(), 64);
    addr_ = local_address(fd_.get());
  }
  const SockAddr& addr() const { return addr_; }
  RawSocket accept(std::chrono::milliseconds t = 3000ms) {
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(t.count())) <= 0) return RawSocket();
    return RawSocket(::accept(fd_.get(), nullptr, nullptr));
  }

 private:
  Fd fd_;
  SockAddr addr_;
};

inline int open_fd_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d)) ++n;
    ::closedir(d);
  }
  return n;
}

inline Bytes mpa_key(bool request) {
  const char* k = request ? "MPA ID Req Frame" : "MPA ID Rep Frame";
  return Bytes(k, k + 16);
}

// A raw MPA frame: key, flags, rev, PD_Length (may lie), private data.
inline Bytes raw_frame(bool request, uint8_t flags, uint8_t rev, const Bytes& pd,
                       std::optional<uint16_t> pd_len = std::nullopt) {
  Bytes b = mpa_key(request);
  uint16_t len = pd_len.value_or(static_cast<uint16_t>(pd.size()));
  b.push_back(flags);
  b.push_back(rev);
  b.push_back(static_cast<uint8_t>(len >> 8));
  b.push_back(static_cast<uint8_t>(len));
  b.insert(b.end(), pd.begin(), pd.end());
  return b;
}

}  // namespace softndk::tcp::test
