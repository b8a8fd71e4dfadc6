// SPDX-License-Identifier: Apache-2.0
// exercise_rig.cc - softndk-verbs-exercise's rig (exercise_rig.h).
#include "verbs/exercise_rig.h"

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace softndk::verbs::exercise {

namespace {

int g_failures = 0;

}  // namespace

void report(const char* op, bool ok, const std::string& detail) {
  std::string d;
  for (char c : detail) {
    if (c == '"' || c == '\\') d += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) d += c;
  }
  std::printf("{\"op\": \"%s\", \"ok\": %s, \"detail\": \"%s\"}\n", op, ok ? "true" : "false",
              d.c_str());
  std::fflush(stdout);
  if (!ok) ++g_failures;
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// The next rdma_cm event, within 10 s.
bool next_event(rdma_event_channel* ch, rdma_cm_event_type want, rdma_cm_event** out,
                std::string* why) {
  double end = now_s() + 10;
  while (now_s() < end) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch, &ev) == 0) {
      if (ev->event == want) {
        *out = ev;
        return true;
      }
      *why = std::string("got ") + rdma_event_str(ev->event) + " status " +
             std::to_string(ev->status) + " waiting for " + rdma_event_str(want);
      rdma_ack_cm_event(ev);
      return false;
    }
    if (errno != EAGAIN) break;
    usleep(1000);
  }
  *why = std::string("no ") + rdma_event_str(want) + " within 10 s";
  return false;
}

bool make_resources(Side* s, const QpLimits& lim, bool with_srq) {
  s->pd = ibv_alloc_pd(s->id->verbs);
  s->cq = s->pd ? ibv_create_cq(s->id->verbs, 256, nullptr, nullptr, 0) : nullptr;
  if (s->cq == nullptr) return false;
  unsigned acc = 0;
  mr_access(
      NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ | NDK_MR_FLAG_RDMA_READ_SINK,
      Transport::kIwarp, &acc);
  s->mr = ibv_reg_mr_iova(s->pd, s->buf.data(), s->buf.size(),
                          reinterpret_cast<uint64_t>(s->buf.data()), acc | IBV_ACCESS_MW_BIND);
  if (s->mr == nullptr)
    s->mr = ibv_reg_mr_iova(s->pd, s->buf.data(), s->buf.size(),
                            reinterpret_cast<uint64_t>(s->buf.data()), acc);
  if (s->mr == nullptr) return false;
  ibv_qp_init_attr qa{};
  qa.send_cq = s->cq;
  qa.recv_cq = s->cq;
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 0;
  qa.cap.max_send_wr = 64 * kWqesPerRequest;
  qa.cap.max_recv_wr = 64;
  qa.cap.max_send_sge = lim.send_sge;
  qa.cap.max_recv_sge = lim.recv_sge;
  qa.cap.max_inline_data = lim.max_inline;
  if (with_srq) {
    ibv_srq_init_attr sa{};
    sa.attr.max_wr = 64;
    sa.attr.max_sge = lim.recv_sge;
    s->srq = ibv_create_srq(s->pd, &sa);
    if (s->srq == nullptr) return false;
    qa.srq = s->srq;
  }
  return rdma_create_qp(s->id, s->pd, &qa) == 0;
}

uint64_t record(Side* s, NDK_OPERATION_TYPE t, uint64_t len) {
  s->records.push_back(PostedRecord{nullptr, t, len});
  return s->records.size() - 1;
}

// Poll one completion of `s` (bounded) and translate it.
bool poll_one(Side* s, NDK_RESULT_EX* r, ibv_wc* raw, double bound_s) {
  double end = now_s() + bound_s;
  ibv_wc wc{};
  while (now_s() < end) {
    int n = ibv_poll_cq(s->cq, 1, &wc);
    if (n < 0) return false;
    if (n == 1) {
      if (wc.wr_id >= s->records.size()) return false;
      *r = result_of(wc, s->records[wc.wr_id], nullptr, s->abi);
      if (raw) *raw = wc;
      return true;
    }
    usleep(200);
  }
  return false;
}

bool post_send(Side* s, SendWqes* w) {
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(s->id->qp, &w->wr[0], &bad) == 0;
}

bool post_recv(Side* s, uint64_t off, uint32_t len, const QpLimits& lim) {
  NDK_SGE sg{};
  sg.VirtualAddress = s->buf.data() + off;
  sg.Length = len;
  sg.MemoryRegionToken = s->mr->lkey;
  RecvWqe w;
  if (build_recv(&sg, 1, lim, record(s, NdkOperationTypeReceive, len), &w) != STATUS_SUCCESS)
    return false;
  ibv_recv_wr* bad = nullptr;
  if (s->srq != nullptr) return ibv_post_srq_recv(s->srq, &w.wr, &bad) == 0;
  return ibv_post_recv(s->id->qp, &w.wr, &bad) == 0;
}

NDK_SGE sge_of(Side* s, uint64_t off, uint32_t len) {
  NDK_SGE g{};
  g.VirtualAddress = s->buf.data() + off;
  g.Length = len;
  g.MemoryRegionToken = s->mr->lkey;
  return g;
}

void fill(Side* s, uint64_t off, uint32_t len, uint8_t seed) {
  for (uint32_t k = 0; k < len; ++k) s->buf[off + k] = static_cast<uint8_t>(seed + k * 7);
}
bool same(Side* a, uint64_t aoff, Side* b, uint64_t boff, uint32_t len) {
  return std::memcmp(a->buf.data() + aoff, b->buf.data() + boff, len) == 0;
}

// Bind a type-2 window over [off, off+len) of s's arena with the window's
// own rkey (the stable token), through build-time planning.
bool bind_window(Side* s, ibv_mw* mw, uint64_t off, uint32_t len, std::string* why, uint32_t rkey) {
  std::vector<NDK_LOGICAL_ADDRESS> pages(len / NDK_PAGE_SIZE);
  uint64_t base = reinterpret_cast<uint64_t>(s->buf.data()) + off;
  for (size_t k = 0; k < pages.size(); ++k)
    pages[k].QuadPart = static_cast<int64_t>(base + k * NDK_PAGE_SIZE);
  FrBind b;
  NTSTATUS st =
      plan_window_bind(pages.data(), static_cast<uint32_t>(pages.size()), 0, len, base,
                       reinterpret_cast<uint64_t>(s->buf.data()), s->buf.size(), false, &b);
  if (st != STATUS_SUCCESS) {
    *why = "plan_window_bind " + hex(static_cast<uint32_t>(st));
    return false;
  }
  ibv_send_wr wr{};
  wr.wr_id = record(s, NdkOperationTypeFastRegister, 0);
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = rkey ? rkey : mw->rkey;  // the same key every time: the token stays
  wr.bind_mw.bind_info.mr = s->mr;
  wr.bind_mw.bind_info.addr = b.addr;
  wr.bind_mw.bind_info.length = b.length;
  wr.bind_mw.bind_info.mw_access_flags = window_access(
      NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE, Transport::kRoce);
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(s->id->qp, &wr, &bad) != 0) {
    *why = "ibv_post_send(BIND_MW): " + std::string(strerror(errno));
    return false;
  }
  NDK_RESULT_EX r{};
  if (!poll_one(s, &r)) {
    *why = "no bind completion";
    return false;
  }
  *why = "status " + hex(static_cast<uint32_t>(r.Status)) + " provider " +
         hex(r.ProviderErrorCode) + " rkey " + hex(mw->rkey);
  return r.Status == STATUS_SUCCESS;
}

int failure_count() { return g_failures; }

}  // namespace softndk::verbs::exercise
