// SPDX-License-Identifier: Apache-2.0
// transport/samehost/ring_path.cc - one direction of a stream through a
// shared-memory ring (ring_path.h).
#include "transport/samehost/ring_path.h"

#include <cerrno>

namespace softndk::samehost {

// The ring's copies to and from the consumer's memory: out of line and
// named (a profile or a TSan report shows them by name), like the socket
// path's emit_sendmsg/land_recvmsg.
__attribute__((noinline)) ssize_t emit_ring(ShmRing& r, const iovec* iov, int niov, bool arm) {
  return r.write(iov, niov, arm);
}
__attribute__((noinline)) ssize_t land_ring(ShmRing& r, const iovec* iov, int niov) {
  return r.read(iov, niov);
}

RingPath::RingPath(std::shared_ptr<ShmRing> ring, transport::BytePath* socket,
                   const std::atomic<bool>& polled)
    : ring_(std::move(ring)), socket_(socket), polled_(polled) {}

std::shared_ptr<RingPath> RingPath::reader(std::shared_ptr<ShmRing> ring,
                                           transport::BytePath& socket,
                                           const std::atomic<bool>& polled) {
  return std::make_shared<RingPath>(std::move(ring), &socket, polled);
}

std::shared_ptr<RingPath> RingPath::writer(std::shared_ptr<ShmRing> ring,
                                           const std::atomic<bool>& polled) {
  return std::make_shared<RingPath>(std::move(ring), nullptr, polled);
}

// ---- receive --------------------------------------------------------------------

ssize_t RingPath::recv(const iovec* iov, int niov, bool* /*drained*/) {
  // Unlike a socket, looking again is free: never a short-read stop.
  for (;;) {
    ssize_t n = land_ring(*ring_, iov, niov);
    if (n > 0) return n;
    if (n < 0) return transport::kBroken;  // a corrupt producer index
    n = empty();
    if (n != 1) return n;
  }
}

ssize_t RingPath::peek() {
  for (;;) {
    if (ring_->readable() > 0) return 1;
    // A corrupt producer index reads as empty here; the read says EPROTO.
    iovec none{nullptr, 0};
    if (land_ring(*ring_, &none, 1) < 0) return transport::kBroken;
    ssize_t n = empty();
    if (n != 1) return n;
  }
}

ssize_t RingPath::empty() {
  if (socket_check_.load(std::memory_order_relaxed) && socket_check_.exchange(false)) {
    // The reactor saw the socket readable: after the switch that can only
    // be EOF or an error (peer death included), or a protocol error.
    uint8_t byte;
    iovec v{&byte, 1};
    bool drained = false;
    ssize_t t = socket_->recv(&v, 1, &drained);
    if (t > 0) return transport::kBroken;
    if (t == 0 || (t < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      const int e = errno;
      // The peer wrote its last ring bytes before its FIN: drain them
      // first, and look at the socket again once the ring is empty.
      if (ring_->readable() > 0) {
        socket_check_.store(true, std::memory_order_relaxed);
        return 1;
      }
      errno = e;
      return t;
    }
  }
  // Event mode: ask for the doorbell. A busy poller comes back by itself
  // (no syscall per message on either side).
  if (!polled_.load(std::memory_order_relaxed) && !ring_->sleep()) return 1;
  errno = EAGAIN;
  return -1;
}

void RingPath::rx_leave(bool budget_spent) {
  // The socket would still be readable and EPOLLIN fire again; the ring
  // has no level-triggered readiness: ring its doorbell ourselves. A
  // consumer that is not busy-polling (it may arm its CQ and wait next)
  // gets the bytes left behind read by the reactor.
  if (budget_spent || (!polled_.load(std::memory_order_relaxed) && ring_->readable() > 0))
    ShmRing::ring(ring_->data_efd());
}

// ---- transmit -------------------------------------------------------------------

ssize_t RingPath::send(const iovec* iov, int niov) {
  if (peer_gone_.load(std::memory_order_acquire)) {
    errno = EPIPE;  // nobody reads the ring any more: like a reset socket
    return -1;
  }
  // A busy poller retries by itself: no doorbell.
  ssize_t n = emit_ring(*ring_, iov, niov, !polled_.load(std::memory_order_relaxed));
  if (n < 0) return -1;  // EPROTO: the consumer index is corrupt; the stream fails
  if (n == 0) {
    errno = EAGAIN;
    return -1;
  }
  return n;
}

// ---- readiness ------------------------------------------------------------------

int RingPath::doorbell_fd() const {
  // A reader waits for data, a writer for space.
  return socket_ != nullptr ? ring_->data_efd() : ring_->space_efd();
}

void RingPath::doorbell_cleared() { ShmRing::drain(doorbell_fd()); }

}  // namespace softndk::samehost
