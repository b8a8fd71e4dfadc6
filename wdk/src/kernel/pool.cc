// Pool: ExAllocatePool2 and the older allocators, ExFreePool(WithTag)
// (softndk_wdk/ex.h). Blocks are malloc'ed and registered with their tag, size
// and call site; frees are checked against the registry. With the same-host
// fast path on (the default; SOFTNDK_SAMEHOST=off turns it off), large non-paged blocks come from
// SoftNdkAllocateSharedMemory instead, so a same-host peer maps the buffers
// a driver registers and copies them with memcpy (docs/samehost.md).
#include "kernel/pool.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/registry.h"
#include "softndk/softndk.h"

namespace softndk::wdk {
namespace {

struct Block {
  ULONG tag = 0;
  SIZE_T size = 0;
  const void* site = nullptr;
  const char* call = "";
  bool shared = false;  // from SoftNdkAllocateSharedMemory
};

// Non-paged blocks this large are shared memory when the fast path is on:
// an RDMA buffer is typically that large, and each segment costs a file
// descriptor, so small blocks stay on malloc.
constexpr SIZE_T kSharedPoolMin = 64 * 1024;

bool SharedPoolOn() {
  static const bool on = [] {
    // The adapter's rule (docs/samehost.md): on unless "off" or "0".
    const char* v = std::getenv("SOFTNDK_SAMEHOST");
    return v == nullptr || (std::strcmp(v, "off") != 0 && std::strcmp(v, "0") != 0);
  }();
  return on;
}

LiveRegistry<Block>& Pool() {
  static auto* r = new LiveRegistry<Block>;  // never destroyed: checked at exit
  return *r;
}

ULONG ReportPoolLeaks() {
  auto live = Pool().Snapshot();
  struct PerTag {
    ULONG count = 0;
    SIZE_T bytes = 0;
    const void* first_site = nullptr;
    const char* first_call = "";
  };
  std::map<ULONG, PerTag> by_tag;
  for (auto& [p, b] : live) {
    auto& t = by_tag[b.tag];
    if (t.count++ == 0) {
      t.first_site = b.site;
      t.first_call = b.call;
    }
    t.bytes += b.size;
  }
  for (auto& [tag, t] : by_tag) {
    Report(SoftNdkWdkRuleLeak, t.first_call, t.first_site,
           "pool tag '%s': %u block(s), %zu bytes never freed (one allocated at %s)",
           TagName(tag).c_str(), t.count, static_cast<size_t>(t.bytes),
           DescribeAddress(t.first_site).c_str());
  }
  return static_cast<ULONG>(live.size());
}

const bool kRegistered = (RegisterLeakReporter("pool", ReportPoolLeaks), true);

}  // namespace

std::string TagName(ULONG tag) {
  std::string s;
  for (int i = 0; i < 4; i++) {
    char c = static_cast<char>((tag >> (8 * i)) & 0xff);
    s += (c >= 0x20 && c < 0x7f) ? c : '.';
  }
  return s;
}

PVOID AllocatePool(SIZE_T bytes, ULONG tag, bool zero, bool cache_aligned, const char* call,
                   const void* site, bool nonpaged) {
  (void)kRegistered;
  RequireIrqlAtMost(DISPATCH_LEVEL, call, site);
  if (tag == 0) {
    // Windows rejects a zero tag with a bug check on ExAllocatePool2.
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "pool tag 0");
  }
  if (bytes == 0) bytes = 1;  // Windows returns a (small) block for 0 bytes
  void* p = nullptr;
  if (nonpaged && bytes >= kSharedPoolMin && SharedPoolOn() &&
      SoftNdkAllocateSharedMemory(bytes, &p) == STATUS_SUCCESS) {
    // Page-aligned and zeroed; out of file descriptors: malloc below.
    Pool().Add(p, Block{tag, bytes, site, call, true});
    return p;
  }
  if (cache_aligned) {
    size_t rounded = (bytes + 63) & ~size_t{63};
    p = std::aligned_alloc(64, rounded);
  } else {
    p = std::malloc(bytes);  // 16-byte aligned, like x64 pool
  }
  if (p == nullptr) return nullptr;
  if (zero) std::memset(p, 0, bytes);
  Pool().Add(p, Block{tag, bytes, site, call});
  return p;
}

void FreePool(PVOID p, ULONG tag, bool check_tag, const char* call, const void* site) {
  RequireIrqlAtMost(DISPATCH_LEVEL, call, site);
  if (p == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "freeing NULL");
    return;
  }
  Block b;
  // Look first, so a wrong tag leaves the block allocated (as after a bug
  // check there would be nothing to free).
  bool tag_ok = true;
  bool live = Pool().WithLive(p, [&](Block& blk) {
    if (check_tag && ((blk.tag ^ tag) & ~static_cast<ULONG>(PROTECTED_POOL)) != 0) {
      tag_ok = false;
      b = blk;
    }
  });
  if (live && !tag_ok) {
    Report(SoftNdkWdkRulePoolWrongTag, call, site,
           "block %p has tag '%s', freed with tag '%s' (allocated at %s)", p,
           TagName(b.tag).c_str(), TagName(tag).c_str(), DescribeAddress(b.site).c_str());
    return;
  }
  const void* first_free = nullptr;
  auto state = Pool().Remove(p, site, &b, &first_free);
  if (state == LiveRegistry<Block>::State::kLive) {
    if (b.shared) {
      SoftNdkFreeSharedMemory(p);
    } else {
      std::free(p);
    }
    return;
  }
  if (state == LiveRegistry<Block>::State::kFreed) {
    Report(SoftNdkWdkRuleDoubleFree, call, site, "pool block %p was already freed (at %s)", p,
           DescribeAddress(first_free).c_str());
  } else {
    Report(SoftNdkWdkRuleDoubleFree, call, site,
           "%p is not a pool block (never allocated by ExAllocatePool*, or freed long ago)", p);
  }
}

}  // namespace softndk::wdk

using namespace softndk::wdk;

namespace {
bool Paged(POOL_TYPE t) {
  return t == PagedPool || t == PagedPoolCacheAligned || t == PagedPoolSession;
}

bool CacheAligned(POOL_TYPE t) {
  return t == NonPagedPoolCacheAligned || t == PagedPoolCacheAligned ||
         t == NonPagedPoolNxCacheAligned || t == NonPagedPoolCacheAlignedMustS;
}

// The POOL_TYPE allocators: paged pool only at or below APC_LEVEL.
PVOID AllocateTyped(POOL_TYPE type, SIZE_T bytes, ULONG tag, bool zero, const char* call,
                    const void* site) {
  if (Paged(type)) RequireIrqlAtMost(APC_LEVEL, call, site);
  return AllocatePool(bytes, tag, zero, CacheAligned(type), call, site, !Paged(type));
}
}  // namespace

extern "C" {

PVOID ExAllocatePool2(POOL_FLAGS Flags, SIZE_T NumberOfBytes, ULONG Tag) {
  const void* site = SOFTNDK_WDK_SITE();
  const POOL_FLAGS kind = POOL_FLAG_NON_PAGED | POOL_FLAG_PAGED | POOL_FLAG_NON_PAGED_EXECUTE;
  POOL_FLAGS k = Flags & kind;
  if (k == 0 || (k & (k - 1)) != 0) {
    Report(SoftNdkWdkRuleInvalidParameter, "ExAllocatePool2", site,
           "flags 0x%llx name %s pool type (exactly one of POOL_FLAG_NON_PAGED, _PAGED, "
           "_NON_PAGED_EXECUTE)",
           static_cast<unsigned long long>(Flags), k == 0 ? "no" : "more than one");
    return nullptr;
  }
  if ((Flags & POOL_FLAG_PAGED) != 0) RequireIrqlAtMost(APC_LEVEL, "ExAllocatePool2", site);
  PVOID p = AllocatePool(NumberOfBytes, Tag, (Flags & POOL_FLAG_UNINITIALIZED) == 0,
                         (Flags & POOL_FLAG_CACHE_ALIGNED) != 0, "ExAllocatePool2", site,
                         (Flags & POOL_FLAG_PAGED) == 0);
  if (p == nullptr && (Flags & POOL_FLAG_RAISE_ON_FAILURE) != 0) {
    ExRaiseStatus(STATUS_INSUFFICIENT_RESOURCES);
  }
  return p;
}

PVOID ExAllocatePoolWithTag(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
  return AllocateTyped(PoolType, NumberOfBytes, Tag, false, "ExAllocatePoolWithTag",
                       SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePoolWithTagPriority(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag,
                                    EX_POOL_PRIORITY Priority) {
  (void)Priority;
  return AllocateTyped(PoolType, NumberOfBytes, Tag, false, "ExAllocatePoolWithTagPriority",
                       SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePoolZero(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
  return AllocateTyped(PoolType, NumberOfBytes, Tag, true, "ExAllocatePoolZero",
                       SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePoolUninitialized(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag) {
  return AllocateTyped(PoolType, NumberOfBytes, Tag, false, "ExAllocatePoolUninitialized",
                       SOFTNDK_WDK_SITE());
}

PVOID ExAllocatePool(POOL_TYPE PoolType, SIZE_T NumberOfBytes) {
  // The untagged allocator: Windows tags such blocks 'None'.
  return AllocateTyped(PoolType, NumberOfBytes, 0x656e6f4e, false, "ExAllocatePool",
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
