// SPDX-License-Identifier: Apache-2.0
// transport/samehost/samehost.cc - the same-host rendezvous of samehost.h.
#include "transport/samehost/samehost.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>

namespace softndk::samehost {
namespace {

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

// The initiator waits this long for the responder to connect; the whole
// rendezvous ends by then (the connection stays on TCP).
constexpr std::chrono::milliseconds kGiveUp{2000};
// The responder's connect is retried this often (1, 2, 4 ... 512 ms, 1 s
// in all, inside kGiveUp): its stream may start before the initiator's has
// bound the name, by over the 127 ms that 7 retries gave on a starved host
// (ASan at load 20: an SMB connection stayed on TCP). The data path does
// not wait for this: it runs on TCP until the rendezvous is done.
constexpr int kConnectRetries = 10;

uint64_t fnv1a(uint64_t h, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

// Bytes that identify an IP endpoint (family, port, address; not padding).
size_t endpoint_key(const sockaddr_storage& a, uint8_t out[32]) {
  if (a.ss_family == AF_INET) {
    const auto& s = reinterpret_cast<const sockaddr_in&>(a);
    out[0] = AF_INET;
    std::memcpy(out + 1, &s.sin_port, 2);
    std::memcpy(out + 3, &s.sin_addr, 4);
    return 7;
  }
  if (a.ss_family == AF_INET6) {
    const auto& s = reinterpret_cast<const sockaddr_in6&>(a);
    out[0] = AF_INET6;
    std::memcpy(out + 1, &s.sin6_port, 2);
    std::memcpy(out + 3, &s.sin6_addr, 16);
    std::memcpy(out + 19, &s.sin6_scope_id, 4);
    return 23;
  }
  return 0;
}

bool same_endpoint(const sockaddr_storage& a, const sockaddr_storage& b) {
  uint8_t ka[32], kb[32];
  size_t na = endpoint_key(a, ka), nb = endpoint_key(b, kb);
  return na != 0 && na == nb && std::memcmp(ka, kb, na) == 0;
}

bool addrs(int fd, sockaddr_storage* local, sockaddr_storage* peer) {
  socklen_t l1 = sizeof *local, l2 = sizeof *peer;
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(local), &l1) == 0 &&
         ::getpeername(fd, reinterpret_cast<sockaddr*>(peer), &l2) == 0;
}

uint64_t netns_id(int fd) {
  uint64_t cookie = 0;
  socklen_t l = sizeof cookie;
  if (::getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &l) == 0) return cookie;
  struct stat st {};
  return ::stat("/proc/thread-self/ns/net", &st) == 0 ? st.st_ino : 0;
}

// Yama ptrace_scope 1 lets only descendants, or the one process named with
// PR_SET_PTRACER, read our memory. One process at a time: a second peer
// process is not granted (its probe fails and that connection stays on
// TCP) rather than taking access away from the first mid-connection.
void grant_ptrace(pid_t peer) {
  static std::mutex mu;
  static pid_t granted = 0;
  FILE* f = std::fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
  if (f == nullptr) return;  // no Yama: same uid is enough
  int scope = 0;
  if (std::fscanf(f, "%d", &scope) != 1) scope = 0;
  std::fclose(f);
  if (scope != 1 || peer == ::getpid()) return;
  std::lock_guard lk(mu);
  if (granted != 0 && granted != peer && ::kill(granted, 0) == 0) return;
  if (::prctl(PR_SET_PTRACER, static_cast<unsigned long>(peer), 0, 0, 0) == 0) granted = peer;
}

void fill_random(uint8_t* p, size_t n) {
  std::random_device rd;
  for (size_t i = 0; i < n; i += 4) {
    uint32_t v = rd();
    std::memcpy(p + i, &v, std::min<size_t>(4, n - i));
  }
}

sockaddr_un abstract_addr(const std::string& name, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  a.sun_path[0] = '\0';
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return a;
}

}  // namespace

namespace {
// We pull, and we map the segments descriptors name (samehost_segments.h).
constexpr uint8_t kCanPullAndMap = wire::kSamehostCanPull | wire::kSamehostCanMap;
}  // namespace

int samehost_pull(pid_t pid, uint8_t* dst, uint64_t src, size_t len) {
  while (len > 0) {
    iovec l{dst, len};
    iovec r{reinterpret_cast<void*>(static_cast<uintptr_t>(src)), len};
    ssize_t n = ::process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EFAULT;  // the next page is not mapped there
    dst += n;
    src += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
  return 0;
}

std::string Rendezvous::socket_name(const void* init_local, unsigned local_len,
                                    const void* init_peer, unsigned peer_len, uint64_t netns) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = fnv1a(h, &netns, sizeof netns);
  h = fnv1a(h, init_local, local_len);
  h = fnv1a(h, init_peer, peer_len);
  char buf[64];
  std::snprintf(buf, sizeof buf, "softndk-samehost-1-%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Rendezvous::Rendezvous(util::Reactor& r, int tcp_fd, bool initiator, bool may_pull)
    : reactor_(r),
      tcp_fd_(::fcntl(tcp_fd, F_DUPFD_CLOEXEC, 0)),
      initiator_(initiator),
      may_pull_(may_pull) {
  fill_random(nonce_, sizeof nonce_);
}

Rendezvous::~Rendezvous() {
  close_fds();
  if (pidfd_ >= 0) ::close(pidfd_);
}

std::shared_ptr<Rendezvous> Rendezvous::start(util::Reactor& r, int tcp_fd, bool initiator,
                                              bool may_pull) {
  std::shared_ptr<Rendezvous> rv(new Rendezvous(r, tcp_fd, initiator, may_pull));
  rv->begin();
  return rv;
}

void Rendezvous::begin() {
  if (tcp_fd_ < 0) return finish(SamehostReason::kError);
  sockaddr_storage local{}, peer{};
  if (!addrs(tcp_fd_, &local, &peer)) return finish(SamehostReason::kError);
  uint8_t kl[32], kp[32];
  // Named from the initiator's view of the 4-tuple: both ends compute it.
  const sockaddr_storage& il = initiator_ ? local : peer;
  const sockaddr_storage& ip = initiator_ ? peer : local;
  size_t nl = endpoint_key(il, kl), np = endpoint_key(ip, kp);
  if (nl == 0 || np == 0) return finish(SamehostReason::kNoPeer);
  name_ =
      socket_name(kl, static_cast<unsigned>(nl), kp, static_cast<unsigned>(np), netns_id(tcp_fd_));
  auto self = shared_from_this();
  timer_ = reactor_.after(kGiveUp, [self] {
    self->timer_ = 0;
    self->finish(SamehostReason::kNoPeer);
  });
  if (!initiator_) return try_connect();
  int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return finish(SamehostReason::kError);
  socklen_t len;
  sockaddr_un a = abstract_addr(name_, &len);
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(s, 1) != 0) {
    ::close(s);
    // In use: something else holds this connection's name; stay on TCP.
    return finish(SamehostReason::kNotVerified);
  }
  listen_fd_ = s;
  reactor_.watch(s, EPOLLIN, [self](uint32_t ev) { self->on_listen(ev); });
}

void Rendezvous::try_connect() {
  if (done()) return;
  int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return finish(SamehostReason::kError);
  socklen_t len;
  sockaddr_un a = abstract_addr(name_, &len);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), len) != 0) {
    int e = errno;
    ::close(s);
    if ((e == ECONNREFUSED || e == ENOENT || e == EAGAIN) && retries_ < kConnectRetries) {
      auto self = shared_from_this();
      retry_timer_ = reactor_.after(std::chrono::milliseconds(1 << retries_++), [self] {
        self->retry_timer_ = 0;
        self->try_connect();
      });
      return;
    }
    return finish(SamehostReason::kNoPeer);
  }
  conn_fd_ = s;
  ucred cr{};
  socklen_t cl = sizeof cr;
  if (::getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != ::geteuid())
    return finish(SamehostReason::kNotVerified);
  // The initiator probes our memory as soon as it has our hello.
  grant_ptrace(cr.pid);
  auto self = shared_from_this();
  reactor_.watch(s, EPOLLIN, [self](uint32_t ev) { self->on_msg(ev); });
  send_hello(0);
}

void Rendezvous::on_listen(uint32_t) {
  if (done() || listen_fd_ < 0) return;
  int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (c < 0) return;  // spurious; the timer bounds the wait
  reactor_.unwatch(listen_fd_);
  ::close(listen_fd_);
  listen_fd_ = -1;
  conn_fd_ = c;
  auto self = shared_from_this();
  reactor_.watch(c, EPOLLIN, [self](uint32_t ev) { self->on_msg(ev); });
}

void Rendezvous::send_hello(uint8_t flags) {
  wire::SamehostMsg m;
  m.type = wire::SamehostMsgType::kHello;
  m.flags = flags;
  m.pid = static_cast<uint32_t>(::getpid());
  m.probe_addr = reinterpret_cast<uintptr_t>(nonce_);
  std::memcpy(m.nonce, nonce_, sizeof nonce_);
  uint8_t buf[wire::kSamehostMsgSize];
  wire::encode_samehost_msg(m, buf);
  iovec v{buf, sizeof buf};
  // Our socket, and the ring we would send our FPDUs through (its memfd and
  // its two doorbells): the peer maps it if it verifies us.
  if (tx_ring_ == nullptr) tx_ring_ = ShmRing::create();
  int fds[4] = {tcp_fd_, -1, -1, -1};
  int nfds = 1;
  if (tx_ring_ != nullptr) {
    fds[1] = tx_ring_->memfd();
    fds[2] = tx_ring_->data_efd();
    fds[3] = tx_ring_->space_efd();
    nfds = 4;
  }
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr h{};
  h.msg_iov = &v;
  h.msg_iovlen = 1;
  h.msg_control = ctl;
  h.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<size_t>(nfds));
  cmsghdr* c = CMSG_FIRSTHDR(&h);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<size_t>(nfds));
  std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<size_t>(nfds));
  if (::sendmsg(conn_fd_, &h, MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(sizeof buf))
    finish(SamehostReason::kError);
}

void Rendezvous::send_ack(uint8_t flags) {
  wire::SamehostMsg m;
  m.type = wire::SamehostMsgType::kAck;
  m.flags = flags;
  uint8_t buf[wire::kSamehostMsgSize];
  wire::encode_samehost_msg(m, buf);
  if (::send(conn_fd_, buf, sizeof buf, MSG_NOSIGNAL | MSG_DONTWAIT) !=
      static_cast<ssize_t>(sizeof buf))
    finish(SamehostReason::kError);
}

bool Rendezvous::verify(const wire::SamehostMsg& m, int peer_tcp) {
  auto no = [this](SamehostReason r) {
    reason_.store(r, std::memory_order_release);
    return false;
  };
  ucred cr{};
  socklen_t cl = sizeof cr;
  if (::getsockopt(conn_fd_, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 ||
      cr.pid != static_cast<pid_t>(m.pid) || cr.uid != ::geteuid())
    return no(SamehostReason::kNotVerified);
  if (peer_tcp < 0) return no(SamehostReason::kNotVerified);
  int type = 0, proto = 0;
  socklen_t tl = sizeof type, pl = sizeof proto;
  if (::getsockopt(peer_tcp, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_STREAM ||
      ::getsockopt(peer_tcp, SOL_SOCKET, SO_PROTOCOL, &proto, &pl) != 0 || proto != IPPROTO_TCP)
    return no(SamehostReason::kNotVerified);
  // The passed socket must be the other end of ours: a 4-tuple is unique
  // within a network namespace, so a connected TCP socket with the mirror
  // addresses in our namespace is our peer's end and nothing else.
  sockaddr_storage ml{}, mp{}, pl2{}, pp{};
  if (!addrs(tcp_fd_, &ml, &mp) || !addrs(peer_tcp, &pl2, &pp) || !same_endpoint(pl2, mp) ||
      !same_endpoint(pp, ml) || netns_id(peer_tcp) != netns_id(tcp_fd_))
    return no(SamehostReason::kNotVerified);
  // Can we read its memory (ptrace policy, dumpable), and is it the
  // process that wrote the hello?
  uint8_t got[wire::kSamehostNonceSize];
  if (samehost_pull(static_cast<pid_t>(m.pid), got, m.probe_addr, sizeof got) != 0)
    return no(SamehostReason::kNoAccess);
  if (std::memcmp(got, m.nonce, sizeof got) != 0) return no(SamehostReason::kNotVerified);
  if (!may_pull_) return no(SamehostReason::kHooked);
  return true;
}

void Rendezvous::on_msg(uint32_t) {
  if (done() || conn_fd_ < 0) return;
  uint8_t buf[wire::kSamehostMsgSize + 1];
  iovec v{buf, sizeof buf};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr h{};
  h.msg_iov = &v;
  h.msg_iovlen = 1;
  h.msg_control = ctl;
  h.msg_controllen = sizeof ctl;
  ssize_t n = ::recvmsg(conn_fd_, &h, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  // One SCM_RIGHTS message of 1 (the TCP socket) or 4 descriptors (also
  // the peer's ring: memfd, data and space doorbells); anything else is
  // closed and the hello then fails verification.
  int fds[4] = {-1, -1, -1, -1};
  bool taken = false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const bool keep = !taken && (k == 1 || k == 4);
    for (size_t i = 0; i < k; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (keep) {
        fds[i] = fd;
      } else {
        ::close(fd);  // not ours to keep
      }
    }
    taken = taken || keep;
  }
  struct Closer {
    int* fds;
    ~Closer() {
      for (int i = 0; i < 4; ++i)
        if (fds[i] >= 0) ::close(fds[i]);
    }
  } closer{fds};
  const int peer_tcp = fds[0];
  if (n <= 0) return finish(got_hello_ ? SamehostReason::kPeerDeclined : SamehostReason::kNoPeer);
  auto m = wire::parse_samehost_msg({buf, static_cast<size_t>(n)});
  if (!m || (h.msg_flags & MSG_CTRUNC) != 0) return finish(SamehostReason::kNotVerified);
  if (!got_hello_) {
    if (m->type != wire::SamehostMsgType::kHello) return finish(SamehostReason::kNotVerified);
    got_hello_ = true;
    const bool ok = verify(*m, peer_tcp);
    peer_pid_.store(static_cast<pid_t>(m->pid), std::memory_order_release);
    // Before telling the peer: it may send descriptors as soon as it knows.
    if (ok) rx_ok_.store(true, std::memory_order_release);
    uint8_t flags = ok ? kCanPullAndMap : 0;
    if (ok && fds[1] >= 0) {
      // The peer's ring, mapped before we say so: its marker may follow
      // at once. The pidfd tells a sender on the ring that the peer died
      // (on TCP a reset would say so).
      rx_ring_ = ShmRing::attach(fds[1], fds[2], fds[3]);
      fds[1] = fds[2] = fds[3] = -1;  // attach() took them
      pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(m->pid), 0));
      if (rx_ring_ != nullptr && pidfd_ >= 0) {
        rx_ring_ok_.store(true, std::memory_order_release);
        flags |= wire::kSamehostRingOk;
      }
    }
    if (initiator_) {
      grant_ptrace(static_cast<pid_t>(m->pid));  // before our hello: the responder probes us
      send_hello(flags);
      return;
    }
    take_verdict(m->flags);
    send_ack(flags);
    return finish(ok && tx_ok() ? SamehostReason::kNone : SamehostReason::kPeerDeclined);
  }
  if (m->type != wire::SamehostMsgType::kAck) return finish(SamehostReason::kNotVerified);
  take_verdict(m->flags);
  finish(rx_ok() && tx_ok() ? SamehostReason::kNone : SamehostReason::kPeerDeclined);
}

void Rendezvous::take_verdict(uint8_t f) {
  // The peer mapped the ring we passed with our hello: our stream may move.
  if ((f & wire::kSamehostRingOk) && tx_ring_ != nullptr)
    tx_ring_ok_.store(true, std::memory_order_release);
  if ((f & wire::kSamehostCanPull) == 0) return;
  // Before tx_ok: a sender that sees tx_ok also sees whether it may name
  // segments.
  if (f & wire::kSamehostCanMap) tx_map_ok_.store(true, std::memory_order_release);
  tx_ok_.store(true, std::memory_order_release);
}

void Rendezvous::finish(SamehostReason why) {
  if (done_.exchange(true, std::memory_order_acq_rel)) return;
  if (why != SamehostReason::kNone && reason_.load() == SamehostReason::kNone)
    reason_.store(why, std::memory_order_release);
  if (timer_ != 0) reactor_.cancel(timer_);
  if (retry_timer_ != 0) reactor_.cancel(retry_timer_);
  timer_ = retry_timer_ = 0;
  close_fds();
}

void Rendezvous::close_fds() {
  for (int* fd : {&listen_fd_, &conn_fd_, &tcp_fd_}) {
    if (*fd < 0) continue;
    if (fd != &tcp_fd_) reactor_.unwatch(*fd);
    ::close(*fd);
    *fd = -1;
  }
}

void Rendezvous::cancel() {
  auto self = shared_from_this();
  if (reactor_.on_thread()) return finish(SamehostReason::kNone);
  reactor_.post([self] { self->finish(SamehostReason::kNone); });
}

}  // namespace softndk::samehost
