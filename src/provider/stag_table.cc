// SPDX-License-Identifier: Apache-2.0
// stag_table.cc - STag allocation, keys from getrandom(), seqlocked entries.
#include "provider/stag_table.h"

#include <sys/random.h>

#include <cstring>
#include <new>

namespace softndk::provider {

uint32_t access_from_mr_flags(ULONG flags) {
  uint32_t a = kAccessLocalRead;
  if (flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE) a |= kAccessLocalWrite;
  if (flags & NDK_MR_FLAG_ALLOW_REMOTE_READ) a |= kAccessRemoteRead;
  // REMOTE_WRITE is 0x5: bit 0x4 is the remote part, it implies local write.
  if (flags & 0x4u) a |= kAccessRemoteWrite | kAccessLocalWrite;
  if (flags & NDK_MR_FLAG_RDMA_READ_SINK) a |= kAccessReadSink;
  return a;
}

uint32_t access_from_op_flags(ULONG flags) {
  uint32_t a = kAccessLocalRead;
  if (flags & NDK_OP_FLAG_ALLOW_LOCAL_WRITE) a |= kAccessLocalWrite;
  if (flags & NDK_OP_FLAG_ALLOW_REMOTE_READ) a |= kAccessRemoteRead;
  if (flags & 0x20u) a |= kAccessRemoteWrite | kAccessLocalWrite;
  if (flags & NDK_OP_FLAG_RDMA_READ_SINK) a |= kAccessReadSink;
  return a;
}

uint8_t StagTable::random_key(uint8_t avoid) {
  // A small per-thread pool keeps registration at one syscall per 64 keys.
  thread_local uint8_t pool[64];
  thread_local size_t left = 0;
  for (;;) {
    if (left == 0) {
      ssize_t n = getrandom(pool, sizeof pool, 0);
      if (n != static_cast<ssize_t>(sizeof pool)) {
        // getrandom cannot fail for 64 bytes once the pool is seeded; keep
        // going with whatever the stack held rather than aborting.
        n = sizeof pool;
      }
      left = sizeof pool;
    }
    uint8_t k = pool[--left];
    if (k != avoid) return k;
  }
}

StagTable::Entry* StagTable::entry(uint32_t index) const {
  if (index == 0 || index > kMaxIndex) return nullptr;
  Entry* chunk = chunks_[index / kChunk].load(std::memory_order_acquire);
  return chunk == nullptr ? nullptr : &chunk[index % kChunk];
}

uint32_t StagTable::allocate(StagKind kind, const void* pd, MemoryObject* object) {
  uint32_t index;
  {
    std::lock_guard lk(alloc_mu_);
    if (!free_list_.empty()) {
      index = free_list_.back();
      free_list_.pop_back();
    } else {
      if (next_index_ > kMaxIndex) return 0;
      index = next_index_++;
      if (chunks_[index / kChunk].load(std::memory_order_seq_cst) == nullptr) {
        owned_.emplace_back(new Entry[kChunk]);
        chunks_[index / kChunk].store(owned_.back().get(), std::memory_order_release);
      }
    }
  }
  Entry* e = entry(index);
  // The entry is free: no other writer can own it, but readers may still
  // probe it with stale STags, so write under the sequence word.
  uint32_t s = e->seq.load(std::memory_order_seq_cst);
  e->seq.store(s + 1, std::memory_order_seq_cst);
  uint8_t old_key = static_cast<uint8_t>(e->stag.load(std::memory_order_seq_cst));
  uint32_t stag = index << 8 | random_key(old_key);
  e->stag.store(stag, std::memory_order_seq_cst);
  e->kind.store(static_cast<uint8_t>(kind), std::memory_order_seq_cst);
  e->valid.store(false, std::memory_order_seq_cst);
  e->access.store(0, std::memory_order_seq_cst);
  e->base.store(0, std::memory_order_seq_cst);
  e->length.store(0, std::memory_order_seq_cst);
  e->pd.store(pd, std::memory_order_seq_cst);
  e->object.store(object, std::memory_order_seq_cst);
  e->qp.store(nullptr, std::memory_order_seq_cst);
  e->seq.store(s + 2, std::memory_order_release);
  return stag;
}

StagTable::Entry* StagTable::lock_entry(uint32_t stag) const {
  Entry* e = entry(index_of(stag));
  if (e == nullptr) return nullptr;
  for (;;) {
    uint32_t s = e->seq.load(std::memory_order_acquire);
    if (s & 1) continue;  // another writer: spin (writers are short)
    if (e->seq.compare_exchange_weak(s, s + 1, std::memory_order_acquire)) break;
  }
  if (e->stag.load(std::memory_order_seq_cst) != stag ||
      e->kind.load(std::memory_order_seq_cst) == static_cast<uint8_t>(StagKind::kFree)) {
    unlock_entry(e);
    return nullptr;
  }
  return e;
}

void StagTable::unlock_entry(Entry* e) { e->seq.fetch_add(1, std::memory_order_release); }

void StagTable::free(uint32_t stag) {
  Entry* e = lock_entry(stag);
  if (e == nullptr) return;
  e->kind.store(static_cast<uint8_t>(StagKind::kFree), std::memory_order_seq_cst);
  e->valid.store(false, std::memory_order_seq_cst);
  e->object.store(nullptr, std::memory_order_seq_cst);
  e->pd.store(nullptr, std::memory_order_seq_cst);
  unlock_entry(e);
  std::lock_guard lk(alloc_mu_);
  free_list_.push_back(index_of(stag));
}

uint32_t StagTable::rekey(uint32_t stag) {
  Entry* e = lock_entry(stag);
  if (e == nullptr) return 0;
  uint32_t n = (stag & ~0xffu) | random_key(static_cast<uint8_t>(stag));
  e->stag.store(n, std::memory_order_seq_cst);
  e->valid.store(false, std::memory_order_seq_cst);
  unlock_entry(e);
  return n;
}

bool StagTable::validate(uint32_t stag, uint64_t base, uint64_t length, uint32_t access,
                         const void* qp) {
  Entry* e = lock_entry(stag);
  if (e == nullptr) return false;
  e->base.store(base, std::memory_order_seq_cst);
  e->length.store(length, std::memory_order_seq_cst);
  e->access.store(access, std::memory_order_seq_cst);
  e->qp.store(qp, std::memory_order_seq_cst);
  e->valid.store(true, std::memory_order_seq_cst);
  unlock_entry(e);
  return true;
}

bool StagTable::invalidate(uint32_t stag) {
  Entry* e = lock_entry(stag);
  if (e == nullptr) return false;
  e->valid.store(false, std::memory_order_seq_cst);
  unlock_entry(e);
  return true;
}

bool StagTable::lookup(uint32_t stag, StagInfo* out) const {
  Entry* e = entry(index_of(stag));
  if (e == nullptr) return false;
  for (;;) {
    uint32_t s1 = e->seq.load(std::memory_order_acquire);
    if (s1 & 1) continue;
    StagInfo i;
    i.stag = e->stag.load(std::memory_order_seq_cst);
    i.kind = static_cast<StagKind>(e->kind.load(std::memory_order_seq_cst));
    i.valid = e->valid.load(std::memory_order_seq_cst);
    i.access = e->access.load(std::memory_order_seq_cst);
    i.base = e->base.load(std::memory_order_seq_cst);
    i.length = e->length.load(std::memory_order_seq_cst);
    i.pd = e->pd.load(std::memory_order_seq_cst);
    i.object = e->object.load(std::memory_order_seq_cst);
    i.qp = e->qp.load(std::memory_order_seq_cst);
    if (e->seq.load(std::memory_order_seq_cst) != s1) continue;
    if (i.stag != stag || i.kind == StagKind::kFree) return false;
    *out = i;
    return true;
  }
}

NTSTATUS StagTable::check(uint32_t stag, const void* pd, uint64_t addr, uint64_t length,
                          uint32_t need, StagInfo* out) const {
  StagInfo i;
  if (!lookup(stag, &i) || !i.valid || i.pd != pd) return STATUS_ACCESS_VIOLATION;
  if ((i.access & need) != need) return STATUS_ACCESS_VIOLATION;
  if (addr < i.base || length > i.length || addr - i.base > i.length - length)
    return STATUS_ACCESS_VIOLATION;
  if (out != nullptr) *out = i;
  return STATUS_SUCCESS;
}

}  // namespace softndk::provider
