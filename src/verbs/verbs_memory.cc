// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_memory.cc - the verbs backend's memory below the seam
// (provider.h v2/v3): NdkRegisterMr as ibv_reg_mr_iova, type-2 memory
// windows for fast-register MRs and NdkCreateMw, NdkBuildLAM's arenas the
// fast-register windows are bound over, and device SRQs
// (docs/verbs.md, "Fast register", "SRQ").
#include <algorithm>
#include <cerrno>

#include "verbs/verbs_backend.h"

namespace softndk::verbs {

namespace {
// Every SRQ of the process by its ibv_srq: rdma_cm shares one device
// context among all ids of a process, so two adapters on one device read
// the same async fd and either may receive another's SRQ event.
struct SrqRegistry {
  std::mutex mu;
  std::map<ibv_srq*, std::weak_ptr<VerbsSrq>> srqs;
};
SrqRegistry& srq_registry() {
  static auto* r = new SrqRegistry;  // never destroyed: used until the last adapter closes
  return *r;
}

// The arena is a full-rights MR: the windows bound over it carry the
// rights the consumer asked for (window_access()).
constexpr int kArenaAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND;
}  // namespace

NTSTATUS VerbsProvider::register_memory(uint64_t va, uint64_t length, ULONG flags,
                                        std::function<void(NTSTATUS, MemoryKeys)> done) {
  unsigned access = 0;
  NTSTATUS st = mr_access(flags, facts_.transport, &access);
  if (st != STATUS_SUCCESS) return st;
  // NdkBind binds windows over ordinary MRs: with windows every MR allows it.
  if (fr_ == FrSupport::kWindows) access |= IBV_ACCESS_MW_BIND;
  loop_->post([this, va, length, access, done = std::move(done)] {
    // ibv_reg_mr_iova pins the pages: here, never in the consumer's call.
    ibv_mr* mr =
        ibv_reg_mr_iova(pd_, reinterpret_cast<void*>(va), length, va, static_cast<int>(access));
    if (mr == nullptr) {
      done(errno == ENOMEM ? STATUS_INSUFFICIENT_RESOURCES : STATUS_INVALID_PARAMETER, {});
      return;
    }
    MemoryKeys k;
    k.lkey = mr->lkey;
    k.rkey = mr->rkey;
    k.handle = reinterpret_cast<uintptr_t>(mr);
    done(STATUS_SUCCESS, k);
  });
  return STATUS_PENDING;
}

void VerbsProvider::deregister_memory(uint64_t handle, std::function<void(NTSTATUS)> done) {
  loop_->post([handle, done = std::move(done)] {
    int rc = ibv_dereg_mr(reinterpret_cast<ibv_mr*>(static_cast<uintptr_t>(handle)));
    if (done) done(rc == 0 ? STATUS_SUCCESS : STATUS_INVALID_DEVICE_REQUEST);
  });
}

// ---- windows -------------------------------------------------------------------------

NTSTATUS VerbsProvider::alloc_window(WindowKeys* out) {
  if (fr_ != FrSupport::kWindows) return STATUS_NOT_SUPPORTED;
  // ibv_alloc_mw pins nothing and waits for nothing (one command to the
  // kernel driver), so it runs in the consumer's call.
  ibv_mw* mw = ibv_alloc_mw(pd_, IBV_MW_TYPE_2);
  if (mw == nullptr) return errno == ENOMEM ? STATUS_INSUFFICIENT_RESOURCES : STATUS_NOT_SUPPORTED;
  {
    std::lock_guard lk(mem_mu_);
    windows_.allocated(mw->rkey);
  }
  window_count_.fetch_add(1, std::memory_order_release);
  out->rkey = mw->rkey;
  out->handle = reinterpret_cast<uintptr_t>(mw);
  return STATUS_SUCCESS;
}

void VerbsProvider::free_window(uint64_t handle) {
  auto* mw = reinterpret_cast<ibv_mw*>(static_cast<uintptr_t>(handle));
  {
    std::lock_guard lk(mem_mu_);
    windows_.freed(mw->rkey);
  }
  window_count_.fetch_sub(1, std::memory_order_release);
  loop_->post([mw] { ibv_dealloc_mw(mw); });
}

NTSTATUS VerbsProvider::register_lam(uint64_t va, uint64_t length,
                                     std::function<void(NTSTATUS)> done) {
  if (fr_ != FrSupport::kWindows) return STATUS_NOT_SUPPORTED;
  loop_->post([this, va, length, done = std::move(done)] {
    ibv_mr* mr = ibv_reg_mr_iova(pd_, reinterpret_cast<void*>(va), length, va, kArenaAccess);
    if (mr == nullptr) {
      done(errno == ENOMEM ? STATUS_INSUFFICIENT_RESOURCES : STATUS_INVALID_PARAMETER);
      return;
    }
    {
      std::lock_guard lk(mem_mu_);
      arenas_.emplace(va, mr);
    }
    done(STATUS_SUCCESS);
  });
  return STATUS_PENDING;
}

void VerbsProvider::release_lam(uint64_t va, uint64_t length) {
  ibv_mr* mr = nullptr;
  {
    std::lock_guard lk(mem_mu_);
    auto [b, e] = arenas_.equal_range(va);
    for (auto it = b; it != e; ++it) {
      if (it->second->length == length) {
        mr = it->second;
        arenas_.erase(it);
        break;
      }
    }
  }
  if (mr != nullptr) loop_->post([mr] { ibv_dereg_mr(mr); });
}

ibv_mr* VerbsProvider::find_arena(uint64_t addr, uint64_t len) {
  std::lock_guard lk(mem_mu_);
  // Arenas starting at or below addr, nearest first.
  for (auto it = arenas_.upper_bound(addr); it != arenas_.begin();) {
    --it;
    ibv_mr* mr = it->second;
    if (sge_in_arena(addr, len, it->first, mr->length)) return mr;
  }
  return nullptr;
}

bool VerbsProvider::window_sge_lkey(uint32_t token, uint64_t addr, uint64_t len, uint32_t* lkey) {
  // Posts of an adapter without windows take no lock here.
  if (window_count_.load(std::memory_order_acquire) == 0) return false;
  {
    std::lock_guard lk(mem_mu_);
    if (!windows_.is_window(token)) return false;
  }
  ibv_mr* mr = find_arena(addr, len);
  if (mr == nullptr) return false;
  *lkey = mr->lkey;
  return true;
}

void VerbsProvider::window_bound(uint32_t rkey) {
  std::lock_guard lk(mem_mu_);
  windows_.bound(rkey);
}

WindowStates::Invalidate VerbsProvider::window_invalidate(uint32_t rkey) {
  std::lock_guard lk(mem_mu_);
  return windows_.invalidate(rkey);
}

void VerbsProvider::window_peer_invalidated(uint32_t rkey) {
  if (window_count_.load(std::memory_order_acquire) == 0) return;
  std::lock_guard lk(mem_mu_);
  windows_.peer_invalidated(rkey);
}

// ---- SRQs ------------------------------------------------------------------------------

NTSTATUS VerbsProvider::create_srq(provider::SrqHost* host, uint32_t depth, uint32_t max_sge,
                                   std::shared_ptr<provider::SrqEngine>* out) {
  ibv_srq_init_attr a{};
  a.attr.max_wr = depth;
  a.attr.max_sge = max_sge;
  ibv_srq* s = ibv_create_srq(pd_, &a);
  if (s == nullptr)
    return errno == ENOMEM ? STATUS_INSUFFICIENT_RESOURCES : STATUS_INVALID_PARAMETER;
  QpLimits lim;
  lim.recv_sge = max_sge;
  lim.max_transfer = info_.MaxTransferLength;
  // The device may round the depth up (ibv_create_srq returns the real one).
  auto v =
      std::make_shared<VerbsSrq>(this, host, s, lim, std::max(a.attr.max_wr, depth), srq_resize_);
  srq_created(s, v);
  *out = v;
  return STATUS_SUCCESS;
}

void VerbsProvider::srq_created(ibv_srq* s, std::weak_ptr<VerbsSrq> v) {
  SrqRegistry& r = srq_registry();
  std::lock_guard lk(r.mu);
  r.srqs[s] = std::move(v);
}

void VerbsProvider::srq_gone(ibv_srq* s) {
  SrqRegistry& r = srq_registry();
  std::lock_guard lk(r.mu);
  r.srqs.erase(s);
}

void VerbsProvider::on_async_event() {
  for (;;) {
    ibv_async_event ev{};
    if (ibv_get_async_event(bind_id_->verbs, &ev) != 0) return;  // EAGAIN: drained
    std::shared_ptr<VerbsSrq> srq;
    if (ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED) {
      // Possibly another adapter's SRQ on the same device (the registry).
      SrqRegistry& r = srq_registry();
      std::lock_guard lk(r.mu);
      auto it = r.srqs.find(ev.element.srq);
      if (it != r.srqs.end()) srq = it->second.lock();
    }
    // Acked before the handler: ibv_destroy_srq waits for unacked events
    // of its SRQ, and the last reference may go in the handler.
    ibv_ack_async_event(&ev);
    if (srq) srq->limit_reached();
  }
}

VerbsSrq::VerbsSrq(VerbsProvider* p, provider::SrqHost* host, ibv_srq* srq, QpLimits lim,
                   uint32_t depth, bool can_resize)
    : prov_(p), srq_(srq), lim_(lim), depth_(depth), can_resize_(can_resize), host_(host) {}

VerbsSrq::~VerbsSrq() {
  // The connections of its QPs held it until their QPs were destroyed.
  VerbsProvider* p = prov_;
  ibv_srq* s = srq_;
  p->loop().post([p, s] {
    p->srq_gone(s);
    ibv_destroy_srq(s);
  });
}

void VerbsSrq::srq_posted() {
  std::lock_guard lk(mu_);
  post_locked();
}

void VerbsSrq::post_locked() {
  if (host_ == nullptr) return;
  provider::ReceiveRequest rr;
  stalled_ = false;
  while (host_->srq_take(&rr)) {
    const uint64_t id = VerbsConnection::kRecvBit | kSrqBit | next_++;
    RecvWqe w;
    // Checked by the object model at NdkSrqReceive (SGEs, length).
    if (build_recv(rr.sge, rr.nsge, lim_, id, &w) != STATUS_SUCCESS) {
      host_->srq_done();
      continue;
    }
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_srq_recv(srq_, &w.wr, &bad) != 0) {
      // The object model keeps the outstanding receives within the depth,
      // so the device should have room; if it has not, the receive waits
      // in the ring (never dropped: it owes a completion) until one of the
      // device's completes.
      host_->srq_untake(rr);
      stalled_ = true;
      return;
    }
    recvs_.emplace(id, rr);
  }
}

NTSTATUS VerbsSrq::arm(uint32_t threshold) {
  ibv_srq_attr a{};
  a.srq_limit = threshold;
  int rc = ibv_modify_srq(srq_, &a, IBV_SRQ_LIMIT);
  return rc == 0 ? STATUS_SUCCESS : STATUS_INVALID_PARAMETER;
}

NTSTATUS VerbsSrq::resize(uint32_t depth) {
  if (!can_resize_) return STATUS_NOT_SUPPORTED;
  // ibv_modify_srq and ibv_resize_cq are one command each to the kernel
  // driver (as arm()'s IBV_SRQ_LIMIT): they run in the consumer's call.
  std::lock_guard lk(mu_);
  if (depth > depth_.load(std::memory_order_relaxed)) {
    for (const AttachedCq& c : cqs_) {
      const uint32_t want = srq_qp_cq_entries(c.sq_wqes, depth);
      if (c.cq->cqe >= static_cast<int>(want)) continue;
      if (int rc = ibv_resize_cq(c.cq, static_cast<int>(want)); rc != 0)
        return srq_resize_status(rc);
    }
  }
  ibv_srq_attr a{};
  a.max_wr = depth;
  if (int rc = ibv_modify_srq(srq_, &a, IBV_SRQ_MAX_WR); rc != 0) return srq_resize_status(rc);
  depth_.store(depth, std::memory_order_release);
  return STATUS_SUCCESS;
}

void VerbsSrq::cq_attached(ibv_cq* cq, uint32_t sq_wqes, uint32_t sized_for) {
  std::lock_guard lk(mu_);
  cqs_.push_back({cq, sq_wqes});
  // A resize between the CQ's creation and now: grow it here.
  const uint32_t d = depth_.load(std::memory_order_relaxed);
  if (d > sized_for) ibv_resize_cq(cq, static_cast<int>(srq_qp_cq_entries(sq_wqes, d)));
}

void VerbsSrq::cq_detached(ibv_cq* cq) {
  std::lock_guard lk(mu_);
  std::erase_if(cqs_, [cq](const AttachedCq& c) { return c.cq == cq; });
}

void VerbsSrq::detach() {
  std::lock_guard lk(mu_);
  host_ = nullptr;
}

bool VerbsSrq::finish(uint64_t wr_id, provider::ReceiveRequest* out) {
  std::lock_guard lk(mu_);
  auto it = recvs_.find(wr_id);
  if (it == recvs_.end()) return false;
  *out = it->second;
  recvs_.erase(it);
  if (host_ != nullptr) {
    host_->srq_done();
    if (stalled_) post_locked();  // a slot of the device SRQ is free again
  }
  return true;
}

void VerbsSrq::limit_reached() {
  std::lock_guard lk(mu_);
  if (host_ != nullptr) host_->srq_limit_reached();
}

}  // namespace softndk::verbs
