// SPDX-License-Identifier: Apache-2.0
// The kit's own threads: the DPC thread (DISPATCH_LEVEL), the timer thread
// and the work item pool (PASSIVE_LEVEL). The host drains them at unload.
#pragma once

#include <wdm.h>

namespace softndk::wdk {

// Waits until the DPC queue is empty and no DPC runs; false after
// `timeout_ms` (then reported by the caller).
bool DrainDpcs(ULONG timeout_ms);
// Likewise for queued and running work items.
bool DrainWorkItems(ULONG timeout_ms);
// Work items queued or running now.
ULONG PendingWorkItems();

}  // namespace softndk::wdk
