// SPDX-License-Identifier: Apache-2.0
// transport/tcp/listener.cc - listening socket, MPA responder, pending connections.
#include "transport/tcp/listener.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "tcp/status.h"

namespace softndk::tcp {

namespace {
std::atomic<long> g_pending_live{0};
constexpr size_t kReadChunk = 4096;
constexpr int kAcceptBatch = 64;  // per readiness event, so one listener cannot starve others
constexpr std::chrono::milliseconds kFdExhaustedBackoff{50};
}  // namespace

// ---------------------------------------------------------------------------
// Listener
// ---------------------------------------------------------------------------

Listener::Listener(Engine& e, const ConnSettings& s, RequestCallback cb)
    : engine_(e), reactor_(e.pick()), settings_(s), on_request_(std::move(cb)) {}

Listener::~Listener() { close(); }

NTSTATUS Listener::create(Engine& engine, const ConnSettings& settings, const SockAddr& addr,
                          int backlog, RequestCallback on_request, std::shared_ptr<Listener>* out) {
  if (addr.empty() || !on_request) return STATUS_INVALID_PARAMETER;
  int fd = make_tcp_socket(addr.family());
  if (fd < 0) return status_from_errno(-fd, SockOp::kSocket);
  std::shared_ptr<Listener> l(new Listener(engine, settings, std::move(on_request)));
  l->fd_.reset(fd);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // siw does (IWARP.md 9.7)
  if (::bind(fd, addr.sa(), addr.len) != 0) {
    int e = errno;
    return e == EADDRINUSE && addr.port() == 0 ? STATUS_TOO_MANY_ADDRESSES
                                               : status_from_errno(e, SockOp::kBind);
  }
  l->backlog_ = backlog > 0 ? backlog : SOMAXCONN;
  if (::listen(fd, l->backlog_) != 0) return status_from_errno(errno, SockOp::kListen);
  l->local_ = local_address(fd);
  std::weak_ptr<Listener> weak = l;
  if (!l->reactor_.watch(fd, EPOLLIN, [weak](uint32_t) {
        if (auto s = weak.lock()) s->on_accept_ready();
      }))
    return STATUS_INSUFFICIENT_RESOURCES;
  *out = std::move(l);
  return STATUS_SUCCESS;
}

void Listener::on_accept_ready() {
  std::vector<std::shared_ptr<PendingConnection>> started;
  {
    std::lock_guard lk(mu_);
    if (!fd_.valid() || closed_.load() || paused_.load()) return;
    for (int i = 0; i < kAcceptBatch; ++i) {
      int c = ::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Level-triggered epoll would spin on a full descriptor table:
          // back off briefly and let the backlog absorb the burst.
          reactor_.unwatch(fd_.get());
          reactor_.after(kFdExhaustedBackoff, [weak = weak_from_this()] {
            auto s = weak.lock();
            if (!s) return;
            std::lock_guard lk2(s->mu_);
            if (s->fd_.valid() && !s->closed_.load() && !s->paused_.load())
              s->reactor_.watch(s->fd_.get(), EPOLLIN, [weak](uint32_t) {
                if (auto t = weak.lock()) t->on_accept_ready();
              });
          });
        }
        break;  // EAGAIN or a transient error (ECONNABORTED): next event
      }
      stats_.accepted.fetch_add(1);
      if (handshakes_.size() >= settings_.max_pending_handshakes) {
        stats_.overflow.fetch_add(1);
        set_linger_zero(c);
        ::close(c);
        continue;
      }
      set_nodelay(c);
      apply_congestion(c, settings_.congestion);
      // CRC where the bytes leave the host (the peer is not one of ours).
      ConnSettings s = settings_;
      if (s.crc_off_host && !is_host_local(c)) s.mpa.crc_request = true;
      std::shared_ptr<PendingConnection> p(
          new PendingConnection(engine_.pick(), Fd(c), shared_from_this(), s));
      handshakes_.emplace(p.get(), p);
      started.push_back(std::move(p));
    }
  }
  for (auto& p : started) p->reactor_.post([p] { p->start(); });
}

void Listener::handshake_done(PendingConnection* p) {
  std::lock_guard lk(mu_);
  handshakes_.erase(p);
}

NTSTATUS Listener::pause(bool paused) {
  std::lock_guard lk(mu_);
  if (closed_.load() || !fd_.valid()) return STATUS_CONNECTION_INVALID;
  if (paused == paused_.load()) return STATUS_SUCCESS;
  if (paused) {
    paused_.store(true);
    reactor_.unwatch(fd_.get());
    // SHUT_RD on a listening socket stops listening (Linux tcp_disconnect):
    // new SYNs are answered with RST, as if nobody listened. A port chosen
    // by the kernel (bind to port 0) is released by that, so bind it again
    // explicitly right away; an explicit port stays bound (EINVAL here).
    ::shutdown(fd_.get(), SHUT_RD);
    ::bind(fd_.get(), local_.sa(), local_.len);
    return STATUS_SUCCESS;
  }
  if (::listen(fd_.get(), backlog_) != 0) return status_from_errno(errno, SockOp::kListen);
  if (local_address(fd_.get()).port() != local_.port()) {
    // Someone took the port while we were paused.
    ::shutdown(fd_.get(), SHUT_RD);
    return STATUS_SHARING_VIOLATION;
  }
  std::weak_ptr<Listener> weak = weak_from_this();
  reactor_.watch(fd_.get(), EPOLLIN, [weak](uint32_t) {
    if (auto s = weak.lock()) s->on_accept_ready();
  });
  paused_.store(false);
  return STATUS_SUCCESS;
}

void Listener::close() {
  std::vector<std::weak_ptr<PendingConnection>> inflight;
  {
    std::lock_guard lk(mu_);
    closed_.store(true);
    if (fd_.valid()) {
      reactor_.unwatch(fd_.get());
      fd_.reset();  // stops listening now; queued, unaccepted SYNs get RST
    }
    for (auto& [_, w] : handshakes_) inflight.push_back(w);
    handshakes_.clear();
  }
  for (auto& w : inflight)
    if (auto p = w.lock())
      p->reactor_.post([p] {
        if (p->state_ == PendingConnection::State::kReading) p->drop(true);
      });
}

// ---------------------------------------------------------------------------
// PendingConnection
// ---------------------------------------------------------------------------

long PendingConnection::live_count() { return g_pending_live.load(); }

PendingConnection::PendingConnection(Reactor& r, Fd fd, std::shared_ptr<Listener> l,
                                     const ConnSettings& s)
    : reactor_(r), fd_(std::move(fd)), listener_(l), settings_(s) {
  local_ = local_address(fd_.get());
  peer_ = peer_address(fd_.get());
  g_pending_live.fetch_add(1);
}

PendingConnection::~PendingConnection() {
  if (fd_.valid()) {
    if (watching_) reactor_.unwatch(fd_.get());
    set_linger_zero(fd_.get());  // dropped without an answer: reset
  }
  g_pending_live.fetch_sub(1);
}

void PendingConnection::start() {
  self_ = shared_from_this();
  std::weak_ptr<PendingConnection> weak = self_;
  watching_ = reactor_.watch(fd_.get(), EPOLLIN | EPOLLRDHUP, [weak](uint32_t ev) {
    if (auto s = weak.lock()) s->on_event(ev);
  });
  if (!watching_) return drop(true);
  // siw waits MPAREP_TIMEOUT (5 s) for the Request (IWARP.md 9.3).
  timer_ = reactor_.after(settings_.request_timeout, [weak] {
    auto s = weak.lock();
    if (!s || s->state_ != State::kReading) return;
    s->timer_ = 0;
    if (auto l = s->listener_.lock()) l->stats_.timed_out.fetch_add(1);
    s->drop(true);
  });
}

void PendingConnection::on_event(uint32_t) {
  switch (state_) {
    case State::kReading:
      return read_request();
    case State::kPresented:
      return check_presented();
    case State::kAwaitRtr:
      return check_rtr();
    default:
      return;
  }
}

void PendingConnection::read_request() {
  auto listener = listener_.lock();
  auto count_drop = [&] {
    if (listener) listener->stats_.dropped.fetch_add(1);
  };
  for (;;) {
    const size_t at = rx_.size();
    rx_.resize(at + kReadChunk);
    ssize_t n = ::recv(fd_.get(), rx_.data() + at, kReadChunk, 0);
    rx_.resize(at + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n == 0) {
      count_drop();
      return drop(false);
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      count_drop();
      return drop(true);
    }
    mpa::Frame req;
    auto pr = mpa::parse_frame(rx_, mpa::FrameType::kRequest, req, settings_.mpa.recv_pd_limit);
    if (pr.status == mpa::Status::kNeedMore) continue;
    // Wrong key (garbage, or a Reply nobody asked for), rev > 2, oversized
    // PD_Length: siw drops the connection without a Reply (IWARP.md 9.3).
    // So do bytes behind the Request: the initiator must wait for our Reply.
    if (pr.status != mpa::Status::kOk || pr.consumed != rx_.size()) {
      count_drop();
      return drop(true);
    }
    if (mpa::evaluate_request(settings_.mpa, req, req_) != mpa::Status::kOk) {
      count_drop();
      return drop(true);
    }
    req_bytes_ = std::move(rx_);
    rx_.clear();
    rx_.shrink_to_fit();
    if (timer_) reactor_.cancel(timer_);
    timer_ = 0;
    if (req_.must_reject != mpa::Status::kOk) {
      // M=1, CRC policy, short v2 block, no usable RTR: reject Reply without
      // ULP data, then close (siw).
      if (listener) listener->stats_.refused.fetch_add(1);
      std::vector<uint8_t> bytes;
      mpa::build_reject(settings_.mpa, req_, {}, bytes);
      if (!bytes.empty()) send_all(bytes);
      ::shutdown(fd_.get(), SHUT_WR);
      return drop(false);
    }
    if (listener) listener->handshake_done(this);
    if (!listener || !listener->presenting()) return drop(true);  // paused or closed meanwhile
    state_ = State::kPresented;
    listener->stats_.presented.fetch_add(1);
    // From here the ULP owns us; the engine keeps watching for the
    // initiator leaving (or speaking before our Reply).
    auto me = std::move(self_);
    listener->on_request_(me);
    return;
  }
}

void PendingConnection::check_presented() {
  char b;
  ssize_t n = ::recv(fd_.get(), &b, 1, MSG_PEEK);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  {
    std::lock_guard lk(mu_);
    peer_gone_ = true;
  }
  // EOF: the initiator gave up. Data: it sent before our Reply (RFC 5044
  // 7.1 forbids it; siw aborts such a connection). Either way: reset.
  if (watching_) reactor_.unwatch(fd_.get());
  watching_ = false;
  set_linger_zero(fd_.get());
  fd_.reset();
  state_ = State::kDone;
}

NTSTATUS PendingConnection::accept(uint16_t ird, uint16_t ord, std::vector<uint8_t> pd,
                                   AcceptCallback cb) {
  if (!cb) return STATUS_INVALID_PARAMETER;
  if (pd.size() > mpa::max_ulp_private_data(settings_.mpa, req_.enhanced))
    return STATUS_INVALID_PARAMETER;
  {
    std::lock_guard lk(mu_);
    if (decided_) return STATUS_CONNECTION_INVALID;
    decided_ = true;
  }
  reactor_.post(
      [self = shared_from_this(), ird, ord, pd = std::move(pd), cb = std::move(cb)]() mutable {
        self->do_accept(ird, ord, std::move(pd), std::move(cb));
      });
  return STATUS_PENDING;
}

void PendingConnection::do_accept(uint16_t ird, uint16_t ord, std::vector<uint8_t> pd,
                                  AcceptCallback cb) {
  accept_cb_ = std::move(cb);
  self_ = shared_from_this();
  if (state_ != State::kPresented) return complete_accept(STATUS_CONNECTION_ABORTED);
  std::vector<uint8_t> reply;
  if (mpa::build_reply(settings_.mpa, req_, ird, ord, pd, reply, params_) != mpa::Status::kOk ||
      !send_all(reply))
    return complete_accept(STATUS_CONNECTION_ABORTED);
  reply_bytes_ = std::move(reply);
  if (!params_.p2p) return complete_accept(STATUS_SUCCESS);
  // RFC 6581: established when the initiator's RTR (its first FPDU) is
  // here; it stays in the socket for the data path to consume.
  state_ = State::kAwaitRtr;
  timer_ = reactor_.after(settings_.rtr_timeout, [weak = weak_from_this()] {
    auto s = weak.lock();
    if (!s || s->state_ != State::kAwaitRtr) return;
    s->timer_ = 0;
    s->complete_accept(STATUS_IO_TIMEOUT);
  });
  check_rtr();
}

void PendingConnection::check_rtr() {
  char b;
  ssize_t n = ::recv(fd_.get(), &b, 1, MSG_PEEK);
  if (n > 0) return complete_accept(STATUS_SUCCESS);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  complete_accept(STATUS_CONNECTION_ABORTED);
}

void PendingConnection::complete_accept(NTSTATUS st) {
  auto keep = shared_from_this();
  auto cb = std::move(accept_cb_);
  accept_cb_ = nullptr;
  if (timer_) reactor_.cancel(timer_);
  timer_ = 0;
  std::shared_ptr<Connection> conn;
  if (st == STATUS_SUCCESS) {
    if (watching_) reactor_.unwatch(fd_.get());
    watching_ = false;
    Connection::Init init;
    init.reactor = &reactor_;
    init.fd = std::move(fd_);
    init.role = Role::kResponder;
    init.params = std::move(params_);
    init.mpa_request = std::move(req_bytes_);
    init.mpa_reply = std::move(reply_bytes_);
    init.disconnect_timeout = settings_.disconnect_timeout;
    conn = Connection::create(std::move(init));
    state_ = State::kDone;
    self_.reset();
  } else {
    drop(true);
  }
  if (cb) cb(st, std::move(conn));
}

NTSTATUS PendingConnection::reject(std::span<const uint8_t> pd) {
  if (pd.size() > mpa::max_ulp_private_data(settings_.mpa, req_.enhanced))
    return STATUS_INVALID_PARAMETER;
  {
    std::lock_guard lk(mu_);
    if (decided_) return STATUS_CONNECTION_INVALID;
    decided_ = true;
    if (peer_gone_) return STATUS_CONNECTION_ABORTED;
  }
  std::vector<uint8_t> bytes;
  mpa::build_reject(settings_.mpa, req_, pd, bytes);
  reactor_.post([self = shared_from_this(), bytes = std::move(bytes)] {
    if (self->state_ != State::kPresented) return;
    if (!bytes.empty()) self->send_all(bytes);
    ::shutdown(self->fd_.get(), SHUT_WR);  // R=1 Reply, then close (RFC 5044 7.1)
    self->drop(false);
  });
  return STATUS_SUCCESS;
}

void PendingConnection::abandon() {
  {
    std::lock_guard lk(mu_);
    decided_ = true;
  }
  reactor_.post([self = shared_from_this()] {
    if (self->accept_cb_) return self->complete_accept(STATUS_CANCELLED);
    if (self->state_ != State::kDone) self->drop(true);
  });
}

bool PendingConnection::send_all(const std::vector<uint8_t>& bytes) {
  // A Request/Reply is at most 532 bytes and goes into a fresh socket's send
  // buffer (>= 16 KiB) at once; a short write means the socket is broken.
  ssize_t n = ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  return n == static_cast<ssize_t>(bytes.size());
}

void PendingConnection::drop(bool rst) {
  if (timer_) reactor_.cancel(timer_);
  timer_ = 0;
  if (fd_.valid()) {
    if (watching_) reactor_.unwatch(fd_.get());
    if (rst) set_linger_zero(fd_.get());
    fd_.reset();
  }
  watching_ = false;
  if (state_ == State::kReading)
    if (auto l = listener_.lock()) l->handshake_done(this);
  state_ = State::kDone;
  self_.reset();  // callers hold a reference for the rest of their frame
}

}  // namespace softndk::tcp
