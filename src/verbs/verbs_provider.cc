// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_provider.cc - the verbs backend's provider: device, PD,
// completion channel, rdma_cm event channel, listeners, incoming requests,
// memory registration, and the plugin's entry point (verbs_backend.h,
// plugin.h).
#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "softndk/version.h"
#include "verbs/device_probe.h"
#include "verbs/plugin.h"
#include "verbs/verbs_backend.h"

namespace softndk::verbs {

namespace {

bool nonblocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

provider::Address address_of(const sockaddr* sa) {
  socklen_t len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  auto a = provider::Address::from(sa, len);
  return a ? *a : provider::Address{};
}

// One ibv_pd per device context for the whole process, shared by every
// adapter instance on it (librdmacm opens each device once per process,
// so the instances already share the context). NDK lets a QP of one
// instance carry a connection of another's connector or listener with the
// MRs, windows and SRQ of its own instance (several opens of an interface
// act as one RNIC): on the device that takes one protection domain.
struct DevicePd {
  ibv_pd* pd = nullptr;
  int refs = 0;
};
std::mutex g_pd_mu;
std::map<ibv_context*, DevicePd>& device_pds() {
  static std::map<ibv_context*, DevicePd> m;
  return m;
}

ibv_pd* acquire_device_pd(ibv_context* ctx) {
  std::lock_guard lk(g_pd_mu);
  DevicePd& d = device_pds()[ctx];
  if (d.pd == nullptr) d.pd = ibv_alloc_pd(ctx);
  if (d.pd == nullptr) {
    device_pds().erase(ctx);
    return nullptr;
  }
  ++d.refs;
  return d.pd;
}

void release_device_pd(ibv_pd* pd) {
  std::lock_guard lk(g_pd_mu);
  auto it = device_pds().find(pd->context);
  if (it == device_pds().end() || it->second.pd != pd) return;
  if (--it->second.refs == 0) {
    ibv_dealloc_pd(pd);
    device_pds().erase(it);
  }
}

class VerbsActive final : public provider::ActiveConnect {
 public:
  VerbsActive(VerbsProvider* p, std::shared_ptr<VerbsConnection> c) : p_(p), c_(std::move(c)) {}
  void cancel() override {
    auto c = c_;
    p_->loop().post([c] { c->cancel_connect(); });
  }

 private:
  VerbsProvider* p_;
  std::shared_ptr<VerbsConnection> c_;
};

class VerbsIncoming final : public provider::IncomingConnection,
                            public CmHandler,
                            public std::enable_shared_from_this<VerbsIncoming> {
 public:
  VerbsIncoming(VerbsProvider* p, const CmEvent& e) : p_(p), id_(e.id), pd_(e.private_data) {
    // The peer's ORD (reads it will issue to us) and IRD; which field holds
    // which depends on the transport (verbs_map.h).
    const bool iw =
        id_->verbs != nullptr && id_->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
    peer_ = cm_read_limits(iw, true, e.initiator_depth, e.responder_resources);
    req_.ird = peer_.inbound;
    req_.ord = peer_.outbound;
    req_.local = address_of(rdma_get_local_addr(id_));
    req_.peer = address_of(rdma_get_peer_addr(id_));
  }
  const provider::ConnectionFacts& request() const override { return req_; }
  const std::vector<uint8_t>& private_data() const override { return pd_; }
  NTSTATUS accept(
      provider::QpHost* qp, uint16_t ird, uint16_t ord, std::vector<uint8_t> pd,
      std::function<void(NTSTATUS, std::shared_ptr<provider::Connection>)> cb) override {
    if (pd.size() > p_->info().MaxCalleeData) return STATUS_INVALID_PARAMETER;
    if (qp == nullptr) return STATUS_INVALID_PARAMETER;
    auto self = shared_from_this();
    auto conn = std::make_shared<VerbsConnection>(p_, qp);
    p_->loop().post([self, conn, ird, ord, pd = std::move(pd), cb = std::move(cb)]() mutable {
      if (self->gone_ || self->id_ == nullptr) {
        cb(STATUS_CONNECTION_ABORTED, nullptr);
        return;
      }
      rdma_cm_id* id = std::exchange(self->id_, nullptr);
      conn->start_accept(id, ird, ord, self->peer_, std::move(pd), std::move(cb));
    });
    return STATUS_PENDING;
  }
  NTSTATUS reject(std::span<const uint8_t> pd) override {
    if (pd.size() > p_->info().MaxCalleeData) return STATUS_INVALID_PARAMETER;
    std::vector<uint8_t> copy(pd.begin(), pd.end());
    auto self = shared_from_this();
    p_->loop().post([self, copy = std::move(copy)] {
      if (self->id_ == nullptr) return;
      rdma_reject(self->id_, copy.empty() ? nullptr : copy.data(),
                  static_cast<uint8_t>(copy.size()));
      self->drop();
    });
    return STATUS_SUCCESS;
  }
  void abandon() override {
    auto self = shared_from_this();
    p_->loop().post([self] {
      if (self->id_ == nullptr) return;
      rdma_reject(self->id_, nullptr, 0);
      self->drop();
    });
  }
  void on_cm_event(const CmEvent& e) override {
    // The initiator gave up before an answer: a later accept fails.
    if (e.type == RDMA_CM_EVENT_DISCONNECTED || e.type == RDMA_CM_EVENT_REJECTED ||
        e.type == RDMA_CM_EVENT_CONNECT_ERROR || e.type == RDMA_CM_EVENT_DEVICE_REMOVAL)
      gone_ = true;
  }
  void drop() {
    rdma_cm_id* id = std::exchange(id_, nullptr);
    if (id == nullptr) return;
    rdma_destroy_id(id);
    p_->disown(id);
  }

 private:
  VerbsProvider* p_;
  rdma_cm_id* id_;  // loop thread
  bool gone_ = false;
  CmReadLimits peer_;
  provider::ConnectionFacts req_;
  std::vector<uint8_t> pd_;
};

class VerbsListener final : public provider::Listener,
                            public CmHandler,
                            public std::enable_shared_from_this<VerbsListener> {
 public:
  VerbsListener(VerbsProvider* p, rdma_cm_id* id,
                std::function<void(std::shared_ptr<provider::IncomingConnection>)> on_request)
      : p_(p), id_(id), on_request_(std::move(on_request)) {
    local_ = address_of(rdma_get_local_addr(id));
  }
  provider::Address local() const override { return local_; }
  void pause(bool paused) override {
    auto self = shared_from_this();
    p_->loop().post([self, paused] {
      self->paused_ = paused;
      while (!self->paused_ && !self->backlog_.empty() && self->id_ != nullptr) {
        auto r = self->backlog_.front();
        self->backlog_.pop_front();
        self->on_request_(r);
      }
    });
  }
  void close() override {
    auto self = shared_from_this();
    p_->loop().post([self] {
      for (auto& r : self->backlog_) r->abandon();
      self->backlog_.clear();
      rdma_cm_id* id = std::exchange(self->id_, nullptr);
      if (id == nullptr) return;
      rdma_destroy_id(id);
      self->p_->disown(id);
    });
  }
  void on_cm_event(const CmEvent& e) override {
    if (e.type != RDMA_CM_EVENT_CONNECT_REQUEST) return;
    auto in = std::make_shared<VerbsIncoming>(p_, e);
    p_->own(e.id, in);
    if (id_ == nullptr) {
      in->abandon();
    } else if (paused_) {
      backlog_.push_back(in);  // NdkPauseListener: they wait
    } else {
      on_request_(in);
    }
  }

 private:
  VerbsProvider* p_;
  rdma_cm_id* id_;
  provider::Address local_;
  std::function<void(std::shared_ptr<provider::IncomingConnection>)> on_request_;
  bool paused_ = false;
  std::deque<std::shared_ptr<VerbsIncoming>> backlog_;
};

class VerbsSharedEndpoint final : public provider::SharedEndpoint {
 public:
  explicit VerbsSharedEndpoint(provider::Address a) : a_(std::move(a)) {}
  provider::Address local() const override { return a_; }

 private:
  provider::Address a_;
};

}  // namespace

// ---- open / close ----------------------------------------------------------------

NTSTATUS VerbsProvider::open(const provider::ProviderConfig& cfg, std::string* why) {
  cfg_ = cfg;
  ProbeResult pr = probe_device(cfg.ifname);
  if (pr.status != STATUS_SUCCESS) {
    *why = pr.error;
    return pr.status;
  }
  facts_ = pr.facts;
  wc_abi_ = wc_flags_abi(facts_);
  fence_local_ops_ = local_ops_rerun_on_retry(facts_);
  if (const char* t = std::getenv("SOFTNDK_VERBS_TRACE"); t != nullptr && *t != '\0' && *t != '0')
    trace_ = true;
  device_ = pr.device.name + " [" + pr.device.driver + ", " + transport_name(facts_.transport) +
            "] on " + pr.ifname + " " + pr.address;
  info_ = verbs::adapter_info(pr.attr, pr.port, facts_, cfg.info.Version,
                              cfg.info.LargeRequestThreshold);
  // Fast register and windows (docs/verbs.md, "Fast register"): type-2
  // windows where the device has them; the named degraded mode only on
  // request (SOFTNDK_OPEN_FLAG_FR_REGISTER); else refused.
  strategy_ =
      choose_fr_strategy(pr.attr, facts_, (cfg.params.Flags & SOFTNDK_OPEN_FLAG_FR_REGISTER) != 0);
  fr_ = strategy_ == FrStrategy::kType2Window               ? FrSupport::kWindows
        : strategy_ == FrStrategy::kRegisterPerFastRegister ? FrSupport::kReregister
                                                            : FrSupport::kNone;
  if (fr_ == FrSupport::kReregister) info_.FRMRPageCount = 65536;
  read_sge_ = std::max<uint32_t>(info_.MaxReadRequestSge, 1);
  srq_resize_ = srq_can_resize(pr.attr);
  zero_based_ = fr_ == FrSupport::kWindows && zero_based_windows(facts_);
  loop_ = std::make_unique<Loop>();
  if (!loop_->ok()) {
    *why = "epoll/eventfd: " + std::string(std::strerror(errno));
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  ch_ = rdma_create_event_channel();
  if (ch_ == nullptr || !nonblocking(ch_->fd)) {
    *why = "rdma_create_event_channel: " + std::string(std::strerror(errno));
    return STATUS_NOT_SUPPORTED;
  }
  // The adapter's address, bound once: its id holds the device context
  // that every connection of this adapter uses (rdma_cm picks the same
  // device for the same address).
  auto a = provider::Address::parse(pr.address, 0);
  if (!a) {
    *why = "address " + pr.address;
    return STATUS_NO_SUCH_DEVICE;
  }
  std::memcpy(&local_, a->sa(), a->len);
  if (rdma_create_id(ch_, &bind_id_, nullptr, RDMA_PS_TCP) != 0 ||
      rdma_bind_addr(bind_id_, reinterpret_cast<sockaddr*>(&local_)) != 0 ||
      bind_id_->verbs == nullptr) {
    *why = "rdma_bind_addr " + pr.address + ": " + std::strerror(errno);
    return STATUS_NO_SUCH_DEVICE;
  }
  pd_ = acquire_device_pd(bind_id_->verbs);
  cc_ = ibv_create_comp_channel(bind_id_->verbs);
  if (pd_ == nullptr || cc_ == nullptr || !nonblocking(cc_->fd)) {
    *why = "ibv_alloc_pd / ibv_create_comp_channel: " + std::string(std::strerror(errno));
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  bool ok = true;
  // The device's async events (the SRQ limit) on the loop as well.
  const int afd = bind_id_->verbs->async_fd;
  if (!nonblocking(afd)) {
    *why = "async fd O_NONBLOCK: " + std::string(std::strerror(errno));
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  if (!loop_->run_sync(
          [&] {
            ok = loop_->watch(ch_->fd, [this] { on_cm_channel(); }) &&
                 loop_->watch(cc_->fd, [this] { on_comp_channel(); }) &&
                 loop_->watch(afd, [this] { on_async_event(); });
          },
          "open: watching the event channels")) {
    *why = "the backend thread did not start";
    return STATUS_IO_TIMEOUT;
  }
  if (!ok) {
    *why = "epoll_ctl: " + std::string(std::strerror(errno));
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  return STATUS_SUCCESS;
}

VerbsProvider::~VerbsProvider() {
  if (loop_) {
    // Whatever the object model left (it closes connectors, listeners and
    // MRs first): ids destroyed on the loop thread, then the loop joined.
    // Bounded: a withdrawn step leaves its ids to the process (reported by
    // run_sync) rather than hanging the close.
    loop_->run_sync(
        [this] {
          auto hs = std::move(handlers_);
          handlers_.clear();
          for (auto& [id, h] : hs) {
            if (auto c = std::dynamic_pointer_cast<VerbsConnection>(h)) {
              c->abort();
            } else {
              rdma_destroy_id(id);
            }
          }
          if (ch_ != nullptr) loop_->unwatch(ch_->fd);
        },
        "close: destroying the remaining connections and listeners");
    loop_->run_sync(
        [this] {
          if (cc_ != nullptr) loop_->unwatch(cc_->fd);
          if (bind_id_ != nullptr && bind_id_->verbs != nullptr)
            loop_->unwatch(bind_id_->verbs->async_fd);
        },
        "close: unwatching the completion channel");
    loop_.reset();
  }
  if (cc_ != nullptr) ibv_destroy_comp_channel(cc_);
  if (pd_ != nullptr) release_device_pd(pd_);
  if (bind_id_ != nullptr) rdma_destroy_id(bind_id_);
  if (ch_ != nullptr) rdma_destroy_event_channel(ch_);
}

void VerbsProvider::adapter_info(NDK_ADAPTER_INFO* info) const {
  NDK_ADAPTER_INFO d = info_;
  // Above the seam and the object model's, whatever the device: CQ rings
  // (resize, moderation), loopback. Windows, fast register and read with
  // local invalidate as the strategy allows (docs/verbs.md, "Fast register").
  d.MaxCqDepth = info->MaxCqDepth;
  d.FRMRPageCount = std::min<ULONG>(d.FRMRPageCount, info->FRMRPageCount);
  d.MaxInlineDataSize = std::min<ULONG>(d.MaxInlineDataSize, provider::kMaxInlineData);
  d.AdapterFlags &= ~NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED;
  d.AdapterFlags |= NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED |
                    NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED |
                    NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
  *info = d;
}

std::string VerbsProvider::describe() const { return device_; }

// ---- events ------------------------------------------------------------------------

void VerbsProvider::on_cm_channel() {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch_, &ev) != 0) return;  // EAGAIN: drained
    CmEvent e;
    e.type = ev->event;
    e.status = ev->status;
    e.id = ev->id;
    e.listen_id = ev->listen_id;
    const rdma_conn_param& cp = ev->param.conn;
    if (cp.private_data != nullptr && cp.private_data_len > 0) {
      auto* b = static_cast<const uint8_t*>(cp.private_data);
      e.private_data.assign(b, b + cp.private_data_len);
    }
    e.responder_resources = cp.responder_resources;
    e.initiator_depth = cp.initiator_depth;
    rdma_ack_cm_event(ev);  // before handling: a handler may destroy its id
    rdma_cm_id* key = e.type == RDMA_CM_EVENT_CONNECT_REQUEST ? e.listen_id : e.id;
    auto it = handlers_.find(key);
    if (it == handlers_.end()) {
      if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST) {  // listener closed meanwhile
        rdma_reject(e.id, nullptr, 0);
        rdma_destroy_id(e.id);
      }
      continue;
    }
    std::shared_ptr<CmHandler> h = it->second;  // alive through the call
    h->on_cm_event(e);
  }
}

void VerbsProvider::on_comp_channel() {
  // The NDK CQ notifications these completions make due are delivered on
  // this thread once every connection's lock is released (InlineNotify),
  // not by a wake-up of the CQ's reactor: docs/verbs.md "Performance".
  InlineNotify scope(cfg_);
  for (;;) {
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(cc_, &cq, &ctx) != 0) return;  // EAGAIN: drained
    ibv_ack_cq_events(cq, 1);
    auto it = cqs_.find(cq);
    if (it == cqs_.end()) continue;
    if (auto c = it->second.lock()) c->on_cq_event();
  }
}

// ---- connections ---------------------------------------------------------------------

NTSTATUS VerbsProvider::connect(provider::ConnectArgs args,
                                std::function<void(provider::ConnectResult)> done,
                                std::shared_ptr<provider::ActiveConnect>* out) {
  if (args.qp == nullptr) return STATUS_INVALID_PARAMETER;
  if (args.private_data.size() > info_.MaxCallerData) return STATUS_INVALID_PARAMETER;
  auto c = std::make_shared<VerbsConnection>(this, args.qp);
  *out = std::make_shared<VerbsActive>(this, c);
  loop_->post([c, args = std::move(args), done = std::move(done)]() mutable {
    c->start_connect(std::move(args), std::move(done));
  });
  return STATUS_PENDING;
}

NTSTATUS VerbsProvider::listen(
    const provider::Address& addr,
    std::function<void(std::shared_ptr<provider::IncomingConnection>)> on_request,
    std::shared_ptr<provider::Listener>* out) {
  NTSTATUS st = STATUS_SUCCESS;
  // rdma_bind_addr and rdma_listen do not wait for the network; they run
  // on the loop thread with the other calls on this event channel.
  const bool ran = loop_->run_sync(
      [&] {
        rdma_cm_id* id = nullptr;
        if (rdma_create_id(ch_, &id, nullptr, RDMA_PS_TCP) != 0) {
          st = STATUS_INSUFFICIENT_RESOURCES;
          return;
        }
        sockaddr_storage ss{};
        std::memcpy(&ss, addr.sa(), addr.len);
        if (addr.is_any()) {  // this adapter's address, so its device
          uint16_t port = addr.port();
          ss = local_;
          reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(port);
        }
        if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&ss)) != 0 || rdma_listen(id, 64) != 0) {
          st = status_of_errno(-errno, STATUS_ADDRESS_ALREADY_EXISTS);
          if (errno == EADDRINUSE) st = STATUS_ADDRESS_ALREADY_EXISTS;
          rdma_destroy_id(id);
          return;
        }
        auto l = std::make_shared<VerbsListener>(this, id, std::move(on_request));
        own(id, l);
        *out = l;
      },
      "NdkListen: rdma_bind_addr and rdma_listen");
  if (!ran) return STATUS_IO_TIMEOUT;
  return st;
}

NTSTATUS VerbsProvider::create_shared_endpoint(const provider::Address& addr,
                                               std::shared_ptr<provider::SharedEndpoint>* out) {
  *out = std::make_shared<VerbsSharedEndpoint>(addr);
  return STATUS_SUCCESS;
}

// ---- memory ----------------------------------------------------------------------------

// ---- the plugin's entry point ------------------------------------------------------------

namespace {

RdmaDeviceFacts device_of(const std::string& ifname) {
  RdmaDeviceFacts f;
  f.probed = true;
  // rdma_bind_addr on the interface's address only (the full probe runs
  // when the backend opens).
  ProbeResult r = probe_device(ifname);
  if (r.status == STATUS_SUCCESS) f = r.device;
  f.probed = true;
  return f;
}

NTSTATUS open_plugin(const provider::ProviderConfig& cfg, std::unique_ptr<provider::Provider>* out,
                     std::string* why) {
  auto p = std::make_unique<VerbsProvider>();
  NTSTATUS st = p->open(cfg, why);
  if (st != STATUS_SUCCESS) return st;
  *out = std::move(p);
  return STATUS_SUCCESS;
}

const Plugin kPlugin = {provider::kInterfaceVersion, SOFTNDK_VERSION_STRING, &device_of,
                        &open_plugin};

}  // namespace

}  // namespace softndk::verbs

extern "C" __attribute__((visibility("default"))) const softndk::verbs::Plugin*
softndk_verbs_plugin() {
  return &softndk::verbs::kPlugin;
}
