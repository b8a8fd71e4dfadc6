// SPDX-License-Identifier: Apache-2.0
/*
 * softndk_wdk/ex.h - executive support (Ex*): pool, lookaside lists, fast
 * mutexes, resources, push locks, rundown protection, interlocked lists and
 * the Interlocked* intrinsics. Part of wdm.h; include <wdm.h> or <ntddk.h>.
 *
 * Pool is malloc'ed memory with a registry of live blocks (tag, size, call
 * site): ExFreePoolWithTag checks the tag, a second free is reported instead
 * of corrupting the heap, and what is still live when the driver unloads is
 * reported per tag.
 */
#ifndef SOFTNDK_WDK_EX_H_
#define SOFTNDK_WDK_EX_H_

#include "softndk_wdk/ke.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Interlocked*: compiler intrinsics on Windows, __atomic here -------- */
/* clang-format off */
static inline LONG InterlockedIncrement(LONG volatile* a) { return __atomic_add_fetch(a, 1, __ATOMIC_SEQ_CST); }
static inline LONG InterlockedDecrement(LONG volatile* a) { return __atomic_sub_fetch(a, 1, __ATOMIC_SEQ_CST); }
static inline LONG InterlockedExchange(LONG volatile* t, LONG v) { return __atomic_exchange_n(t, v, __ATOMIC_SEQ_CST); }
static inline LONG InterlockedExchangeAdd(LONG volatile* a, LONG v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }
static inline LONG InterlockedAdd(LONG volatile* a, LONG v) { return __atomic_add_fetch(a, v, __ATOMIC_SEQ_CST); }
static inline LONG InterlockedOr(LONG volatile* d, LONG v) { return __atomic_fetch_or(d, v, __ATOMIC_SEQ_CST); }
static inline LONG InterlockedAnd(LONG volatile* d, LONG v) { return __atomic_fetch_and(d, v, __ATOMIC_SEQ_CST); }
static inline LONG InterlockedXor(LONG volatile* d, LONG v) { return __atomic_fetch_xor(d, v, __ATOMIC_SEQ_CST); }
static inline LONG InterlockedCompareExchange(LONG volatile* d, LONG x, LONG c) {
  __atomic_compare_exchange_n(d, &c, x, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return c; /* the initial value, as documented */
}
static inline LONG64 InterlockedIncrement64(LONG64 volatile* a) { return __atomic_add_fetch(a, 1, __ATOMIC_SEQ_CST); }
static inline LONG64 InterlockedDecrement64(LONG64 volatile* a) { return __atomic_sub_fetch(a, 1, __ATOMIC_SEQ_CST); }
static inline LONG64 InterlockedExchange64(LONG64 volatile* t, LONG64 v) { return __atomic_exchange_n(t, v, __ATOMIC_SEQ_CST); }
static inline LONG64 InterlockedExchangeAdd64(LONG64 volatile* a, LONG64 v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }
static inline LONG64 InterlockedAdd64(LONG64 volatile* a, LONG64 v) { return __atomic_add_fetch(a, v, __ATOMIC_SEQ_CST); }
static inline LONG64 InterlockedOr64(LONG64 volatile* d, LONG64 v) { return __atomic_fetch_or(d, v, __ATOMIC_SEQ_CST); }
static inline LONG64 InterlockedAnd64(LONG64 volatile* d, LONG64 v) { return __atomic_fetch_and(d, v, __ATOMIC_SEQ_CST); }
static inline LONG64 InterlockedXor64(LONG64 volatile* d, LONG64 v) { return __atomic_fetch_xor(d, v, __ATOMIC_SEQ_CST); }
static inline LONG64 InterlockedCompareExchange64(LONG64 volatile* d, LONG64 x, LONG64 c) {
  __atomic_compare_exchange_n(d, &c, x, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return c;
}
static inline PVOID InterlockedExchangePointer(PVOID volatile* t, PVOID v) { return __atomic_exchange_n(t, v, __ATOMIC_SEQ_CST); }
static inline PVOID InterlockedCompareExchangePointer(PVOID volatile* d, PVOID x, PVOID c) {
  __atomic_compare_exchange_n(d, &c, x, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return c;
}
static inline SHORT InterlockedIncrement16(SHORT volatile* a) { return __atomic_add_fetch(a, 1, __ATOMIC_SEQ_CST); }
static inline SHORT InterlockedDecrement16(SHORT volatile* a) { return __atomic_sub_fetch(a, 1, __ATOMIC_SEQ_CST); }
static inline SHORT InterlockedCompareExchange16(SHORT volatile* d, SHORT x, SHORT c) {
  __atomic_compare_exchange_n(d, &c, x, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return c;
}
static inline CHAR InterlockedExchange8(CHAR volatile* t, CHAR v) { return __atomic_exchange_n(t, v, __ATOMIC_SEQ_CST); }
static inline CHAR InterlockedOr8(CHAR volatile* d, CHAR v) { return __atomic_fetch_or(d, v, __ATOMIC_SEQ_CST); }
static inline CHAR InterlockedAnd8(CHAR volatile* d, CHAR v) { return __atomic_fetch_and(d, v, __ATOMIC_SEQ_CST); }
static inline LONG ReadAcquire(LONG const volatile* s) { return __atomic_load_n(s, __ATOMIC_ACQUIRE); }
static inline LONG ReadNoFence(LONG const volatile* s) { return __atomic_load_n(s, __ATOMIC_RELAXED); }
static inline VOID WriteRelease(LONG volatile* d, LONG v) { __atomic_store_n(d, v, __ATOMIC_RELEASE); }
static inline VOID WriteNoFence(LONG volatile* d, LONG v) { __atomic_store_n(d, v, __ATOMIC_RELAXED); }
static inline LONG64 ReadAcquire64(LONG64 const volatile* s) { return __atomic_load_n(s, __ATOMIC_ACQUIRE); }
static inline LONG64 ReadNoFence64(LONG64 const volatile* s) { return __atomic_load_n(s, __ATOMIC_RELAXED); }
static inline VOID WriteRelease64(LONG64 volatile* d, LONG64 v) { __atomic_store_n(d, v, __ATOMIC_RELEASE); }
static inline VOID WriteNoFence64(LONG64 volatile* d, LONG64 v) { __atomic_store_n(d, v, __ATOMIC_RELAXED); }
static inline BOOLEAN ReadBooleanAcquire(BOOLEAN const volatile* s) { return __atomic_load_n(s, __ATOMIC_ACQUIRE); }
static inline BOOLEAN ReadBooleanNoFence(BOOLEAN const volatile* s) { return __atomic_load_n(s, __ATOMIC_RELAXED); }
static inline VOID WriteBooleanRelease(BOOLEAN volatile* d, BOOLEAN v) { __atomic_store_n(d, v, __ATOMIC_RELEASE); }
static inline VOID WriteBooleanNoFence(BOOLEAN volatile* d, BOOLEAN v) { __atomic_store_n(d, v, __ATOMIC_RELAXED); }
static inline UCHAR ReadUCharAcquire(UCHAR const volatile* s) { return __atomic_load_n(s, __ATOMIC_ACQUIRE); }
static inline UCHAR ReadUCharNoFence(UCHAR const volatile* s) { return __atomic_load_n(s, __ATOMIC_RELAXED); }
static inline ULONG ReadULongAcquire(ULONG const volatile* s) { return __atomic_load_n(s, __ATOMIC_ACQUIRE); }
static inline ULONG ReadULongNoFence(ULONG const volatile* s) { return __atomic_load_n(s, __ATOMIC_RELAXED); }
static inline VOID WriteULongRelease(ULONG volatile* d, ULONG v) { __atomic_store_n(d, v, __ATOMIC_RELEASE); }
static inline VOID WriteULongNoFence(ULONG volatile* d, ULONG v) { __atomic_store_n(d, v, __ATOMIC_RELAXED); }
static inline PVOID ReadPointerAcquire(PVOID const volatile* s) { return __atomic_load_n(s, __ATOMIC_ACQUIRE); }
static inline PVOID ReadPointerNoFence(PVOID const volatile* s) { return __atomic_load_n(s, __ATOMIC_RELAXED); }
static inline VOID WritePointerRelease(PVOID volatile* d, PVOID v) { __atomic_store_n(d, v, __ATOMIC_RELEASE); }
static inline VOID WritePointerNoFence(PVOID volatile* d, PVOID v) { __atomic_store_n(d, v, __ATOMIC_RELAXED); }
/* clang-format on */
#define InterlockedIncrementNoFence InterlockedIncrement
#define InterlockedDecrementNoFence InterlockedDecrement
#define InterlockedIncrementAcquire InterlockedIncrement
#define InterlockedDecrementRelease InterlockedDecrement
#define InterlockedExchangeNoFence InterlockedExchange
#define InterlockedCompareExchangeAcquire InterlockedCompareExchange
#define InterlockedCompareExchangeRelease InterlockedCompareExchange
#define InterlockedCompareExchangeNoFence InterlockedCompareExchange
#define InterlockedOrNoFence InterlockedOr
#define InterlockedAndNoFence InterlockedAnd
#define InterlockedExchangeAddNoFence InterlockedExchangeAdd
#define InterlockedExchangeAddSizeT(a, b) \
  ((SIZE_T)InterlockedExchangeAdd64((LONG64 volatile*)(a), (LONG64)(b)))
#define InterlockedIncrementSizeT(a) ((SIZE_T)InterlockedIncrement64((LONG64 volatile*)(a)))
#define InterlockedDecrementSizeT(a) ((SIZE_T)InterlockedDecrement64((LONG64 volatile*)(a)))
#define InterlockedCompareExchangePointerAcquire InterlockedCompareExchangePointer
#define InterlockedCompareExchangePointerRelease InterlockedCompareExchangePointer
#define InterlockedExchangePointerNoFence InterlockedExchangePointer
#define MemoryBarrier() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define KeMemoryBarrier() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define KeMemoryBarrierWithoutFence() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define _ReadWriteBarrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#if defined(__x86_64__) || defined(__i386__)
#define YieldProcessor() __builtin_ia32_pause()
#else
#define YieldProcessor() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#endif

/* ---- pool -------------------------------------------------------------- */
typedef enum _POOL_TYPE {
  NonPagedPool = 0,
  NonPagedPoolExecute = 0,
  PagedPool = 1,
  NonPagedPoolMustSucceed = 2,
  DontUseThisType = 3,
  NonPagedPoolCacheAligned = 4,
  PagedPoolCacheAligned = 5,
  NonPagedPoolCacheAlignedMustS = 6,
  MaxPoolType = 7,
  NonPagedPoolNx = 512,
  NonPagedPoolNxCacheAligned = 516,
  NonPagedPoolSession = 32,
  PagedPoolSession = 33
} POOL_TYPE;

typedef enum _EX_POOL_PRIORITY {
  LowPoolPriority,
  LowPoolPrioritySpecialPoolOverrun = 8,
  LowPoolPrioritySpecialPoolUnderrun = 9,
  NormalPoolPriority = 16,
  NormalPoolPrioritySpecialPoolOverrun = 24,
  NormalPoolPrioritySpecialPoolUnderrun = 25,
  HighPoolPriority = 32,
  HighPoolPrioritySpecialPoolOverrun = 40,
  HighPoolPrioritySpecialPoolUnderrun = 41
} EX_POOL_PRIORITY;

#define POOL_FLAG_REQUIRED_START 0x0000000000000001ULL
#define POOL_FLAG_USE_QUOTA 0x0000000000000001ULL
#define POOL_FLAG_UNINITIALIZED 0x0000000000000002ULL
#define POOL_FLAG_SESSION 0x0000000000000004ULL
#define POOL_FLAG_CACHE_ALIGNED 0x0000000000000008ULL
#define POOL_FLAG_RAISE_ON_FAILURE 0x0000000000000020ULL
#define POOL_FLAG_NON_PAGED 0x0000000000000040ULL
#define POOL_FLAG_NON_PAGED_EXECUTE 0x0000000000000080ULL
#define POOL_FLAG_PAGED 0x0000000000000100ULL
#define POOL_FLAG_REQUIRED_END 0x0000000080000000ULL
#define POOL_FLAG_OPTIONAL_START 0x0000000100000000ULL
#define POOL_FLAG_SPECIAL_POOL 0x0000000100000000ULL
#define POOL_FLAG_OPTIONAL_END 0x8000000000000000ULL
#define POOL_RAISE_IF_ALLOCATION_FAILURE 16
#define POOL_COLD_ALLOCATION 256
#define POOL_NX_ALLOCATION 512
#define POOL_ZERO_ALLOCATION 1024
#define PROTECTED_POOL 0x80000000

/* Zeroed unless POOL_FLAG_UNINITIALIZED; NULL on failure. */
PVOID ExAllocatePool2(POOL_FLAGS Flags, SIZE_T NumberOfBytes, ULONG Tag);
PVOID ExAllocatePoolWithTag(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag);
PVOID ExAllocatePoolWithTagPriority(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag,
                                    EX_POOL_PRIORITY Priority);
PVOID ExAllocatePoolZero(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag);
PVOID ExAllocatePoolUninitialized(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag);
PVOID ExAllocatePool(POOL_TYPE PoolType, SIZE_T NumberOfBytes);
VOID ExFreePool(PVOID P);
VOID ExFreePoolWithTag(PVOID P, ULONG Tag);
VOID ExFreePool2(PVOID P, ULONG Tag, PVOID ExtendedParameters, ULONG ExtendedParametersCount);

/* ExAllocatePool3: ExAllocatePool2 with extended parameters (priority, NUMA
 * node; secure pool is refused). */
typedef enum _POOL_EXTENDED_PARAMETER_TYPE {
  PoolExtendedParameterInvalidType = 0,
  PoolExtendedParameterPriority,
  PoolExtendedParameterSecurePool,
  PoolExtendedParameterNumaNode,
  PoolExtendedParameterMax
} POOL_EXTENDED_PARAMETER_TYPE,
    *PPOOL_EXTENDED_PARAMETER_TYPE;
#define POOL_EXTENDED_PARAMETER_TYPE_BITS 8
#define POOL_EXTENDED_PARAMETER_REQUIRED_FIELD_BITS 1
#define POOL_EXTENDED_PARAMETER_RESERVED_BITS \
  (64 - POOL_EXTENDED_PARAMETER_TYPE_BITS - POOL_EXTENDED_PARAMETER_REQUIRED_FIELD_BITS)
#define SECURE_POOL_FLAGS_NONE 0x0
#define SECURE_POOL_FLAGS_FREEABLE 0x1
#define SECURE_POOL_FLAGS_MODIFIABLE 0x2
typedef struct _POOL_EXTENDED_PARAMS_SECURE_POOL {
  HANDLE SecurePoolHandle;
  PVOID Buffer;
  ULONG_PTR Cookie;
  ULONG SecurePoolFlags;
} POOL_EXTENDED_PARAMS_SECURE_POOL;
#ifndef MM_ANY_NODE_OK
typedef ULONG NODE_REQUIREMENT;
#define MM_ANY_NODE_OK 0x80000000
#endif
typedef NODE_REQUIREMENT POOL_NODE_REQUIREMENT;
typedef struct _POOL_EXTENDED_PARAMETER {
  struct {
    ULONG64 Type : POOL_EXTENDED_PARAMETER_TYPE_BITS;
    ULONG64 Optional : POOL_EXTENDED_PARAMETER_REQUIRED_FIELD_BITS;
    ULONG64 Reserved : POOL_EXTENDED_PARAMETER_RESERVED_BITS;
  };
  union {
    ULONG64 Reserved2;
    PVOID Reserved3;
    EX_POOL_PRIORITY Priority;
    POOL_EXTENDED_PARAMS_SECURE_POOL* SecurePoolParams;
    POOL_NODE_REQUIREMENT PreferredNode;
  };
} POOL_EXTENDED_PARAMETER, *PPOOL_EXTENDED_PARAMETER;
typedef const POOL_EXTENDED_PARAMETER* PCPOOL_EXTENDED_PARAMETER;
PVOID ExAllocatePool3(POOL_FLAGS Flags, SIZE_T NumberOfBytes, ULONG Tag,
                      PCPOOL_EXTENDED_PARAMETER ExtendedParameters, ULONG ExtendedParametersCount);

/* ---- lookaside lists --------------------------------------------------- */
struct _LOOKASIDE_LIST_EX;
typedef PVOID ALLOCATE_FUNCTION_EX(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag,
                                   struct _LOOKASIDE_LIST_EX* Lookaside);
typedef ALLOCATE_FUNCTION_EX* PALLOCATE_FUNCTION_EX;
typedef VOID FREE_FUNCTION_EX(PVOID Buffer, struct _LOOKASIDE_LIST_EX* Lookaside);
typedef FREE_FUNCTION_EX* PFREE_FUNCTION_EX;
typedef PVOID ALLOCATE_FUNCTION(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag);
typedef ALLOCATE_FUNCTION* PALLOCATE_FUNCTION;
typedef VOID FREE_FUNCTION(PVOID Buffer);
typedef FREE_FUNCTION* PFREE_FUNCTION;

/* The kit's lookaside: a bounded cache of freed entries under a lock. */
typedef struct _LOOKASIDE_LIST_EX {
  ULONG Magic;
  POOL_TYPE PoolType;
  ULONG Tag;
  ULONG Size;
  USHORT Depth;
  USHORT Flags;
  volatile LONG CacheLock;
  SINGLE_LIST_ENTRY Cache;
  ULONG CacheCount;
  PALLOCATE_FUNCTION_EX AllocateEx;
  PFREE_FUNCTION_EX FreeEx;
  PALLOCATE_FUNCTION Allocate;
  PFREE_FUNCTION Free;
  ULONG TotalAllocates;
  ULONG TotalFrees;
} LOOKASIDE_LIST_EX, *PLOOKASIDE_LIST_EX;
typedef LOOKASIDE_LIST_EX NPAGED_LOOKASIDE_LIST, *PNPAGED_LOOKASIDE_LIST;
typedef LOOKASIDE_LIST_EX PAGED_LOOKASIDE_LIST, *PPAGED_LOOKASIDE_LIST;
#define EX_LOOKASIDE_LIST_EX_FLAGS_RAISE_ON_FAIL 0x00000001UL
#define EX_LOOKASIDE_LIST_EX_FLAGS_FAIL_NO_RAISE 0x00000002UL
#define EX_MAXIMUM_LOOKASIDE_DEPTH_BASE 256
#define EX_MAXIMUM_LOOKASIDE_DEPTH_LIMIT 1024
#define LOOKASIDE_MINIMUM_BLOCK_SIZE (RTL_SIZEOF_THROUGH_FIELD(SLIST_ENTRY, Next))

NTSTATUS ExInitializeLookasideListEx(PLOOKASIDE_LIST_EX Lookaside, PALLOCATE_FUNCTION_EX Allocate,
                                     PFREE_FUNCTION_EX Free, POOL_TYPE PoolType, ULONG Flags,
                                     SIZE_T Size, ULONG Tag, USHORT Depth);
PVOID ExAllocateFromLookasideListEx(PLOOKASIDE_LIST_EX Lookaside);
VOID ExFreeToLookasideListEx(PLOOKASIDE_LIST_EX Lookaside, PVOID Entry);
VOID ExDeleteLookasideListEx(PLOOKASIDE_LIST_EX Lookaside);
VOID ExFlushLookasideListEx(PLOOKASIDE_LIST_EX Lookaside);
VOID ExInitializeNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside, PALLOCATE_FUNCTION Allocate,
                                     PFREE_FUNCTION Free, ULONG Flags, SIZE_T Size, ULONG Tag,
                                     USHORT Depth);
PVOID ExAllocateFromNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside);
VOID ExFreeToNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside, PVOID Entry);
VOID ExDeleteNPagedLookasideList(PNPAGED_LOOKASIDE_LIST Lookaside);
VOID ExInitializePagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside, PALLOCATE_FUNCTION Allocate,
                                    PFREE_FUNCTION Free, ULONG Flags, SIZE_T Size, ULONG Tag,
                                    USHORT Depth);
PVOID ExAllocateFromPagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside);
VOID ExFreeToPagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside, PVOID Entry);
VOID ExDeletePagedLookasideList(PPAGED_LOOKASIDE_LIST Lookaside);

/* ---- fast mutexes, guarded mutexes -------------------------------------- */
typedef struct _FAST_MUTEX {
  ULONG Magic;
  volatile LONG Count;
  PVOID Owner;
  KIRQL OldIrql;
  KEVENT Event;
} FAST_MUTEX, *PFAST_MUTEX, KGUARDED_MUTEX, *PKGUARDED_MUTEX;

VOID ExInitializeFastMutex(PFAST_MUTEX FastMutex);
VOID ExAcquireFastMutex(PFAST_MUTEX FastMutex);
VOID ExReleaseFastMutex(PFAST_MUTEX FastMutex);
BOOLEAN ExTryToAcquireFastMutex(PFAST_MUTEX FastMutex);
VOID ExAcquireFastMutexUnsafe(PFAST_MUTEX FastMutex);
VOID ExReleaseFastMutexUnsafe(PFAST_MUTEX FastMutex);
#define KeInitializeGuardedMutex ExInitializeFastMutex
#define KeAcquireGuardedMutex ExAcquireFastMutex
#define KeReleaseGuardedMutex ExReleaseFastMutex
#define KeTryToAcquireGuardedMutex ExTryToAcquireFastMutex

/* ---- executive resources (reader/writer, recursive) --------------------- */
#define SOFTNDK_WDK_ERESOURCE_SHARERS 16
typedef struct _ERESOURCE {
  ULONG Magic;
  volatile LONG Lock;
  PVOID ExclusiveOwner;
  ULONG ExclusiveCount;
  ULONG SharedCount;
  struct {
    PVOID Thread;
    ULONG Count;
  } Sharers[SOFTNDK_WDK_ERESOURCE_SHARERS];
} ERESOURCE, *PERESOURCE;

NTSTATUS ExInitializeResourceLite(PERESOURCE Resource);
NTSTATUS ExReinitializeResourceLite(PERESOURCE Resource);
NTSTATUS ExDeleteResourceLite(PERESOURCE Resource);
BOOLEAN ExAcquireResourceExclusiveLite(PERESOURCE Resource, BOOLEAN Wait);
BOOLEAN ExAcquireResourceSharedLite(PERESOURCE Resource, BOOLEAN Wait);
BOOLEAN ExAcquireSharedStarveExclusive(PERESOURCE Resource, BOOLEAN Wait);
BOOLEAN ExAcquireSharedWaitForExclusive(PERESOURCE Resource, BOOLEAN Wait);
VOID ExReleaseResourceLite(PERESOURCE Resource);
#define ExReleaseResource ExReleaseResourceLite
VOID ExReleaseResourceForThreadLite(PERESOURCE Resource, ULONG_PTR ResourceThreadId);
BOOLEAN ExIsResourceAcquiredExclusiveLite(PERESOURCE Resource);
ULONG ExIsResourceAcquiredSharedLite(PERESOURCE Resource);
#define ExIsResourceAcquiredLite ExIsResourceAcquiredSharedLite
ULONG ExGetExclusiveWaiterCount(PERESOURCE Resource);
ULONG ExGetSharedWaiterCount(PERESOURCE Resource);
PVOID ExEnterCriticalRegionAndAcquireResourceExclusive(PERESOURCE Resource);
PVOID ExEnterCriticalRegionAndAcquireResourceShared(PERESOURCE Resource);
VOID ExReleaseResourceAndLeaveCriticalRegion(PERESOURCE Resource);
ULONG_PTR ExGetCurrentResourceThread(void);

/* ---- push locks and executive spin locks (reader/writer) ---------------- */
typedef struct _EX_PUSH_LOCK {
  volatile ULONG_PTR Value; /* bit 0: exclusive; bits 1..: shared count*2 */
} EX_PUSH_LOCK, *PEX_PUSH_LOCK;
VOID ExInitializePushLock(PEX_PUSH_LOCK PushLock);
VOID ExAcquirePushLockExclusiveEx(PEX_PUSH_LOCK PushLock, ULONG Flags);
VOID ExAcquirePushLockSharedEx(PEX_PUSH_LOCK PushLock, ULONG Flags);
VOID ExReleasePushLockExclusiveEx(PEX_PUSH_LOCK PushLock, ULONG Flags);
VOID ExReleasePushLockSharedEx(PEX_PUSH_LOCK PushLock, ULONG Flags);
#define ExAcquirePushLockExclusive(l) ExAcquirePushLockExclusiveEx((l), 0)
#define ExAcquirePushLockShared(l) ExAcquirePushLockSharedEx((l), 0)
#define ExReleasePushLockExclusive(l) ExReleasePushLockExclusiveEx((l), 0)
#define ExReleasePushLockShared(l) ExReleasePushLockSharedEx((l), 0)
#define EX_DEFAULT_PUSH_LOCK_FLAGS 0

typedef volatile LONG EX_SPIN_LOCK, *PEX_SPIN_LOCK;
KIRQL ExAcquireSpinLockExclusive(PEX_SPIN_LOCK SpinLock);
VOID ExReleaseSpinLockExclusive(PEX_SPIN_LOCK SpinLock, KIRQL OldIrql);
KIRQL ExAcquireSpinLockShared(PEX_SPIN_LOCK SpinLock);
VOID ExReleaseSpinLockShared(PEX_SPIN_LOCK SpinLock, KIRQL OldIrql);

/* ---- rundown protection ------------------------------------------------ */
/* Count: bit 0 set once a rundown started; references in steps of 2. */
typedef struct _EX_RUNDOWN_REF {
  volatile ULONG_PTR Count;
} EX_RUNDOWN_REF, *PEX_RUNDOWN_REF;
VOID ExInitializeRundownProtection(PEX_RUNDOWN_REF RunRef);
VOID ExReInitializeRundownProtection(PEX_RUNDOWN_REF RunRef);
BOOLEAN ExAcquireRundownProtection(PEX_RUNDOWN_REF RunRef);
BOOLEAN ExAcquireRundownProtectionEx(PEX_RUNDOWN_REF RunRef, ULONG Count);
VOID ExReleaseRundownProtection(PEX_RUNDOWN_REF RunRef);
VOID ExReleaseRundownProtectionEx(PEX_RUNDOWN_REF RunRef, ULONG Count);
/* Waits until every reference is released. Bounded here: past the kit's
 * limit (SoftNdkWdkSetRundownWaitLimit) it reports and returns. */
VOID ExWaitForRundownProtectionRelease(PEX_RUNDOWN_REF RunRef);
VOID ExRundownCompleted(PEX_RUNDOWN_REF RunRef);

/* ---- interlocked lists ---------------------------------------------------- */
typedef struct DECLSPEC_ALIGN(16) _SLIST_ENTRY {
  struct _SLIST_ENTRY* Next;
} SLIST_ENTRY, *PSLIST_ENTRY;

typedef union DECLSPEC_ALIGN(16) _SLIST_HEADER {
  struct {
    PSLIST_ENTRY Next;
    volatile LONG Lock; /* the kit serialises push/pop with this */
    USHORT Depth;
    USHORT Sequence;
  } s;
  ULONGLONG Alignment[2];
} SLIST_HEADER, *PSLIST_HEADER;

VOID InitializeSListHead(PSLIST_HEADER SListHead);
PSLIST_ENTRY InterlockedPushEntrySList(PSLIST_HEADER ListHead, PSLIST_ENTRY ListEntry);
PSLIST_ENTRY InterlockedPopEntrySList(PSLIST_HEADER ListHead);
PSLIST_ENTRY InterlockedFlushSList(PSLIST_HEADER ListHead);
USHORT QueryDepthSList(PSLIST_HEADER ListHead);
#define ExInitializeSListHead InitializeSListHead
#define ExQueryDepthSList QueryDepthSList
#define ExInterlockedPushEntrySList(Head, Entry, Lock) InterlockedPushEntrySList(Head, Entry)
#define ExInterlockedPopEntrySList(Head, Lock) InterlockedPopEntrySList(Head)
#define ExInterlockedFlushSList(Head) InterlockedFlushSList(Head)
#define FirstEntrySList(Head) ((Head)->s.Next)

PLIST_ENTRY ExInterlockedInsertHeadList(PLIST_ENTRY ListHead, PLIST_ENTRY ListEntry,
                                        PKSPIN_LOCK Lock);
PLIST_ENTRY ExInterlockedInsertTailList(PLIST_ENTRY ListHead, PLIST_ENTRY ListEntry,
                                        PKSPIN_LOCK Lock);
PLIST_ENTRY ExInterlockedRemoveHeadList(PLIST_ENTRY ListHead, PKSPIN_LOCK Lock);
PSINGLE_LIST_ENTRY ExInterlockedPushEntryList(PSINGLE_LIST_ENTRY ListHead,
                                              PSINGLE_LIST_ENTRY ListEntry, PKSPIN_LOCK Lock);
PSINGLE_LIST_ENTRY ExInterlockedPopEntryList(PSINGLE_LIST_ENTRY ListHead, PKSPIN_LOCK Lock);

/* ---- exceptions: none here; raising ends the process with a report ------ */
DECLSPEC_NORETURN VOID ExRaiseStatus(NTSTATUS Status);

#ifdef __cplusplus
}
#endif

#endif /* SOFTNDK_WDK_EX_H_ */
