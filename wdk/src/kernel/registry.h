// SPDX-License-Identifier: Apache-2.0
// A registry of live kit allocations (pool blocks, MDLs, IRPs, work items):
// frees are checked against it instead of trusting the pointer, so a double
// free is a report rather than heap corruption, and what is left at unload
// is the leak report. Recently freed addresses are remembered (a bounded
// quarantine) to say "freed twice" and where it was first freed.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace softndk::wdk {

template <typename Info>
class LiveRegistry {
 public:
  enum class State { kLive, kFreed, kUnknown };

  void Add(const void* p, Info info) {
    std::lock_guard<std::mutex> lock(mutex_);
    freed_.erase(p);
    live_[p] = std::move(info);
  }

  // Removes a live entry; on failure says whether it was freed before (and
  // where: `*freed_site`).
  State Remove(const void* p, const void* free_site, Info* info, const void** freed_site) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(p);
    if (it == live_.end()) {
      auto f = freed_.find(p);
      if (f == freed_.end()) return State::kUnknown;
      if (freed_site) *freed_site = f->second;
      return State::kFreed;
    }
    if (info) *info = std::move(it->second);
    live_.erase(it);
    freed_[p] = free_site;
    order_.push_back(p);
    while (order_.size() > kQuarantine) {
      const void* old = order_.front();
      order_.pop_front();
      auto f = freed_.find(old);
      if (f != freed_.end() && live_.find(old) == live_.end()) freed_.erase(f);
    }
    return State::kLive;
  }

  bool IsLive(const void* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(p) != 0;
  }

  template <typename F>
  bool WithLive(const void* p, F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(p);
    if (it == live_.end()) return false;
    f(it->second);
    return true;
  }

  std::vector<std::pair<const void*, Info>> Snapshot() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {live_.begin(), live_.end()};
  }

  size_t Size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }

 private:
  static constexpr size_t kQuarantine = 4096;
  std::mutex mutex_;
  std::unordered_map<const void*, Info> live_;
  std::unordered_map<const void*, const void*> freed_;  // address -> site of the free
  std::deque<const void*> order_;
};

}  // namespace softndk::wdk
