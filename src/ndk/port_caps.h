// SPDX-License-Identifier: Apache-2.0
// port_caps.h - exclusive port capabilities shared by every adapter instance.
//
// SOFTNDK_PORT_CAP_* bits in SOFTNDK_PORT_CAP_EXCLUSIVE_MASK can be held by
// one opener (adapter instance) of an interface at a time. The registry is
// process-wide because several opens of one interface are independent
// adapter instances.
#pragma once

#include <cstdint>

namespace softndk::ndk {

class PortCaps {
 public:
  // Takes every bit of `bits` for `owner` or none: false if another owner
  // holds one of them.
  static bool acquire(uint32_t ifindex, const void* owner, uint32_t bits);
  static void release(uint32_t ifindex, const void* owner, uint32_t bits);
  static void release_all(const void* owner);
  static uint32_t held(uint32_t ifindex);  // by anyone
  static uint32_t held_by(uint32_t ifindex, const void* owner);
};

}  // namespace softndk::ndk
