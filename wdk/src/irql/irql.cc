// SPDX-License-Identifier: Apache-2.0
// Per-thread IRQL and the IRQL calls of the WDK (irql.h, softndk_wdk/ke.h).
#include "irql/irql.h"

#include <cstdio>

#include "irql/checker.h"
#include "kernel/stress.h"

namespace softndk::wdk {
namespace {
thread_local KIRQL t_irql = PASSIVE_LEVEL;
}

KIRQL CurrentIrql() { return t_irql; }
void SetCurrentIrql(KIRQL irql) { t_irql = irql; }

const char* IrqlName(KIRQL irql) {
  switch (irql) {
    case PASSIVE_LEVEL:
      return "PASSIVE_LEVEL";
    case APC_LEVEL:
      return "APC_LEVEL";
    case DISPATCH_LEVEL:
      return "DISPATCH_LEVEL";
    case HIGH_LEVEL:
      return "HIGH_LEVEL";
    default: {
      static thread_local char buf[16];
      std::snprintf(buf, sizeof buf, "IRQL %u", irql);
      return buf;
    }
  }
}

IrqlScope::IrqlScope(KIRQL level, const char* call) : old_(t_irql) {
  if (level < old_) {
    Report(SoftNdkWdkRuleIrqlMismatch, call, SOFTNDK_WDK_SITE(), "raising to %s from %s",
           IrqlName(level), IrqlName(old_));
    return;
  }
  t_irql = level;
}

IrqlScope::~IrqlScope() { t_irql = old_; }

bool RequireIrqlAtMost(KIRQL max, const char* call, const void* site) {
  if (t_irql <= max) return true;
  char current[32];
  std::snprintf(current, sizeof current, "%s", IrqlName(t_irql));
  Report(SoftNdkWdkRuleIrqlTooHigh, call, site, "requires IRQL <= %s, called at %s", IrqlName(max),
         current);
  return false;
}

}  // namespace softndk::wdk

using namespace softndk::wdk;

extern "C" {

KIRQL KeGetCurrentIrql(void) { return t_irql; }

KIRQL KfRaiseIrql(KIRQL NewIrql) {
  KIRQL old = t_irql;
  if (NewIrql < old) {
    Report(SoftNdkWdkRuleIrqlMismatch, "KeRaiseIrql", SOFTNDK_WDK_SITE(),
           "new IRQL %s is below the current %s", IrqlName(NewIrql), IrqlName(old));
    return old;
  }
  t_irql = NewIrql;
  return old;
}

VOID KeRaiseIrql(KIRQL NewIrql, PKIRQL OldIrql) {
  KIRQL old = t_irql;
  if (NewIrql < old) {
    Report(SoftNdkWdkRuleIrqlMismatch, "KeRaiseIrql", SOFTNDK_WDK_SITE(),
           "new IRQL %s is below the current %s", IrqlName(NewIrql), IrqlName(old));
  } else {
    t_irql = NewIrql;
  }
  if (OldIrql != nullptr) *OldIrql = old;
}

KIRQL KeRaiseIrqlToDpcLevel(void) {
  KIRQL old = t_irql;
  if (old > DISPATCH_LEVEL) {
    Report(SoftNdkWdkRuleIrqlMismatch, "KeRaiseIrqlToDpcLevel", SOFTNDK_WDK_SITE(),
           "current IRQL %s is above DISPATCH_LEVEL", IrqlName(old));
    return old;
  }
  t_irql = DISPATCH_LEVEL;
  return old;
}

static void Lower(KIRQL NewIrql, const void* site) {
  if (NewIrql > t_irql) {
    Report(SoftNdkWdkRuleIrqlMismatch, "KeLowerIrql", site, "new IRQL %s is above the current %s",
           IrqlName(NewIrql), IrqlName(t_irql));
    return;
  }
  t_irql = NewIrql;
  // Lowering delivers what was held off (DPCs, APCs): others may run here.
  Stress(StressPoint::kIrqlLower);
}

VOID KeLowerIrql(KIRQL NewIrql) { Lower(NewIrql, SOFTNDK_WDK_SITE()); }
VOID KfLowerIrql(KIRQL NewIrql) { Lower(NewIrql, SOFTNDK_WDK_SITE()); }

VOID SoftNdkWdkPagedCode(const char* Function) {
  if (t_irql > APC_LEVEL) {
    Report(SoftNdkWdkRulePagedCodeAtRaisedIrql, Function, SOFTNDK_WDK_SITE(),
           "PAGED_CODE() at %s (pageable code must run at or below APC_LEVEL)", IrqlName(t_irql));
  }
}

}  // extern "C"
