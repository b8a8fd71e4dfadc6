// SPDX-License-Identifier: Apache-2.0
// qp.cc - QP creation, posting into the rings, flush, data-path hand-off.
#include "ndk/qp.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "ndk/adapter.h"
#include "ndk/cq.h"
#include "ndk/dispatch.h"
#include "ndk/mr.h"
#include "ndk/mw.h"
#include "ndk/net_glue.h"
#include "ndk/pd.h"
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
