// SPDX-License-Identifier: Apache-2.0
// transport/tcp/socket_path.cc - the socket path's two named system calls.
#include "transport/tcp/socket_path.h"

namespace softndk::tcp {

__attribute__((noinline)) ssize_t emit_sendmsg(int fd, const msghdr* m) {
  constexpr int kFlags = MSG_DONTWAIT | MSG_NOSIGNAL;
  // One piece: send() skips sendmsg's copy-in of the header and iovec
  // array (~300 cycles of an 8-byte ping-pong's half round trip here).
  if (m->msg_iovlen == 1)
    return sock_send(fd, m->msg_iov[0].iov_base, m->msg_iov[0].iov_len, kFlags);
  return sock_sendmsg(fd, m, kFlags);
}

__attribute__((noinline)) ssize_t land_recvmsg(int fd, msghdr* m) {
  return sock_recvmsg(fd, m, MSG_DONTWAIT);
}

}  // namespace softndk::tcp
