// SPDX-License-Identifier: Apache-2.0
// rdmap/tsan_edge.h - the TCP happens-before edge, told to ThreadSanitizer.
//
// Payload moves from one consumer's memory to another's through TCP: the
// sender's consumer fills a buffer, posts, the transmitter hands the bytes
// to the kernel, the peer's receiver recv()s and places them. TSan cannot
// see the kernel edge, so in a TSan build every stream releases a sync
// object of its connection before sendmsg and acquires it after a recv that
// returned bytes. Both ends of a loopback connection (the tests: both
// streams in one process) name the same object: it is picked by the
// connection's two endpoints, in either order. No-ops in other builds.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>

#if defined(__SANITIZE_THREAD__)
#define SOFTNDK_TSAN_EDGE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SOFTNDK_TSAN_EDGE 1
#endif
#endif

#ifdef SOFTNDK_TSAN_EDGE
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace softndk::rdmap::tsan {

#ifdef SOFTNDK_TSAN_EDGE
inline uint64_t endpoint_hash(const sockaddr_storage& a, socklen_t n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  const auto* p = reinterpret_cast<const uint8_t*>(&a);
  for (socklen_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
// The sync object of the connection `fd` belongs to (nullptr if unknown).
inline void* edge_of(int fd) {
  static char table[4096];
  sockaddr_storage a{}, b{};
  socklen_t la = sizeof a, lb = sizeof b;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &la) != 0 ||
      ::getpeername(fd, reinterpret_cast<sockaddr*>(&b), &lb) != 0)
    return nullptr;
  uint64_t h = endpoint_hash(a, la) ^ endpoint_hash(b, lb);  // same from both ends
  return &table[h % sizeof table];
}
inline void before_send(void* e) {
  if (e != nullptr) __tsan_release(e);
}
inline void after_recv(void* e) {
  if (e != nullptr) __tsan_acquire(e);
}
#else
inline void* edge_of(int) { return nullptr; }
inline void before_send(void*) {}
inline void after_recv(void*) {}
#endif

}  // namespace softndk::rdmap::tsan
