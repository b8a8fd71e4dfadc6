// SPDX-License-Identifier: Apache-2.0
// transport/tcp/connector.cc - active connect + MPA initiator, shared endpoints.
#include "transport/tcp/connector.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "tcp/status.h"

namespace softndk::tcp {

namespace {
std::atomic<long> g_live{0};
constexpr size_t kReadChunk = 4096;
}  // namespace

NTSTATUS status_from_mpa(mpa::Status s) {
  switch (s) {
    case mpa::Status::kOk:
      return STATUS_SUCCESS;
    case mpa::Status::kRejected:
      return STATUS_CONNECTION_REFUSED;
    case mpa::Status::kNotEnhanced:
    case mpa::Status::kMarkers:
    case mpa::Status::kCrcRequired:
    case mpa::Status::kCrcRefused:
    case mpa::Status::kInsufficientIrd:
    case mpa::Status::kNoMatchingRtr:
      return STATUS_NOT_SUPPORTED;
    case mpa::Status::kBadArgument:
      return STATUS_INVALID_PARAMETER;
    default:
      return STATUS_DATA_ERROR;  // malformed frame, trailing data
  }
}

// ---------------------------------------------------------------------------
// SharedEndpoint
// ---------------------------------------------------------------------------

NTSTATUS SharedEndpoint::create(const SockAddr& local, std::shared_ptr<SharedEndpoint>* out) {
  if (local.empty()) return STATUS_INVALID_ADDRESS;
  int fd = make_tcp_socket(local.family());
  if (fd < 0) return status_from_errno(-fd, SockOp::kSocket);
  std::shared_ptr<SharedEndpoint> ep(new SharedEndpoint());
  ep->reserve_.reset(fd);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (::bind(fd, local.sa(), local.len) != 0) {
    int e = errno;
    return e == EADDRINUSE && local.port() == 0 ? STATUS_TOO_MANY_ADDRESSES
                                                : status_from_errno(e, SockOp::kBind);
  }
  ep->local_ = local_address(fd);
  *out = std::move(ep);
  return STATUS_SUCCESS;
}

size_t SharedEndpoint::connections() const {
  std::lock_guard lk(mu_);
  return peers_.size();
}

bool SharedEndpoint::claim(const SockAddr& peer) {
  std::lock_guard lk(mu_);
  return peers_.insert(peer.str()).second;
}

void SharedEndpoint::release(const SockAddr& peer) {
  std::lock_guard lk(mu_);
  peers_.erase(peer.str());
}

// ---------------------------------------------------------------------------
// ActiveConnect
// ---------------------------------------------------------------------------

long ActiveConnect::live_count() { return g_live.load(); }

ActiveConnect::ActiveConnect(Reactor& r, const ConnSettings& s, ConnectArgs a, Callback cb)
    : reactor_(r), settings_(s), args_(std::move(a)), cb_(std::move(cb)) {
  g_live.fetch_add(1);
}

ActiveConnect::~ActiveConnect() {
  if (claimed_ && args_.shared) args_.shared->release(args_.dst);
  g_live.fetch_sub(1);
}

NTSTATUS ActiveConnect::start(Reactor& reactor, const ConnSettings& settings, ConnectArgs args,
                              Callback cb, std::shared_ptr<ActiveConnect>* out) {
  if (args.dst.empty() || args.dst.port() == 0 || !cb) return STATUS_INVALID_PARAMETER;
  const SockAddr src = args.shared ? args.shared->local() : args.src;
  if (!src.empty() && src.family() != args.dst.family()) return STATUS_INVALID_ADDRESS;

  // CRC where the bytes leave the host. Decided here, on the caller's
  // thread: the socket below is made in its network namespace.
  ConnSettings s = settings;
  if (s.crc_off_host && !is_local_address(args.dst)) s.mpa.crc_request = true;
  std::shared_ptr<ActiveConnect> c(new ActiveConnect(reactor, s, std::move(args), std::move(cb)));
  // Build the Request first: an oversized private data fails inline.
  mpa::RequestArgs ra{c->args_.ird, c->args_.ord, c->args_.private_data};
  if (mpa::build_request(c->settings_.mpa, ra, c->tx_) != mpa::Status::kOk)
    return STATUS_INVALID_PARAMETER;

  int fd = make_tcp_socket(c->args_.dst.family());
  if (fd < 0) return status_from_errno(-fd, SockOp::kSocket);
  c->fd_.reset(fd);
  set_nodelay(fd);  // siw_tcp_nagle = false (IWARP.md 9.7)
  int one = 1;
  if (c->args_.shared) {
    if (!c->args_.shared->claim(c->args_.dst)) return STATUS_ADDRESS_ALREADY_EXISTS;
    c->claimed_ = true;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (::bind(fd, src.sa(), src.len) != 0) return status_from_errno(errno, SockOp::kBind);
  } else if (!src.empty() && !(src.is_any() && src.port() == 0)) {
    // Port 0: let connect() pick the port so the 4-tuple, not the 2-tuple,
    // must be unique (scales the ephemeral range).
    if (src.port() == 0) setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    if (::bind(fd, src.sa(), src.len) != 0) {
      int e = errno;
      return e == EADDRINUSE && src.port() == 0 ? STATUS_TOO_MANY_ADDRESSES
                                                : status_from_errno(e, SockOp::kBind);
    }
  }

  c->self_ = c;
  c->timer_ = reactor.after(settings.connect_timeout, [weak = std::weak_ptr<ActiveConnect>(c)] {
    if (auto s = weak.lock()) {
      s->timer_ = 0;
      s->fail(STATUS_IO_TIMEOUT);
    }
  });
  int rc = ::connect(fd, c->args_.dst.sa(), c->args_.dst.len);
  int err = rc == 0 ? 0 : errno;
  if (err != 0 && err != EINPROGRESS) {
    const SockOp op = c->args_.shared ? SockOp::kShared : SockOp::kConnect;
    reactor.post([c, st = status_from_errno(err, op)] { c->fail(st); });
  } else {
    // Connected or in progress: writability reports the outcome. The
    // handler may run at once on the reactor; nothing below touches c.
    std::weak_ptr<ActiveConnect> weak = c;
    c->watching_ = true;
    if (!reactor.watch(fd, EPOLLOUT, [weak](uint32_t ev) {
          if (auto s = weak.lock()) s->on_event(ev);
        })) {
      reactor.post([c] { c->fail(STATUS_INSUFFICIENT_RESOURCES); });
    }
  }
  if (out) *out = c;
  return STATUS_PENDING;
}

void ActiveConnect::cancel() {
  reactor_.post([self = shared_from_this()] { self->fail(STATUS_CANCELLED); });
}

void ActiveConnect::on_event(uint32_t ev) {
  switch (state_) {
    case State::kConnecting: {
      if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
      int err = socket_error(fd_.get());
      if (err == 0 && (ev & (EPOLLERR | EPOLLHUP))) err = ECONNREFUSED;
      if (err != 0)
        return fail(status_from_errno(err, args_.shared ? SockOp::kShared : SockOp::kConnect));
      return on_connected();
    }
    case State::kSending:
      return flush_request();
    case State::kAwaitReply:
      return read_reply();
    case State::kHoldoff:  // not watched
    case State::kDone:
      return;
  }
}

void ActiveConnect::on_connected() {
  // Connected: the peer's address is known now (the rule looks at it).
  apply_congestion(fd_.get(), settings_.congestion);
  state_ = State::kSending;
  flush_request();
}

void ActiveConnect::flush_request() {
  while (tx_off_ < tx_.size()) {
    ssize_t n = ::send(fd_.get(), tx_.data() + tx_off_, tx_.size() - tx_off_, MSG_NOSIGNAL);
    if (n > 0) {
      tx_off_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      reactor_.modify(fd_.get(), EPOLLOUT);
      return;
    }
    return fail(status_from_errno(n < 0 ? errno : EPIPE, SockOp::kIo));
  }
  // RFC 5044 7.1: nothing more from us until the Reply has arrived.
  request_sent_at_ = std::chrono::steady_clock::now();
  state_ = State::kAwaitReply;
  reactor_.modify(fd_.get(), EPOLLIN | EPOLLRDHUP);
}

void ActiveConnect::read_reply() {
  for (;;) {
    const size_t at = rx_.size();
    rx_.resize(at + kReadChunk);
    ssize_t n = ::recv(fd_.get(), rx_.data() + at, kReadChunk, 0);
    rx_.resize(at + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n == 0) return fail(STATUS_CONNECTION_ABORTED, mpa::Status::kOk, false);  // peer gave up
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      return fail(status_from_errno(errno, SockOp::kIo));
    }
    mpa::Frame reply;
    auto pr = mpa::parse_frame(rx_, mpa::FrameType::kReply, reply, mpa::kMaxPrivateDataRfc);
    if (pr.status == mpa::Status::kNeedMore) continue;
    // siw answers a bad key with a Terminate (LLP 0x04); we reset the
    // stream instead since the peer is not known to be in FPDU mode.
    if (pr.status != mpa::Status::kOk) return fail(status_from_mpa(pr.status), pr.status);
    mpa::RequestArgs sent{args_.ird, args_.ord, args_.private_data};
    auto out = mpa::evaluate_reply(settings_.mpa, sent, reply);
    if (out.status == mpa::Status::kRejected) {
      // A reject is followed by the responder's close; ours is graceful.
      return fail(STATUS_CONNECTION_REFUSED, mpa::Status::kRejected, false,
                  std::move(out.params.peer_private_data));
    }
    if (out.status != mpa::Status::kOk) return fail(status_from_mpa(out.status), out.status);

    // Established. Bytes behind the Reply are the peer's first FPDUs
    // (IWARP.md 9.8): hand them to the data path.
    mpa_round_trip_ = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - request_sent_at_);
    if (timer_) reactor_.cancel(timer_);
    timer_ = 0;
    reactor_.unwatch(fd_.get());
    watching_ = false;
    params_ = std::move(out.params);
    leftover_.assign(rx_.begin() + static_cast<ptrdiff_t>(pr.consumed), rx_.end());
    const auto holdoff = std::min(settings_.initiator_holdoff, ConnSettings::kMaxHoldoff);
    if (holdoff.count() <= 0) return establish();
    // Hold-off (ConnSettings::initiator_holdoff): nothing is read or sent
    // meanwhile; whatever the peer sends (data, FIN, RST) waits in the
    // socket for the connection. cancel() still ends the attempt.
    state_ = State::kHoldoff;
    timer_ = reactor_.after(holdoff, [weak = weak_from_this()] {
      if (auto s = weak.lock()) {
        s->timer_ = 0;
        if (s->state_ == State::kHoldoff) s->establish();
      }
    });
    return;
  }
}

void ActiveConnect::establish() {
  Connection::Init init;
  init.reactor = &reactor_;
  init.fd = std::move(fd_);
  init.role = Role::kInitiator;
  init.params = std::move(params_);
  // rx_ holds the Reply followed by the leftover (nothing is read after it).
  init.mpa_request = tx_;
  init.mpa_reply.assign(rx_.begin(), rx_.end() - static_cast<ptrdiff_t>(leftover_.size()));
  init.leftover = std::move(leftover_);
  init.disconnect_timeout = settings_.disconnect_timeout;
  init.mpa_round_trip = mpa_round_trip_;
  if (claimed_) {
    claimed_ = false;  // the connection releases the 4-tuple when it closes
    init.on_release = [ep = args_.shared, peer = args_.dst] { ep->release(peer); };
  }
  ConnectResult r;
  r.status = STATUS_SUCCESS;
  r.connection = Connection::create(std::move(init));
  finish(std::move(r));
}

void ActiveConnect::fail(NTSTATUS st, mpa::Status why, bool rst, std::vector<uint8_t> reject_pd) {
  if (state_ == State::kDone) return;
  const SetupPhase phase = state_ == State::kConnecting ? SetupPhase::kTcp
                           : state_ == State::kHoldoff  ? SetupPhase::kAfterMpa
                                                        : SetupPhase::kMpa;
  if (timer_) reactor_.cancel(timer_);
  timer_ = 0;
  if (watching_) reactor_.unwatch(fd_.get());
  watching_ = false;
  if (fd_.valid() && rst) set_linger_zero(fd_.get());
  fd_.reset();
  if (claimed_ && args_.shared) args_.shared->release(args_.dst);
  claimed_ = false;
  ConnectResult r;
  r.status = st;
  r.mpa = why;
  r.peer_private_data = std::move(reject_pd);
  r.phase = phase;
  finish(std::move(r));
}

void ActiveConnect::finish(ConnectResult r) {
  state_ = State::kDone;
  auto cb = std::move(cb_);
  cb_ = nullptr;
  auto keep = std::move(self_);  // may be the last reference; dies after cb
  if (cb) cb(std::move(r));
}

}  // namespace softndk::tcp
