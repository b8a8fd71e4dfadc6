// SPDX-License-Identifier: Apache-2.0
// exercise_rig.h - the test rig of softndk-verbs-exercise: one side of a
// loopback RC connection (PD, CQ, arena MR, optional SRQ, the posted
// requests' records), bounded waits for rdma_cm events and completions,
// and the JSON line every step reports. Every work request goes through
// verbs_map.h's build_send()/build_recv() and every completion through
// result_of(), so the rig tests the translation, not a copy of it.
#pragma once

#include <rdma/rdma_cma.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "verbs/verbs_map.h"

namespace softndk::verbs::exercise {

// One JSON object per line on stdout ({"op", "ok", "detail"}); a step that
// is not ok counts as a failure.
void report(const char* op, bool ok, const std::string& detail = "");
// How many reports so far were not ok.
int failure_count();
std::string hex(uint32_t v);
double now_s();

// The next rdma_cm event, within 10 s; anything else is a failure (*why).
bool next_event(rdma_event_channel* ch, rdma_cm_event_type want, rdma_cm_event** out,
                std::string* why);

// Page-aligned memory: NdkBuildLAM hands out whole pages, and a window
// over them starts on a page (plan_window_bind checks it).
struct AlignedBuf {
  AlignedBuf() : p_(static_cast<uint8_t*>(std::aligned_alloc(NDK_PAGE_SIZE, kSize))) {
    std::memset(p_, 0, kSize);
  }
  ~AlignedBuf() { std::free(p_); }
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
  uint8_t* data() { return p_; }
  size_t size() const { return kSize; }
  uint8_t& operator[](size_t k) { return p_[k]; }
  static constexpr size_t kSize = 1 << 20;

 private:
  uint8_t* p_;
};

// One side of the connection.
struct Side {
  rdma_cm_id* id = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  AlignedBuf buf;  // the arena
  ibv_mr* mr = nullptr;
  ibv_srq* srq = nullptr;              // NdkCreateQpWithSrq: receives go here
  std::vector<PostedRecord> records;   // wr_id -> record
  WcFlagsAbi abi = WcFlagsAbi::kUser;  // how the device's library sets wc_flags
};

// PD, CQ, the arena MR (with MW bind access where the device allows it),
// an SRQ if `with_srq`, and the QP on s->id.
bool make_resources(Side* s, const QpLimits& lim, bool with_srq = false);
// A record for a request about to be posted; its index is the wr_id.
uint64_t record(Side* s, NDK_OPERATION_TYPE t, uint64_t len);
// Poll one completion of `s` (bounded) and translate it.
bool poll_one(Side* s, NDK_RESULT_EX* r, ibv_wc* raw = nullptr, double bound_s = 5);
bool post_send(Side* s, SendWqes* w);
// A receive of [off, off+len) of s's arena, to its SRQ if it has one.
bool post_recv(Side* s, uint64_t off, uint32_t len, const QpLimits& lim);
NDK_SGE sge_of(Side* s, uint64_t off, uint32_t len);
// A pattern that differs per seed, and its comparison across the sides.
void fill(Side* s, uint64_t off, uint32_t len, uint8_t seed);
bool same(Side* a, uint64_t aoff, Side* b, uint64_t boff, uint32_t len);
// Bind a type-2 window over [off, off+len) of s's arena with the window's
// own rkey (the stable token), or `rkey` if given, through plan_window_bind.
bool bind_window(Side* s, ibv_mw* mw, uint64_t off, uint32_t len, std::string* why,
                 uint32_t rkey = 0);

}  // namespace softndk::verbs::exercise
