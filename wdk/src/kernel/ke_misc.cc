// SPDX-License-Identifier: Apache-2.0
// The small Ke/Ps calls: critical regions, thread and process identity,
// processor numbers, bug checks (softndk_wdk/ke.h).
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "irql/checker.h"
#include "kernel/bugcheck.h"
#include "kernel/dispatcher.h"

using namespace softndk::wdk;

namespace {
// Kernel APCs are not emulated; the count only answers KeAreApcsDisabled.
thread_local int t_critical_regions = 0;
}  // namespace

extern "C" {

VOID KeEnterCriticalRegion(void) { t_critical_regions++; }
VOID KeLeaveCriticalRegion(void) {
  if (t_critical_regions == 0) {
    Report(SoftNdkWdkRuleIrqlMismatch, "KeLeaveCriticalRegion", SOFTNDK_WDK_SITE(),
           "not in a critical region");
    return;
  }
  t_critical_regions--;
}
VOID KeEnterGuardedRegion(void) { t_critical_regions++; }
VOID KeLeaveGuardedRegion(void) {
  if (t_critical_regions == 0) {
    Report(SoftNdkWdkRuleIrqlMismatch, "KeLeaveGuardedRegion", SOFTNDK_WDK_SITE(),
           "not in a guarded region");
    return;
  }
  t_critical_regions--;
}
BOOLEAN KeAreApcsDisabled(void) {
  return t_critical_regions > 0 || KeGetCurrentIrql() >= APC_LEVEL;
}

PKTHREAD KeGetCurrentThread(void) { return reinterpret_cast<PKTHREAD>(CurrentThreadTag()); }
HANDLE PsGetCurrentThreadId(void) {
  return reinterpret_cast<HANDLE>(static_cast<uintptr_t>(syscall(SYS_gettid)));
}
HANDLE PsGetCurrentProcessId(void) {
  return reinterpret_cast<HANDLE>(static_cast<uintptr_t>(getpid()));
}
PEPROCESS PsGetCurrentProcess(void) {
  static char process_anchor;
  return reinterpret_cast<PEPROCESS>(&process_anchor);
}
KPRIORITY KeSetPriorityThread(PKTHREAD Thread, KPRIORITY Priority) {
  (void)Thread;
  (void)Priority;
  return 8;  // the default priority; threads keep theirs here
}

ULONG KeGetCurrentProcessorNumber(void) {
  int cpu = sched_getcpu();
  return cpu < 0 ? 0 : static_cast<ULONG>(cpu);
}
ULONG KeGetCurrentProcessorNumberEx(PPROCESSOR_NUMBER ProcNumber) {
  ULONG n = KeGetCurrentProcessorNumber();
  if (ProcNumber != nullptr) {
    ProcNumber->Group = 0;
    ProcNumber->Number = static_cast<UCHAR>(n);
    ProcNumber->Reserved = 0;
  }
  return n;
}
static ULONG ProcessorCount() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  if (n > 64) n = 64;  // one processor group
  return static_cast<ULONG>(n);
}
KAFFINITY KeQueryActiveProcessors(void) {
  ULONG n = ProcessorCount();
  return n >= 64 ? ~KAFFINITY{0} : ((KAFFINITY{1} << n) - 1);
}
ULONG KeQueryActiveProcessorCount(PKAFFINITY ActiveProcessors) {
  if (ActiveProcessors != nullptr) *ActiveProcessors = KeQueryActiveProcessors();
  return ProcessorCount();
}
ULONG KeQueryActiveProcessorCountEx(USHORT GroupNumber) {
  return GroupNumber == 0 || GroupNumber == ALL_PROCESSOR_GROUPS ? ProcessorCount() : 0;
}
ULONG KeQueryMaximumProcessorCountEx(USHORT GroupNumber) {
  return KeQueryActiveProcessorCountEx(GroupNumber);
}
USHORT KeQueryActiveGroupCount(void) { return 1; }
NTSTATUS KeGetProcessorNumberFromIndex(ULONG ProcIndex, PPROCESSOR_NUMBER ProcNumber) {
  if (ProcIndex >= ProcessorCount()) return STATUS_INVALID_PARAMETER;
  ProcNumber->Group = 0;
  ProcNumber->Number = static_cast<UCHAR>(ProcIndex);
  ProcNumber->Reserved = 0;
  return STATUS_SUCCESS;
}
ULONG KeGetProcessorIndexFromNumber(PPROCESSOR_NUMBER ProcNumber) {
  if (ProcNumber->Group != 0 || ProcNumber->Number >= ProcessorCount()) return 0xffffffffu;
  return ProcNumber->Number;
}

VOID KeBugCheckEx(ULONG BugCheckCode, ULONG_PTR P1, ULONG_PTR P2, ULONG_PTR P3, ULONG_PTR P4) {
  SetPendingBugCheck(BugCheckCode, P1, P2, P3, P4, "KeBugCheckEx", SOFTNDK_WDK_SITE());
  Report(SoftNdkWdkRuleBugCheck, "KeBugCheckEx", SOFTNDK_WDK_SITE(),
         "bug check 0x%08x (0x%lx, 0x%lx, 0x%lx, 0x%lx)", BugCheckCode,
         static_cast<unsigned long>(P1), static_cast<unsigned long>(P2),
         static_cast<unsigned long>(P3), static_cast<unsigned long>(P4));
  std::fprintf(stderr, "softndk-wdk: the driver bug-checked; ending the process\n");
  std::abort();
}

VOID KeBugCheck(ULONG BugCheckCode) {
  SetPendingBugCheck(BugCheckCode, 0, 0, 0, 0, "KeBugCheck", SOFTNDK_WDK_SITE());
  Report(SoftNdkWdkRuleBugCheck, "KeBugCheck", SOFTNDK_WDK_SITE(), "bug check 0x%08x",
         BugCheckCode);
  std::fprintf(stderr, "softndk-wdk: the driver bug-checked; ending the process\n");
  std::abort();
}

VOID ExRaiseStatus(NTSTATUS Status) {
  // Nothing catches it (no structured exception handling): Windows' bug
  // check for an unhandled kernel exception.
  SetPendingBugCheck(0x1e, static_cast<ULONG>(Status),
                     reinterpret_cast<ULONG_PTR>(SOFTNDK_WDK_SITE()), 0, 0, "ExRaiseStatus",
                     SOFTNDK_WDK_SITE());
  Report(SoftNdkWdkRuleBugCheck, "ExRaiseStatus", SOFTNDK_WDK_SITE(),
         "exception 0x%08x raised (structured exceptions are not emulated)",
         static_cast<unsigned>(Status));
  std::fprintf(stderr, "softndk-wdk: unhandled kernel exception 0x%08x; ending the process\n",
               static_cast<unsigned>(Status));
  std::abort();
}

}  // extern "C"
