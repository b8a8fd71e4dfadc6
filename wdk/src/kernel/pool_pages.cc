// SPDX-License-Identifier: Apache-2.0
// Pool placement and Special Pool pages (pool_pages.h).
#include "kernel/pool_pages.h"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <cstring>

namespace softndk::wdk {
namespace {

constexpr unsigned char kSlackPattern = 0xd5;  // what special pool's slack holds

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Maps `len` bytes aligned to `align` (a power of two, at least a page),
// trimming the excess; MAP_32BIT when `low32`.
void* MapAligned(size_t len, size_t align, bool low32) {
  size_t extra = align > kPoolPage ? align : 0;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | (low32 ? MAP_32BIT : 0);
  void* m = mmap(nullptr, len + extra, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  auto base = reinterpret_cast<uintptr_t>(m);
  uintptr_t start = (base + align - 1) & ~(uintptr_t{align} - 1);
  if (start > base) munmap(m, start - base);
  uintptr_t end = base + len + extra;
  if (end > start + len) munmap(reinterpret_cast<void*>(start + len), end - (start + len));
  return reinterpret_cast<void*>(start);
}

}  // namespace

void* PoolPagesAllocate(size_t bytes, bool cache_aligned) {
  size_t min_align = cache_aligned ? 64 : 16;
  if (bytes >= kPoolPage) {
    // No machine has more pool than the 64 TiB a 46-bit physical address
    // reaches: larger requests fail here, as on Windows, without asking the
    // allocator (a sanitizer's allocator treats them as a bug, not as NULL).
    if (bytes > (size_t{1} << 46)) return nullptr;
    return std::aligned_alloc(kPoolPage, RoundUp(bytes, kPoolPage));
  }
  // A block aligned to a power of two at least its size never crosses a
  // page: Windows' "allocations of less than a page do not cross a page".
  size_t align = std::bit_ceil(bytes < min_align ? min_align : bytes);
  return std::aligned_alloc(align, RoundUp(bytes, align));
}

void PoolPagesFree(void* p) { std::free(p); }

void* PoolPagesMapContiguous(size_t bytes, uint64_t lowest, uint64_t highest, uint64_t boundary) {
  if (bytes == 0 || bytes > (size_t{1} << 46)) return nullptr;
  size_t len = RoundUp(bytes, kPoolPage);
  size_t align = kPoolPage;
  if (boundary != 0) {
    if (!std::has_single_bit(boundary) || len > boundary) return nullptr;
    if (boundary > align) align = static_cast<size_t>(boundary);
  }
  auto fits = [&](void* p) {
    auto a = reinterpret_cast<uint64_t>(p);
    return a >= lowest && (highest == 0 || a + len - 1 <= highest);
  };
  void* p = MapAligned(len, align, false);
  if (p != nullptr && fits(p)) return p;
  if (p != nullptr) munmap(p, len);
  // A device limited to 32-bit (or 31-bit) addresses: the low 2 GiB.
  p = MapAligned(len, align, true);
  if (p != nullptr && fits(p)) return p;
  if (p != nullptr) munmap(p, len);
  return nullptr;
}

void PoolPagesUnmap(void* p, size_t bytes) { munmap(p, RoundUp(bytes, kPoolPage)); }

bool SpecialAllocate(size_t bytes, bool align_start, SpecialBlock* out) {
  if (bytes == 0) bytes = 1;
  if (bytes > (size_t{1} << 40)) return false;
  size_t data = RoundUp(bytes, kPoolPage);
  size_t len = data + 2 * kPoolPage;
  void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return false;
  auto map = reinterpret_cast<uintptr_t>(m);
  uintptr_t first = map + kPoolPage;
  if (mprotect(reinterpret_cast<void*>(first), data, PROT_READ | PROT_WRITE) != 0) {
    munmap(m, len);
    return false;
  }
  uintptr_t start = first;
  if (!align_start && bytes < kPoolPage) {
    // The highest 16-byte aligned address the block fits at.
    start = (first + data - bytes) & ~uintptr_t{15};
  }
  // Everything on the block's pages that is not the block holds the pattern.
  std::memset(reinterpret_cast<void*>(first), kSlackPattern, start - first);
  std::memset(reinterpret_cast<void*>(start + bytes), kSlackPattern, first + data - start - bytes);
  *out = SpecialBlock{map, len, start, bytes, align_start};
  return true;
}

uintptr_t SpecialRetire(const SpecialBlock& b) {
  uintptr_t first = b.map + kPoolPage;
  uintptr_t end = b.map + b.map_len - kPoolPage;
  uintptr_t bad = 0;
  for (uintptr_t a = b.start + b.size; a < end && bad == 0; a++) {
    if (*reinterpret_cast<const unsigned char*>(a) != kSlackPattern) bad = a;
  }
  for (uintptr_t a = first; a < b.start && bad == 0; a++) {
    if (*reinterpret_cast<const unsigned char*>(a) != kSlackPattern) bad = a;
  }
  mprotect(reinterpret_cast<void*>(first), end - first, PROT_NONE);
  return bad;
}

void SpecialRelease(const SpecialBlock& b) { munmap(reinterpret_cast<void*>(b.map), b.map_len); }

}  // namespace softndk::wdk
