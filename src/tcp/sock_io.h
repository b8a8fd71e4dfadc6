// SPDX-License-Identifier: Apache-2.0
// tcp/sock_io.h - the data path's socket calls, without glibc's
// cancellation-point wrappers.
//
// glibc's recv/recvmsg/sendmsg switch the calling thread to asynchronous
// cancellation around the system call and back: two atomic compare-and-
// swaps on the thread's cancel state, locked instructions paid on every
// busy poll of an empty socket and twice per message. softndk never cancels
// a thread, so the data path makes the system calls itself (same results,
// errno set the same way).
#pragma once

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

namespace softndk::tcp {

inline ssize_t sock_recv(int fd, void* buf, size_t n, int flags) {
  return ::syscall(SYS_recvfrom, fd, buf, n, flags, nullptr, nullptr);
}
inline ssize_t sock_recvmsg(int fd, msghdr* m, int flags) {
  return ::syscall(SYS_recvmsg, fd, m, flags);
}
inline ssize_t sock_send(int fd, const void* buf, size_t n, int flags) {
  return ::syscall(SYS_sendto, fd, buf, n, flags, nullptr, 0);
}
inline ssize_t sock_sendmsg(int fd, const msghdr* m, int flags) {
  return ::syscall(SYS_sendmsg, fd, m, flags);
}

}  // namespace softndk::tcp
