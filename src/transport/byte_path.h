// SPDX-License-Identifier: Apache-2.0
// transport/byte_path.h - the one interface the protocol engine moves FPDU
// bytes through, whichever transport carries them (docs/architecture.md
// "Two transports, one protocol engine").
//
// An RDMAP stream reads and writes an ordered byte stream; it does not care
// whether that is a TCP socket (transport/tcp/socket_path.h) or, between
// two softndk processes of one host, a shared-memory ring
// (transport/samehost/ring_path.h). Each direction of a stream has its own
// path: both start on the socket, and each may move to a ring on its own.
//
// The calls mirror non-blocking socket calls so the engine's handling of
// partial transfers, EAGAIN, EOF and errors is the same for every path:
//   > 0  bytes moved;  0  end of stream (receive);
//   -1   errno set (EAGAIN/EWOULDBLOCK: nothing now, EINTR: again, others:
//        the connection is gone);
//   kBroken  the path itself broke the protocol (a corrupt ring index, a
//        byte on the socket after the stream left it): the engine ends the
//        stream with an RDMAP catastrophic-stream Terminate.
//
// Readiness: a socket is level-triggered through the connection's reactor
// (EPOLLIN/EPOLLOUT); a path that is not (a ring) names a doorbell
// descriptor the reactor watches instead, and wakes its own reader when the
// receiver leaves bytes behind (rx_leave).
//
// Threads: the receive calls are made by one thread at a time (the stream's
// receiver, under its lock), the send calls likewise (the transmitter). The
// hot path keeps a direct call for the socket (SocketPath is final; the
// stream calls it by its concrete type when the path is the socket, see
// rdmap/stream.h), so the interface adds no indirect call to TCP traffic.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>

namespace softndk::transport {

// The path broke the protocol (see above). Not a valid errno return.
inline constexpr ssize_t kBroken = -2;

class BytePath {
 public:
  virtual ~BytePath() = default;

  // ---- receive ----
  // Like recvmsg(MSG_DONTWAIT) into iov. *drained is set when the read
  // returned less than asked and another read now would most likely only
  // say EAGAIN (a socket that was emptied); a path where looking again is
  // free never sets it.
  virtual ssize_t recv(const iovec* iov, int niov, bool* drained) = 0;
  // Whether bytes are waiting, without taking them: > 0 yes, otherwise as
  // recv() (-1 EAGAIN: none now; 0: end of stream).
  virtual ssize_t peek() = 0;
  // The receiver stops reading although bytes may be left: its budget is
  // spent (`budget_spent`), or a poller took the completion it wanted. A
  // level-triggered path needs nothing; another wakes its reader for them.
  virtual void rx_leave(bool budget_spent) { (void)budget_spent; }
  // The connection's socket became readable while this path carries the
  // stream (a ring: that can only be EOF, an error, or stray bytes).
  virtual void socket_readable() {}

  // ---- transmit ----
  // Like sendmsg(MSG_DONTWAIT | MSG_NOSIGNAL) of iov.
  virtual ssize_t send(const iovec* iov, int niov) = 0;
  // A send said EAGAIN: true if the path itself wakes the transmitter once
  // there is room (its doorbell), so no EPOLLOUT is needed.
  virtual bool wakes_writer() const { return false; }

  // ---- readiness ----
  // A descriptor the reactor watches (EPOLLIN) for this path's readiness, -1
  // when the connection's socket tells it; doorbell_cleared() after it fired.
  virtual int doorbell_fd() const { return -1; }
  virtual void doorbell_cleared() {}
};

}  // namespace softndk::transport
