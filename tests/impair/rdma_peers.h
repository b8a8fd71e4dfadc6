// SPDX-License-Identifier: Apache-2.0
// rdma_peers.h - two softndk adapters, one in each namespace of an
// ImpairedLink, connected by one QP pair through the public C ABI (the
// tools' session layer, ndkapp/include/ndkapp/session.h).
//
// Each side lives on its own thread inside its namespace for its whole
// life: the adapter's engine threads are started there (so they inherit the
// namespace) and so are the listener and connector sockets. The two sides
// meet through a Rendezvous (the server's buffer address and token).
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "impair/link.h"
#include "ndkapp/net_util.h"
#include "ndkapp/session.h"

namespace softndk::test::impair {

namespace tools = softndk::tools;

inline constexpr ULONG kRemoteFlags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
                                      NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                      NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK;
inline constexpr uint16_t kPort = 18700;

// One value handed from one side's thread to the other, with a deadline.
template <typename T>
class Slot {
 public:
  void set(T v) {
    std::lock_guard lk(mu_);
    v_ = std::move(v);
    cv_.notify_all();
  }
  std::optional<T> wait(std::chrono::milliseconds d) {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, d, [&] { return v_.has_value(); });
    return v_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<T> v_;
};

inline tools::SockAddr sock_addr(const std::string& ip, uint16_t port) {
  tools::SockAddr a;
  std::string err;
  EXPECT_TRUE(tools::resolve(ip, port, a, err)) << err;
  return a;
}

// Runs `server` in namespace B and `client` in namespace A at the same
// time and waits for both. A ToolError on either side fails the test with
// its message (and the other side's waits run out at their deadlines).
inline void run_pair(ImpairedLink& link, const std::function<void()>& server,
                     const std::function<void()>& client) {
  auto guarded = [](const char* who, const std::function<void()>& fn) {
    return [who, &fn] {
      try {
        fn();
      } catch (const std::exception& e) {
        ADD_FAILURE() << who << ": " << e.what();
      }
    };
  };
  auto srv = guarded("server", server);
  auto cli = guarded("client", client);
  std::thread s([&] { EXPECT_TRUE(link.run_in_b(srv)); });
  EXPECT_TRUE(link.run_in_a(cli));
  s.join();
}

// Where the server's registered memory is.
struct Target {
  uint64_t va = 0;
  UINT32 token = 0;
};

}  // namespace softndk::test::impair
