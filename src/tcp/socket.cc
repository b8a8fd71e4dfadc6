// SPDX-License-Identifier: Apache-2.0
// tcp/socket.cc - socket helpers.
#include "tcp/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tcp/tcp_stats.h"

namespace softndk::tcp {

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

SockAddr local_address(int fd) {
  SockAddr a;
  a.len = sizeof a.ss;
  if (getsockname(fd, a.sa(), &a.len) != 0) a.len = 0;
  return a;
}

SockAddr peer_address(int fd) {
  SockAddr a;
  a.len = sizeof a.ss;
  if (getpeername(fd, a.sa(), &a.len) != 0) a.len = 0;
  return a;
}

int make_tcp_socket(int family) {
  int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
  return fd < 0 ? -errno : fd;
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

namespace {

// `a` as an IPv4 address when it is one or an IPv4-mapped IPv6 one.
std::optional<in_addr> as_ipv4(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) return reinterpret_cast<const sockaddr_in*>(sa)->sin_addr;
  if (sa->sa_family == AF_INET6) {
    const in6_addr& a6 = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) {
      in_addr v4;
      std::memcpy(&v4, &a6.s6_addr[12], 4);
      return v4;
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_local_address(const SockAddr& a) {
  if (a.empty()) return false;
  if (a.is_loopback()) return true;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  const auto want4 = as_ipv4(a.sa());
  bool found = false;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (want4) {
      auto have4 = as_ipv4(i->ifa_addr);
      found = have4 && have4->s_addr == want4->s_addr;
    } else if (a.family() == AF_INET6 && i->ifa_addr->sa_family == AF_INET6) {
      found = IN6_ARE_ADDR_EQUAL(&reinterpret_cast<const sockaddr_in6*>(a.sa())->sin6_addr,
                                 &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr);
    }
  }
  ::freeifaddrs(list);
  return found;
}

bool is_host_local(int fd) {
  SockAddr peer = peer_address(fd), local = local_address(fd);
  if (peer.empty()) return false;
  return peer.is_loopback() || peer.same_host(local) || is_local_address(peer);
}

// Why a host-local connection changes algorithm: a pacing one (BBR, often
// the system default) models a bottleneck link that loopback does not have,
// and holds the sender to its estimate of it. On loopback here a Read
// Response stream under BBR showed ten times the out-of-order segments
// (rcv_ooopack 775 against 78 in `ss -ti`), more DSACKed retransmissions
// and a pacing rate below what the cores could move; the likely cause is
// that paced segments leave from a timer on whichever core it fires, beside
// the sender's own sendmsg on the other. docs/datapath.md has the figures.
bool apply_congestion(int fd, const std::string& policy) {
  if (policy == "system") return true;
  std::string algo = policy;
  if (algo.empty()) {
    if (!is_host_local(fd)) return true;
    algo = kLocalCongestion;
  }
  return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, algo.data(),
                    static_cast<socklen_t>(algo.size())) == 0;
}

bool congestion_allowed(const std::string& policy) {
  if (policy.empty() || policy == "system") return true;
  Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP));
  return s.valid() && setsockopt(s.get(), IPPROTO_TCP, TCP_CONGESTION, policy.data(),
                                 static_cast<socklen_t>(policy.size())) == 0;
}

std::string congestion_of(int fd) {
  TcpStats t;
  read_tcp_stats(fd, &t);
  return t.congestion;
}

void set_linger_zero(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

int socket_error(int fd) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
  return err;
}

}  // namespace softndk::tcp
