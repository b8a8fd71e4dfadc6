// SPDX-License-Identifier: Apache-2.0
// The host interface of softndk_wdk/kit.h: the unload request and the
// driver's command-line arguments.
#include "kernel/host.h"

#include <wdm.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "irql/checker.h"
#include "kernel/queues.h"

namespace {

struct Host {
  std::mutex mutex;
  std::condition_variable cv;
  bool requested = false;
  NTSTATUS status = STATUS_SUCCESS;
  std::vector<std::string> args;
};

Host& H() {
  static auto* h = new Host;
  return *h;
}

}  // namespace

namespace softndk::wdk {

bool DrainForUnload(const char* who) {
  bool ok = true;
  ULONG limit = RundownWaitLimitMs();
  if (!DrainDpcs(limit)) {
    ok = false;
    Report(SoftNdkWdkRuleRundownTimeout, who, nullptr,
           "queued DPCs still running %u ms after DriverUnload", limit);
  }
  if (!DrainWorkItems(limit)) {
    ok = false;
    Report(SoftNdkWdkRuleRundownTimeout, who, nullptr,
           "%u work item(s) still queued or running %u ms after DriverUnload", PendingWorkItems(),
           limit);
  }
  return ok;
}

}  // namespace softndk::wdk

extern "C" {

VOID SoftNdkWdkRequestUnload(NTSTATUS Status) {
  Host& h = H();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.requested) return;
  h.requested = true;
  h.status = Status;
  h.cv.notify_all();
}

BOOLEAN SoftNdkWdkWaitForUnloadRequest(ULONG TimeoutMs, PNTSTATUS Status) {
  Host& h = H();
  std::unique_lock<std::mutex> lock(h.mutex);
  if (TimeoutMs == 0) {
    h.cv.wait(lock, [&] { return h.requested; });
  } else if (!h.cv.wait_for(lock, std::chrono::milliseconds(TimeoutMs),
                            [&] { return h.requested; })) {
    return FALSE;
  }
  if (Status != nullptr) *Status = h.status;
  return TRUE;
}

ULONG SoftNdkWdkArgumentCount(void) {
  std::lock_guard<std::mutex> lock(H().mutex);
  return static_cast<ULONG>(H().args.size());
}

PCSTR SoftNdkWdkArgument(ULONG Index) {
  std::lock_guard<std::mutex> lock(H().mutex);
  return Index < H().args.size() ? H().args[Index].c_str() : nullptr;
}

VOID SoftNdkWdkSetArguments(ULONG Count, const char* const* Arguments) {
  std::lock_guard<std::mutex> lock(H().mutex);
  H().args.assign(Arguments, Arguments + Count);
}

}  // extern "C"
