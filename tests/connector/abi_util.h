// SPDX-License-Identifier: Apache-2.0
// abi_util.h - small helpers for tests written against the public C ABI
// only (tests/connector, the idle-memory benchmark, tests/observability): request/close
// completions, addresses, process resource probes.
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <malloc.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "softndk/softndk.h"

namespace connector_test {

using namespace std::chrono_literals;
inline constexpr NDK_VERSION kVersion{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};

template <typename P>
bool eventually(P pred, std::chrono::milliseconds t = 5000ms) {
  auto deadline = std::chrono::steady_clock::now() + t;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return pred();
}

// One asynchronous request: counts its completions.
struct Req {
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  NTSTATUS st = STATUS_PENDING;
  static void cb(PVOID ctx, NTSTATUS s) {
    auto* r = static_cast<Req*>(ctx);
    std::lock_guard lk(r->mu);
    r->st = s;
    ++r->calls;
    r->cv.notify_all();
  }
  // The request's final status: `ret` if it did not pend, else the completion's.
  NTSTATUS wait(NTSTATUS ret, std::chrono::milliseconds t = 10000ms) {
    if (ret != STATUS_PENDING) return ret;
    std::unique_lock lk(mu);
    if (!cv.wait_for(lk, t, [&] { return calls > 0; })) return STATUS_PENDING;
    return st;
  }
};

struct CloseWait {
  std::atomic<int> calls{0};
  static void cb(PVOID ctx) { static_cast<CloseWait*>(ctx)->calls++; }
};

// Disconnect events (NdkConnect's / NdkAccept's disconnect callbacks).
struct Events {
  std::atomic<int> n{0};
  std::atomic<ULONG> reason{0xFFFFFFFFu};
  static void cb(PVOID ctx) { static_cast<Events*>(ctx)->n++; }
  static void cb_ex(PVOID ctx, ULONG r) {
    auto* e = static_cast<Events*>(ctx);
    e->reason = r;
    e->n++;
  }
};

// Connect events of a listener, queued for the test thread.
struct Incoming {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<NDK_CONNECTOR*> q;
  static void cb(PVOID ctx, NDK_CONNECTOR* c) {
    auto* in = static_cast<Incoming*>(ctx);
    std::lock_guard lk(in->mu);
    in->q.push_back(c);
    in->cv.notify_all();
  }
  NDK_CONNECTOR* next(std::chrono::milliseconds t = 5000ms) {
    std::unique_lock lk(mu);
    if (!cv.wait_for(lk, t, [&] { return !q.empty(); })) return nullptr;
    NDK_CONNECTOR* c = q.front();
    q.pop_front();
    return c;
  }
};

// Where the suites run: adapter "lo" and 127.0.0.1, unless the environment
// names another adapter and address (SOFTNDK_TEST_ADAPTER, SOFTNDK_TEST_IP):
// the interop VM runs the suites on the verbs backend over the guest's siw0
// and rxe0 that way (tests/interop/verbs_apps_cases.sh, docs/verbs.md).
inline const char* env_or(const char* name, const char* dflt) {
  const char* e = std::getenv(name);
  return e != nullptr && *e != '\0' ? e : dflt;
}
inline const char* test_adapter() { return env_or("SOFTNDK_TEST_ADAPTER", "lo"); }
inline const char* test_ip() { return env_or("SOFTNDK_TEST_IP", "127.0.0.1"); }

// 127.0.0.1 stands for the suite's address (test_ip()).
inline sockaddr_in v4(const char* ip, uint16_t port) {
  if (std::strcmp(ip, "127.0.0.1") == 0) ip = test_ip();
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(port);
  inet_pton(AF_INET, ip, &s.sin_addr);
  return s;
}
inline const SOCKADDR* sa(const sockaddr_in& s) { return reinterpret_cast<const SOCKADDR*>(&s); }

// Closes any NDK object and waits for the close to finish. Every dispatch
// table starts with its close function.
inline NTSTATUS close_object(void* obj, std::chrono::milliseconds t = 5000ms) {
  auto* h = static_cast<NDK_OBJECT_HEADER*>(obj);
  auto close_fn =
      *reinterpret_cast<NDK_FN_CLOSE_OBJECT const*>(reinterpret_cast<NDK_CONNECTOR*>(h)->Dispatch);
  CloseWait w;
  NTSTATUS st = close_fn(h, &CloseWait::cb, &w);
  if (st != STATUS_PENDING) return st;
  return eventually([&] { return w.calls.load() == 1; }, t) ? STATUS_SUCCESS : STATUS_IO_TIMEOUT;
}

// A listener of `a` on `ip`, port picked by the kernel (*port). Null if
// any step failed (the listener is closed then).
inline NDK_LISTENER* listen_on(NDK_ADAPTER* a, Incoming& in, uint16_t* port,
                               const char* ip = "127.0.0.1") {
  NDK_LISTENER* l = nullptr;
  if (a->Dispatch->NdkCreateListener(a, &Incoming::cb, &in, nullptr, nullptr, &l) != STATUS_SUCCESS)
    return nullptr;
  auto addr = v4(ip, 0);
  Req r;
  sockaddr_in got{};
  ULONG len = sizeof got;
  if (r.wait(l->Dispatch->NdkListen(l, sa(addr), sizeof addr, &Req::cb, &r)) != STATUS_SUCCESS ||
      l->Dispatch->NdkGetLocalAddress(l, reinterpret_cast<SOCKADDR*>(&got), &len) !=
          STATUS_SUCCESS) {
    close_object(l);
    return nullptr;
  }
  *port = ntohs(got.sin_port);
  return l;
}

inline int open_fd_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n - 1;  // the directory stream's own descriptor
}

// Heap bytes in use, all malloc arenas (glibc).
inline long heap_bytes() { return static_cast<long>(mallinfo2().uordblks); }

// Resident set size in KiB (/proc/self/status VmRSS).
inline long rss_kib() {
  long kib = -1;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    std::fclose(f);
  }
  return kib;
}

// A port no socket uses right now (for tests that need an explicit one).
inline uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  auto a = v4("127.0.0.1", 0);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t l = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &l);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace connector_test
