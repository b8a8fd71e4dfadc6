// SPDX-License-Identifier: Apache-2.0
// Pool: the registry of live and recently freed blocks behind every pool
// allocator (pool_api.cc: ExAllocatePool2/3 and the POOL_TYPE family,
// contiguous_memory.cc: MmAllocateContiguousMemory*). Blocks are placed by
// pool_pages.cc (Windows' alignment rules, Special Pool) and registered with
// their tag, size and call site; frees are checked against the registry, and
// a faulting address can be looked up (LookupPoolAddress). With the
// same-host fast path on (the default; SOFTNDK_SAMEHOST=off turns it off),
// large non-paged blocks come from SoftNdkAllocateSharedMemory instead
// (page aligned too), so a same-host peer maps the buffers a driver
// registers and copies them with memcpy (docs/samehost.md).
#include "kernel/pool.h"

#include <execinfo.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

#include "irql/checker.h"
#include "irql/irql.h"
#include "kernel/pool_pages.h"
#include "softndk/softndk.h"

namespace softndk::wdk {
namespace {

enum class Backing : uint8_t { kHeap, kShared, kSpecial, kContiguous };

struct Block {
  ULONG tag = 0;
  SIZE_T size = 0;
  const void* site = nullptr;
  const char* call = "";
  Backing backing = Backing::kHeap;
  SpecialBlock special;
  const void* free_site = nullptr;
  const char* free_call = "";
  // Stacks are taken for special-pool blocks only (their cost is the mapping's).
  void* alloc_stack[PoolAddressInfo::kFrames] = {};
  int alloc_frames = 0;
  void* free_stack[PoolAddressInfo::kFrames] = {};
  int free_frames = 0;
};

// Non-paged blocks this large are shared memory when the fast path is on:
// an RDMA buffer is typically that large, and each segment costs a file
// descriptor, so small blocks stay on the heap.
constexpr SIZE_T kSharedPoolMin = 64 * 1024;
// Freed blocks remembered (to name a double free, or what a faulting address
// was); special-pool blocks stay mapped and inaccessible while remembered.
constexpr size_t kQuarantineBlocks = 4096;
constexpr size_t kQuarantineSpecialBytes = size_t{256} << 20;

bool SharedPoolOn() {
  static const bool on = [] {
    // The adapter's rule (docs/samehost.md): on unless "off" or "0".
    const char* v = std::getenv("SOFTNDK_SAMEHOST");
    return v == nullptr || (std::strcmp(v, "off") != 0 && std::strcmp(v, "0") != 0);
  }();
  return on;
}

struct SpecialConfig {
  bool on = false;
  bool align_start = false;
  std::vector<std::string> tags;
};

class PoolIndex {
 public:
  std::mutex mutex;
  std::map<uintptr_t, Block> live;
  std::deque<std::pair<uintptr_t, Block>> freed;  // oldest first
  size_t special_freed_bytes = 0;
  SpecialConfig special;

  // Moves a removed block to the quarantine; evicts what exceeds the bounds.
  void Quarantine(uintptr_t p, Block b) {
    if (b.backing == Backing::kSpecial) special_freed_bytes += b.special.map_len;
    freed.emplace_back(p, std::move(b));
    while (freed.size() > kQuarantineBlocks || special_freed_bytes > kQuarantineSpecialBytes) {
      auto& old = freed.front().second;
      if (old.backing == Backing::kSpecial) {
        special_freed_bytes -= old.special.map_len;
        SpecialRelease(old.special);
      }
      freed.pop_front();
    }
  }

  const Block* FindFreed(uintptr_t p) const {
    for (auto it = freed.rbegin(); it != freed.rend(); ++it) {
      if (it->first == p) return &it->second;
    }
    return nullptr;
  }
};

PoolIndex& Index() {
  static auto* r = new PoolIndex;  // never destroyed: checked at exit
  return *r;
}

ULONG ReportPoolLeaks() {
  struct PerTag {
    ULONG count = 0;
    SIZE_T bytes = 0;
    const void* first_site = nullptr;
    const char* first_call = "";
  };
  std::map<ULONG, PerTag> by_tag;
  std::map<std::string, PerTag> contiguous;
  ULONG n = 0;
  {
    auto& ix = Index();
    std::lock_guard<std::mutex> lock(ix.mutex);
    for (auto& [p, b] : ix.live) {
      n++;
      auto& t = b.backing == Backing::kContiguous ? contiguous[b.call] : by_tag[b.tag];
      if (t.count++ == 0) {
        t.first_site = b.site;
        t.first_call = b.call;
      }
      t.bytes += b.size;
    }
  }
  for (auto& [tag, t] : by_tag) {
    Report(SoftNdkWdkRuleLeak, t.first_call, t.first_site,
           "pool tag '%s': %u block(s), %zu bytes never freed (one allocated at %s)",
           TagName(tag).c_str(), t.count, static_cast<size_t>(t.bytes),
           DescribeAddress(t.first_site).c_str());
  }
  for (auto& [call, t] : contiguous) {
    Report(SoftNdkWdkRuleLeak, t.first_call, t.first_site,
           "contiguous memory: %u block(s), %zu bytes never freed with MmFreeContiguousMemory "
           "(one allocated at %s)",
           t.count, static_cast<size_t>(t.bytes), DescribeAddress(t.first_site).c_str());
  }
  return n;
}

const bool kRegistered = (RegisterLeakReporter("pool", ReportPoolLeaks), true);

bool TagMatches(const std::string& pattern, const std::string& tag) {
  for (size_t i = 0; i < 4; i++) {
    if (i >= pattern.size()) return false;
    if (pattern[i] == '*') return true;
    if (pattern[i] != '?' && pattern[i] != tag[i]) return false;
  }
  return true;
}

bool UseSpecial(const PoolIndex& ix, ULONG tag, const PoolOptions& o) {
  if (o.force_special) return true;
  if (!ix.special.on) return false;
  if (ix.special.tags.empty()) return true;
  std::string name = TagName(tag);
  for (auto& t : ix.special.tags) {
    if (TagMatches(t, name)) return true;
  }
  return false;
}

void Release(uintptr_t p, const Block& b) {
  switch (b.backing) {
    case Backing::kHeap:
      PoolPagesFree(reinterpret_cast<void*>(p));
      break;
    case Backing::kShared:
      SoftNdkFreeSharedMemory(reinterpret_cast<void*>(p));
      break;
    case Backing::kContiguous:
      PoolPagesUnmap(reinterpret_cast<void*>(p), b.size);
      break;
    case Backing::kSpecial:
      break;  // retired: stays mapped in quarantine
  }
}

}  // namespace

std::string TagName(ULONG tag) {
  std::string s;
  for (int i = 0; i < 4; i++) {
    char c = static_cast<char>((tag >> (8 * i)) & 0xff);
    s += (c >= 0x20 && c < 0x7f) ? c : '.';
  }
  return s;
}

void ConfigureSpecialPool(bool on, const std::vector<std::string>& tags, bool align_start) {
  auto& ix = Index();
  std::lock_guard<std::mutex> lock(ix.mutex);
  ix.special = SpecialConfig{on, align_start, tags};
}

bool SpecialPoolOn() {
  auto& ix = Index();
  std::lock_guard<std::mutex> lock(ix.mutex);
  return ix.special.on;
}

PVOID AllocatePool(SIZE_T bytes, ULONG tag, const PoolOptions& o, const char* call,
                   const void* site) {
  (void)kRegistered;
  RequireIrqlAtMost(DISPATCH_LEVEL, call, site);
  if (bytes == 0) bytes = 1;  // Windows returns a (small) block for 0 bytes
  auto& ix = Index();
  Block b{};
  b.tag = tag;
  b.size = bytes;
  b.site = site;
  b.call = call;
  void* p = nullptr;
  bool special;
  bool align_start;
  {
    std::lock_guard<std::mutex> lock(ix.mutex);
    special = UseSpecial(ix, tag, o);
    align_start = o.special_align < 0 ? ix.special.align_start : o.special_align == 1;
  }
  if (special && SpecialAllocate(bytes, align_start, &b.special)) {
    b.backing = Backing::kSpecial;
    b.alloc_frames = backtrace(b.alloc_stack, PoolAddressInfo::kFrames);
    p = reinterpret_cast<void*>(b.special.start);
  } else if (o.nonpaged && bytes >= kSharedPoolMin && SharedPoolOn() &&
             SoftNdkAllocateSharedMemory(bytes, &p) == STATUS_SUCCESS) {
    // Page-aligned and zeroed; out of file descriptors: the heap below.
    b.backing = Backing::kShared;
  } else {
    p = PoolPagesAllocate(bytes, o.cache_aligned);
    if (p == nullptr) return nullptr;
    if (o.zero) std::memset(p, 0, bytes);
  }
  std::lock_guard<std::mutex> lock(ix.mutex);
  ix.live[reinterpret_cast<uintptr_t>(p)] = b;
  return p;
}

void FreePool(PVOID p, ULONG tag, bool check_tag, const char* call, const void* site) {
  RequireIrqlAtMost(DISPATCH_LEVEL, call, site);
  if (p == nullptr) {
    Report(SoftNdkWdkRuleInvalidParameter, call, site, "freeing NULL");
    return;
  }
  auto& ix = Index();
  auto key = reinterpret_cast<uintptr_t>(p);
  std::unique_lock<std::mutex> lock(ix.mutex);
  auto it = ix.live.find(key);
  if (it == ix.live.end() || it->second.backing == Backing::kContiguous) {
    const Block* f = it == ix.live.end() ? ix.FindFreed(key) : nullptr;
    std::string where = f ? DescribeAddress(f->free_site) : "";
    bool contiguous = it != ix.live.end();
    lock.unlock();
    if (contiguous) {
      Report(SoftNdkWdkRuleInvalidParameter, call, site,
             "%p is contiguous memory (free it with MmFreeContiguousMemory); Windows: "
             "BAD_POOL_CALLER (0xc2)",
             p);
    } else if (f != nullptr) {
      Report(SoftNdkWdkRuleDoubleFree, call, site,
             "pool block %p was already freed (at %s); Windows: BAD_POOL_CALLER (0xc2), "
             "parameter 1 = 0x7 (freeing pool that was already freed)",
             p, where.c_str());
    } else {
      Report(SoftNdkWdkRuleDoubleFree, call, site,
             "%p is not a pool block (never allocated by ExAllocatePool*, or freed long ago); "
             "Windows: BAD_POOL_CALLER (0xc2), parameter 1 = 0x46 (freeing an invalid pool "
             "address)",
             p);
    }
    return;
  }
  Block& blk = it->second;
  // A wrong tag leaves the block allocated (after a bug check there would be
  // nothing to free).
  if (check_tag && ((blk.tag ^ tag) & ~static_cast<ULONG>(PROTECTED_POOL)) != 0) {
    std::string have = TagName(blk.tag);
    std::string where = DescribeAddress(blk.site);
    lock.unlock();
    Report(SoftNdkWdkRulePoolWrongTag, call, site,
           "block %p has tag '%s', freed with tag '%s' (allocated at %s); Windows: "
           "BAD_POOL_CALLER (0xc2), parameter 1 = 0xa (freeing pool with the wrong tag)",
           p, have.c_str(), TagName(tag).c_str(), where.c_str());
    return;
  }
  Block b = std::move(blk);
  ix.live.erase(it);
  b.free_site = site;
  b.free_call = call;
  uintptr_t corrupt = 0;
  if (b.backing == Backing::kSpecial) {
    b.free_frames = backtrace(b.free_stack, PoolAddressInfo::kFrames);
    corrupt = SpecialRetire(b.special);
  }
  Release(key, b);
  Block copy = b;
  ix.Quarantine(key, std::move(b));
  lock.unlock();
  if (corrupt != 0) {
    bool after = corrupt >= key + copy.size;
    Report(SoftNdkWdkRuleBugCheck, call, site,
           "SPECIAL_POOL_DETECTED_MEMORY_CORRUPTION (0xc1): block %p ('%s', %zu bytes, allocated "
           "at %s) has a corrupted byte at %p, %zu bytes %s the block (parameter 4 = %s)",
           p, TagName(copy.tag).c_str(), static_cast<size_t>(copy.size),
           DescribeAddress(copy.site).c_str(), reinterpret_cast<void*>(corrupt),
           static_cast<size_t>(after ? corrupt - (key + copy.size) : key - corrupt),
           after ? "past the end of" : "before", after ? "0x24" : "0x23");
  }
}

void RegisterContiguous(PVOID p, SIZE_T bytes, const char* call, const void* site) {
  Block b{};
  b.size = bytes;
  b.site = site;
  b.call = call;
  b.backing = Backing::kContiguous;
  auto& ix = Index();
  std::lock_guard<std::mutex> lock(ix.mutex);
  ix.live[reinterpret_cast<uintptr_t>(p)] = b;
}

void FreeContiguous(PVOID p, const char* call, const void* site) {
  auto& ix = Index();
  auto key = reinterpret_cast<uintptr_t>(p);
  std::unique_lock<std::mutex> lock(ix.mutex);
  auto it = ix.live.find(key);
  if (it == ix.live.end() || it->second.backing != Backing::kContiguous) {
    bool pool = it != ix.live.end();
    lock.unlock();
    Report(pool ? SoftNdkWdkRuleInvalidParameter : SoftNdkWdkRuleDoubleFree, call, site,
           pool ? "%p is pool, not contiguous memory (free it with ExFreePool)"
                : "%p is not contiguous memory from MmAllocateContiguousMemory* (or was freed)",
           p);
    return;
  }
  Block b = std::move(it->second);
  ix.live.erase(it);
  b.free_site = site;
  b.free_call = call;
  Release(key, b);
  ix.Quarantine(key, std::move(b));
}

bool LookupPoolAddress(uintptr_t a, PoolAddressInfo* out) {
  auto& ix = Index();
  std::unique_lock<std::mutex> lock(ix.mutex, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  auto fill = [&](uintptr_t start, const Block& b, bool freed) {
    out->found = true;
    out->freed = freed;
    out->special = b.backing == Backing::kSpecial;
    out->start = start;
    out->size = b.size;
    out->tag = b.tag;
    out->alloc_call = b.call;
    out->alloc_site = b.site;
    out->free_call = b.free_call;
    out->free_site = b.free_site;
    out->in_guard = a < start || a >= start + b.size;
    out->alloc_frames = b.alloc_frames;
    out->free_frames = b.free_frames;
    std::memcpy(out->alloc_stack, b.alloc_stack, sizeof out->alloc_stack);
    std::memcpy(out->free_stack, b.free_stack, sizeof out->free_stack);
  };
  // A special block owns its whole mapping (guard pages included); any other
  // block its bytes, plus a little past its end (an overrun's first bytes).
  auto contains = [&](uintptr_t start, const Block& b, size_t slack) {
    if (b.backing == Backing::kSpecial) {
      return a >= b.special.map && a < b.special.map + b.special.map_len;
    }
    return a >= start && a < start + b.size + slack;
  };
  auto it = ix.live.upper_bound(a + kPoolPage);
  while (it != ix.live.begin()) {
    --it;
    if (contains(it->first, it->second, 0)) {
      fill(it->first, it->second, false);
      return true;
    }
    if (it->first + (size_t{1} << 30) < a) break;
  }
  for (auto f = ix.freed.rbegin(); f != ix.freed.rend(); ++f) {
    if (contains(f->first, f->second, 0)) {
      fill(f->first, f->second, true);
      return true;
    }
  }
  // Just past the end of a live block (on the heap an overrun lands in the
  // next block or in malloc's bookkeeping).
  it = ix.live.upper_bound(a);
  if (it != ix.live.begin()) {
    --it;
    if (contains(it->first, it->second, 64)) {
      fill(it->first, it->second, false);
      return true;
    }
  }
  return false;
}

}  // namespace softndk::wdk
