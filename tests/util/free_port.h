// SPDX-License-Identifier: Apache-2.0
// tests/util/free_port.h - a TCP port on 127.0.0.1 for a test's server to
// listen on, shared by the tools' and the WDK kit's end-to-end tests.
//
// The port is picked at random below the kernel's ephemeral range: a port
// that bind(0) hands out is an ephemeral one, which any connect() on the
// host (a parallel test's clients, hundreds a second) may take as its local
// port in the moment before the server meant to listen on it binds. A
// random pick keeps tests running in parallel from choosing the same one.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>

namespace test_util {

// True if a TCP socket can bind 127.0.0.1:port now (no SO_REUSEADDR: a
// port with a socket in TIME_WAIT counts as taken too).
inline bool loopback_port_bindable(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

inline int free_port_below_ephemeral() {
  int low = 32768;
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  range >> low;
  constexpr int kFirst = 20000;
  if (low - kFirst >= 1000) {
    std::mt19937 pick(std::random_device{}());
    std::uniform_int_distribution<int> in(kFirst, low - 1);
    for (int i = 0; i < 500; ++i) {
      const int p = in(pick);
      if (loopback_port_bindable(p)) return p;
    }
  }
  // A host whose ephemeral range starts low: an ephemeral port after all.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace test_util
