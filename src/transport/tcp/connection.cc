// SPDX-License-Identifier: Apache-2.0
// transport/tcp/connection.cc - an established stream: peer-close detection, graceful
// and abortive teardown, leftover bytes, data path hand-off.
#include "transport/tcp/connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace softndk::tcp {

namespace {
std::atomic<long> g_live{0};
// Bytes the engine buffers for a data path that has not attached yet. Past
// this it stops reading (TCP flow control pushes back on the peer) and only
// watches for FIN/RST.
constexpr size_t kLeftoverCap = 256 * 1024;
constexpr size_t kReadChunk = 16 * 1024;

NTSTATUS close_status(int err) {
  if (err == 0) return STATUS_CONNECTION_DISCONNECTED;  // FIN
  if (err == ECONNRESET || err == EPIPE) return STATUS_CONNECTION_RESET;
  return STATUS_CONNECTION_ABORTED;
}
}  // namespace

long Connection::live_count() { return g_live.load(); }

std::shared_ptr<Connection> Connection::create(Init init) {
  struct Enabler : Connection {
    explicit Enabler(Init& i) : Connection(i) {}
  };
  auto c = std::make_shared<Enabler>(init);
  c->reactor_.post([c] { c->start_watch(); });
  return c;
}

Connection::Connection(Init& init)
    : reactor_(*init.reactor),
      fd_(init.fd.release()),
      role_(init.role),
      params_(std::move(init.params)),
      local_(local_address(fd_)),
      peer_(peer_address(fd_)),
      disconnect_timeout_(init.disconnect_timeout),
      mpa_request_(std::move(init.mpa_request)),
      mpa_reply_(std::move(init.mpa_reply)),
      mpa_round_trip_(init.mpa_round_trip),
      leftover_(std::move(init.leftover)),
      on_release_(std::move(init.on_release)) {
  g_live.fetch_add(1);
}

Connection::~Connection() {
  if (!closed()) close_socket(true);
  g_live.fetch_sub(1);
}

void Connection::start_watch() {
  if (state_ != State::kOpen) return;
  update_events();
}

void Connection::update_events() {
  if (closed()) return;
  uint32_t ev = EPOLLRDHUP;
  if (state_ == State::kDisconnecting || handler_ || reading_) ev |= EPOLLIN;
  if (handler_ && want_write_) ev |= EPOLLOUT;
  if (watching_) {
    reactor_.modify(fd_, ev);
    return;
  }
  std::weak_ptr<Connection> weak = weak_from_this();
  watching_ = reactor_.watch(fd_, ev, [weak](uint32_t e) {
    if (auto self = weak.lock()) self->on_event(e);
  });
}

void Connection::on_event(uint32_t ev) {
  switch (state_) {
    case State::kOpen:
      if (handler_) {
        auto h = handler_;  // the handler may detach itself
        if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) h->on_readable();
        if ((ev & EPOLLOUT) && state_ == State::kOpen && handler_ == h) h->on_writable();
        return;
      }
      if (reading_) {
        read_engine_mode();
      } else if (ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        peer_closed(socket_error(fd_));
      }
      return;
    case State::kDisconnecting:
      drain_for_disconnect();
      return;
    default:
      return;
  }
}

void Connection::read_engine_mode() {
  while (state_ == State::kOpen && !handler_) {
    if (leftover_.size() >= kLeftoverCap) {
      reading_ = false;  // keep only EPOLLRDHUP
      update_events();
      return;
    }
    const size_t at = leftover_.size();
    leftover_.resize(at + kReadChunk);
    ssize_t n = ::recv(fd_, leftover_.data() + at, kReadChunk, 0);
    leftover_.resize(at + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n > 0) continue;
    if (n == 0) {
      peer_closed(0);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      peer_closed(errno);
    }
    return;
  }
}

void Connection::report_peer_closed(int err) { peer_closed(err); }

void Connection::peer_closed(int err) {
  if (state_ != State::kOpen) return;
  state_ = State::kPeerClosed;
  handler_.reset();
  if (watching_) {
    reactor_.unwatch(fd_);
    watching_ = false;
  }
  peer_close_status_ = close_status(err);
  if (!peer_close_cb_) {
    peer_close_pending_ = true;
    return;
  }
  peer_close_reported_ = true;
  // Posted, so a data path reporting EOF from inside its handler is not
  // re-entered by the consumer's callback.
  reactor_.post([cb = std::move(peer_close_cb_), st = peer_close_status_] { cb(st); });
}

void Connection::on_peer_close(DoneCallback cb) {
  reactor_.post([self = shared_from_this(), cb = std::move(cb)]() mutable {
    if (self->peer_close_reported_) return;
    self->peer_close_cb_ = std::move(cb);
    if (self->peer_close_pending_ && self->state_ == State::kPeerClosed) {
      self->peer_close_pending_ = false;
      self->peer_close_reported_ = true;
      auto f = std::move(self->peer_close_cb_);
      f(self->peer_close_status_);
    }
  });
}

void Connection::disconnect(DoneCallback cb) {
  reactor_.post([self = shared_from_this(), cb = std::move(cb)]() mutable {
    switch (self->state_) {
      case State::kOpen:
        self->handler_.reset();
        self->peer_close_cb_ = nullptr;  // our own disconnect: no event (NDKPI.md 6.4)
        self->state_ = State::kDisconnecting;
        self->disconnect_cb_ = std::move(cb);
        self->self_ = self;              // alive until the disconnect completes
        ::shutdown(self->fd_, SHUT_WR);  // our FIN
        self->update_events();
        self->disconnect_timer_ = self->reactor_.after(
            self->disconnect_timeout_, [weak = std::weak_ptr<Connection>(self)] {
              if (auto s = weak.lock()) {
                s->disconnect_timer_ = 0;
                if (s->state_ == State::kDisconnecting) s->finish_disconnect(STATUS_IO_TIMEOUT);
              }
            });
        self->drain_for_disconnect();  // the FIN may already be queued
        return;
      case State::kPeerClosed: {
        // The peer's FIN (or RST) came first; a not yet delivered event is
        // dropped because the consumer disconnects itself.
        self->peer_close_pending_ = false;
        self->peer_close_cb_ = nullptr;
        const bool graceful = self->peer_close_status_ == STATUS_CONNECTION_DISCONNECTED;
        if (graceful) ::shutdown(self->fd_, SHUT_WR);
        self->close_socket(!graceful);
        self->state_ = State::kClosed;
        cb(graceful ? STATUS_SUCCESS : STATUS_CONNECTION_ABORTED);
        return;
      }
      default:
        cb(STATUS_CONNECTION_INVALID);
        return;
    }
  });
}

void Connection::drain_for_disconnect() {
  char buf[kReadChunk];
  for (;;) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) continue;  // after our Disconnect the QP takes nothing more
    if (n == 0) return finish_disconnect(STATUS_SUCCESS);
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    return finish_disconnect(STATUS_CONNECTION_ABORTED);
  }
}

void Connection::finish_disconnect(NTSTATUS st) {
  if (disconnect_timer_) reactor_.cancel(disconnect_timer_);
  disconnect_timer_ = 0;
  close_socket(st != STATUS_SUCCESS);  // a timed-out close is reset
  state_ = State::kClosed;
  auto cb = std::move(disconnect_cb_);
  disconnect_cb_ = nullptr;
  auto keep = std::move(self_);  // may be the last reference: dies after cb
  if (cb) cb(st);
}

void Connection::abort() {
  reactor_.post([self = shared_from_this()] {
    if (self->state_ == State::kClosed) return;
    if (self->disconnect_timer_) self->reactor_.cancel(self->disconnect_timer_);
    self->disconnect_timer_ = 0;
    self->handler_.reset();
    self->peer_close_cb_ = nullptr;
    self->peer_close_pending_ = false;
    self->close_socket(true);
    self->state_ = State::kClosed;
    self->self_.reset();  // the task's own reference keeps us alive
    if (auto cb = std::move(self->disconnect_cb_)) {
      self->disconnect_cb_ = nullptr;
      cb(STATUS_CANCELLED);
    }
  });
}

void Connection::close_socket(bool rst) {
  if (closed()) return;
  if (watching_) {
    reactor_.unwatch(fd_);
    watching_ = false;
  }
  if (rst) set_linger_zero(fd_);
  {
    std::lock_guard lk(close_mu_);
    ::close(fd_);
    closed_.store(true, std::memory_order_release);
  }
  if (auto r = std::move(on_release_)) {
    on_release_ = nullptr;
    r();
  }
}

bool Connection::tcp_stats(TcpStats* out) const {
  std::lock_guard lk(close_mu_);
  if (closed()) return false;
  return read_tcp_stats(fd_, out);
}

std::vector<uint8_t> Connection::take_leftover() {
  std::vector<uint8_t> out;
  out.swap(leftover_);
  if (!reading_ && state_ == State::kOpen) {
    reading_ = true;
    update_events();
  }
  return out;
}

void Connection::attach(std::shared_ptr<ConnectionHandler> h) {
  handler_ = std::move(h);
  if (state_ == State::kOpen) update_events();
}

void Connection::want_write(bool on) {
  want_write_ = on;
  if (state_ == State::kOpen) update_events();
}

}  // namespace softndk::tcp
