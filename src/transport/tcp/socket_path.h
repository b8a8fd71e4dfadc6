// SPDX-License-Identifier: Apache-2.0
// transport/tcp/socket_path.h - the TCP transport's byte path: the
// established connection's socket (transport/byte_path.h).
//
// Final and inline: the stream calls it by its concrete type on the hot
// path (a direct, inlinable call, as before the interface existed); the
// socket calls are the raw system calls of tcp/sock_io.h.
#pragma once

#include <sys/socket.h>

#include "tcp/sock_io.h"
#include "transport/byte_path.h"

namespace softndk::tcp {

// The data path's socket calls, out of line and named (a profile or a TSan
// report shows them by name): the transmitter's only read of the
// consumer's memory and the receiver's landing of payload straight into it.
ssize_t emit_sendmsg(int fd, const msghdr* m);
ssize_t land_recvmsg(int fd, msghdr* m);

class SocketPath final : public transport::BytePath {
 public:
  // The stream's own descriptor (a dup of the connection's), -1 before it
  // has one and after it stopped. Set under both of the stream's locks.
  void set_fd(int fd) { fd_ = fd; }
  int fd() const { return fd_; }

  ssize_t recv(const iovec* iov, int niov, bool* drained) override {
    size_t asked = 0;
    ssize_t n;
    if (niov == 1) {
      // One piece: recvfrom() skips recvmsg's copy-in of the header.
      asked = iov[0].iov_len;
      n = sock_recv(fd_, iov[0].iov_base, asked, MSG_DONTWAIT);
    } else {
      msghdr m{};
      m.msg_iov = const_cast<iovec*>(iov);
      m.msg_iovlen = static_cast<size_t>(niov);
      n = land_recvmsg(fd_, &m);
      if (n > 0)
        for (int i = 0; i < niov; ++i) asked += iov[i].iov_len;
    }
    if (n > 0 && static_cast<size_t>(n) < asked) *drained = true;
    return n;
  }
  ssize_t peek() override {
    uint8_t probe;
    return sock_recv(fd_, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
  }
  ssize_t send(const iovec* iov, int niov) override {
    msghdr m{};
    m.msg_iov = const_cast<iovec*>(iov);
    m.msg_iovlen = static_cast<size_t>(niov);
    return emit_sendmsg(fd_, &m);
  }
  // FIN (after a Terminate, or behind held fault bytes).
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

 private:
  int fd_ = -1;
};

}  // namespace softndk::tcp
