// SPDX-License-Identifier: Apache-2.0
// What transport.cc and transport_send.cc share: the completion tags and
// the text of a few values in messages. Internal to the transport.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace smbd::transport_detail {

using Clock = std::chrono::steady_clock;

// RequestContext tags: user-space heap pointers (the RDMA channel's
// contexts) never have the top bits set on Linux.
inline constexpr uintptr_t kRecvTag = uintptr_t(1) << 62;
inline constexpr uintptr_t kSendTag = uintptr_t(2) << 62;
inline constexpr uintptr_t kTagMask = uintptr_t(3) << 62;
// The longest sleep on the CQ's notification of an idle poll loop
// (Transport::poll_or_wait), seconds: its periodic work (the disconnect
// event, keepalive timers, deadlines) runs at least this often.
inline constexpr double kIdleSlice = 0.1;

inline void* tag(uintptr_t t, uint32_t i) { return reinterpret_cast<void*>(t | i); }

inline std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%g s", s);
  return b;
}

inline std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08X", v);
  return b;
}

}  // namespace smbd::transport_detail
