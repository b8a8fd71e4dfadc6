// SPDX-License-Identifier: Apache-2.0
// tcp/socket.h - small socket helpers for the connection engine: an owning
// fd, addresses of sockets (util/sockaddr.h), and the socket options siw uses (IWARP.md 9.7:
// TCP_NODELAY on every connection, SO_REUSEADDR on listeners).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>

#include "util/sockaddr.h"

namespace softndk::tcp {

// An owned file descriptor; closes on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

using util::SockAddr;

SockAddr local_address(int fd);
SockAddr peer_address(int fd);

// Non-blocking, close-on-exec TCP socket of the family; -errno on failure.
int make_tcp_socket(int family);
void set_nodelay(int fd);
// An address of this host: loopback, or assigned to an interface in the
// calling thread's network namespace (getifaddrs; IPv4-mapped IPv6 is
// compared as IPv4).
bool is_local_address(const SockAddr& a);
// A connection that never leaves this host: the peer is a loopback address,
// the same address as our end, or another of this host's addresses (the
// kernel routes all of them through lo).
bool is_host_local(int fd);
// TCP_CONGESTION for a connected socket (ConnSettings::congestion):
//   ""        automatic: kLocalCongestion on a host-local connection, the
//             system's default otherwise;
//   "system"  never changed;
//   a name    that algorithm on every connection.
// False when the kernel refused the algorithm (the socket keeps its own).
inline constexpr const char* kLocalCongestion = "cubic";
bool apply_congestion(int fd, const std::string& policy);
// Whether apply_congestion would accept `policy` here (a name is tried on a
// fresh socket).
bool congestion_allowed(const std::string& policy);
// The algorithm a socket uses ("" when unknown).
std::string congestion_of(int fd);
// SO_LINGER {1, 0}: close() then sends RST (abortive close, RFC 793 ABORT).
void set_linger_zero(int fd);
// Pending socket error (SO_ERROR), 0 if none.
int socket_error(int fd);

}  // namespace softndk::tcp
