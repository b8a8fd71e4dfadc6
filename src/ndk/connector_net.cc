// SPDX-License-Identifier: Apache-2.0
// connector_net.cc - NdkConnect / CompleteConnect / Accept / Reject /
// Disconnect on top of the provider's connections (net_glue.h).
// The queries and fault injection of a connection are in connector_query.cc.
//
// Choices (docs/connections.md, "NDK glue"):
//  - Connect, CompleteConnect, Accept and Disconnect always return
//    STATUS_PENDING when they start; the completion runs on a reactor.
//  - CompleteConnect sends the RTR (P2P) and starts the stream on the
//    connection's reactor, so the RTR is the first FPDU on the wire.
//  - Disconnect flushes the QP (STATUS_CANCELLED for everything still
//    queued) before completing the request, so the flushed completions are
//    visible when the consumer learns the disconnect finished.
//  - The _EX disconnect event reason is 0 for a graceful close (FIN) and the
//    NTSTATUS of the cause otherwise (STATUS_CONNECTION_RESET, ...).
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "ndk/adapter.h"
#include "ndk/endpoint_address.h"
#include "ndk/endpoint_reservation.h"
#include "ndk/endpoints.h"
#include "ndk/net_glue.h"
#include "ndk/qp.h"

namespace softndk::ndk {

namespace {

uint16_t cap_limit(ULONG v, uint32_t max) { return static_cast<uint16_t>(std::min<ULONG>(v, max)); }

void to_storage(const util::SockAddr& a, sockaddr_storage* out) {
  std::memset(out, 0, sizeof *out);
  std::memcpy(out, &a.ss, a.len);
}

}  // namespace

ConnectorNet::ConnectorNet(Connector* c) : obj_(c), adapter_(c->adapter()) {}

void ConnectorNet::complete(NDK_FN_REQUEST_COMPLETION done, void* ctx, NTSTATUS st) {
  if (done != nullptr) done(ctx, st);
  obj_->release();
}

void ConnectorNet::bind_qp(Qp* qp) {
  if (qp_ == qp) return;
  qp->hold();
  qp->set_holder(weak_from_this());
  if (qp_ != nullptr) qp_->release();
  qp_ = qp;
}

void ConnectorNet::let_go_of(Qp* qp) {
  // A connector of the QP's own instance closes with it, in order.
  if (qp->adapter() == adapter_) return;
  {
    std::lock_guard lk(mu_);
    if (qp_ != qp) return;
  }
  // The connection ends as if the connector were closed (its QP is gone);
  // pending Connect/Accept requests complete with STATUS_CANCELLED.
  teardown();
  Qp* q = nullptr;
  {
    std::lock_guard lk(mu_);
    if (qp_ == qp) q = std::exchange(qp_, nullptr);
  }
  if (q != nullptr) q->release();
}

void ConnectorNet::end_active_locked() {
  if (!counted_active_) return;
  counted_active_ = false;
  adapter_->counters().active_connection.fetch_sub(1, std::memory_order_relaxed);
  if (qp_ != nullptr) qp_->counters().active_connection.fetch_sub(1, std::memory_order_relaxed);
}

// ---- active side ---------------------------------------------------------------

NTSTATUS ConnectorNet::connect(Qp* qp, const SOCKADDR* src, ULONG src_len, SharedEndpoint* se,
                               const SOCKADDR* dst, ULONG dst_len, ULONG ird, ULONG ord,
                               const void* pd, ULONG pd_len, NDK_FN_REQUEST_COMPLETION done,
                               void* ctx) {
  // A QP of another open of this interface is fine (one RNIC, several
  // miniport adapters); one of another interface is not.
  if (!adapter_->same_interface(qp->adapter())) return STATUS_INVALID_PARAMETER;
  if (se != nullptr && !adapter_->same_interface(se->adapter())) return STATUS_INVALID_PARAMETER;
  if (pd_len > 0 && pd == nullptr) return STATUS_INVALID_PARAMETER;
  if (pd_len > adapter_->info().MaxCallerData) return STATUS_INVALID_PARAMETER;
  auto d = util::SockAddr::from(reinterpret_cast<const sockaddr*>(dst), dst_len);
  if (!d) return STATUS_INVALID_PARAMETER;
  if (d->is_any() || d->port() == 0) return STATUS_INVALID_ADDRESS;
  provider::ConnectArgs args;
  args.dst = *d;
  if (se != nullptr) {
    args.shared = se->endpoint();
    if (args.shared == nullptr) return STATUS_FILE_CLOSED;
    if (args.shared->local().family() != d->family()) return STATUS_INVALID_PARAMETER;
  } else if (src != nullptr) {
    auto s = util::SockAddr::from(reinterpret_cast<const sockaddr*>(src), src_len);
    if (!s) return STATUS_INVALID_PARAMETER;
    if (s->family() != d->family()) return STATUS_INVALID_PARAMETER;
    if (!s->is_any()) {
      sockaddr_storage l{};
      NTSTATUS st = check_local_address(adapter_->device(), src, src_len, &l);
      if (st != STATUS_SUCCESS) return st;
      s = util::SockAddr::from(reinterpret_cast<const sockaddr*>(&l), sockaddr_length(l));
    }
    args.src = *s;
  }
  args.qp = qp;
  args.ird = cap_limit(ird, adapter_->info().MaxInboundReadLimit);
  args.ord = cap_limit(ord, adapter_->info().MaxOutboundReadLimit);
  if (pd_len > 0) {
    auto* b = static_cast<const uint8_t*>(pd);
    args.private_data.assign(b, b + pd_len);
  }
  {
    std::lock_guard lk(mu_);
    if (torn_down_) return STATUS_FILE_CLOSED;
    if (state_ != ConnState::kIdle && state_ != ConnState::kFailed)
      return STATUS_CONNECTION_INVALID;
    if (qp->state() != QpState::kIdle) return STATUS_INVALID_DEVICE_REQUEST;
    if (se == nullptr && args.src.port() != 0) {
      // An explicit local port is this connector's endpoint until it is
      // closed (NDKPI.md 6.1); a port still held by a listener or by the
      // connectors it delivered is refused. A retry replaces our own.
      endpoint_.reset();
      sockaddr_storage l{};
      to_storage(args.src, &l);
      NTSTATUS st = reserve_endpoint(l, &endpoint_);
      if (st != STATUS_SUCCESS) return st;
    }
    state_ = ConnState::kConnecting;
    passive_ = false;
    bind_qp(qp);
    if (se != nullptr && se_ != se) {
      se->hold();
      if (se_ != nullptr) se_->release();
      se_ = se;
    }
    have_data_ = false;
    peer_pd_.clear();
  }
  obj_->hold();  // until the completion returned
  auto self = shared_from_this();
  std::shared_ptr<provider::ActiveConnect> ac;
  NTSTATUS st = adapter_->provider().connect(
      std::move(args),
      [self, done, ctx](provider::ConnectResult r) {
        self->on_connect_result(std::move(r), done, ctx);
      },
      &ac);
  if (st != STATUS_PENDING) {
    {
      std::lock_guard lk(mu_);
      state_ = ConnState::kFailed;
    }
    count2(adapter_->counters().connect_failure, qp->counters().connect_failure);
    obj_->release();
    return st == STATUS_SUCCESS ? STATUS_INTERNAL_ERROR : st;
  }
  bool cancel = false;
  {
    std::lock_guard lk(mu_);
    if (state_ == ConnState::kConnecting) active_ = ac;
    cancel = torn_down_;
  }
  if (cancel && ac) ac->cancel();
  return STATUS_PENDING;
}

void ConnectorNet::on_connect_result(provider::ConnectResult r, NDK_FN_REQUEST_COMPLETION done,
                                     void* ctx) {
  NTSTATUS st = r.status;
  std::shared_ptr<provider::Connection> drop;
  Qp* qp = nullptr;
  {
    std::lock_guard lk(mu_);
    active_.reset();
    qp = qp_;
    if (torn_down_) {
      drop = std::move(r.connection);
      if (st == STATUS_SUCCESS) st = STATUS_CANCELLED;
      state_ = ConnState::kClosed;
    } else if (st == STATUS_SUCCESS) {
      conn_ = std::move(r.connection);
      params_ = conn_->facts();
      have_params_ = true;
      peer_pd_ = conn_->peer_private_data();
      ird_ = params_.ird;
      ord_ = params_.ord;
      have_data_ = true;
      to_storage(params_.local, &local_);
      to_storage(params_.peer, &peer_);
      have_addrs_ = true;
      state_ = ConnState::kConnected;
    } else {
      state_ = ConnState::kFailed;
      setup_phase_ = r.setup_phase;
      if (r.rejected) {
        // The reject's private data, for NdkGetConnectionData.
        peer_pd_ = std::move(r.peer_private_data);
        ird_ = ord_ = 0;
        have_data_ = true;
      }
    }
  }
  if (st != STATUS_SUCCESS) {
    adapter_->counters().connect_failure.fetch_add(1, std::memory_order_relaxed);
    // The QP is bound (held) until the connector closes, so it is alive.
    if (qp != nullptr) qp->counters().connect_failure.fetch_add(1, std::memory_order_relaxed);
  }
  if (drop) drop->abort();
  complete(done, ctx, st);
}

NTSTATUS ConnectorNet::complete_connect(NDK_FN_DISCONNECT_EVENT_CALLBACK ev,
                                        NDK_FN_DISCONNECT_EVENT_CALLBACK_EX ev_ex, void* ev_ctx,
                                        NDK_FN_REQUEST_COMPLETION done, void* ctx) {
  std::shared_ptr<provider::Connection> c;
  {
    std::lock_guard lk(mu_);
    if (state_ != ConnState::kConnected || passive_) return STATUS_CONNECTION_INVALID;
    state_ = ConnState::kCompleting;
    ev_ = ev;
    ev_ex_ = ev_ex;
    ev_ctx_ = ev_ctx;
    c = conn_;
  }
  obj_->hold();
  auto self = shared_from_this();
  c->post([self, done, ctx] { self->finish_complete_connect(done, ctx); });
  return STATUS_PENDING;
}

// On the connection's own thread: the connection is only closed there, so
// it cannot go away between the check and the start (the RTR).
void ConnectorNet::finish_complete_connect(NDK_FN_REQUEST_COMPLETION done, void* ctx) {
  NTSTATUS st = STATUS_SUCCESS;
  std::shared_ptr<provider::Connection> drop;
  {
    std::lock_guard lk(mu_);
    if (torn_down_) {
      st = STATUS_CANCELLED;
    } else if (conn_->closed()) {
      st = STATUS_CONNECTION_ABORTED;  // the responder gave up meanwhile
      state_ = ConnState::kClosed;
      setup_phase_ = SOFTNDK_SETUP_AFTER_MPA;
    } else if (!establish_locked(true)) {
      // The initiator's start failed (the RTR could not be sent, or the
      // connection went away): reset it.
      st = STATUS_CONNECTION_ABORTED;
      state_ = ConnState::kClosed;
      drop = conn_;
    }
  }
  if (drop) drop->abort();
  complete(done, ctx, st);
}

bool ConnectorNet::establish_locked(bool initiator) {
  stream_ = conn_->start(qp_, initiator);
  if (stream_ == nullptr) return false;
  state_ = ConnState::kEstablished;
  counted_active_ = true;
  auto& k = adapter_->counters();
  auto& q = qp_->counters();
  count2(k.active_connection, q.active_connection);
  if (initiator) {
    count2(k.connect, q.connect);
  } else {
    count2(k.accept, q.accept);
  }
  std::weak_ptr<ConnectorNet> w = shared_from_this();
  conn_->on_peer_close([w](NTSTATUS s) {
    if (auto self = w.lock()) self->on_peer_close(s);
  });
  return true;
}

void ConnectorNet::on_peer_close(NTSTATUS st) {
  NDK_FN_DISCONNECT_EVENT_CALLBACK ev;
  NDK_FN_DISCONNECT_EVENT_CALLBACK_EX ev_ex;
  void* ev_ctx;
  {
    std::lock_guard lk(mu_);
    if (torn_down_ || event_done_ || state_ != ConnState::kEstablished) return;
    event_done_ = true;
    end_active_locked();
    ev = ev_;
    ev_ex = ev_ex_;
    ev_ctx = ev_ctx_;
    if (ev == nullptr && ev_ex == nullptr) return;
    obj_->hold();
  }
  // NDKPI 6.4: the event alone flushes nothing (the data path already
  // moved the QP to error if the stream broke).
  if (ev_ex != nullptr) {
    ev_ex(ev_ctx, st == STATUS_CONNECTION_DISCONNECTED ? 0 : static_cast<ULONG>(st));
  } else {
    ev(ev_ctx);
  }
  obj_->release();
}

// ---- passive side --------------------------------------------------------------

void ConnectorNet::set_incoming(std::shared_ptr<provider::IncomingConnection> p,
                                std::shared_ptr<Reservation> res) {
  std::lock_guard lk(mu_);
  passive_ = true;
  endpoint_ = std::move(res);
  state_ = ConnState::kIncoming;
  const provider::ConnectionFacts& r = p->request();
  peer_pd_ = p->private_data();
  ird_ = r.ird;
  ord_ = r.ord;
  have_data_ = true;
  to_storage(r.local, &local_);
  to_storage(r.peer, &peer_);
  have_addrs_ = true;
  pending_ = std::move(p);
}

NTSTATUS ConnectorNet::accept(Qp* qp, ULONG ird, ULONG ord, const void* pd, ULONG pd_len,
                              NDK_FN_DISCONNECT_EVENT_CALLBACK ev,
                              NDK_FN_DISCONNECT_EVENT_CALLBACK_EX ev_ex, void* ev_ctx,
                              NDK_FN_REQUEST_COMPLETION done, void* ctx) {
  if (!adapter_->same_interface(qp->adapter())) return STATUS_INVALID_PARAMETER;
  if (pd_len > 0 && pd == nullptr) return STATUS_INVALID_PARAMETER;
  if (pd_len > adapter_->info().MaxCalleeData) return STATUS_INVALID_PARAMETER;
  std::vector<uint8_t> data;
  if (pd_len > 0)
    data.assign(static_cast<const uint8_t*>(pd), static_cast<const uint8_t*>(pd) + pd_len);
  std::shared_ptr<provider::IncomingConnection> p;
  {
    std::lock_guard lk(mu_);
    if (state_ != ConnState::kIncoming) return STATUS_CONNECTION_INVALID;
    if (qp->state() != QpState::kIdle) return STATUS_INVALID_DEVICE_REQUEST;
    state_ = ConnState::kAccepting;
    bind_qp(qp);
    ev_ = ev;
    ev_ex_ = ev_ex;
    ev_ctx_ = ev_ctx;
    p = pending_;
  }
  obj_->hold();
  auto self = shared_from_this();
  NTSTATUS st = p->accept(qp, cap_limit(ird, adapter_->info().MaxInboundReadLimit),
                          cap_limit(ord, adapter_->info().MaxOutboundReadLimit), std::move(data),
                          [self, done, ctx](NTSTATUS s, std::shared_ptr<provider::Connection> c) {
                            self->on_accept_result(s, std::move(c), done, ctx);
                          });
  if (st != STATUS_PENDING) {
    {
      std::lock_guard lk(mu_);
      if (state_ == ConnState::kAccepting)
        state_ = st == STATUS_INVALID_PARAMETER ? ConnState::kIncoming : ConnState::kClosed;
    }
    obj_->release();
    return st == STATUS_SUCCESS ? STATUS_INTERNAL_ERROR : st;
  }
  return STATUS_PENDING;
}

void ConnectorNet::on_accept_result(NTSTATUS st, std::shared_ptr<provider::Connection> c,
                                    NDK_FN_REQUEST_COMPLETION done, void* ctx) {
  std::shared_ptr<provider::Connection> drop;
  {
    std::lock_guard lk(mu_);
    pending_.reset();
    if (torn_down_) {
      drop = std::move(c);
      if (st == STATUS_SUCCESS) st = STATUS_CANCELLED;
      state_ = ConnState::kClosed;
    } else if (st == STATUS_SUCCESS) {
      conn_ = std::move(c);
      params_ = conn_->facts();
      have_params_ = true;
      ird_ = params_.ird;
      ord_ = params_.ord;
      if (!establish_locked(false)) {
        st = STATUS_CONNECTION_ABORTED;
        state_ = ConnState::kClosed;
      }
    } else {
      state_ = ConnState::kClosed;
    }
  }
  if (drop) drop->abort();
  complete(done, ctx, st);
}

NTSTATUS ConnectorNet::reject(const void* pd, ULONG pd_len) {
  if (pd_len > 0 && pd == nullptr) return STATUS_INVALID_PARAMETER;
  std::shared_ptr<provider::IncomingConnection> p;
  std::shared_ptr<provider::Connection> c;
  {
    std::lock_guard lk(mu_);
    if (state_ == ConnState::kIncoming) {
      if (pd_len > adapter_->info().MaxCalleeData) return STATUS_INVALID_PARAMETER;
      p = pending_;
    } else if (state_ == ConnState::kConnected && !passive_) {
      // Active side after Connect completed: no MPA message exists for
      // this; the connection is reset.
      c = std::move(conn_);
      state_ = ConnState::kClosed;
    } else {
      return STATUS_CONNECTION_INVALID;
    }
  }
  if (c) {
    c->abort();
    return STATUS_SUCCESS;
  }
  NTSTATUS st = p->reject(
      std::span<const uint8_t>(static_cast<const uint8_t*>(pd), static_cast<size_t>(pd_len)));
  if (st == STATUS_SUCCESS || st == STATUS_CONNECTION_ABORTED) {
    std::lock_guard lk(mu_);
    if (state_ == ConnState::kIncoming) state_ = ConnState::kClosed;
    pending_.reset();
  }
  return st;
}

// ---- teardown -----------------------------------------------------------------

NTSTATUS ConnectorNet::disconnect(NDK_FN_REQUEST_COMPLETION done, void* ctx) {
  std::shared_ptr<provider::Connection> c;
  std::shared_ptr<provider::QpEngine> s;
  Qp* q = nullptr;
  {
    std::lock_guard lk(mu_);
    if (state_ != ConnState::kEstablished && !(state_ == ConnState::kConnected && !passive_))
      return STATUS_CONNECTION_INVALID;
    state_ = ConnState::kDisconnecting;
    event_done_ = true;  // NDKPI 6.4: no event after our own Disconnect
    end_active_locked();
    c = conn_;
    s = stream_;
    q = qp_;
  }
  obj_->hold();
  auto self = shared_from_this();
  auto fin = [self, c, s, q, done, ctx] {
    if (s) s->stop();  // before the connection: the stream writes through its own dup
    self->finish_disconnect(c, s, q, done, ctx);
  };
  // The engine may owe the peer a last FPDU first (a silent siw responder).
  if (s)
    s->before_disconnect(std::move(fin));
  else
    fin();
  return STATUS_PENDING;
}

void ConnectorNet::finish_disconnect(const std::shared_ptr<provider::Connection>& c,
                                     const std::shared_ptr<provider::QpEngine>& s, Qp* q,
                                     NDK_FN_REQUEST_COMPLETION done, void* ctx) {
  auto self = shared_from_this();
  c->disconnect([self, s, q, done, ctx](NTSTATUS st) {
    {
      std::lock_guard lk(self->mu_);
      if (self->state_ == ConnState::kDisconnecting) self->state_ = ConnState::kClosed;
      if (s) {
        self->term_sent_ = s->last_terminate_sent();
        self->term_received_ = s->last_terminate_received();
      }
    }
    // Everything still queued completes with STATUS_CANCELLED before the
    // consumer hears that the disconnect is done.
    q->to_error();
    self->complete(done, ctx, st);
  });
}

void ConnectorNet::teardown() {
  std::shared_ptr<provider::ActiveConnect> a;
  std::shared_ptr<provider::IncomingConnection> p;
  std::shared_ptr<provider::Connection> c;
  std::shared_ptr<provider::QpEngine> s;
  Qp* q = nullptr;
  {
    std::lock_guard lk(mu_);
    torn_down_ = true;
    event_done_ = true;
    end_active_locked();
    a = std::move(active_);
    if (state_ == ConnState::kIncoming || state_ == ConnState::kAccepting) p = pending_;
    s = stream_;
    // A disconnect in progress finishes on its own (it holds the connector).
    if (state_ != ConnState::kDisconnecting) c = conn_;
    if (state_ == ConnState::kEstablished) q = qp_;
  }
  if (a) a->cancel();
  if (p) p->abandon();
  if (s) s->stop();
  if (c) c->abort();  // RST (a no-op if it is already closed)
  if (q) q->to_error();
}

void ConnectorNet::closed() {
  Qp* q;
  SharedEndpoint* se;
  std::shared_ptr<provider::Connection> c;
  std::shared_ptr<provider::QpEngine> s;
  std::shared_ptr<provider::IncomingConnection> p;
  std::shared_ptr<Reservation> res;
  {
    std::lock_guard lk(mu_);
    q = std::exchange(qp_, nullptr);
    se = std::exchange(se_, nullptr);
    res = std::move(endpoint_);  // NDKPI.md 6.1: -1 when the connector is closed
    c = std::move(conn_);
    s = std::move(stream_);
    p = std::move(pending_);
  }
  s.reset();
  c.reset();
  if (q != nullptr) q->release();
  if (se != nullptr) se->release();
}

}  // namespace softndk::ndk
