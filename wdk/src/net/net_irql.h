// SPDX-License-Identifier: Apache-2.0
// net_irql.h - how the networking half of the kit uses the IRQL emulation
// and the checker (wdk/src/irql).
//
// Consumers' calls into WSK/NDK functions are checked against the maximum
// IRQL the function documents (a higher current IRQL is a checker report,
// the call still goes ahead), and provider callbacks run with the calling
// thread's IRQL at DISPATCH_LEVEL, as they do on Windows.
//
// The macros take the call site from the function they are written in, so
// they belong in the function the consumer called (a dispatch-table entry
// or an exported WSK function), not in helpers.
#pragma once

#include <wdm.h>

#include "irql/checker.h"
#include "irql/irql.h"

// Reports `call` when the thread's IRQL is above `max`.
#define NET_REQUIRE_IRQL(call, max) \
  ((void)::softndk::wdk::RequireIrqlAtMost((max), (call), SOFTNDK_WDK_SITE()))

// Reports a misuse of `call` (bad handle, wrong order) at the caller's site.
#define NET_MISUSE(call, what) \
  ::softndk::wdk::net::report_misuse((call), SOFTNDK_WDK_SITE(), (what))

namespace softndk::wdk::net {

void report_misuse(const char* call, const void* site, const char* what);
// Reports NDK objects (or adapters) a consumer left open.
void report_leak(const char* call, const void* site, const char* what);

// Runs a provider callback at DISPATCH_LEVEL and restores the thread's IRQL
// (PASSIVE on a provider thread, the consumer's own when softndk calls back
// inline).
class AtDispatch {
 public:
  AtDispatch() : scope_(DISPATCH_LEVEL, "NDK provider callback") {}

 private:
  IrqlScope scope_;
};

}  // namespace softndk::wdk::net
