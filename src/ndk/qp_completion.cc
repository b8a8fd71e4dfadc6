// SPDX-License-Identifier: Apache-2.0
// qp_completion.cc - the data path's side of a QP: the next request to
// start, completions (CQEs in posting order), receives taken from the RQ,
// and the flush that cancels whatever is still queued.
#include <algorithm>
#include <memory>

#include "ndk/cq.h"
#include "ndk/mr.h"
#include "ndk/qp.h"
#include "ndk/srq.h"

namespace softndk::ndk {

namespace {
NDK_RESULT_EX make_result(NTSTATUS status, ULONG bytes, void* qp_ctx, void* req_ctx,
                          NDK_OPERATION_TYPE type, ULONG_PTR type_specific = 0,
                          ULONG provider_error = 0) {
  NDK_RESULT_EX r{};
  r.Status = status;
  r.BytesTransferred = bytes;
  r.QPContext = qp_ctx;
  r.RequestContext = req_ctx;
  r.Type = type;
  r.ProviderErrorCode = status == STATUS_SUCCESS ? 0 : provider_error;
  r.TypeSpecificCompletionOutput = type_specific;
  return r;
}
}  // namespace

void Qp::flush() {
  std::shared_ptr<QpTransport> t;
  {
    std::lock_guard lk(transport_mu_);
    t = transport_;
  }
  if (t != nullptr) t->flushing();
  {
    // CQEs are pushed under the queue lock so they keep posting order
    // against concurrent data-path completions (lock order: QP -> CQ).
    std::lock_guard lk(sq_mu_);
    if (direct_.active) {
      // A slotless direct send (the ring was empty when it started): the
      // oldest request, cancelled first. Its sender finds it gone.
      icq_->push(make_result(STATUS_CANCELLED, 0, cfg_.context, direct_.context, direct_.type));
      counters_.cq_error.fetch_add(1, std::memory_order_relaxed);
      direct_.active = false;
    }
    for (uint64_t seq = sq_head_; seq < sq_tail_; ++seq) {
      const SqSlot& sl = sq_[seq % sq_.size()];
      const WorkRequestHead& wr = sl.wr;
      // A request the data path already finished (waiting only for an
      // earlier one to complete first) keeps its own result: above all the
      // error of the request whose failure is why the QP is flushed.
      if (sl.done) {
        if (!(sl.status == STATUS_SUCCESS && (wr.flags & NDK_OP_FLAG_SILENT_SUCCESS)))
          icq_->push(make_result(sl.status, sl.bytes, cfg_.context, wr.context, wr.type,
                                 sl.type_specific, sl.provider_error));
        continue;
      }
      icq_->push(make_result(STATUS_CANCELLED, 0, cfg_.context, wr.context, wr.type));
      counters_.cq_error.fetch_add(1, std::memory_order_relaxed);
      if (wr.type == NdkOperationTypeFastRegister)
        static_cast<Mr*>(wr.mr)->drop_fr_pages(wr.fr_ticket);
    }
    sq_head_ = sq_next_ = sq_tail_;
    sq_unstarted_.store(false, std::memory_order_relaxed);
    deferred_pending_ = false;
  }
  {
    std::lock_guard lk(rq_mu_);
    for (size_t i = 0; i < rq_count_; ++i) {
      const ReceiveHead& r = rq_[(rq_head_ + i) % rq_.size()];
      rcq_->push(
          make_result(STATUS_CANCELLED, 0, cfg_.context, r.context, NdkOperationTypeReceive));
      counters_.cq_error.fetch_add(1, std::memory_order_relaxed);
    }
    rq_head_ = 0;
    rq_count_ = 0;
  }
  if (t != nullptr) t->flushed();
}

bool Qp::sq_start(WorkRequest* out, uint64_t* seq, bool local_only) {
  if (!sq_unstarted_.load(std::memory_order_acquire)) return false;
  std::lock_guard lk(sq_mu_);
  if (sq_next_ >= sq_tail_) return false;
  const size_t slot = sq_next_ % sq_.size();
  SqSlot& s = sq_[slot];
  if (local_only && s.wr.type != NdkOperationTypeFastRegister &&
      s.wr.type != NdkOperationTypeBind && s.wr.type != NdkOperationTypeInvalidate)
    return false;
  s.started = true;
  static_cast<WorkRequestHead&>(*out) = s.wr;
  std::copy_n(sq_sge_.begin() + slot * cfg_.sq_sge, s.wr.nsge, out->sge);
  *seq = sq_next_++;
  if (sq_next_ == sq_tail_) sq_unstarted_.store(false, std::memory_order_relaxed);
  return true;
}

bool Qp::sq_complete(uint64_t seq, NTSTATUS status, ULONG bytes, ULONG_PTR type_specific,
                     ULONG provider_error) {
  std::lock_guard lk(sq_mu_);
  if (seq < sq_head_ || seq >= sq_next_) return false;  // flushed meanwhile
  SqSlot& s = sq_[seq % sq_.size()];
  s.done = true;
  s.status = status;
  s.bytes = bytes;
  s.type_specific = type_specific;
  s.provider_error = provider_error;
  while (sq_head_ < sq_next_ && sq_[sq_head_ % sq_.size()].done) {
    SqSlot& h = sq_[sq_head_ % sq_.size()];
    report_sq_locked(h.status, h.bytes, h.wr.context, h.wr.type, h.wr.flags, h.type_specific,
                     h.provider_error);
    ++sq_head_;
  }
  return true;
}

bool Qp::direct_finish(NTSTATUS status, ULONG bytes) {
  std::lock_guard lk(sq_mu_);
  if (!direct_.active) return false;  // flushed meanwhile
  direct_.active = false;
  report_sq_locked(status, bytes, direct_.context, direct_.type, direct_.flags, 0);
  return true;
}

void Qp::report_sq_locked(NTSTATUS status, ULONG bytes, void* ctx, NDK_OPERATION_TYPE type,
                          ULONG flags, ULONG_PTR type_specific, ULONG provider_error) {
  if (status == STATUS_SUCCESS && (flags & NDK_OP_FLAG_SILENT_SUCCESS)) return;
  if (status != STATUS_SUCCESS) counters_.cq_error.fetch_add(1, std::memory_order_relaxed);
  if (!icq_->push(
          make_result(status, bytes, cfg_.context, ctx, type, type_specific, provider_error)))
    set_state(QpState::kError);
}

bool Qp::rq_take(ReceiveRequest* out) {
  if (srq_ != nullptr) return srq_->take(out);
  std::lock_guard lk(rq_mu_);
  if (rq_count_ == 0) return false;
  static_cast<ReceiveHead&>(*out) = rq_[rq_head_];
  std::copy_n(rq_sge_.begin() + rq_head_ * cfg_.rq_sge, out->nsge, out->sge);
  rq_head_ = (rq_head_ + 1) % rq_.size();
  --rq_count_;
  return true;
}

bool Qp::rq_untake(const ReceiveRequest& r) {
  if (srq_ != nullptr || r.nsge > cfg_.rq_sge) return false;
  std::lock_guard lk(rq_mu_);
  if (rq_count_ >= rq_.size()) return false;
  rq_head_ = (rq_head_ + rq_.size() - 1) % rq_.size();
  rq_[rq_head_] = static_cast<const ReceiveHead&>(r);
  std::copy_n(r.sge, r.nsge, rq_sge_.begin() + rq_head_ * cfg_.rq_sge);
  ++rq_count_;
  return true;
}

void Qp::complete_receive(const ReceiveRequest& r, NTSTATUS status, ULONG bytes, bool solicited,
                          uint32_t invalidated_stag, ULONG provider_error) {
  NDK_OPERATION_TYPE type =
      invalidated_stag != 0 ? NdkOperationTypeReceiveAndInvalidate : NdkOperationTypeReceive;
  if (status != STATUS_SUCCESS) counters_.cq_error.fetch_add(1, std::memory_order_relaxed);
  if (!rcq_->push(make_result(status, bytes, cfg_.context, r.context, type, invalidated_stag,
                              provider_error),
                  solicited))
    set_state(QpState::kError);
}

}  // namespace softndk::ndk
