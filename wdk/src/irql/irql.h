// SPDX-License-Identifier: Apache-2.0
// IRQL emulation: the current IRQL of each thread, and the checks a Windows
// driver verifier makes against it.
//
// A thread the kit did not create runs at PASSIVE_LEVEL until it raises.
// The kit's DPC thread runs routines at DISPATCH_LEVEL, its work item and
// system threads at PASSIVE_LEVEL. The networking half runs softndk's
// provider callbacks inside an IrqlScope(DISPATCH_LEVEL), as NDKPI documents
// them, and checks NDK calls with RequireIrqlAtMost.
#pragma once

#include <wdm.h>

namespace softndk::wdk {

KIRQL CurrentIrql();
// Sets the thread's IRQL without checks (kit threads at start).
void SetCurrentIrql(KIRQL irql);

// Raises the thread to `level` for the scope and restores the old level on
// exit. Raising to a lower level than the current one is reported
// (SoftNdkWdkRuleIrqlMismatch) and leaves the level unchanged.
class IrqlScope {
 public:
  explicit IrqlScope(KIRQL level, const char* call = "IrqlScope");
  ~IrqlScope();
  IrqlScope(const IrqlScope&) = delete;
  IrqlScope& operator=(const IrqlScope&) = delete;

 private:
  KIRQL old_;
};

// True if the thread's IRQL is at most `max`. Otherwise reports
// SoftNdkWdkRuleIrqlTooHigh ("<call> requires IRQL <= <max>, called at
// <current>") with the site and returns false; the caller goes on (report
// and continue) unless the checker is fatal.
bool RequireIrqlAtMost(KIRQL max, const char* call, const void* site);

// "PASSIVE_LEVEL", "APC_LEVEL", "DISPATCH_LEVEL" or the number.
const char* IrqlName(KIRQL irql);

}  // namespace softndk::wdk
