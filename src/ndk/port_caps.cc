// SPDX-License-Identifier: Apache-2.0
// port_caps.cc - the process-wide owner table of exclusive port capabilities.
#include "ndk/port_caps.h"

#include <array>
#include <map>
#include <mutex>

namespace softndk::ndk {

namespace {
struct Registry {
  std::mutex mu;
  std::map<uint32_t, std::array<const void*, 32>> owners;  // ifindex -> owner per bit
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

bool PortCaps::acquire(uint32_t ifindex, const void* owner, uint32_t bits) {
  Registry& r = registry();
  std::lock_guard lk(r.mu);
  auto& o = r.owners[ifindex];
  for (int b = 0; b < 32; ++b)
    if ((bits >> b & 1) && o[b] != nullptr && o[b] != owner) return false;
  for (int b = 0; b < 32; ++b)
    if (bits >> b & 1) o[b] = owner;
  return true;
}

void PortCaps::release(uint32_t ifindex, const void* owner, uint32_t bits) {
  Registry& r = registry();
  std::lock_guard lk(r.mu);
  auto it = r.owners.find(ifindex);
  if (it == r.owners.end()) return;
  for (int b = 0; b < 32; ++b)
    if ((bits >> b & 1) && it->second[b] == owner) it->second[b] = nullptr;
}

void PortCaps::release_all(const void* owner) {
  Registry& r = registry();
  std::lock_guard lk(r.mu);
  for (auto& [idx, o] : r.owners)
    for (auto& p : o)
      if (p == owner) p = nullptr;
}

uint32_t PortCaps::held(uint32_t ifindex) {
  Registry& r = registry();
  std::lock_guard lk(r.mu);
  auto it = r.owners.find(ifindex);
  uint32_t bits = 0;
  if (it != r.owners.end())
    for (int b = 0; b < 32; ++b)
      if (it->second[b] != nullptr) bits |= 1u << b;
  return bits;
}

uint32_t PortCaps::held_by(uint32_t ifindex, const void* owner) {
  Registry& r = registry();
  std::lock_guard lk(r.mu);
  auto it = r.owners.find(ifindex);
  uint32_t bits = 0;
  if (it != r.owners.end())
    for (int b = 0; b < 32; ++b)
      if (it->second[b] == owner) bits |= 1u << b;
  return bits;
}

}  // namespace softndk::ndk
