// SPDX-License-Identifier: Apache-2.0
// What the host (softndk-wdk-run, or a test) runs at unload besides the
// driver's DriverUnload: draining the kit's queues, bounded.
#pragma once

#include <wdm.h>

namespace softndk::wdk {

// Waits (up to the rundown limit each) for queued DPCs and work items to
// finish; reports SoftNdkWdkRuleRundownTimeout naming `who` when they do
// not. Returns false if something was still running.
bool DrainForUnload(const char* who);

}  // namespace softndk::wdk
