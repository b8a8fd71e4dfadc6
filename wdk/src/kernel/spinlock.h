// SPDX-License-Identifier: Apache-2.0
// Raw spin lock acquire/release (no IRQL change) shared by the Ke spin lock
// calls, the Ex interlocked lists and the cancel spin lock.
#pragma once

#include <wdm.h>

namespace softndk::wdk {

// Spins (yielding the CPU after a while: the "processors" here are threads a
// holder may be preempted from). Acquiring a lock the thread already holds
// is reported and returns false without acquiring (it would deadlock).
bool AcquireSpinLockRaw(PKSPIN_LOCK lock, const char* call, const void* site);
// Reports and returns false if the calling thread does not hold the lock.
bool ReleaseSpinLockRaw(PKSPIN_LOCK lock, const char* call, const void* site);
bool HoldsSpinLock(const KSPIN_LOCK* lock);

}  // namespace softndk::wdk
