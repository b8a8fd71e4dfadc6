// SPDX-License-Identifier: Apache-2.0
/*
 * softndk_wdk/ke.h - the kernel executive's core (Ke*): IRQL, dispatcher
 * objects (events, semaphores, timers), DPCs, spin locks, waits, time.
 * Part of wdm.h; include <wdm.h> or <ntddk.h>, not this file.
 *
 * Here a "processor" is a thread: IRQL is tracked per thread (PASSIVE_LEVEL
 * on any thread the kit did not create), DPCs run on one kit thread at
 * DISPATCH_LEVEL, spin locks raise the acquiring thread to DISPATCH_LEVEL.
 * The layouts are the kit's own, not Windows': drivers only embed these
 * objects and pass their addresses, which is all they may do on Windows too.
 */
#ifndef SOFTNDK_WDK_KE_H_
#define SOFTNDK_WDK_KE_H_

#include "ntdef.h"
#include "ntstatus.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- IRQL -------------------------------------------------------------- */
KIRQL KeGetCurrentIrql(void);
VOID KeRaiseIrql(KIRQL NewIrql, PKIRQL OldIrql);
VOID KeLowerIrql(KIRQL NewIrql);
KIRQL KeRaiseIrqlToDpcLevel(void);
KIRQL KfRaiseIrql(KIRQL NewIrql);
VOID KfLowerIrql(KIRQL NewIrql);
/* Checks the documented "pageable code runs at or below APC_LEVEL". */
VOID SoftNdkWdkPagedCode(const char* Function);
#define PAGED_CODE() SoftNdkWdkPagedCode(__func__)
#define PAGED_CODE_LOCKED() ((void)0)
#define PAGED_ASSERT(exp) ((void)0)
/* Section pragmas have no meaning here. */
#define CODE_SEG(x)

/* ---- dispatcher objects ---------------------------------------------- */
/* Common header of every object a thread can wait on. Magic is set by the
 * Ke*Initialize* call; a wait on an object without it is reported. */
typedef struct _DISPATCHER_HEADER {
  UCHAR Type;
  UCHAR Signalling;
  UCHAR Size;
  UCHAR Reserved1;
  volatile LONG SignalState;
  ULONG Magic;
  ULONG Reserved2;
} DISPATCHER_HEADER, *PDISPATCHER_HEADER;

typedef enum _KWAIT_REASON {
  Executive,
  FreePage,
  PageIn,
  PoolAllocation,
  DelayExecution,
  Suspended,
  UserRequest,
  WrExecutive,
  WrFreePage,
  WrPageIn,
  WrPoolAllocation,
  WrDelayExecution,
  WrSuspended,
  WrUserRequest,
  WrEventPair,
  WrQueue,
  MaximumWaitReason = 40
} KWAIT_REASON;

typedef struct _KEVENT {
  DISPATCHER_HEADER Header;
} KEVENT, *PKEVENT, *PRKEVENT;

typedef struct _KSEMAPHORE {
  DISPATCHER_HEADER Header;
  LONG Limit;
} KSEMAPHORE, *PKSEMAPHORE, *PRKSEMAPHORE;

typedef struct _KMUTANT {
  DISPATCHER_HEADER Header;
  PVOID OwnerThread;
  ULONG Recursion;
  KIRQL OldIrql;
} KMUTANT, *PKMUTANT, *PRKMUTANT, KMUTEX, *PKMUTEX, *PRKMUTEX;

typedef struct _KWAIT_BLOCK {
  PVOID Object;
} KWAIT_BLOCK, *PKWAIT_BLOCK, *PRKWAIT_BLOCK;
#define THREAD_WAIT_OBJECTS 3
#define MAXIMUM_WAIT_OBJECTS 64

VOID KeInitializeEvent(PRKEVENT Event, EVENT_TYPE Type, BOOLEAN State);
LONG KeSetEvent(PRKEVENT Event, KPRIORITY Increment, BOOLEAN Wait);
VOID KeClearEvent(PRKEVENT Event);
LONG KeResetEvent(PRKEVENT Event);
LONG KeReadStateEvent(PRKEVENT Event);

VOID KeInitializeSemaphore(PRKSEMAPHORE Semaphore, LONG Count, LONG Limit);
LONG KeReleaseSemaphore(PRKSEMAPHORE Semaphore, KPRIORITY Increment, LONG Adjustment, BOOLEAN Wait);
LONG KeReadStateSemaphore(PRKSEMAPHORE Semaphore);

VOID KeInitializeMutex(PRKMUTEX Mutex, ULONG Level);
LONG KeReleaseMutex(PRKMUTEX Mutex, BOOLEAN Wait);
LONG KeReadStateMutex(PRKMUTEX Mutex);

/* Timeout: NULL waits forever; 0 polls; negative is relative, positive an
 * absolute system time, both in 100 ns units. */
NTSTATUS KeWaitForSingleObject(PVOID Object, KWAIT_REASON WaitReason, KPROCESSOR_MODE WaitMode,
                               BOOLEAN Alertable, PLARGE_INTEGER Timeout);
NTSTATUS KeWaitForMultipleObjects(ULONG Count, PVOID Object[], WAIT_TYPE WaitType,
                                  KWAIT_REASON WaitReason, KPROCESSOR_MODE WaitMode,
                                  BOOLEAN Alertable, PLARGE_INTEGER Timeout,
                                  PKWAIT_BLOCK WaitBlockArray);
#define KeWaitForMutexObject KeWaitForSingleObject
NTSTATUS KeDelayExecutionThread(KPROCESSOR_MODE WaitMode, BOOLEAN Alertable,
                                PLARGE_INTEGER Interval);
VOID KeStallExecutionProcessor(ULONG MicroSeconds);

/* ---- DPCs -------------------------------------------------------------- */
struct _KDPC;
typedef VOID KDEFERRED_ROUTINE(struct _KDPC* Dpc, PVOID DeferredContext, PVOID SystemArgument1,
                               PVOID SystemArgument2);
typedef KDEFERRED_ROUTINE* PKDEFERRED_ROUTINE;

typedef enum _KDPC_IMPORTANCE {
  LowImportance,
  MediumImportance,
  HighImportance,
  MediumHighImportance
} KDPC_IMPORTANCE;

typedef struct _KDPC {
  UCHAR Type;
  UCHAR Importance;
  USHORT Number;
  ULONG Magic;
  LIST_ENTRY DpcListEntry;
  PKDEFERRED_ROUTINE DeferredRoutine;
  PVOID DeferredContext;
  PVOID SystemArgument1;
  PVOID SystemArgument2;
  volatile LONG Queued;
} KDPC, *PKDPC, *PRKDPC;

VOID KeInitializeDpc(PRKDPC Dpc, PKDEFERRED_ROUTINE DeferredRoutine, PVOID DeferredContext);
VOID KeInitializeThreadedDpc(PRKDPC Dpc, PKDEFERRED_ROUTINE DeferredRoutine, PVOID DeferredContext);
BOOLEAN KeInsertQueueDpc(PRKDPC Dpc, PVOID SystemArgument1, PVOID SystemArgument2);
BOOLEAN KeRemoveQueueDpc(PRKDPC Dpc);
VOID KeSetImportanceDpc(PRKDPC Dpc, KDPC_IMPORTANCE Importance);
VOID KeSetTargetProcessorDpc(PRKDPC Dpc, CCHAR Number);
/* Returns once every DPC queued before the call has run. */
VOID KeFlushQueuedDpcs(void);

/* ---- timers ------------------------------------------------------------ */
typedef struct _KTIMER {
  DISPATCHER_HEADER Header;
  ULARGE_INTEGER DueTime; /* interrupt time of the next expiry */
  LIST_ENTRY TimerListEntry;
  PKDPC Dpc;
  LONG Period; /* milliseconds, 0 = one-shot */
  volatile LONG Inserted;
} KTIMER, *PKTIMER, *PRKTIMER;

VOID KeInitializeTimer(PKTIMER Timer);
VOID KeInitializeTimerEx(PKTIMER Timer, TIMER_TYPE Type);
BOOLEAN KeSetTimer(PKTIMER Timer, LARGE_INTEGER DueTime, PKDPC Dpc);
BOOLEAN KeSetTimerEx(PKTIMER Timer, LARGE_INTEGER DueTime, LONG Period, PKDPC Dpc);
BOOLEAN KeCancelTimer(PKTIMER Timer);
BOOLEAN KeReadStateTimer(PKTIMER Timer);

/* ---- spin locks ------------------------------------------------------ */
/* 0 when free; the owner's thread tag while held. */
typedef ULONG_PTR KSPIN_LOCK;
typedef KSPIN_LOCK* PKSPIN_LOCK;

typedef struct _KSPIN_LOCK_QUEUE {
  struct _KSPIN_LOCK_QUEUE* volatile Next;
  PKSPIN_LOCK volatile Lock;
} KSPIN_LOCK_QUEUE, *PKSPIN_LOCK_QUEUE;

typedef struct _KLOCK_QUEUE_HANDLE {
  KSPIN_LOCK_QUEUE LockQueue;
  KIRQL OldIrql;
} KLOCK_QUEUE_HANDLE, *PKLOCK_QUEUE_HANDLE;

VOID KeInitializeSpinLock(PKSPIN_LOCK SpinLock);
VOID KeAcquireSpinLock(PKSPIN_LOCK SpinLock, PKIRQL OldIrql);
KIRQL KeAcquireSpinLockRaiseToDpc(PKSPIN_LOCK SpinLock);
VOID KeReleaseSpinLock(PKSPIN_LOCK SpinLock, KIRQL NewIrql);
VOID KeAcquireSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock);
VOID KeReleaseSpinLockFromDpcLevel(PKSPIN_LOCK SpinLock);
BOOLEAN KeTryToAcquireSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock);
BOOLEAN KeTestSpinLock(PKSPIN_LOCK SpinLock);
VOID KeAcquireInStackQueuedSpinLock(PKSPIN_LOCK SpinLock, PKLOCK_QUEUE_HANDLE LockHandle);
VOID KeReleaseInStackQueuedSpinLock(PKLOCK_QUEUE_HANDLE LockHandle);
VOID KeAcquireInStackQueuedSpinLockAtDpcLevel(PKSPIN_LOCK SpinLock, PKLOCK_QUEUE_HANDLE LockHandle);
VOID KeReleaseInStackQueuedSpinLockFromDpcLevel(PKLOCK_QUEUE_HANDLE LockHandle);
#define KefAcquireSpinLockAtDpcLevel KeAcquireSpinLockAtDpcLevel
#define KefReleaseSpinLockFromDpcLevel KeReleaseSpinLockFromDpcLevel
#define KeAcquireSpinLockForDpc(SpinLock) KeAcquireSpinLockRaiseToDpc(SpinLock)
#define KeReleaseSpinLockForDpc(SpinLock, OldIrql) KeReleaseSpinLock((SpinLock), (OldIrql))

/* ---- critical regions, threads, processors ---------------------------- */
typedef struct _KTHREAD* PKTHREAD;
typedef struct _KTHREAD* PRKTHREAD;
typedef struct _KTHREAD* PETHREAD;
typedef struct _KPROCESS* PEPROCESS;
typedef struct _KPROCESS* PKPROCESS;
typedef struct _CLIENT_ID {
  HANDLE UniqueProcess;
  HANDLE UniqueThread;
} CLIENT_ID, *PCLIENT_ID;

VOID KeEnterCriticalRegion(void);
VOID KeLeaveCriticalRegion(void);
VOID KeEnterGuardedRegion(void);
VOID KeLeaveGuardedRegion(void);
BOOLEAN KeAreApcsDisabled(void);
PKTHREAD KeGetCurrentThread(void);
#define PsGetCurrentThread() ((PETHREAD)KeGetCurrentThread())
HANDLE PsGetCurrentThreadId(void);
HANDLE PsGetCurrentProcessId(void);
PEPROCESS PsGetCurrentProcess(void);
#define IoGetCurrentProcess PsGetCurrentProcess
KPRIORITY KeSetPriorityThread(PKTHREAD Thread, KPRIORITY Priority);
#define LOW_PRIORITY 0
#define LOW_REALTIME_PRIORITY 16
#define HIGH_PRIORITY 31
#define MAXIMUM_PRIORITY 32

/* EVENT_TYPE, TIMER_TYPE, WAIT_TYPE and PROCESSOR_NUMBER are ntdef.h's. */
#define ALL_PROCESSOR_GROUPS 0xffff
ULONG KeGetCurrentProcessorNumber(void);
ULONG KeGetCurrentProcessorNumberEx(PPROCESSOR_NUMBER ProcNumber);
ULONG KeQueryActiveProcessorCount(PKAFFINITY ActiveProcessors);
ULONG KeQueryActiveProcessorCountEx(USHORT GroupNumber);
ULONG KeQueryMaximumProcessorCountEx(USHORT GroupNumber);
USHORT KeQueryActiveGroupCount(void);
KAFFINITY KeQueryActiveProcessors(void);
NTSTATUS KeGetProcessorNumberFromIndex(ULONG ProcIndex, PPROCESSOR_NUMBER ProcNumber);
ULONG KeGetProcessorIndexFromNumber(PPROCESSOR_NUMBER ProcNumber);

/* ---- time ------------------------------------------------------------ */
/* System time: 100 ns units since 1601-01-01 UTC (CLOCK_REALTIME).
 * Interrupt time and the performance counter: CLOCK_MONOTONIC. */
LARGE_INTEGER KeQueryPerformanceCounter(PLARGE_INTEGER PerformanceFrequency);
VOID KeQuerySystemTime(PLARGE_INTEGER CurrentTime);
VOID KeQuerySystemTimePrecise(PLARGE_INTEGER CurrentTime);
ULONGLONG KeQueryInterruptTime(void);
ULONGLONG KeQueryInterruptTimePrecise(PULONG64 QpcTimeStamp);
ULONGLONG KeQueryUnbiasedInterruptTime(void);
VOID KeQueryTickCount(PLARGE_INTEGER CurrentCount);
ULONG KeQueryTimeIncrement(void);

/* ---- fatal errors ----------------------------------------------------- */
DECLSPEC_NORETURN VOID KeBugCheckEx(ULONG BugCheckCode, ULONG_PTR P1, ULONG_PTR P2, ULONG_PTR P3,
                                    ULONG_PTR P4);
DECLSPEC_NORETURN VOID KeBugCheck(ULONG BugCheckCode);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_WDK_KE_H_ */
