// SPDX-License-Identifier: Apache-2.0
// qp_post.cc - the consumer's posting calls (NdkSend ... NdkReceive): each
// validated against the QP's limits and its state, copied into a ring slot
// (or sent directly by the posting thread), and the transport poked.
#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "ndk/adapter.h"
#include "ndk/cq.h"
#include "ndk/mr.h"
#include "ndk/mw.h"
#include "ndk/qp.h"
#include "ndk/srq.h"

namespace softndk::ndk {

namespace {
constexpr ULONG kSendFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | NDK_OP_FLAG_INLINE |
                             NDK_OP_FLAG_DEFER;
constexpr ULONG kWriteFlags =
    NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER;
constexpr ULONG kReadFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE | NDK_OP_FLAG_DEFER;
constexpr ULONG kBindFlags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                             NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE |
                             NDK_OP_FLAG_DEFER;
constexpr ULONG kFrFlags = kBindFlags | NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK;
constexpr ULONG kInvalidateFlags =
    NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER;
}  // namespace

NTSTATUS Qp::check_initiator(ULONG flags, ULONG allowed) {
  QpState s = state();
  if (s != QpState::kConnected) return STATUS_CONNECTION_INVALID;
  if (icq_->dead()) return STATUS_CONNECTION_INVALID;
  if (flags & ~allowed) return STATUS_INVALID_PARAMETER;
  return STATUS_SUCCESS;
}

NTSTATUS Qp::enqueue(WorkRequestHead&& wr, const NDK_SGE* sgl, ULONG nsge, ULONG max_sge) {
  bool is_inline = (wr.flags & NDK_OP_FLAG_INLINE) != 0;
  if (nsge > 0 && sgl == nullptr) return STATUS_INVALID_PARAMETER;
  if (!is_inline && nsge > max_sge) return STATUS_INVALID_PARAMETER;
  uint64_t total = 0;
  for (ULONG i = 0; i < nsge; ++i) total += sgl[i].Length;
  if (total > adapter()->info().MaxTransferLength) return STATUS_INVALID_PARAMETER;
  if (is_inline && total > cfg_.inline_size) return STATUS_INVALID_PARAMETER;
  if (nsge > 0) wr.length = total;  // Bind/FR carry their region length
  bool deferred = (wr.flags & NDK_OP_FLAG_DEFER) != 0;
  std::shared_ptr<QpTransport> t;
  if (is_inline && (wr.type == NdkOperationTypeSend || wr.type == NdkOperationTypeWrite) &&
      !(wr.flags & (NDK_OP_FLAG_DEFER | NDK_OP_FLAG_READ_FENCE))) {
    // A small Send or Write that nothing queued waits for: the posting
    // thread hands it to TCP itself, without a round through the
    // transmitter's queue scan (docs/datapath.md "Direct sends").
    t = transport();
    if (t != nullptr && t->direct_begin()) {
      Started started;
      NTSTATUS st = push(wr, sgl, nsge, true, &started);
      t->direct_end(started.wr, started.seq, sgl, nsge);
      return st;
    }
  }
  NTSTATUS st = push(wr, sgl, nsge, false, nullptr);
  if (st != STATUS_SUCCESS) return st;
  bool carries = wr.type == NdkOperationTypeSend || wr.type == NdkOperationTypeWrite;
  if (t != nullptr) {
    // The transport just asked (no direct path, or busy) is told, without a
    // second lookup under transport_mu_ (a device engine's every inline
    // post). One that was gone then is looked up again after the push
    // (kick): a transport attached meanwhile must see it.
    t->sq_posted(deferred, carries ? wr.length : 0);
  } else {
    kick(deferred, carries ? wr.length : 0);
  }
  return STATUS_SUCCESS;
}

NTSTATUS Qp::push(const WorkRequestHead& wr, const NDK_SGE* sgl, ULONG nsge, bool start,
                  Started* started) {
  std::lock_guard lk(sq_mu_);
  // Re-checked under the queue lock: to_error() sets the state before its
  // flush takes this lock, so a post that passed check_initiator() while
  // the QP went to error either lands before the flush (and is cancelled
  // by it) or sees the state here; it can never queue behind the flush
  // and wait forever for a completion.
  if (state() != QpState::kConnected) return STATUS_CONNECTION_INVALID;
  const uint64_t used = sq_tail_ - sq_head_ + (direct_.active ? 1 : 0);
  if (used >= sq_.size()) return STATUS_INSUFFICIENT_RESOURCES;
  if (start && used == 0) {
    // Nothing outstanding, so nothing for its completion to wait for: the
    // poster, now the transmitter, sends it without a ring slot.
    direct_ = {true, wr.context, wr.flags, wr.type};
    started->wr = &wr;
    started->seq = kDirectNoSlot;
    deferred_pending_ = false;
    return STATUS_SUCCESS;
  }
  size_t slot = sq_tail_ % sq_.size();
  SqSlot& s = sq_[slot];
  s = SqSlot{};
  s.wr = wr;
  if (start && sq_next_ == sq_tail_) {
    // Nothing older waits to start: the poster, now the transmitter, takes
    // it at once (as sq_start() would). The slot's head stays put until the
    // request completes or is flushed.
    s.started = true;
    s.wr.nsge = 0;
    started->wr = &s.wr;
    started->seq = sq_tail_;
    ++sq_next_;
  } else if (wr.flags & NDK_OP_FLAG_INLINE) {
    uint8_t* dst = inline_.data() + slot * cfg_.inline_size;
    size_t off = 0;
    for (ULONG i = 0; i < nsge; ++i) {
      if (sgl[i].Length == 0) continue;
      std::memcpy(dst + off, sgl[i].VirtualAddress, sgl[i].Length);
      off += sgl[i].Length;
    }
    s.wr.inline_data = dst;
    s.wr.nsge = 0;
  } else {
    // Every caller passes max_sge <= cfg_.sq_sge: the slot's SGL fits.
    s.wr.nsge = nsge;
    std::copy(sgl, sgl + nsge, sq_sge_.begin() + slot * cfg_.sq_sge);
  }
  if (!s.started) sq_unstarted_.store(true, std::memory_order_release);
  ++sq_tail_;
  deferred_pending_ = (wr.flags & NDK_OP_FLAG_DEFER) != 0;
  return STATUS_SUCCESS;
}

NTSTATUS Qp::send(void* ctx, const NDK_SGE* sgl, ULONG nsge, ULONG flags, bool invalidate,
                  uint32_t remote_token) {
  NTSTATUS s = check_initiator(flags, kSendFlags);
  if (s == STATUS_SUCCESS) {
    WorkRequestHead wr;
    wr.context = ctx;
    wr.type = NdkOperationTypeSend;
    wr.flags = flags;
    wr.remote_token = invalidate ? remote_token : 0;
    wr.stag = invalidate ? remote_token : 0;
    s = enqueue(std::move(wr), sgl, nsge, cfg_.sq_sge);
  }
  return s;
}

NTSTATUS Qp::write(void* ctx, const NDK_SGE* sgl, ULONG nsge, uint64_t addr, uint32_t token,
                   ULONG flags) {
  NTSTATUS s = check_initiator(flags, kWriteFlags);
  if (s == STATUS_SUCCESS) {
    WorkRequestHead wr;
    wr.context = ctx;
    wr.type = NdkOperationTypeWrite;
    wr.flags = flags;
    wr.remote_addr = addr;
    wr.remote_token = token;
    s = enqueue(std::move(wr), sgl, nsge, cfg_.sq_sge);
  }
  return s;
}

NTSTATUS Qp::read(void* ctx, const NDK_SGE* sgl, ULONG nsge, uint64_t addr, uint32_t token,
                  ULONG flags) {
  NTSTATUS s = check_initiator(flags, kReadFlags);
  if (s == STATUS_SUCCESS) {
    WorkRequestHead wr;
    wr.context = ctx;
    wr.type = NdkOperationTypeRead;
    wr.flags = flags;
    wr.remote_addr = addr;
    wr.remote_token = token;
    ULONG max = cfg_.sq_sge < adapter()->info().MaxReadRequestSge
                    ? cfg_.sq_sge
                    : adapter()->info().MaxReadRequestSge;
    s = enqueue(std::move(wr), sgl, nsge, max);
  }
  return s;
}

std::shared_ptr<provider::SrqEngine> Qp::srq_engine() const {
  return srq_ != nullptr ? srq_->engine() : nullptr;
}

NTSTATUS Qp::bind(void* ctx, Mr* mr, Mw* mw, uint64_t va, uint64_t length, ULONG flags) {
  NTSTATUS s = check_initiator(flags, kBindFlags);
  uint32_t stag = 0;
  uint32_t access = access_from_op_flags(flags);
  if (s == STATUS_SUCCESS && mw->pd() != pd_) s = STATUS_INVALID_PARAMETER;
  if (s == STATUS_SUCCESS) s = mw->prepare_bind(mr, va, length, access, &stag);
  if (s == STATUS_SUCCESS) {
    WorkRequestHead wr;
    wr.context = ctx;
    wr.type = NdkOperationTypeBind;
    wr.flags = flags;
    wr.mr = mr;
    wr.mw = mw;
    wr.stag = stag;
    wr.va = va;
    wr.access = access;
    wr.length = length;
    s = enqueue(std::move(wr), nullptr, 0, 0);
  }
  return s;
}

NTSTATUS Qp::fast_register(void* ctx, Mr* mr, ULONG pages, const NDK_LOGICAL_ADDRESS* page_array,
                           ULONG fbo, uint64_t length, uint64_t va, ULONG flags) {
  NTSTATUS s = check_initiator(flags, kFrFlags);
  uint32_t access = access_from_op_flags(flags);
  if (s == STATUS_SUCCESS) {
    if (!mr->fast_register() || mr->pd() != pd_ || mr->fr_page_budget() == 0 || pages == 0 ||
        pages > mr->fr_page_budget() || page_array == nullptr || fbo >= NDK_PAGE_SIZE ||
        length == 0 || length > static_cast<uint64_t>(pages) * NDK_PAGE_SIZE - fbo ||
        va % NDK_PAGE_SIZE != fbo) {
      s = STATUS_INVALID_PARAMETER;
    } else if ((access & (kAccessRemoteRead | kAccessRemoteWrite)) && !mr->fr_remote_allowed()) {
      s = STATUS_ACCESS_VIOLATION;
    }
  }
  uint32_t ticket = 0;
  if (s == STATUS_SUCCESS) s = mr->stage_fr_pages(page_array, pages, &ticket);
  if (s == STATUS_SUCCESS) {
    WorkRequestHead wr;
    wr.context = ctx;
    wr.type = NdkOperationTypeFastRegister;
    wr.flags = flags;
    wr.mr = mr;
    // The token stays the one NdkGetRemoteTokenFromMr gave after
    // NdkInitializeFastRegisterMr; the entry is re-validated over the new
    // range when the WR executes (rekeying is an open flag).
    // (A device engine's MR keeps its device token: provider.h v3.)
    wr.stag = adapter()->fr_rekey() && !adapter()->provider().registers_memory() ? mr->next_token()
                                                                                 : mr->token();
    wr.va = va;
    wr.fbo = fbo;
    wr.pages = pages;
    wr.fr_ticket = ticket;
    wr.access = access;
    wr.length = length;
    s = enqueue(std::move(wr), nullptr, 0, 0);
    if (s != STATUS_SUCCESS) mr->drop_fr_pages(ticket);
  }
  return s;
}

NTSTATUS Qp::invalidate(void* ctx, Object* target, ULONG flags) {
  NTSTATUS s = check_initiator(flags, kInvalidateFlags);
  WorkRequestHead wr;
  if (s == STATUS_SUCCESS) {
    if (target->type() == NdkObjectTypeMw) {
      auto* mw = static_cast<Mw*>(target);
      if (mw->pd() != pd_) s = STATUS_INVALID_PARAMETER;
      wr.mw = mw;
      wr.stag = mw->token();
    } else {
      auto* mr = static_cast<Mr*>(target);
      if (!mr->fast_register() || mr->pd() != pd_) s = STATUS_INVALID_PARAMETER;
      wr.mr = mr;
      wr.stag = mr->token();
    }
  }
  if (s == STATUS_SUCCESS) {
    wr.context = ctx;
    wr.type = NdkOperationTypeInvalidate;
    wr.flags = flags;
    s = enqueue(std::move(wr), nullptr, 0, 0);
  }
  return s;
}

NTSTATUS Qp::receive(void* ctx, const NDK_SGE* sgl, ULONG nsge) {
  if (srq_ != nullptr) return STATUS_INVALID_DEVICE_REQUEST;
  QpState st = state();
  if (st == QpState::kError || st == QpState::kClosing || rcq_->dead())
    return STATUS_CONNECTION_INVALID;
  if (nsge > cfg_.rq_sge || (nsge > 0 && sgl == nullptr)) return STATUS_INVALID_PARAMETER;
  uint64_t total = 0;
  for (ULONG i = 0; i < nsge; ++i) total += sgl[i].Length;
  if (total > adapter()->info().MaxTransferLength) return STATUS_INVALID_PARAMETER;
  {
    std::lock_guard lk(rq_mu_);
    st = state();  // again under the lock, as in enqueue()
    if (st == QpState::kError || st == QpState::kClosing) return STATUS_CONNECTION_INVALID;
    if (rq_count_ >= rq_.size()) return STATUS_INSUFFICIENT_RESOURCES;
    const size_t slot = (rq_head_ + rq_count_) % rq_.size();
    ReceiveHead& r = rq_[slot];
    r.context = ctx;
    r.nsge = nsge;
    r.length = total;
    std::copy(sgl, sgl + nsge, rq_sge_.begin() + slot * cfg_.rq_sge);
    ++rq_count_;
  }
  // The software data path takes receives from the ring when a Send
  // arrives: nothing to tell it (no transport call, no lock, per receive).
  // A device engine (verbs) posts each one to its device now.
  if (has_rq_notice_.load(std::memory_order_acquire)) {
    std::shared_ptr<QpTransport> e;
    {
      std::lock_guard lk(transport_mu_);
      e = rq_notice_;
    }
    if (e != nullptr) e->rq_posted();
  }
  return STATUS_SUCCESS;
}

}  // namespace softndk::ndk
