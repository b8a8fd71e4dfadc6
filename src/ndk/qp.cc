// SPDX-License-Identifier: Apache-2.0
// qp.cc - QP creation and limits, the transport attached to it, and the
// states it goes through (error, teardown). Posting: qp_post.cc; the data
// path's side (starting, completing, flushing requests): qp_completion.cc.
#include "ndk/qp.h"

#include <memory>
#include <utility>

#include "ndk/adapter.h"
#include "ndk/cq.h"
#include "ndk/dispatch.h"
#include "ndk/net_glue.h"
#include "ndk/pd.h"
#include "ndk/srq.h"

namespace softndk::ndk {

Qp::Qp(Pd* pd, Cq* rcq, Cq* icq, Srq* srq, const QpConfig& cfg)
    : Object(pd->adapter(), NdkObjectTypeQp, Resource::kQp),
      pd_(pd),
      rcq_(rcq),
      icq_(icq),
      srq_(srq),
      cfg_(cfg) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kQpDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

NTSTATUS Qp::create(Pd* pd, Cq* rcq, Cq* icq, Srq* srq, const QpConfig& cfg, Qp** out) {
  Adapter* a = pd->adapter();
  const NDK_ADAPTER_INFO& info = a->info();
  // CQs of another open of this interface work (one RNIC); of another
  // interface, not.
  if (!a->same_interface(rcq->adapter()) || !a->same_interface(icq->adapter()))
    return STATUS_INVALID_PARAMETER;
  if (srq != nullptr && srq->pd() != pd) return STATUS_INVALID_PARAMETER;
  if (cfg.sq_depth > info.MaxInitiatorQueueDepth) return STATUS_INVALID_PARAMETER;
  if (cfg.sq_sge > info.MaxInitiatorRequestSge) return STATUS_INVALID_PARAMETER;
  if (cfg.inline_size > info.MaxInlineDataSize) return STATUS_INVALID_PARAMETER;
  if (srq == nullptr) {
    if (cfg.rq_depth > info.MaxReceiveQueueDepth) return STATUS_INVALID_PARAMETER;
    if (cfg.rq_sge > info.MaxReceiveRequestSge) return STATUS_INVALID_PARAMETER;
  }
  auto qp = std::unique_ptr<Qp>(new Qp(pd, rcq, icq, srq, cfg));
  // Rings sized by this QP's own limits (depth x SGEs), not the adapter's.
  qp->sq_.resize(cfg.sq_depth);
  qp->sq_sge_.resize(static_cast<size_t>(cfg.sq_depth) * cfg.sq_sge);
  qp->inline_.resize(static_cast<size_t>(cfg.sq_depth) * cfg.inline_size);
  if (srq == nullptr) {
    qp->rq_.resize(cfg.rq_depth);
    qp->rq_sge_.resize(static_cast<size_t>(cfg.rq_depth) * cfg.rq_sge);
  }
  qp->depend_on(pd);
  qp->depend_on(rcq);
  qp->depend_on(icq);
  if (srq != nullptr) qp->depend_on(srq);
  *out = qp.release();
  return STATUS_SUCCESS;
}

ULONG Qp::sq_pending() {
  std::lock_guard lk(sq_mu_);
  return static_cast<ULONG>(sq_tail_ - sq_head_ + (direct_.active ? 1 : 0));
}

ULONG Qp::rq_pending() {
  std::lock_guard lk(rq_mu_);
  return static_cast<ULONG>(rq_count_);
}

void Qp::attach(std::shared_ptr<QpTransport> t) {
  {
    std::lock_guard lk(transport_mu_);
    transport_ = std::move(t);
  }
  set_state(QpState::kConnected);
}

void Qp::detach() {
  std::shared_ptr<QpTransport> t, n;  // released outside the lock
  std::lock_guard lk(transport_mu_);
  t.swap(transport_);
  has_rq_notice_.store(false, std::memory_order_release);
  n.swap(rq_notice_);
}

void Qp::set_receive_notice(std::shared_ptr<QpTransport> e) {
  std::shared_ptr<QpTransport> old;  // released outside the lock
  std::lock_guard lk(transport_mu_);
  has_rq_notice_.store(e != nullptr, std::memory_order_release);
  old = std::exchange(rq_notice_, std::move(e));
}

void Qp::set_trace(std::shared_ptr<util::PcapFile> file) {
  std::shared_ptr<QpTransport> t;
  {
    std::lock_guard lk(transport_mu_);
    trace_ = file;
    t = transport_;
  }
  if (t != nullptr) t->set_trace(QpTransport::kTraceQp, std::move(file));
}

std::shared_ptr<util::PcapFile> Qp::trace_file() {
  std::lock_guard lk(transport_mu_);
  return trace_;
}

std::shared_ptr<QpTransport> Qp::transport() {
  std::lock_guard lk(transport_mu_);
  return transport_;
}

void Qp::add_progress(std::shared_ptr<ProgressSource> s) {
  rcq_->add_progress(s);
  if (icq_ != rcq_) icq_->add_progress(std::move(s));
}

void Qp::remove_progress(const ProgressSource* s) {
  rcq_->remove_progress(s);
  if (icq_ != rcq_) icq_->remove_progress(s);
}

StagTable& Qp::stags() { return adapter()->stags(); }
Counters& Qp::adapter_counters() { return adapter()->counters(); }
std::shared_ptr<util::PcapFile> Qp::adapter_trace_file() { return adapter()->trace_file(); }

void Qp::kick(bool deferred, uint64_t bytes) {
  std::shared_ptr<QpTransport> t;
  {
    std::lock_guard lk(transport_mu_);
    t = transport_;
  }
  if (t != nullptr) t->sq_posted(deferred, bytes);
}

void Qp::kick_on_failure() {
  bool pending;
  {
    std::lock_guard lk(sq_mu_);
    pending = deferred_pending_;
    deferred_pending_ = false;
  }
  if (pending) kick(false);
}

void Qp::to_error() {
  QpState s = state();
  if (s != QpState::kClosing) set_state(QpState::kError);
  flush();
}

void Qp::set_holder(std::weak_ptr<ConnectorNet> c) {
  std::lock_guard lk(holder_mu_);
  holder_ = std::move(c);
}

void Qp::release_from_holder() {
  std::shared_ptr<ConnectorNet> c;
  {
    std::lock_guard lk(holder_mu_);
    c = std::exchange(holder_, {}).lock();
  }
  if (c) c->let_go_of(this);
}

void Qp::begin_teardown() {
  set_state(QpState::kClosing);
  flush();
}

}  // namespace softndk::ndk
