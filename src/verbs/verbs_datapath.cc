// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_datapath.cc - a verbs connection's QP engine: posting
// (ibv_post_send / ibv_post_recv), device completions into the object
// model's rings, flush and stop (verbs_backend.h).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "verbs/verbs_backend.h"

namespace softndk::verbs {

// ---- provider::QpEngine --------------------------------------------------------

void VerbsConnection::sq_posted(bool deferred, uint64_t bytes) {
  (void)bytes;
  posts_.fetch_add(1, std::memory_order_relaxed);  // on_cq_event: a consumer at work
  if (deferred) return;  // one doorbell with the next request that is not deferred
  std::lock_guard lk(mu_);
  post_sends_locked();
}

void VerbsConnection::rq_posted() {
  std::lock_guard lk(mu_);
  post_receives_locked();
}

void VerbsConnection::post_sends_locked() {
  if (host_ == nullptr || qp_ == nullptr || !attached_) return;
  batch_n_ = 0;
  // The connection's scratch request (sq_start fills what it uses): no
  // zeroing of a whole SGL per post.
  provider::WorkRequest& wr = sq_wr_;
  uint64_t seq = 0;
  while (host_->sq_start(&wr, &seq)) {
    SendRequest req;
    switch (wr.type) {
      case NdkOperationTypeSend:
        req.op = wr.remote_token != 0 ? SendOp::kSendAndInvalidate : SendOp::kSend;
        break;
      case NdkOperationTypeWrite:
        req.op = SendOp::kWrite;
        break;
      case NdkOperationTypeRead:
        req.op = SendOp::kRead;
        // The sink's token is the one to invalidate (NDKPI: the Read's
        // local invalidate drops the MR its SGE names).
        if ((wr.flags & NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE) && wr.nsge > 0) {
          req.local_token = wr.sge[0].MemoryRegionToken;
          // Invalid after the Read; a sink window that is not bound is
          // refused like NdkInvalidate of it (below).
          if (prov_->window_invalidate(req.local_token) == WindowStates::Invalidate::kRefuse) {
            host_->sq_complete(seq, STATUS_INVALID_PARAMETER, 0);
            continue;
          }
        }
        break;
      case NdkOperationTypeInvalidate:
        if (prov_->fr_support() == provider::Provider::FrSupport::kReregister) {
          reregister_locked(wr, seq);
          continue;
        }
        // A window that is not bound is refused here: the software
        // backend fails such an invalidate, and rxe (Linux 6.1) panics
        // on it (WindowStates, docs/verbs.md).
        if (prov_->window_invalidate(wr.stag) == WindowStates::Invalidate::kRefuse) {
          if (prov_->trace())
            std::fprintf(stderr,
                         "softndk verbs trace: qp 0x%x invalidate of window 0x%08x refused: "
                         "not bound\n",
                         qp_->qp_num, wr.stag);
          host_->sq_complete(seq, STATUS_INVALID_PARAMETER, 0);
          continue;
        }
        req.op = SendOp::kInvalidate;
        req.local_token = wr.stag;
        break;
      case NdkOperationTypeFastRegister:
        if (prov_->fr_support() == provider::Provider::FrSupport::kReregister) {
          reregister_locked(wr, seq);
          continue;
        }
        [[fallthrough]];
      case NdkOperationTypeBind: {
        SendWqes& w = batch_add();
        if (!build_window_bind(wr, seq, &w)) {
          --batch_n_;
          continue;
        }
        PostedRecord& rec = sends_.insert(seq);
        rec.request_context = wr.context;
        rec.type = wr.type;
        continue;
      }
      default:
        host_->sq_complete(seq, STATUS_NOT_SUPPORTED, 0);
        continue;
    }
    req.flags = wr.flags;
    // A fast-registered (window) token as a local SGE's token: the
    // arena's lkey for those bytes (verbs takes only MR lkeys in SGEs).
    if (prov_->fr_support() == provider::Provider::FrSupport::kWindows &&
        wr.inline_data == nullptr) {
      for (ULONG k = 0; k < wr.nsge; ++k) {
        uint32_t lkey = 0;
        if (prov_->window_sge_lkey(wr.sge[k].MemoryRegionToken,
                                   static_cast<uint64_t>(wr.sge[k].LogicalAddress.QuadPart),
                                   wr.sge[k].Length, &lkey))
          wr.sge[k].MemoryRegionToken = lkey;
      }
    }
    NDK_SGE one{};
    if (wr.inline_data != nullptr) {
      // The object model copied the inline payload into its ring slot.
      one.VirtualAddress = const_cast<uint8_t*>(wr.inline_data);
      one.Length = static_cast<ULONG>(wr.length);
      req.sgl = &one;
      req.nsge = wr.length > 0 ? 1 : 0;
    } else {
      req.sgl = wr.sge;
      req.nsge = wr.nsge;
    }
    req.remote_addr = wr.remote_addr;
    req.remote_token = wr.remote_token;
    req.wr_id = seq;
    SendWqes& w = batch_add();
    NTSTATUS st = build_send(req, lim_, &w);
    if (st != STATUS_SUCCESS) {
      --batch_n_;
      host_->sq_complete(seq, st, 0);
      continue;
    }
    if (w.coalesce_inline && wr.inline_data != nullptr)
      w.sge[0].addr = reinterpret_cast<uintptr_t>(wr.inline_data);
    // A silent success goes unsignaled (build_send): its record is retired
    // by the next completion of the queue (poll_locked), and SignalPolicy
    // signals one of a long run anyway (the object model suppresses that
    // CQE: the request is still silent).
    const bool signaled = signal_.signal(!w.signaled);
    if (signaled) w.wr[w.count - 1].send_flags |= IBV_SEND_SIGNALED;
    PostedRecord& rec = sends_.insert(seq);
    rec.signaled = signaled;
    rec.request_context = wr.context;
    rec.type = wr.type;
    rec.length = w.length;
  }
  post_batch_locked();
}

namespace {
// SOFTNDK_VERBS_TRACE: one line per send-queue WQE as posted.
void trace_post(uint32_t qpn, const ibv_send_wr& w) {
  uint32_t key = 0;
  if (w.opcode == IBV_WR_BIND_MW)
    key = w.bind_mw.rkey;
  else if (w.opcode == IBV_WR_LOCAL_INV || w.opcode == IBV_WR_SEND_WITH_INV)
    key = w.invalidate_rkey;
  else if (w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_READ)
    key = w.wr.rdma.rkey;
  std::fprintf(
      stderr, "softndk verbs trace: qp 0x%x post wr_id %llu opcode %d key 0x%08x flags 0x%x\n", qpn,
      static_cast<unsigned long long>(w.wr_id), static_cast<int>(w.opcode), key, w.send_flags);
}
// SOFTNDK_VERBS_TRACE: one line per device completion.
void trace_wc(uint32_t qpn, const ibv_wc& c) {
  std::fprintf(stderr,
               "softndk verbs trace: qp 0x%x wc wr_id %llu%s status %d (%s) vendor_err 0x%x "
               "opcode %d wc_flags 0x%x byte_len %u rkey 0x%08x\n",
               qpn, static_cast<unsigned long long>(c.wr_id & ~VerbsConnection::kRecvBit),
               (c.wr_id & VerbsConnection::kRecvBit) ? " (receive)" : "",
               static_cast<int>(c.status), ibv_wc_status_str(c.status), c.vendor_err,
               static_cast<int>(c.opcode), c.wc_flags, c.byte_len, c.invalidated_rkey);
}
}  // namespace

void VerbsConnection::post_batch_locked() {
  if (batch_n_ == 0) return;
  for (size_t i = 0; i + 1 < batch_n_; ++i)
    batch_[i].wr[batch_[i].count - 1].next = &batch_[i + 1].wr[0];
  if (prov_->trace()) {
    for (size_t i = 0; i < batch_n_; ++i)
      for (uint32_t k = 0; k < batch_[i].count; ++k) trace_post(qp_->qp_num, batch_[i].wr[k]);
  }
  ibv_send_wr* bad = nullptr;
  int rc = ibv_post_send(qp_, &batch_[0].wr[0], &bad);
  if (rc != 0) {
    // The WQE at `bad` and those after it never reached the device.
    bool failed = false;
    for (size_t i = 0; i < batch_n_; ++i) {
      SendWqes& w = batch_[i];
      if (&w.wr[0] == bad) failed = true;
      if (!failed) continue;
      uint64_t s = w.wr[0].wr_id;
      sends_.erase(s);
      host_->sq_complete(
          s, rc == ENOMEM ? STATUS_INSUFFICIENT_RESOURCES : STATUS_CONNECTION_INVALID, 0);
    }
  }
  batch_n_ = 0;
}

// The degraded mode (SOFTNDK_OPEN_FLAG_FR_REGISTER, provider.h v3): a
// FastRegister registers the pages anew (the MR's tokens change), an
// Invalidate of a fast-register MR deregisters. Both run here, in posting
// order: what was posted before goes to the device first.
void VerbsConnection::reregister_locked(const provider::WorkRequest& wr, uint64_t seq) {
  post_batch_locked();
  provider::MemoryObject* mr = wr.mr;
  NTSTATUS st = STATUS_SUCCESS;
  if (mr == nullptr) {
    st = STATUS_NOT_SUPPORTED;  // an NdkInvalidate of a window: no windows here
  } else if (wr.type == NdkOperationTypeInvalidate) {
    if (uint64_t h = mr->device_handle(); h != 0) {
      int rc = ibv_dereg_mr(reinterpret_cast<ibv_mr*>(static_cast<uintptr_t>(h)));
      if (rc != 0) {
        std::fprintf(stderr, "softndk verbs: degraded-mode invalidate: ibv_dereg_mr: %s\n",
                     std::strerror(rc));
        st = STATUS_INVALID_DEVICE_REQUEST;  // the registration stays valid: say so
      }
    }
    if (st == STATUS_SUCCESS) mr->set_device_keys(0, 0, 0);
  } else {
    std::vector<NDK_LOGICAL_ADDRESS> pages = mr->take_fr_pages(wr.fr_ticket);
    FrBind fb;
    st = pages.empty() ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
    if (st == STATUS_SUCCESS) {
      const uint64_t first = static_cast<uint64_t>(pages[0].QuadPart);
      st = plan_window_bind(pages.data(), static_cast<uint32_t>(pages.size()), wr.fbo, wr.length,
                            wr.va, first, uint64_t{pages.size()} * NDK_PAGE_SIZE, false, &fb);
    }
    ibv_mr* m = nullptr;
    if (st == STATUS_SUCCESS) {
      unsigned access = window_access(wr.flags, prov_->transport()) | IBV_ACCESS_LOCAL_WRITE;
      m = ibv_reg_mr_iova(prov_->pd(), reinterpret_cast<void*>(fb.addr), fb.length, fb.addr,
                          static_cast<int>(access));
      if (m == nullptr)
        st = errno == ENOMEM ? STATUS_INSUFFICIENT_RESOURCES : STATUS_INVALID_PARAMETER;
    }
    if (st == STATUS_SUCCESS) {
      if (uint64_t h = mr->device_handle(); h != 0)
        ibv_dereg_mr(reinterpret_cast<ibv_mr*>(static_cast<uintptr_t>(h)));
      mr->set_device_keys(m->lkey, m->rkey, reinterpret_cast<uintptr_t>(m));
    }
  }
  host_->sq_complete(seq, st, 0);
}

bool VerbsConnection::build_window_bind(const provider::WorkRequest& wr, uint64_t seq,
                                        SendWqes* w) {
  BindRequest b;
  b.fence = lim_.fence_local_ops;
  b.flags = wr.flags;
  b.wr_id = seq;
  NTSTATUS st = STATUS_SUCCESS;
  if (prov_->fr_support() != provider::Provider::FrSupport::kWindows) {
    st = STATUS_NOT_SUPPORTED;
  } else if (wr.type == NdkOperationTypeBind) {
    // NdkBind: the window over the NDK MR's own registration.
    b.mw =
        wr.mw ? reinterpret_cast<ibv_mw*>(static_cast<uintptr_t>(wr.mw->device_handle())) : nullptr;
    b.mr =
        wr.mr ? reinterpret_cast<ibv_mr*>(static_cast<uintptr_t>(wr.mr->device_handle())) : nullptr;
    b.addr = wr.va;
    b.length = wr.length;
  } else {
    // NdkFastRegister: the FR MR's window over the arena (NdkBuildLAM)
    // that holds the pages, at the region's own VA.
    b.mw =
        wr.mr ? reinterpret_cast<ibv_mw*>(static_cast<uintptr_t>(wr.mr->device_handle())) : nullptr;
    std::vector<NDK_LOGICAL_ADDRESS> pages =
        wr.mr ? wr.mr->take_fr_pages(wr.fr_ticket) : std::vector<NDK_LOGICAL_ADDRESS>{};
    FrBind fb;
    st = pages.empty() ? STATUS_INVALID_PARAMETER : STATUS_SUCCESS;
    if (st == STATUS_SUCCESS) {
      const uint64_t first = static_cast<uint64_t>(pages[0].QuadPart) + wr.fbo;
      b.mr = prov_->find_arena(first, wr.length);
      if (b.mr == nullptr) {
        st = STATUS_INVALID_PARAMETER;  // not pages of a LAM this adapter built
      } else {
        st = plan_window_bind(pages.data(), static_cast<uint32_t>(pages.size()), wr.fbo, wr.length,
                              wr.va, reinterpret_cast<uintptr_t>(b.mr->addr), b.mr->length,
                              prov_->zero_based(), &fb);
      }
    }
    b.addr = fb.addr;
    b.length = fb.length;
    b.zero_based = fb.zero_based;
  }
  if (st == STATUS_SUCCESS && b.mw != nullptr) b.rkey = b.mw->rkey;  // the token never changes
  if (st == STATUS_SUCCESS) st = build_bind(b, prov_->transport(), &w->wr[0]);
  if (st != STATUS_SUCCESS) {
    host_->sq_complete(seq, st, 0);
    return false;
  }
  prov_->window_bound(b.rkey);
  w->count = 1;
  w->deferred = (wr.flags & NDK_OP_FLAG_DEFER) != 0;
  return true;
}

void VerbsConnection::post_receives_locked() {
  if (host_ == nullptr || qp_ == nullptr || srq_) return;
  for (;;) {
    // Taken straight into its record's slot (no copy, no allocation).
    const uint64_t n = next_recv_;
    provider::ReceiveRequest& rr = recvs_.claim(n);
    if (!host_->rq_take(&rr)) {
      recvs_.erase(n);
      return;
    }
    ++next_recv_;
    RecvWqe w;
    NTSTATUS st = build_recv(rr.sge, rr.nsge, lim_, kRecvBit | n, &w);
    ibv_recv_wr* bad = nullptr;
    if (st == STATUS_SUCCESS && ibv_post_recv(qp_, &w.wr, &bad) != 0)
      st = STATUS_INSUFFICIENT_RESOURCES;
    if (st != STATUS_SUCCESS) {
      host_->complete_receive(rr, st, 0, false);
      recvs_.erase(n);
    }
  }
}

void VerbsConnection::return_receives_locked() {
  if (host_ != nullptr) {
    recvs_.for_each_reverse([this](uint64_t, const provider::ReceiveRequest& rr) {
      if (!host_->rq_untake(rr)) host_->complete_receive(rr, STATUS_CANCELLED, 0, false);
    });
  }
  recvs_.clear();
}

void VerbsConnection::cancel_receives_locked() {
  if (host_ == nullptr) {
    recvs_.clear();
    return;
  }
  recvs_.for_each([this](uint64_t, const provider::ReceiveRequest& rr) {
    host_->complete_receive(rr, STATUS_CANCELLED, 0, false);
  });
  recvs_.clear();
}

void VerbsConnection::flushing() {
  std::lock_guard lk(mu_);
  cancel_receives_locked();
}

void VerbsConnection::flushed() {
  std::lock_guard lk(mu_);
  // The device must not place data into buffers already reported
  // cancelled: the QP goes to error (docs/verbs.md: NdkFlush ends the
  // connection's data path on this backend).
  if (qp_ != nullptr) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp_, &a, IBV_QP_STATE);
  }
}

void VerbsConnection::stop() {
  provider::QpHost* h = nullptr;
  {
    std::lock_guard lk(mu_);
    // Receives on the device complete now (the QP's flush then cancels
    // what is still in the object model's rings).
    cancel_receives_locked();
    sends_.clear();
    h = host_;
    host_ = nullptr;
    attached_ = false;
  }
  if (h != nullptr) {
    h->set_receive_notice(nullptr);
    h->remove_progress(this);
    h->detach();
  }
}

// ---- completions ---------------------------------------------------------------

void VerbsConnection::complete_device_receive(const ibv_wc& c, const provider::ReceiveRequest& rr,
                                              NTSTATUS st) {
  // verbs reports no solicited bit: every receive may wake a solicited arm
  // (docs/verbs.md). rxe writes the kernel's flag bit for it
  // (invalidated_rkey_of).
  uint32_t inv = invalidated_rkey_of(c, prov_->wc_abi());
  if (inv != 0) prov_->window_peer_invalidated(inv);
  host_->complete_receive(rr, st, st == STATUS_SUCCESS ? c.byte_len : 0, true, inv,
                          provider_error_of(c));
}

void VerbsConnection::poll_locked() {
  if (cq_ == nullptr) return;
  constexpr int kBatch = 32;
  ibv_wc wc[kBatch];
  for (;;) {
    int n = ibv_poll_cq(cq_, kBatch, wc);
    if (n <= 0) return;
    for (int i = 0; i < n; ++i) {
      const ibv_wc& c = wc[i];
      if (prov_->trace()) trace_wc(qp_ != nullptr ? qp_->qp_num : 0, c);
      const NTSTATUS st = status_of(c.status);
      if (c.wr_id & kRecvBit) {
        if (c.wr_id & VerbsSrq::kSrqBit) {
          // A receive of the QP's SRQ (any of its QPs may have taken it).
          provider::ReceiveRequest rr;
          if (!srq_ || !srq_->finish(c.wr_id, &rr)) continue;
          if (host_ == nullptr) continue;
          complete_device_receive(c, rr, st);
        } else {
          const uint64_t num = c.wr_id & ~kRecvBit;
          const provider::ReceiveRequest* r = recvs_.find(num);
          if (r == nullptr) continue;  // cancelled already (flush, stop)
          // Completed from its slot, then dropped (nothing re-enters this
          // connection from complete_receive: mu_ is held).
          if (host_ != nullptr) complete_device_receive(c, *r, st);
          recvs_.erase(num);
        }
      } else {
        // An RC send queue completes its WQEs as they finish, in posting
        // order but for a Read (siw completes the WQEs behind a Read before
        // its response lands; build_send signals every Read), and an error
        // always has its own CQE (signaled or not), which comes first: the
        // unsignaled records older than this completion are silent
        // successes that finished. Retired here, in order, before this
        // one; they report no CQE (the object model drops a silent
        // success's) but free their ring slots. A signaled record waits for
        // its own CQE.
        if (!sends_.empty() && sends_.oldest() < c.wr_id) {
          sends_.retire_before(
              c.wr_id, [](const PostedRecord& r) { return !r.signaled; },
              [this](uint64_t seq, const PostedRecord& r) {
                if (host_ != nullptr)
                  host_->sq_complete(seq, STATUS_SUCCESS, static_cast<ULONG>(r.length));
              });
        }
        const PostedRecord* rec = sends_.find(c.wr_id);
        if (rec == nullptr) continue;
        const uint64_t len = rec->length;
        sends_.erase(c.wr_id);
        if (host_ == nullptr) continue;
        host_->sq_complete(c.wr_id, st, st == STATUS_SUCCESS ? static_cast<ULONG>(len) : 0, 0,
                           provider_error_of(c));
      }
    }
    // A short batch drained the CQ as it was: no second, empty poll on the
    // way back to the consumer who waits for what this one found (a
    // completion landing meanwhile is the next poll's, or notifies when
    // the CQ is armed: the arm precedes this poll, on_cq_event()).
    if (n < kBatch) return;
  }
}

// Polled mode. An armed device CQ costs every completion an interrupt
// path in the driver, a wake-up of the backend thread (completion channel,
// epoll) and that thread's re-arm and poll under mu_, racing the consumer
// that is busy-polling for the same completion. So once a consumer has
// polled kPolledAfter times since its last NdkArmCq, the backend thread
// stops re-arming: the consumer's polls take the completions (progress()).
// NdkArmCq (cq_armed) arms again, before the consumer waits; a watchdog on
// the backend thread arms again when nobody polled for a whole period.
// Its period starts at kPollWatchdogMs and doubles, up to
// kPollWatchdogMaxMs, for as long as the consumer keeps polling: each
// wake-up takes a CPU from a busy poller (a guest with as many vCPUs as
// pollers: docs/verbs.md "Performance"), and the watchdog only guards a
// consumer that stops polling without arming.
namespace {
constexpr uint64_t kPolledAfter = 32;
constexpr int kPollWatchdogMs = 10;
constexpr int kPollWatchdogMaxMs = 80;
}  // namespace

void VerbsConnection::arm_device_locked() {
  // Armed before the poll that follows: a completion after the poll
  // notifies.
  if (ibv_req_notify_cq(cq_, 0) == 0) device_armed_ = true;
}

void VerbsConnection::on_cq_event() {
  std::lock_guard lk(mu_);
  device_armed_ = false;  // this event used the request up
  if (cq_ == nullptr) return;
  // A consumer that polled or posted since the last event, and did not
  // arm, is at work polling: the device stays quiet and its polls take
  // what completes next (polled mode). Without this, a consumer whose
  // polls keep finding what this thread delivered (bandwidth: each
  // completion answered by a post) rarely runs progress() - the NDK CQ
  // runs it on an empty poll and on every 16th that found results - and
  // never reaches kPolledAfter: every completion then costs an event, a
  // wake-up of this thread, a re-arm and a hand-over of mu_ with the
  // posting consumer (ndkperf write_bw on rxe: 2.4 futex calls, 0.5
  // epoll_wait and 0.6 re-arm per Write). One that armed waits for
  // notifications: the device is re-armed here, off its path, and its
  // next NdkArmCq finds it armed. One that neither polls nor arms has its
  // completions taken when the watchdog re-arms.
  const uint64_t seen = activity();
  const uint64_t arms = arms_.load(std::memory_order_relaxed);
  const bool polled_since = seen != event_seen_ && arms == event_arms_;
  event_seen_ = seen;
  event_arms_ = arms;
  if (!polled_.load(std::memory_order_seq_cst)) {
    if (srq_ == nullptr && polled_since) {
      polled_.store(true, std::memory_order_seq_cst);
      start_watchdog();
    } else {
      arm_device_locked();
    }
  }
  poll_locked();
}

void VerbsConnection::progress() {
  uint64_t polls = polls_.load(std::memory_order_relaxed) + 1;
  polls_.store(polls, std::memory_order_relaxed);
  std::unique_lock lk(mu_, std::try_to_lock);
  if (!lk.owns_lock()) return;
  // A QP on an SRQ stays notified: any number of the SRQ's receives may
  // complete on its device CQ, which is sized for the QP's own requests,
  // so the backend thread keeps draining it.
  if (srq_ == nullptr && !polled_.load(std::memory_order_relaxed) &&
      polls - arm_mark_.load(std::memory_order_relaxed) >= kPolledAfter)
    enter_polled();
  poll_locked();
}

void VerbsConnection::cq_armed() {
  // The consumer is about to wait for a notification: the device notifies
  // again, and what completed before the arm is taken now (the NDK CQ's
  // arm then fires for it).
  arms_.fetch_add(1, std::memory_order_relaxed);
  arm_mark_.store(polls_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  polled_.store(false, std::memory_order_seq_cst);
  std::lock_guard lk(mu_);
  if (cq_ == nullptr) return;
  if (!device_armed_) arm_device_locked();
  poll_locked();
}

void VerbsConnection::enter_polled() {
  if (polled_.exchange(true, std::memory_order_seq_cst)) return;
  std::weak_ptr<VerbsConnection> weak = weak_from_this();
  prov_->loop().post([weak] {
    if (auto c = weak.lock()) c->start_watchdog();
  });
}

void VerbsConnection::start_watchdog() {
  // A new polled period watches closely first.
  if (!watchdog_on_) watchdog_ms_ = kPollWatchdogMs;
  watch_polling();
}

void VerbsConnection::watch_polling() {
  if (watchdog_on_ || !polled_.load(std::memory_order_seq_cst)) return;
  watchdog_on_ = true;
  watchdog_seen_ = activity();
  if (watchdog_ms_ < kPollWatchdogMs) watchdog_ms_ = kPollWatchdogMs;
  std::weak_ptr<VerbsConnection> weak = weak_from_this();
  prov_->loop().after(watchdog_ms_, [weak] {
    if (auto c = weak.lock()) c->poll_watchdog();
  });
}

void VerbsConnection::poll_watchdog() {
  watchdog_on_ = false;
  if (!polled_.load(std::memory_order_seq_cst)) return;
  if (activity() != watchdog_seen_) {
    // Still polling (or posting: a post of a large Write into rxe can take
    // longer than a period, and the poll follows it): look again, less
    // often.
    watchdog_ms_ = std::min(watchdog_ms_ * 2, kPollWatchdogMaxMs);
    watch_polling();
    return;
  }
  // Nobody polled or posted for a whole period: the device notifies again.
  arm_mark_.store(polls_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  polled_.store(false, std::memory_order_seq_cst);
  std::lock_guard lk(mu_);
  if (cq_ == nullptr) return;
  if (!device_armed_) arm_device_locked();
  poll_locked();
}

}  // namespace softndk::verbs
