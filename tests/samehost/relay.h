// SPDX-License-Identifier: Apache-2.0
// relay.h - a user-space TCP relay on 127.0.0.1 for the same-host tests:
// what the interop VM's socat port forwarding does. Each accepted
// connection is joined to a new connection to the target, and bytes are
// copied both ways until either side closes. The two TCP connections have
// different 4-tuples, so the same-host rendezvous must not match them.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <thread>
#include <vector>

namespace samehost_test {

class Relay {
 public:
  explicit Relay(uint16_t target_port) : target_(target_port) {
    lfd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    if (::bind(lfd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(lfd_, 4) == 0 &&
        ::getsockname(lfd_, reinterpret_cast<sockaddr*>(&a), &l) == 0)
      port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~Relay() {
    stop_ = true;
    thread_.join();
    ::close(lfd_);
  }
  uint16_t port() const { return port_; }
  uint64_t bytes() const { return bytes_.load(); }

 private:
  void run() {
    std::vector<int> pairs;  // client, server, client, server, ...
    std::vector<bool> eof;   // nothing more to read from pairs[i]
    while (!stop_) {
      std::vector<pollfd> p{{lfd_, POLLIN, 0}};
      for (size_t i = 0; i < pairs.size(); ++i) p.push_back({eof[i] ? -1 : pairs[i], POLLIN, 0});
      if (::poll(p.data(), p.size(), 20) <= 0) continue;
      if (p[0].revents & POLLIN) {
        int c = ::accept4(lfd_, nullptr, nullptr, SOCK_CLOEXEC);
        int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(target_);
        if (c >= 0 && ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
          pairs.push_back(c);
          pairs.push_back(s);
          eof.push_back(false);
          eof.push_back(false);
        } else {
          if (c >= 0) ::close(c);
          ::close(s);
        }
      }
      for (size_t i = 1; i < p.size(); ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const size_t k = i - 1;
        const int from = pairs[k], to = pairs[k ^ 1];
        char buf[65536];
        ssize_t n = ::recv(from, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
          bytes_ += static_cast<uint64_t>(n);
          for (ssize_t off = 0; off < n;) {
            ssize_t w = ::send(to, buf + off, static_cast<size_t>(n - off), MSG_NOSIGNAL);
            if (w <= 0) break;
            off += w;
          }
        } else if (n == 0 || (n < 0 && errno != EAGAIN)) {
          eof[k] = true;
          ::shutdown(to, SHUT_WR);
        }
      }
    }
    for (int fd : pairs) ::close(fd);
  }

  uint16_t target_;
  int lfd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> bytes_{0};
  std::thread thread_;
};

}  // namespace samehost_test
