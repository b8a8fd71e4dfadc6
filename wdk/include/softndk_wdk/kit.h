// SPDX-License-Identifier: Apache-2.0
/*
 * softndk_wdk/kit.h - what the kit adds to the WDK: the host interface
 * (how a driver run by softndk-wdk-run says it is done, its command-line
 * arguments) and the checker's controls and counters. Included by wdm.h;
 * SOFTNDK_WDK is defined there, so a driver can keep these calls behind
 * `#ifdef SOFTNDK_WDK` and still build for Windows.
 */
#ifndef SOFTNDK_WDK_KIT_H_
#define SOFTNDK_WDK_KIT_H_

#include "ntdef.h"

#define SOFTNDK_WDK 1

#ifdef __cplusplus
extern "C" {
#endif

/* ---- host -------------------------------------------------------------- */
/* Tells the host (softndk-wdk-run) that the driver's work is done and with
 * what result: the host then calls DriverUnload, runs the leak check and
 * exits. Callable at any IRQL, from any thread, once (later calls are
 * ignored). */
VOID SoftNdkWdkRequestUnload(NTSTATUS Status);
/* Blocks until SoftNdkWdkRequestUnload is called or TimeoutMs passes
 * (0 = no limit). Returns TRUE and the status if it was called. */
BOOLEAN SoftNdkWdkWaitForUnloadRequest(ULONG TimeoutMs, PNTSTATUS Status);
/* The arguments after `--` on the host's command line. */
ULONG SoftNdkWdkArgumentCount(void);
PCSTR SoftNdkWdkArgument(ULONG Index);
VOID SoftNdkWdkSetArguments(ULONG Count, const char* const* Arguments);

/* ---- checker ------------------------------------------------------------ */
typedef enum _SOFTNDK_WDK_RULE {
  SoftNdkWdkRuleWaitAtDispatch = 0,    /* a wait with a non-zero timeout at DISPATCH_LEVEL */
  SoftNdkWdkRulePagedCodeAtRaisedIrql, /* PAGED_CODE() above APC_LEVEL */
  SoftNdkWdkRuleIrqlTooHigh,           /* a call above its documented maximum IRQL */
  SoftNdkWdkRuleIrqlMismatch,          /* KeLowerIrql to a higher level, raise to a lower one */
  SoftNdkWdkRuleSpinLockNotHeld,       /* releasing a spin lock that is not held */
  SoftNdkWdkRuleSpinLockRecursion,     /* acquiring a spin lock the thread holds */
  SoftNdkWdkRuleLockNotOwned,          /* releasing a mutex/resource/push lock not owned */
  SoftNdkWdkRulePoolWrongTag,          /* ExFreePoolWithTag with another tag */
  SoftNdkWdkRuleDoubleFree,            /* freeing pool/MDL/IRP/work item not live */
  SoftNdkWdkRuleUninitializedObject,   /* using an event/timer/DPC/lock never initialized */
  SoftNdkWdkRuleIrpCompletedTwice,     /* IoCompleteRequest on a completed IRP */
  SoftNdkWdkRuleIrpMisuse,             /* no stack location left, freeing an IRP in use, ... */
  SoftNdkWdkRuleWorkItemMisuse,        /* queueing a queued work item, freeing it while queued */
  SoftNdkWdkRuleInvalidParameter,      /* a bad argument Windows would bugcheck on */
  SoftNdkWdkRuleLeak,                  /* pool/MDL/work item/IRP/NDK object live at unload */
  SoftNdkWdkRuleRundownTimeout,        /* a rundown wait past the kit's limit */
  SoftNdkWdkRuleAssertion,             /* NT_ASSERT / ASSERT failed */
  SoftNdkWdkRuleBugCheck,              /* KeBugCheckEx, ExRaiseStatus */
  SoftNdkWdkRuleCount
} SOFTNDK_WDK_RULE;

typedef enum _SOFTNDK_WDK_CHECK_MODE {
  SoftNdkWdkCheckReport = 0, /* report to stderr and continue (the default) */
  SoftNdkWdkCheckFatal = 1,  /* the first report aborts the process */
  SoftNdkWdkCheckQuiet = 2   /* count only (tests that provoke reports) */
} SOFTNDK_WDK_CHECK_MODE;

/* The mode starts from the environment: SOFTNDK_WDK_CHECK=fatal|report|quiet. */
VOID SoftNdkWdkSetCheckMode(SOFTNDK_WDK_CHECK_MODE Mode);
SOFTNDK_WDK_CHECK_MODE SoftNdkWdkGetCheckMode(void);
/* Reports made so far for one rule, and for all rules. */
ULONG SoftNdkWdkCheckCount(SOFTNDK_WDK_RULE Rule);
ULONG SoftNdkWdkCheckTotal(void);
VOID SoftNdkWdkCheckReset(void);
/* The name of a rule, as it appears in reports ("wait-at-dispatch", ...). */
PCSTR SoftNdkWdkRuleName(SOFTNDK_WDK_RULE Rule);
/* The call named by the last report ("KeWaitForSingleObject", ...), or "". */
PCSTR SoftNdkWdkLastReportCall(void);
/* Reports everything still live (pool per tag, MDLs, IRPs, work items, and
 * what other kit parts registered); returns the number of leaked objects. */
ULONG SoftNdkWdkCheckLeaks(void);
/* The longest ExWaitForRundownProtectionRelease and the unload drain wait
 * before a report (default 30000 ms, env SOFTNDK_WDK_RUNDOWN_WAIT_MS). */
VOID SoftNdkWdkSetRundownWaitLimit(ULONG Milliseconds);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_WDK_KIT_H_ */
