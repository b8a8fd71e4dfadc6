// SPDX-License-Identifier: Apache-2.0
// Concurrency stress (stress.h).
#include "kernel/stress.h"

#include <time.h>

#include <atomic>

namespace softndk::wdk {
namespace {

// One point in four waits, up to 2 ms: long enough to let another thread
// (a DPC, a completion) run in between, short enough for whole test runs.
constexpr uint32_t kMaxDelayUs = 2000;

std::atomic<bool> g_on{false};
std::atomic<uint64_t> g_seed{0};
std::atomic<uint64_t> g_generation{0};  // bumped by ConfigureStress
std::atomic<uint64_t> g_thread_order{0};

uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct ThreadStream {
  uint64_t generation = ~uint64_t{0};
  uint64_t state = 0;
};
thread_local ThreadStream t_stream;

}  // namespace

void ConfigureStress(bool on, uint64_t seed) {
  g_seed.store(seed);
  g_thread_order.store(0);
  g_generation.fetch_add(1);
  g_on.store(on);
}

bool StressOn() { return g_on.load(std::memory_order_relaxed); }

void StressResetThread() { t_stream.generation = ~uint64_t{0}; }

uint32_t StressNextDelayUs(StressPoint point) {
  uint64_t gen = g_generation.load();
  if (t_stream.generation != gen) {
    t_stream.generation = gen;
    uint64_t order = g_thread_order.fetch_add(1);
    t_stream.state = g_seed.load() ^ (order * 0xd1b54a32d192ed03ULL);
  }
  uint64_t r = SplitMix(&t_stream.state) ^ static_cast<uint64_t>(point);
  if ((r & 3) != 0) return 0;
  return static_cast<uint32_t>((r >> 8) % kMaxDelayUs) + 1;
}

void Stress(StressPoint point) {
  if (!StressOn()) return;
  uint32_t us = StressNextDelayUs(point);
  if (us == 0) return;
  timespec ts{0, static_cast<long>(us) * 1000};
  nanosleep(&ts, nullptr);
}

}  // namespace softndk::wdk
