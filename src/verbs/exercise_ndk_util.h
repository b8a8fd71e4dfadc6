// SPDX-License-Identifier: Apache-2.0
// verbs/exercise_ndk_util.h - the steps' plumbing of
// softndk-verbs-ndk-exercise (exercise_ndk_main.cc): the JSON step line,
// bounded completions, the two sides' adapters, MRs and buffers. Public
// headers only (an NDK consumer).
#pragma once

#include <softndk/softndk.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <softndk/softndk.hpp>
#include <string>
#include <vector>

namespace ndkx {

using softndk::Object;

// False once a step failed (the exit code).
extern bool g_all_ok;
// One JSON line {"op", "ok", "status", extra...}.
void step(const char* op, bool ok, NTSTATUS st, const std::string& extra = {});
// The next completion of `cq`, bounded (30 s): false if none came.
bool next_result(NDK_CQ* cq, NDK_RESULT_EX* r);

struct Waiter {
  std::mutex mu;
  std::atomic<int> fired{0};
  NDK_CONNECTOR* incoming[2] = {};
  int n = 0;
};
void on_connect_event(PVOID ctx, NDK_CONNECTOR* c);
void on_srq_limit(PVOID ctx, NTSTATUS);

struct Side {
  softndk::Adapter ad;
  Object<NDK_PD> pd;
  Object<NDK_CQ> cq;
};
NTSTATUS open_side(Side* s, const char* addr, ULONG flags);
// An MR over `buf` registered with `flags`.
NTSTATUS register_mr(NDK_PD* pd, std::vector<uint8_t>& buf, ULONG flags, Object<NDK_MR>* mr,
                     MDL* mdl);
NDK_SGE sge_of(void* p, ULONG len, UINT32 token);
// One request on `qp`, then its completion on `cq` (ok: the status matched).
NTSTATUS run(NDK_CQ* cq, NTSTATUS posted, NTSTATUS* completed);
void fill(std::vector<uint8_t>& b, size_t off, size_t len, uint8_t seed);
bool same(const std::vector<uint8_t>& a, size_t ao, const std::vector<uint8_t>& b, size_t bo,
          size_t len);

}  // namespace ndkx
