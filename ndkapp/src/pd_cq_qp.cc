// SPDX-License-Identifier: Apache-2.0
// pd_cq_qp.cc - the protection domain, the completion queue (busy-poll and
// event-mode waits) and the queue pair, each created and closed with
// bounded waits.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "session_internal.h"

namespace softndk::tools {

// ---------------------------------------------------------------------------
// PD

Pd::Pd(Adapter& a) : a_(a) {
  auto* p = new Pending;
  NDK_PD* pd = nullptr;
  NTSTATUS st = a.get()->Dispatch->NdkCreatePd(a.get(), &Pending::on_create, p, &pd);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) throw_status("NdkCreatePd", st);
  pd_ = pd ? pd : reinterpret_cast<NDK_PD*>(obj);
}

Pd::~Pd() {
  if (pd_) close_object(&pd_->Header, pd_->Dispatch->NdkClosePd, a_.close_timeout());
}

// ---------------------------------------------------------------------------
// CQ

struct Cq::Notify {
  std::mutex m;
  std::condition_variable cv;
  uint64_t count = 0;
  NTSTATUS status = STATUS_SUCCESS;
  std::atomic<bool> interrupted{false};  // sticky: see Cq::interrupt
};

void Cq::on_notify(PVOID ctx, NTSTATUS status) {
  auto* n = static_cast<Notify*>(ctx);
  std::lock_guard lk(n->m);
  ++n->count;
  if (status != STATUS_SUCCESS) n->status = status;
  n->cv.notify_all();
}

Cq::Cq(Adapter& a, ULONG depth) : a_(a), notify_(new Notify) {
  if (a.info().MaxCqDepth && depth > a.info().MaxCqDepth) depth = a.info().MaxCqDepth;
  auto* p = new Pending;
  NDK_CQ* cq = nullptr;
  NTSTATUS st = a.get()->Dispatch->NdkCreateCq(a.get(), depth, &Cq::on_notify, notify_, nullptr,
                                               &Pending::on_create, p, &cq);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) throw_status("NdkCreateCq", st);
  cq_ = cq ? cq : reinterpret_cast<NDK_CQ*>(obj);
}

Cq::~Cq() {
  // The notification state lives until the close has finished (after it no
  // callback can come); on a close timeout it is leaked.
  if (cq_ && !close_object(&cq_->Header, cq_->Dispatch->NdkCloseCq, a_.close_timeout())) return;
  delete notify_;
}

void Cq::interrupt() {
  std::lock_guard lk(notify_->m);
  notify_->interrupted = true;
  notify_->cv.notify_all();
}

uint64_t Cq::arm(ULONG type) {
  uint64_t seen;
  {
    std::lock_guard lk(notify_->m);
    seen = notify_->count;
  }
  cq_->Dispatch->NdkArmCq(cq_, type);
  return seen;
}

bool Cq::wait_notified(uint64_t ticket, Deadline deadline) {
  std::unique_lock lk(notify_->m);
  if (!notify_->cv.wait_until(lk, deadline,
                              [&] { return notify_->count != ticket || notify_->interrupted; }))
    return false;
  if (notify_->status == STATUS_BUFFER_OVERFLOW) throw ToolError("completion queue overrun");
  if (notify_->status != STATUS_SUCCESS) throw_status("completion queue failed", notify_->status);
  return true;
}

ULONG Cq::wait(NDK_RESULT* results, ULONG n, bool events, Deadline deadline, ULONG arm) {
  if (!events) {
    for (uint32_t spins = 0;; ++spins) {
      ULONG k = poll(results, n);
      if (k) return k;
      if (notify_->interrupted) return 0;
      if ((spins & 255) == 255 && Clock::now() >= deadline) return 0;
    }
  }
  for (;;) {
    ULONG k = poll(results, n);
    if (k) return k;
    uint64_t seen;
    {
      std::lock_guard lk(notify_->m);
      if (notify_->interrupted) return 0;
      seen = notify_->count;
    }
    cq_->Dispatch->NdkArmCq(cq_, arm);
    k = poll(results, n);  // a completion may have slipped in before the arm
    if (k) return k;
    std::unique_lock lk(notify_->m);
    if (!notify_->cv.wait_until(lk, deadline,
                                [&] { return notify_->count != seen || notify_->interrupted; }))
      return 0;
    if (notify_->interrupted && notify_->count == seen) {
      lk.unlock();
      return poll(results, n);  // whatever landed with the event, else 0
    }
    if (notify_->status == STATUS_BUFFER_OVERFLOW) throw ToolError("completion queue overrun");
    if (notify_->status != STATUS_SUCCESS) throw_status("completion queue failed", notify_->status);
  }
}

// ---------------------------------------------------------------------------
// QP

Qp::Qp(Adapter& a, Pd& pd, Cq& rcq, Cq& icq, void* context, const QpConfig& cfg) : a_(a) {
  const NDK_ADAPTER_INFO& in = a.info();
  auto check = [](ULONG want, ULONG max, const char* what) {
    if (max && want > max)
      throw ToolError(std::string(what) + " " + std::to_string(want) +
                      " is above the adapter's maximum " + std::to_string(max));
  };
  check(cfg.receive_depth, in.MaxReceiveQueueDepth, "receive queue depth");
  check(cfg.initiator_depth, in.MaxInitiatorQueueDepth, "TX depth");
  check(cfg.inline_size, in.MaxInlineDataSize, "inline size");
  auto* p = new Pending;
  NDK_QP* qp = nullptr;
  NTSTATUS st = pd.get()->Dispatch->NdkCreateQp(
      pd.get(), rcq.get(), icq.get(), context, cfg.receive_depth, cfg.initiator_depth, 1,
      cfg.initiator_sge, cfg.inline_size, &Pending::on_create, p, &qp);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) throw_status("NdkCreateQp", st);
  qp_ = qp ? qp : reinterpret_cast<NDK_QP*>(obj);
}

Qp::~Qp() {
  if (qp_) close_object(&qp_->Header, qp_->Dispatch->NdkCloseQp, a_.close_timeout());
}
}  // namespace softndk::tools
