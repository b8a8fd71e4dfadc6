// SPDX-License-Identifier: Apache-2.0
// Concurrency stress (softndk-wdk-run --stress SEED): random delays, from a
// seed, at the points where Windows may interleave a driver's threads - DPC
// and work item dispatch, NDK completion and CQ notification delivery,
// spin lock release, IRQL lowering - so that latent races surface in a test
// run instead of in the field.
//
// Reproducible per thread: each thread draws from its own generator, seeded
// by the seed and the order in which threads first reach a stress point, so
// a thread's n-th point gets the same delay for the same seed (which thread
// comes first can still differ between runs, as it does on Windows).
#pragma once

#include <cstdint>

namespace softndk::wdk {

enum class StressPoint : uint8_t {
  kDpcDispatch,
  kWorkItemDispatch,
  kNdkCompletion,
  kCqNotification,
  kLockRelease,
  kIrqlLower,
};

void ConfigureStress(bool on, uint64_t seed);
bool StressOn();
// The delay the calling thread's next point would take, in microseconds
// (0: none), drawn from its generator; Stress() sleeps for it.
uint32_t StressNextDelayUs(StressPoint point);
// A stress point: no-op unless configured.
void Stress(StressPoint point);
// Restarts the calling thread's generator (tests).
void StressResetThread();

}  // namespace softndk::wdk
