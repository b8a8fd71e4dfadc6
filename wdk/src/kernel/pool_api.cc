// SPDX-License-Identifier: Apache-2.0
// The pool allocators drivers call (softndk_wdk/ex.h): ExAllocatePool2 and
// ExAllocatePool3 with their POOL_FLAGS, the POOL_TYPE family
// (ExAllocatePoolWithTag, ...), ExFreePool*. The rules are Microsoft's
// (ExAllocatePool2 / POOL_FLAGS reference): zeroed unless
// POOL_FLAG_UNINITIALIZED; NULL for a zero tag, invalid flags or no memory,
// raised (ExRaiseStatus) instead with POOL_FLAG_RAISE_ON_FAILURE; exactly
// one pool kind; unknown required flags (the low 32 bits) fail, unknown
// optional ones (the high 32) are ignored.
#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/pool.h"

using namespace softndk::wdk;

namespace {

constexpr POOL_FLAGS kKindFlags =
    POOL_FLAG_NON_PAGED | POOL_FLAG_PAGED | POOL_FLAG_NON_PAGED_EXECUTE;
constexpr POOL_FLAGS kKnownRequired = POOL_FLAG_USE_QUOTA | POOL_FLAG_UNINITIALIZED |
                                      POOL_FLAG_SESSION | POOL_FLAG_CACHE_ALIGNED |
                                      POOL_FLAG_RAISE_ON_FAILURE | kKindFlags;
constexpr POOL_FLAGS kRequiredMask = 0xffffffffULL;

// NULL, or the raise POOL_FLAG_RAISE_ON_FAILURE asks for.
PVOID Fail(POOL_FLAGS flags, NTSTATUS status) {
  if ((flags & POOL_FLAG_RAISE_ON_FAILURE) != 0) ExRaiseStatus(status);
  return nullptr;
}

// ExAllocatePool2's checks and allocation; `special_align` from an
// ExAllocatePool3 priority (XxxSpecialPoolOverrun/Underrun).
PVOID Allocate2(POOL_FLAGS flags, SIZE_T bytes, ULONG tag, int special_align, const char* call,
                const void* site) {
  POOL_FLAGS k = flags & kKindFlags;
  if (k == 0 || (k & (k - 1)) != 0) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site,
           "flags 0x%llx name %s pool type (exactly one of POOL_FLAG_NON_PAGED, _PAGED, "
           "_NON_PAGED_EXECUTE)",
           static_cast<unsigned long long>(flags), k == 0 ? "no" : "more than one");
    return Fail(flags, STATUS_INVALID_PARAMETER);
  }
  POOL_FLAGS unknown = flags & kRequiredMask & ~kKnownRequired;
  if (unknown != 0) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site,
           "flags 0x%llx: required flag bits 0x%llx are not POOL_FLAG_* values this pool knows "
           "(the allocation fails)",
           static_cast<unsigned long long>(flags), static_cast<unsigned long long>(unknown));
    return Fail(flags, STATUS_INVALID_PARAMETER);
  }
  if (tag == 0) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "pool tag 0 (ExAllocatePool2 returns NULL)");
    return Fail(flags, STATUS_INVALID_PARAMETER);
  }
  if ((flags & POOL_FLAG_PAGED) != 0) RequireIrqlAtMost(APC_LEVEL, call, site);
  PoolOptions o;
  o.zero = (flags & POOL_FLAG_UNINITIALIZED) == 0;
  o.cache_aligned = (flags & POOL_FLAG_CACHE_ALIGNED) != 0;
  o.nonpaged = (flags & POOL_FLAG_PAGED) == 0;
  o.force_special = (flags & POOL_FLAG_SPECIAL_POOL) != 0;
  o.special_align = special_align;
  PVOID p = AllocatePool(bytes, tag, o, call, site);
  if (p == nullptr) return Fail(flags, STATUS_INSUFFICIENT_RESOURCES);
  return p;
}

// POOL_TYPE values carry modifier bits: POOL_RAISE_IF_ALLOCATION_FAILURE,
// POOL_COLD_ALLOCATION, POOL_ZERO_ALLOCATION (NonPagedPoolNx is 512 itself).
bool Paged(POOL_TYPE t) { return (t & 1) != 0; }
bool CacheAligned(POOL_TYPE t) { return (t & 4) != 0; }

int SpecialAlignOf(EX_POOL_PRIORITY priority) {
  switch (priority & 0xf) {
    case 8:
      return 0;  // XxxSpecialPoolOverrun: Verify End
    case 9:
      return 1;  // XxxSpecialPoolUnderrun: Verify Start
    default:
      return -1;
  }
}

PVOID AllocateTyped(POOL_TYPE type, SIZE_T bytes, ULONG tag, bool zero, int special_align,
                    const char* call, const void* site) {
  if (Paged(type)) RequireIrqlAtMost(APC_LEVEL, call, site);
  PoolOptions o;
  o.zero = zero || (type & POOL_ZERO_ALLOCATION) != 0;
  o.cache_aligned = CacheAligned(type);
  o.nonpaged = !Paged(type);
  o.special_align = special_align;
  PVOID p = AllocatePool(bytes, tag, o, call, site);
  if (p == nullptr && (type & POOL_RAISE_IF_ALLOCATION_FAILURE) != 0) {
    ExRaiseStatus(STATUS_INSUFFICIENT_RESOURCES);
  }
  return p;
}

}  // namespace

extern "C" {

PVOID ExAllocatePool2(POOL_FLAGS Flags, SIZE_T NumberOfBytes, ULONG Tag) {
  return Allocate2(Flags, NumberOfBytes, Tag, -1, "ExAllocatePool2", SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePool3(POOL_FLAGS Flags, SIZE_T NumberOfBytes, ULONG Tag,
                      PCPOOL_EXTENDED_PARAMETER ExtendedParameters, ULONG ExtendedParametersCount) {
  const void* site = SOFTNDK_WDK_SITE();
  if (ExtendedParametersCount != 0 && ExtendedParameters == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, "ExAllocatePool3", site,
           "%u extended parameter(s) at NULL", ExtendedParametersCount);
    return Fail(Flags, STATUS_INVALID_PARAMETER);
  }
  int special_align = -1;
  for (ULONG i = 0; i < ExtendedParametersCount; i++) {
    const POOL_EXTENDED_PARAMETER& e = ExtendedParameters[i];
    switch (e.Type) {
      case PoolExtendedParameterPriority:
        special_align = SpecialAlignOf(e.Priority);
        break;
      case PoolExtendedParameterNumaNode:
        // One node (0) in the kit; another fails unless any node will do.
        if ((e.PreferredNode & ~MM_ANY_NODE_OK) != 0 && (e.PreferredNode & MM_ANY_NODE_OK) == 0) {
          return Fail(Flags, STATUS_INSUFFICIENT_RESOURCES);
        }
        break;
      default:
        // Secure pool needs VBS; unknown types: required ones fail.
        if (!e.Optional) {
          Report(
              SoftNdkWdkRuleInvalidParameter, "ExAllocatePool3", site,
              "extended parameter %u: type %u is not supported (%s)", i,
              static_cast<unsigned>(e.Type),
              e.Type == PoolExtendedParameterSecurePool ? "secure pool needs VBS" : "unknown type");
          return Fail(Flags, STATUS_NOT_SUPPORTED);
        }
        break;
    }
  }
  return Allocate2(Flags, NumberOfBytes, Tag, special_align, "ExAllocatePool3", site);
}

PVOID ExAllocatePoolWithTag(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
  return AllocateTyped(PoolType, NumberOfBytes, Tag, false, -1, "ExAllocatePoolWithTag",
                       SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePoolWithTagPriority(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag,
                                    EX_POOL_PRIORITY Priority) {
  return AllocateTyped(PoolType, NumberOfBytes, Tag, false, SpecialAlignOf(Priority),
                       "ExAllocatePoolWithTagPriority", SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePoolZero(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
  return AllocateTyped(PoolType, NumberOfBytes, Tag, true, -1, "ExAllocatePoolZero",
                       SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePoolUninitialized(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
  return AllocateTyped(PoolType, NumberOfBytes, Tag, false, -1, "ExAllocatePoolUninitialized",
                       SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePool(POOL_TYPE PoolType, SIZE_T NumberOfBytes) {
  // The untagged allocator: Windows tags such blocks 'None'.
  return AllocateTyped(PoolType, NumberOfBytes, 0x656e6f4e, false, -1, "ExAllocatePool",
                       SOFTNDK_WDK_SITE());
}

VOID ExFreePool(PVOID P) { FreePool(P, 0, false, "ExFreePool", SOFTNDK_WDK_SITE()); }

VOID ExFreePoolWithTag(PVOID P, ULONG Tag) {
  FreePool(P, Tag, true, "ExFreePoolWithTag", SOFTNDK_WDK_SITE());
}

VOID ExFreePool2(PVOID P, ULONG Tag, PVOID ExtendedParameters, ULONG ExtendedParametersCount) {
  (void)ExtendedParameters;
  (void)ExtendedParametersCount;
  FreePool(P, Tag, true, "ExFreePool2", SOFTNDK_WDK_SITE());
}

}  // extern "C"
