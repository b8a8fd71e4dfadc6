// SPDX-License-Identifier: Apache-2.0
// verbs/exercise_ndk_util.cc - softndk-verbs-ndk-exercise's plumbing
// (exercise_ndk_util.h).
#include "exercise_ndk_util.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

using namespace std::chrono_literals;
using softndk::create_and_wait;
using softndk::request_and_wait;

namespace ndkx {

bool g_all_ok = true;

void step(const char* op, bool ok, NTSTATUS st, const std::string& extra) {
  std::printf("{\"op\": \"%s\", \"ok\": %s, \"status\": \"%s\"%s%s}\n", op, ok ? "true" : "false",
              softndk::status_name(st).c_str(), extra.empty() ? "" : ", ", extra.c_str());
  std::fflush(stdout);
  if (!ok) g_all_ok = false;
}

// The next completion of `cq`, bounded (30 s): false if none came.
bool next_result(NDK_CQ* cq, NDK_RESULT_EX* r) {
  auto end = std::chrono::steady_clock::now() + 30s;  // TCG guests under load
  while (std::chrono::steady_clock::now() < end) {
    if (cq->Dispatch->NdkGetCqResultsEx(cq, r, 1) == 1) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

void on_connect_event(PVOID ctx, NDK_CONNECTOR* c) {
  auto* w = static_cast<Waiter*>(ctx);
  std::lock_guard lk(w->mu);
  if (w->n < 2) w->incoming[w->n++] = c;
}

void on_srq_limit(PVOID ctx, NTSTATUS) { static_cast<Waiter*>(ctx)->fired++; }

NTSTATUS open_side(Side* s, const char* addr, ULONG flags) {
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  p.Flags = flags;
  NTSTATUS st = s->ad.open(addr, {NDK_VERSION_MAJOR, NDK_VERSION_MINOR}, &p);
  NDK_ADAPTER* a = s->ad.get();
  if (st == STATUS_SUCCESS)
    st = create_and_wait<NDK_PD>(
        [&](auto cb, auto ctx, auto o) { return a->Dispatch->NdkCreatePd(a, cb, ctx, o); },
        s->pd.out());
  if (st == STATUS_SUCCESS)
    st = create_and_wait<NDK_CQ>(
        [&](auto cb, auto ctx, auto o) {
          return a->Dispatch->NdkCreateCq(a, 256, nullptr, nullptr, nullptr, cb, ctx, o);
        },
        s->cq.out());
  return st;
}

// An MR over `buf` registered with `flags`.
NTSTATUS register_mr(NDK_PD* pd, std::vector<uint8_t>& buf, ULONG flags, Object<NDK_MR>* mr,
                     MDL* mdl) {
  NTSTATUS st = create_and_wait<NDK_MR>(
      [&](auto cb, auto ctx, auto o) { return pd->Dispatch->NdkCreateMr(pd, FALSE, cb, ctx, o); },
      mr->out());
  *mdl = MDL{nullptr, buf.data(), buf.size()};
  NDK_MR* m = mr->get();
  if (st == STATUS_SUCCESS)
    st = request_and_wait([&](auto cb, auto ctx) {
      return m->Dispatch->NdkRegisterMr(m, mdl, buf.size(), flags, cb, ctx);
    });
  return st;
}

NDK_SGE sge_of(void* p, ULONG len, UINT32 token) {
  NDK_SGE s{};
  s.VirtualAddress = p;
  s.Length = len;
  s.MemoryRegionToken = token;
  return s;
}

// One request on `qp`, then its completion on `cq` (ok: the status matched).
NTSTATUS run(NDK_CQ* cq, NTSTATUS posted, NTSTATUS* completed) {
  *completed = STATUS_PENDING;
  if (posted != STATUS_SUCCESS) return posted;
  NDK_RESULT_EX r{};
  if (!next_result(cq, &r)) return STATUS_IO_TIMEOUT;
  *completed = r.Status;
  return STATUS_SUCCESS;
}

void fill(std::vector<uint8_t>& b, size_t off, size_t len, uint8_t seed) {
  for (size_t i = 0; i < len; ++i) b[off + i] = static_cast<uint8_t>(seed + i * 7);
}
bool same(const std::vector<uint8_t>& a, size_t ao, const std::vector<uint8_t>& b, size_t bo,
          size_t len) {
  return std::memcmp(a.data() + ao, b.data() + bo, len) == 0;
}

}  // namespace ndkx
