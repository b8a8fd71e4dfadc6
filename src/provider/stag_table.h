// SPDX-License-Identifier: Apache-2.0
// stag_table.h - every STag (NDK token) of one adapter instance.
//
// An STag is index << 8 | key. The index selects an entry of a two-level
// table (chunks of 4096 entries, allocated on demand, never freed before
// the adapter), the 8-bit key comes from getrandom() and changes on every
// re-registration, bind and fast-register, so a stale or guessed token
// misses. Index 0 is never used: STag 0 is never valid.
//
// Lookups (the data path's remote access checks, on engine threads) take no
// lock: each entry is a seqlock whose fields are atomics (sequentially
// consistent, so no fences are needed - TSan cannot model fences); a reader
// retries while a writer is active. Writers (register, bind, invalidate,
// free) serialise per entry through the sequence word.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "provider/memory_object.h"
#include "softndk/ndkpi.h"

namespace softndk::provider {

// Access rights held by an STag.
enum Access : uint32_t {
  kAccessLocalRead = 1u << 0,
  kAccessLocalWrite = 1u << 1,
  kAccessRemoteRead = 1u << 2,
  kAccessRemoteWrite = 1u << 3,
  kAccessReadSink = 1u << 4,
};

// NDK_MR_FLAG_* -> Access (local read always granted).
uint32_t access_from_mr_flags(ULONG flags);
// NDK_OP_FLAG_* of Bind/FastRegister -> Access (local read always granted).
uint32_t access_from_op_flags(ULONG flags);

enum class StagKind : uint8_t { kFree = 0, kMr, kFastMr, kMw, kPrivileged };

struct StagInfo {
  uint32_t stag = 0;
  StagKind kind = StagKind::kFree;
  bool valid = false;
  uint32_t access = 0;
  uint64_t base = 0;  // first byte's VA (the tagged-offset base)
  uint64_t length = 0;
  const void* pd = nullptr;        // the Pd* owning the STag
  MemoryObject* object = nullptr;  // the Mr/Mw behind it (null: a PD's privileged STag)
  const void* qp = nullptr;        // MW: the QP that bound it (type-1 windows: none)
};

class StagTable {
 public:
  StagTable() = default;
  StagTable(const StagTable&) = delete;
  StagTable& operator=(const StagTable&) = delete;

  // New entry (invalid) with a fresh key. 0 if the table is full.
  uint32_t allocate(StagKind kind, const void* pd, MemoryObject* object);
  // Releases the entry; lookups of any of its STags miss afterwards.
  void free(uint32_t stag);
  // Gives the entry a new key (!= the old one) and makes it invalid.
  // Returns the new STag, 0 if `stag` is not current.
  uint32_t rekey(uint32_t stag);
  // Makes the entry valid over [base, base+length) with `access`.
  bool validate(uint32_t stag, uint64_t base, uint64_t length, uint32_t access,
                const void* qp = nullptr);
  // Makes the entry invalid (keeps key and index).
  bool invalidate(uint32_t stag);

  // Lock-free snapshot. False if no entry carries exactly this STag.
  bool lookup(uint32_t stag, StagInfo* out) const;

  // The access check of the data path: valid, same PD, the range inside the
  // region and every bit of `need` granted. Returns STATUS_SUCCESS,
  // STATUS_INVALID_HANDLE-free statuses only: STATUS_ACCESS_VIOLATION for any
  // refusal (unknown/invalid STag, PD mismatch, rights, bounds).
  NTSTATUS check(uint32_t stag, const void* pd, uint64_t addr, uint64_t length, uint32_t need,
                 StagInfo* out = nullptr) const;

  static uint32_t index_of(uint32_t stag) { return stag >> 8; }
  static constexpr uint32_t kChunk = 4096;
  static constexpr uint32_t kMaxIndex = (1u << 24) - 1;

 private:
  struct Entry {
    std::atomic<uint32_t> seq{0};  // odd while a writer is active
    std::atomic<uint32_t> stag{0};
    std::atomic<uint8_t> kind{0};
    std::atomic<bool> valid{false};
    std::atomic<uint32_t> access{0};
    std::atomic<uint64_t> base{0};
    std::atomic<uint64_t> length{0};
    std::atomic<const void*> pd{nullptr};
    std::atomic<MemoryObject*> object{nullptr};
    std::atomic<const void*> qp{nullptr};
  };
  Entry* entry(uint32_t index) const;
  Entry* lock_entry(uint32_t stag) const;  // nullptr unless current; seq odd on success
  static void unlock_entry(Entry* e);
  static uint8_t random_key(uint8_t avoid);

  static constexpr uint32_t kChunks = (kMaxIndex + 1) / kChunk;
  std::unique_ptr<std::atomic<Entry*>[]> chunks_ { new std::atomic<Entry*>[ kChunks ]() };
  std::mutex alloc_mu_;  // guards allocation bookkeeping
  std::vector<std::unique_ptr<Entry[]>> owned_;
  std::vector<uint32_t> free_list_;
  uint32_t next_index_ = 1;
};

}  // namespace softndk::provider
