// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_connection.cc - one RC connection over rdma_cm and its QP
// engine (verbs_backend.h).
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "verbs/verbs_backend.h"

namespace softndk::verbs {

namespace {

provider::Address address_of(const sockaddr* sa) {
  socklen_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  auto a = provider::Address::from(sa, len);
  return a ? *a : provider::Address{};
}
}  // namespace

VerbsConnection::VerbsConnection(VerbsProvider* p, provider::QpHost* qp) : prov_(p), host_(qp) {}

VerbsConnection::~VerbsConnection() = default;

CmPhase VerbsConnection::cm_phase() const {
  switch (phase_) {
    case Phase::kResolvingAddr:
      return CmPhase::kResolvingAddr;
    case Phase::kResolvingRoute:
      return CmPhase::kResolvingRoute;
    case Phase::kConnecting:
      return CmPhase::kConnecting;
    case Phase::kAccepting:
      return CmPhase::kAccepting;
    case Phase::kDisconnecting:
      return CmPhase::kDisconnecting;
    default:
      return CmPhase::kEstablished;
  }
}

// ---- setup -------------------------------------------------------------------

NTSTATUS VerbsConnection::create_qp() {
  provider::QpHost::Shape s = host_->shape();
  const uint32_t sq = std::max<uint32_t>(s.sq_depth, 1) * kWqesPerRequest;
  // A QP on an SRQ: any number of the SRQ's receives, up to its depth, can
  // complete on this QP's CQ, so the CQ is sized for all of them (sized for
  // the QP's own receives it could overflow, which ends the QP on the device).
  std::shared_ptr<VerbsSrq> srq;
  if (s.srq) {
    // The NDK SRQ's device SRQ (provider.h v3): the QP takes its receives
    // from it; this connection holds it until the QP is destroyed.
    srq = std::dynamic_pointer_cast<VerbsSrq>(host_->srq_engine());
    if (!srq) return STATUS_INVALID_PARAMETER;
  }
  const uint32_t srq_depth = srq ? srq->depth() : 0;
  const uint32_t rq = srq ? std::max<uint32_t>(srq_depth, 1) : std::max<uint32_t>(s.rq_depth, 1);
  cq_ = ibv_create_cq(id_->verbs, static_cast<int>(srq_qp_cq_entries(sq, rq)), this,
                      prov_->comp_channel(), 0);
  if (cq_ == nullptr) return STATUS_INSUFFICIENT_RESOURCES;
  prov_->cq_created(cq_, weak_from_this());
  ibv_req_notify_cq(cq_, 0);
  ibv_qp_init_attr qa{};
  qa.send_cq = cq_;
  qa.recv_cq = cq_;
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 0;
  qa.cap.max_send_wr = sq;
  qa.cap.max_recv_wr = rq;
  qa.cap.max_send_sge = std::max<uint32_t>(s.sq_sge, 1);
  qa.cap.max_recv_sge = std::max<uint32_t>(s.rq_sge, 1);
  qa.cap.max_inline_data = s.inline_size;
  if (srq) {
    qa.srq = srq->srq();
    qa.cap.max_recv_wr = 0;
    qa.cap.max_recv_sge = 0;
  }
  if (rdma_create_qp(id_, prov_->pd(), &qa) != 0) return STATUS_INSUFFICIENT_RESOURCES;
  if (srq) srq->cq_attached(cq_, sq, srq_depth);  // grown with the SRQ (NdkModifySrq)
  std::lock_guard lk(mu_);
  srq_ = std::move(srq);
  qp_ = id_->qp;
  lim_.send_sge = std::max<uint32_t>(s.sq_sge, 1);
  lim_.recv_sge = std::max<uint32_t>(s.rq_sge, 1);
  lim_.read_sge = std::min(lim_.send_sge, prov_->read_sge());
  lim_.max_inline = qa.cap.max_inline_data;
  lim_.max_transfer = prov_->info().MaxTransferLength;
  // LOCAL_INV from user space goes with type-2 windows (verbs_map.h).
  lim_.local_inv = prov_->fr_support() == provider::Provider::FrSupport::kWindows;
  lim_.fence_local_ops = prov_->fence_local_ops();
  signal_ = SignalPolicy(s.sq_depth);
  // Receives queued before the connection (the usual NDK order) go to the
  // device now, before the peer can send; later ones as they are posted.
  post_receives_locked();
  return STATUS_SUCCESS;
}

void VerbsConnection::fill_addresses() {
  facts_.local = address_of(rdma_get_local_addr(id_));
  facts_.peer = address_of(rdma_get_peer_addr(id_));
  if (!prov_->trace() || qp_ == nullptr) return;
  // SOFTNDK_VERBS_TRACE: the transport attributes rdma_cm gave the QP (the
  // ACK timeout decides what a lost or late ACK costs: docs/verbs.md
  // "Performance", a perftest run without rdma_cm sets its own).
  ibv_qp_attr a{};
  ibv_qp_init_attr ia{};
  const int mask = IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_PATH_MTU |
                   IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  if (ibv_query_qp(qp_, &a, mask, &ia) == 0)
    std::fprintf(stderr,
                 "softndk verbs trace: qp 0x%x established: timeout %u retry_cnt %u rnr_retry %u "
                 "path_mtu %d max_rd_atomic %u max_dest_rd_atomic %u min_rnr_timer %u "
                 "max_inline %u\n",
                 qp_->qp_num, a.timeout, a.retry_cnt, a.rnr_retry, 128 << a.path_mtu,
                 a.max_rd_atomic, a.max_dest_rd_atomic, a.min_rnr_timer, ia.cap.max_inline_data);
}

void VerbsConnection::start_connect(provider::ConnectArgs args,
                                    std::function<void(provider::ConnectResult)> done) {
  connect_done_ = std::move(done);
  want_ird_ = args.ird;
  want_ord_ = args.ord;
  pending_pd_ = std::move(args.private_data);  // sent with rdma_connect
  if (rdma_create_id(prov_->channel(), &id_, nullptr, RDMA_PS_TCP) != 0) {
    fail_connect(STATUS_INSUFFICIENT_RESOURCES, false, {});
    return;
  }
  prov_->own(id_, shared_from_this());
  sockaddr_storage src = prov_->local_address();
  if (args.shared) {
    int one = 1;
    rdma_set_option(id_, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof one);
    provider::Address l = args.shared->local();
    std::memcpy(&src, l.sa(), l.len);
  } else if (!args.src.empty()) {
    std::memcpy(&src, args.src.sa(), args.src.len);
    if (args.src.is_any()) {
      // Any address of this adapter: its own (rdma_cm then uses its device).
      uint16_t port = args.src.port();
      src = prov_->local_address();
      reinterpret_cast<sockaddr_in*>(&src)->sin_port = htons(port);
    }
  } else {
    reinterpret_cast<sockaddr_in*>(&src)->sin_port = 0;
  }
  if (rdma_bind_addr(id_, reinterpret_cast<sockaddr*>(&src)) != 0) {
    fail_connect(status_of_errno(-errno, STATUS_ADDRESS_ALREADY_EXISTS), false, {});
    return;
  }
  phase_ = Phase::kResolvingAddr;
  // The whole NdkConnect is bounded by the adapter's ConnectTimeoutMs (the
  // CM's own retries can take minutes on iWARP).
  auto self = shared_from_this();
  const int bound = static_cast<int>(prov_->config().params.ConnectTimeoutMs);
  connect_timer_ = prov_->loop().after(bound > 0 ? bound : 10000, [self] {
    self->connect_timer_ = 0;
    if (self->connect_done_) self->fail_connect(STATUS_IO_TIMEOUT, false, {});
  });
  const int ms = static_cast<int>(std::min<ULONG>(prov_->config().params.ConnectTimeoutMs, 10000));
  if (rdma_resolve_addr(id_, nullptr, const_cast<sockaddr*>(args.dst.sa()), ms) != 0) {
    fail_connect(status_of_errno(-errno, STATUS_HOST_UNREACHABLE), false, {});
    return;
  }
}

void VerbsConnection::cancel_connect() {
  if (connect_done_) fail_connect(STATUS_CANCELLED, false, {});
}

void VerbsConnection::fail_connect(NTSTATUS st, bool rejected, std::vector<uint8_t> pd) {
  if (connect_timer_ != 0) prov_->loop().cancel(std::exchange(connect_timer_, 0));
  {
    std::lock_guard lk(mu_);
    if (host_ != nullptr) host_->set_receive_notice(nullptr);
    return_receives_locked();  // the QP stays Idle with its receives
    host_ = nullptr;
  }
  closed_ = true;
  destroy();
  provider::ConnectResult r;
  r.status = st;
  r.rejected = rejected;
  r.peer_private_data = std::move(pd);
  r.setup_phase = SOFTNDK_SETUP_NONE;
  auto done = std::move(connect_done_);
  connect_done_ = nullptr;
  if (done) done(std::move(r));
}

bool VerbsConnection::iwarp() const {
  return id_ != nullptr && id_->verbs != nullptr &&
         id_->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
}

void VerbsConnection::start_accept(
    rdma_cm_id* id, uint16_t ird, uint16_t ord, CmReadLimits peer, std::vector<uint8_t> pd,
    std::function<void(NTSTATUS, std::shared_ptr<provider::Connection>)> cb) {
  id_ = id;
  prov_->own(id_, shared_from_this());
  accept_done_ = std::move(cb);
  NTSTATUS st = create_qp();
  if (st == STATUS_SUCCESS) {
    std::lock_guard lk(mu_);
    if (host_ != nullptr) host_->set_receive_notice(shared_from_this());
  }
  rdma_conn_param cp{};
  cp.private_data = pd.empty() ? nullptr : pd.data();
  cp.private_data_len = static_cast<uint8_t>(pd.size());
  // The accepted limits are the consumer's, lowered to the request's (the
  // peer's ORD bounds our IRD, its IRD our ORD), as on the software backend.
  ird = effective_read_limit(ird, peer.inbound);
  ord = effective_read_limit(ord, peer.outbound);
  cp.responder_resources = static_cast<uint8_t>(std::min<uint16_t>(ird, 255));
  cp.initiator_depth = static_cast<uint8_t>(std::min<uint16_t>(ord, 255));
  cp.retry_count = 7;
  cp.rnr_retry_count = 7;
  facts_.ird = cp.responder_resources;
  facts_.ord = cp.initiator_depth;
  if (st == STATUS_SUCCESS && rdma_accept(id_, &cp) != 0)
    st = status_of_errno(-errno, STATUS_CONNECTION_ABORTED);
  if (st != STATUS_SUCCESS) {
    {
      std::lock_guard lk(mu_);
      if (host_ != nullptr) host_->set_receive_notice(nullptr);
      return_receives_locked();
      host_ = nullptr;
    }
    rdma_reject(id_, nullptr, 0);
    closed_ = true;
    destroy();
    auto done = std::move(accept_done_);
    accept_done_ = nullptr;
    done(st, nullptr);
    return;
  }
  phase_ = Phase::kAccepting;
}

void VerbsConnection::on_cm_event(const CmEvent& e) {
  if (id_ == nullptr) return;  // destroyed; its id is on its way out
  CmOutcome o = translate_cm_event(e.type, e.status, cm_phase());
  switch (o.action) {
    case CmAction::kNextResolveRoute: {
      phase_ = Phase::kResolvingRoute;
      if (rdma_resolve_route(id_, 2000) != 0)
        fail_connect(status_of_errno(-errno, STATUS_HOST_UNREACHABLE), false, {});
      return;
    }
    case CmAction::kNextConnect: {
      NTSTATUS st = create_qp();
      if (st != STATUS_SUCCESS) return fail_connect(st, false, {});
      {
        std::lock_guard lk(mu_);
        if (host_ != nullptr) host_->set_receive_notice(shared_from_this());
      }
      rdma_conn_param cp{};
      cp.private_data = pending_pd_.empty() ? nullptr : pending_pd_.data();
      cp.private_data_len = static_cast<uint8_t>(pending_pd_.size());
      cp.responder_resources = static_cast<uint8_t>(std::min<uint16_t>(want_ird_, 255));
      cp.initiator_depth = static_cast<uint8_t>(std::min<uint16_t>(want_ord_, 255));
      cp.retry_count = 7;
      cp.rnr_retry_count = 7;
      phase_ = Phase::kConnecting;
      if (rdma_connect(id_, &cp) != 0)
        fail_connect(status_of_errno(-errno, STATUS_CONNECTION_REFUSED), false, {});
      return;
    }
    case CmAction::kComplete:
      if (phase_ == Phase::kConnecting || phase_ == Phase::kResolvingAddr ||
          phase_ == Phase::kResolvingRoute) {
        if (o.status == STATUS_SUCCESS) {
          phase_ = Phase::kEstablished;
          if (connect_timer_ != 0) prov_->loop().cancel(std::exchange(connect_timer_, 0));
          // What the peer answered, lowered, never raised (which field holds
          // which limit depends on the transport: verbs_map.h).
          const CmReadLimits pl =
              cm_read_limits(iwarp(), false, e.initiator_depth, e.responder_resources);
          facts_.ird = effective_read_limit(want_ird_, pl.inbound);
          facts_.ord = effective_read_limit(want_ord_, pl.outbound);
          peer_pd_ = e.private_data;
          fill_addresses();
          provider::ConnectResult r;
          r.connection = shared_from_this();
          auto done = std::move(connect_done_);
          connect_done_ = nullptr;
          if (done) done(std::move(r));
        } else {
          fail_connect(o.status, e.type == RDMA_CM_EVENT_REJECTED, e.private_data);
        }
      } else if (phase_ == Phase::kAccepting) {
        auto done = std::move(accept_done_);
        accept_done_ = nullptr;
        if (o.status == STATUS_SUCCESS) {
          phase_ = Phase::kEstablished;
          fill_addresses();
          if (done) done(STATUS_SUCCESS, shared_from_this());
        } else {
          {
            std::lock_guard lk(mu_);
            if (host_ != nullptr) host_->set_receive_notice(nullptr);
            return_receives_locked();
            host_ = nullptr;
          }
          closed_ = true;
          destroy();
          if (done) done(o.status, nullptr);
        }
      } else if (phase_ == Phase::kDisconnecting) {
        phase_ = Phase::kClosed;
        closed_ = true;
        prov_->loop().cancel(disconnect_timer_);
        auto cb = std::move(disconnect_cb_);
        disconnect_cb_ = nullptr;
        if (cb) cb(STATUS_SUCCESS);
      }
      return;
    case CmAction::kPeerDisconnected: {
      if (phase_ != Phase::kEstablished) return;
      phase_ = Phase::kClosed;
      closed_ = true;
      {
        // What arrived before the peer's disconnect completes before the
        // disconnect event (the consumer may take the event as the end of
        // its data): the CQ may hold completions the channel has not yet
        // reported when the CM event comes first.
        std::lock_guard lk(mu_);
        poll_locked();
      }
      // Our half of the close (IB: the DREP), and the QP to error so the
      // device flushes what is outstanding (STATUS_CANCELLED each).
      rdma_disconnect(id_);
      peer_disconnected_ = true;
      if (!peer_closed_ && peer_close_cb_) {
        peer_closed_ = true;
        auto cb = peer_close_cb_;
        cb(STATUS_CONNECTION_DISCONNECTED);
      }
      return;
    }
    case CmAction::kDeviceRemoved: {
      closed_ = true;
      if (phase_ == Phase::kEstablished && !peer_closed_) {
        peer_closed_ = true;
        if (peer_close_cb_) peer_close_cb_(STATUS_CONNECTION_RESET);
      }
      return;
    }
    default:
      return;
  }
}

// ---- provider::Connection ------------------------------------------------------

void VerbsConnection::post(std::function<void()> fn) { prov_->loop().post(std::move(fn)); }

std::shared_ptr<provider::QpEngine> VerbsConnection::start(provider::QpHost* qp, bool initiator) {
  (void)initiator;  // rdma_cm finished the handshake (NdkCompleteConnect: docs/verbs.md)
  std::lock_guard lk(mu_);
  if (closed_.load() || qp_ == nullptr || host_ == nullptr || qp != host_) return nullptr;
  attached_ = true;
  auto self = shared_from_this();
  host_->attach(self);
  host_->add_progress(self);
  post_receives_locked();
  return self;
}

void VerbsConnection::on_peer_close(std::function<void(NTSTATUS)> cb) {
  auto self = shared_from_this();
  prov_->loop().post([self, cb = std::move(cb)] {
    self->peer_close_cb_ = cb;
    if (self->peer_disconnected_ && !self->peer_closed_) {  // it came first
      self->peer_closed_ = true;
      cb(STATUS_CONNECTION_DISCONNECTED);
    }
  });
}

void VerbsConnection::disconnect(std::function<void(NTSTATUS)> cb) {
  auto self = shared_from_this();
  prov_->loop().post([self, cb = std::move(cb)] {
    self->peer_closed_ = true;  // no event after our own disconnect
    if (self->id_ == nullptr || self->phase_ == Phase::kClosed) {
      cb(STATUS_SUCCESS);
      return;
    }
    self->phase_ = Phase::kDisconnecting;
    self->disconnect_cb_ = cb;
    rdma_disconnect(self->id_);
    int ms = static_cast<int>(self->prov_->config().params.DisconnectTimeoutMs);
    self->disconnect_timer_ = self->prov_->loop().after(ms > 0 ? ms : 5000, [self] {
      auto c = std::move(self->disconnect_cb_);
      self->disconnect_cb_ = nullptr;
      self->phase_ = Phase::kClosed;
      self->closed_ = true;
      if (c) c(STATUS_IO_TIMEOUT);
    });
  });
}

void VerbsConnection::abort() {
  {
    std::lock_guard lk(mu_);
    if (host_ != nullptr && !attached_) {
      // Never started (the connector was closed meanwhile): the receives
      // it took go back to the QP, still held for us.
      host_->set_receive_notice(nullptr);
      return_receives_locked();
      host_ = nullptr;
    }
  }
  closed_ = true;
  auto self = shared_from_this();
  prov_->loop().post([self] {
    self->peer_closed_ = true;
    if (self->disconnect_cb_) {
      auto c = std::move(self->disconnect_cb_);
      self->disconnect_cb_ = nullptr;
      c(STATUS_CONNECTION_ABORTED);
    }
    self->destroy();
  });
}

void VerbsConnection::destroy() {
  phase_ = Phase::kClosed;
  closed_ = true;
  ibv_cq* cq = nullptr;
  std::shared_ptr<VerbsSrq> srq;
  {
    std::lock_guard lk(mu_);  // consumers poll and post under it
    qp_ = nullptr;
    cq = std::exchange(cq_, nullptr);
    srq = std::move(srq_);
  }
  if (cq != nullptr && srq) srq->cq_detached(cq);
  if (cq != nullptr) prov_->cq_gone(cq);  // its late events are dropped
  rdma_cm_id* id = std::exchange(id_, nullptr);
  if (id == nullptr) {
    if (cq != nullptr) ibv_destroy_cq(cq);
    return;
  }
  // The QP, CQ and id of a connection whose connect is still pending go in
  // the kernel only once the CM gives up (siw: rdma_destroy_qp and
  // rdma_destroy_id wait for the MPA timeout, many seconds), so they are
  // destroyed on the loop's blocking lane and the loop serves every other
  // object meanwhile. The id stays owned (its late events find this object
  // closed) until it is gone; then the loop disowns it. The Loop itself is
  // captured, not prov_->loop(): while the provider closes, its loop
  // pointer is already reset when the Loop's destructor drains this lane.
  VerbsProvider* p = prov_;
  Loop* loop = &p->loop();
  const CmHandler* me = this;
  loop->post_blocking([p, loop, id, cq, srq = std::move(srq), me]() mutable {
    if (id->qp != nullptr) rdma_destroy_qp(id);
    // SRQ receives this QP consumed but nobody polled: their slots of the
    // NDK SRQ's depth come back (VerbsSrq::finish; the QP is gone, so is
    // its completion).
    if (srq && cq != nullptr) {
      ibv_wc wc[16];
      provider::ReceiveRequest rr;
      for (int n; (n = ibv_poll_cq(cq, 16, wc)) > 0;)
        for (int i = 0; i < n; ++i)
          if ((wc[i].wr_id & kRecvBit) && (wc[i].wr_id & VerbsSrq::kSrqBit))
            srq->finish(wc[i].wr_id, &rr);
    }
    // After its QP the device SRQ may go, released on the loop thread.
    if (srq) loop->post([s = std::move(srq)] {});
    if (cq != nullptr) ibv_destroy_cq(cq);
    rdma_destroy_id(id);
    // may drop the last reference to this object: last
    loop->post([p, id, me] { p->disown_if(id, me); });
  });
}

void VerbsConnection::query_path(SOFTNDK_PATH_INFO* out) {
  *out = {};
  out->Path = SOFTNDK_PATH_TCP;  // no path enumeration for a device: its wire
}

}  // namespace softndk::verbs
