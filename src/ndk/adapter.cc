// SPDX-License-Identifier: Apache-2.0
// adapter.cc - open/close, limits, caps, object registry, fault hooks.
#include "ndk/adapter.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "engine/iwarp_provider.h"
#include "ndk/cq.h"
#include "ndk/dispatch.h"
#include "ndk/port_caps.h"
#include "ndk/provider_list.h"
#include "ndk/qp.h"
#include "ndk/srq.h"
#include "verbs/backend_choice.h"
#include "verbs/plugin.h"

namespace softndk::ndk {

namespace {

// Highest minor softndk implements per major (NDKPI 1.2 and 2.1).
bool negotiate(NDK_VERSION want, NDK_VERSION* run) {
  USHORT top;
  if (want.Major == 1) {
    top = 2;
  } else if (want.Major == 2) {
    top = NDK_VERSION_MINOR;
  } else {
    return false;
  }
  if (want.Minor > top) return false;
  run->Major = want.Major;
  run->Minor = top;
  return true;
}

// A SOFTNDK_* variable the open refuses: named with its value on stderr
// (the NTSTATUS alone cannot say which of a dozen variables was wrong).
void refuse_env(const char* env, const char* value, const char* want) {
  std::fprintf(stderr, "softndk: %s=%s is not valid (%s): SoftNdkOpenAdapter fails\n", env, value,
               want);
}

// Open parameter: explicit value, else SOFTNDK_<NAME> from the environment,
// else the default. Unset, empty or 0 in the environment means the default;
// anything else must be a whole number in [1, max] (decimal; 0x... hex too
// where `hex`), or *bad is set and the variable reported.
ULONG param(ULONG given, const char* env, ULONG dflt, bool* bad, ULONG max = 0xffffffffu,
            bool hex = false) {
  if (given != 0) return given;
  const char* v = std::getenv(env);
  if (v == nullptr || *v == '\0') return dflt;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v, &end, hex ? 0 : 10);
  if (end == v || *end != '\0' || errno != 0 || *v == '-' || n > max) {
    char want[64];
    std::snprintf(want, sizeof want, "want a whole number from 0 to %lu",
                  static_cast<unsigned long>(max));
    refuse_env(env, v, want);
    *bad = true;
    return dflt;
  }
  return n == 0 ? dflt : static_cast<ULONG>(n);
}

// Closed adapter handles: kept (dead) for a while so that a double close is
// reported instead of touching freed memory.
struct HandleQuarantine {
  std::mutex mu;
  std::deque<std::unique_ptr<AdapterHandle>> q;
};
HandleQuarantine& handle_quarantine() {
  static HandleQuarantine* h = new HandleQuarantine;  // never destroyed: used at exit
  return *h;
}

}  // namespace

const char* object_type_name(NDK_OBJECT_TYPE t) {
  switch (t) {
    case NdkObjectTypeAdapter:
      return "adapter";
    case NdkObjectTypePd:
      return "PD";
    case NdkObjectTypeCq:
      return "CQ";
    case NdkObjectTypeMr:
      return "MR";
    case NdkObjectTypeMw:
      return "MW";
    case NdkObjectTypeSrq:
      return "SRQ";
    case NdkObjectTypeConnector:
      return "connector";
    case NdkObjectTypeListener:
      return "listener";
    case NdkObjectTypeSharedEndpoint:
      return "shared endpoint";
    case NdkObjectTypeQp:
      return "QP";
    default:
      return "object";
  }
}

NTSTATUS Adapter::from(const void* p, Adapter** out) {
  *out = nullptr;
  if (p == nullptr) return STATUS_INVALID_HANDLE;
  auto* h = static_cast<const AdapterHandle*>(p);
  uint32_t m = h->magic.load(std::memory_order_acquire);
  if (m == kMagicClosed) return STATUS_FILE_CLOSED;
  if (m != kMagicLive) return STATUS_INVALID_HANDLE;
  if (h->ndk.Header.ObjectType != NdkObjectTypeAdapter) return STATUS_OBJECT_TYPE_MISMATCH;
  *out = h->self;
  return STATUS_SUCCESS;
}

NTSTATUS Adapter::open(const char* name, NDK_VERSION version, const SOFTNDK_OPEN_PARAMETERS* params,
                       Adapter** out) {
  if (name == nullptr || out == nullptr) return STATUS_INVALID_PARAMETER;
  // A caller built against an older header passes its smaller Size: the
  // fields it does not know take their defaults (docs/abi.md).
  if (params != nullptr && params->Size < SOFTNDK_OPEN_PARAMETERS_V1_SIZE)
    return STATUS_INVALID_PARAMETER;
  NDK_VERSION run{};
  if (!negotiate(version, &run)) return NDIS_STATUS_BAD_VERSION;
  std::optional<NetDevice> dev = find_net_device(name);
  if (!dev) return STATUS_NO_SUCH_DEVICE;

  std::unique_ptr<Adapter> a(new Adapter());
  a->dev_ = *dev;
  struct stat ns {};
  if (::stat("/proc/thread-self/ns/net", &ns) == 0) a->netns_ = ns.st_ino;
  a->version_ = run;
  SOFTNDK_OPEN_PARAMETERS p{};
  if (params != nullptr) std::memcpy(&p, params, std::min<size_t>(params->Size, sizeof p));
  p.Size = sizeof p;
  // The engine (docs/verbs.md, "Choosing the backend"): iwarp-sw needs no
  // look at the interface; verbs and auto ask the verbs plugin which RDMA
  // device serves it (auto only when the host has any RDMA device, so an
  // ordinary host never loads rdma-core).
  verbs::BackendChoice choice;
  const verbs::Plugin* plugin = nullptr;
  {
    verbs::Backend want{};
    std::string source;
    if (verbs::requested_backend(p.Backend, std::getenv("SOFTNDK_BACKEND"), &want, &source) !=
        STATUS_SUCCESS)
      return STATUS_INVALID_PARAMETER;
    verbs::RdmaDeviceFacts facts;
    std::string why_not = "no RDMA device on this host";
    if (want == verbs::Backend::kVerbs ||
        (want == verbs::Backend::kAuto && verbs::any_rdma_device())) {
      plugin = verbs::load_plugin(&why_not);
      if (plugin != nullptr) facts = plugin->device_of(dev->name);
    } else if (want == verbs::Backend::kAuto) {
      facts.probed = true;  // nothing to probe: no device at all
    }
    choice = verbs::choose_backend(want, source, facts, plugin != nullptr, why_not, dev->name);
    if (choice.status != STATUS_SUCCESS) {
      std::fprintf(stderr, "softndk: %s: %s\n", dev->name.c_str(), choice.why.c_str());
      return choice.status;
    }
  }
  bool bad = false;
  p.MaxQpCount = param(p.MaxQpCount, "SOFTNDK_MAX_QP_COUNT", Limits::kDefaultCap, &bad);
  p.MaxCqCount = param(p.MaxCqCount, "SOFTNDK_MAX_CQ_COUNT", Limits::kDefaultCap, &bad);
  p.MaxPdCount = param(p.MaxPdCount, "SOFTNDK_MAX_PD_COUNT", Limits::kDefaultCap, &bad);
  p.MaxMrCount = param(p.MaxMrCount, "SOFTNDK_MAX_MR_COUNT", Limits::kDefaultCap, &bad);
  p.MaxMwCount = param(p.MaxMwCount, "SOFTNDK_MAX_MW_COUNT", Limits::kDefaultCap, &bad);
  p.MaxSrqCount = param(p.MaxSrqCount, "SOFTNDK_MAX_SRQ_COUNT", Limits::kDefaultCap, &bad);
  p.MaxConnectorCount =
      param(p.MaxConnectorCount, "SOFTNDK_MAX_CONNECTOR_COUNT", Limits::kDefaultCap, &bad);
  p.ConnectTimeoutMs = param(p.ConnectTimeoutMs, "SOFTNDK_CONNECT_TIMEOUT_MS", 10000, &bad);
  p.DisconnectTimeoutMs = param(p.DisconnectTimeoutMs, "SOFTNDK_DISCONNECT_TIMEOUT_MS", 5000, &bad);
  p.MpaRevision = param(p.MpaRevision, "SOFTNDK_MPA_REVISION", 2, &bad, 2);
  p.MpaFlags = param(p.MpaFlags, "SOFTNDK_MPA_FLAGS", SOFTNDK_MPA_RTR_WRITE | SOFTNDK_MPA_RTR_READ,
                     &bad, 0xffffffffu, true);
  p.EngineThreads = param(p.EngineThreads, "SOFTNDK_ENGINE_THREADS", 1, &bad, 64);
  if (bad) return STATUS_INVALID_PARAMETER;
  if (p.EngineThreads > 64 || p.MpaRevision > 2) return STATUS_INVALID_PARAMETER;
  if ((p.MpaFlags & SOFTNDK_MPA_PEER_TO_PEER) && (p.MpaFlags & SOFTNDK_MPA_NO_PEER_TO_PEER))
    return STATUS_INVALID_PARAMETER;
  a->params_ = p;
  // Not in SOFTNDK_OPEN_PARAMETERS (that layout is the C ABI): a peer
  // workaround, so environment only. Capped by the TCP layer (2 s).
  a->mpa_holdoff_ms_ = param(0, "SOFTNDK_MPA_HOLDOFF_MS", 0, &bad);
  if (bad) return STATUS_INVALID_PARAMETER;
  // A silent peer's wake-up (rdmap/stream_wake.cc, docs/compatibility.md
  // note 1) is on by default: SOFTNDK_MPA_HOLDOFF_MS=0 turns every siw
  // workaround off, SOFTNDK_SILENT_PEER_WAKE_MS sets its first bound (0 off;
  // unset: from the connection's MPA round trip).
  a->silent_wake_ms_ = -1;
  if (const char* h = std::getenv("SOFTNDK_MPA_HOLDOFF_MS");
      h != nullptr && std::strcmp(h, "0") == 0)
    a->silent_wake_ms_ = 0;
  if (const char* w = std::getenv("SOFTNDK_SILENT_PEER_WAKE_MS"); w != nullptr && *w != '\0') {
    char* end = nullptr;
    unsigned long n = std::strtoul(w, &end, 10);
    if (end == w || *end != '\0' || n > 10000) {
      std::fprintf(stderr,
                   "softndk: SOFTNDK_SILENT_PEER_WAKE_MS=%s is not valid (milliseconds, 0 to "
                   "10000; 0 turns the wake-up off)\n",
                   w);
      return STATUS_INVALID_PARAMETER;
    }
    a->silent_wake_ms_ = static_cast<int32_t>(n);
  }
  // Also environment only: the TCP congestion control of every connection
  // ("" automatic, "system", or an algorithm this kernel allows; a name it
  // refuses fails the open rather than every connection later).
  if (const char* cc = std::getenv("SOFTNDK_TCP_CONGESTION")) {
    a->tcp_congestion_ = cc;
    if (!engine::iwarp_congestion_allowed(a->tcp_congestion_)) {
      refuse_env("SOFTNDK_TCP_CONGESTION", cc, "not a congestion control this kernel allows");
      return STATUS_INVALID_PARAMETER;
    }
  }
  // Also environment only: the same-host fast path, "on" (the default:
  // unset or empty) or "off"; anything else fails the open.
  a->samehost_ = true;
  if (const char* sh = std::getenv("SOFTNDK_SAMEHOST")) {
    std::string v = sh;
    if (v == "off" || v == "0") {
      a->samehost_ = false;
    } else if (v != "on" && v != "1" && !v.empty()) {
      refuse_env("SOFTNDK_SAMEHOST", sh, "want on or off");
      return STATUS_INVALID_PARAMETER;
    }
  }
  a->flags_ = p.Flags;
  auto cap = [&](Resource r, ULONG v) { a->caps_[static_cast<int>(r)] = v; };
  cap(Resource::kQp, p.MaxQpCount);
  cap(Resource::kCq, p.MaxCqCount);
  cap(Resource::kPd, p.MaxPdCount);
  cap(Resource::kMr, p.MaxMrCount);
  cap(Resource::kMw, p.MaxMwCount);
  cap(Resource::kSrq, p.MaxSrqCount);
  cap(Resource::kConnector, p.MaxConnectorCount);
  cap(Resource::kNone, ~0u);

  NDK_ADAPTER_INFO& i = a->info_;
  i.Version = run;
  i.VendorId = Limits::kVendorId;
  i.DeviceId = Limits::kDeviceId;
  i.MaxRegistrationSize = Limits::kMaxRegistrationSize;
  i.MaxWindowSize = Limits::kMaxWindowSize;
  i.FRMRPageCount = Limits::kFrmrPageCount;
  i.MaxInitiatorRequestSge = Limits::kMaxInitiatorSge;
  i.MaxReceiveRequestSge = Limits::kMaxReceiveSge;
  i.MaxReadRequestSge = Limits::kMaxReadSge;
  i.MaxTransferLength = Limits::kMaxTransferLength;
  i.MaxInlineDataSize = Limits::kMaxInlineData;
  i.MaxInboundReadLimit = Limits::kMaxIrd;
  i.MaxOutboundReadLimit = Limits::kMaxOrd;
  i.MaxReceiveQueueDepth = Limits::kMaxQueueDepth;
  i.MaxInitiatorQueueDepth = Limits::kMaxQueueDepth;
  i.MaxSrqDepth = Limits::kMaxSrqDepth;
  i.MaxCqDepth = Limits::kMaxCqDepth;
  i.LargeRequestThreshold = Limits::kLargeRequestThreshold;
  i.MaxCallerData = Limits::kMaxPrivateData;
  i.MaxCalleeData = Limits::kMaxPrivateData;
  i.AdapterFlags =
      NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED | NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED |
      NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED |
      NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED | NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED |
      NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
  if (p.EngineThreads > 1) i.AdapterFlags |= NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED;
  i.RdmaTechnology = NdkiWarp;

  a->engine_ = std::make_unique<util::Engine>(p.EngineThreads);
  provider::ProviderConfig pc;
  pc.params = p;
  pc.info = i;
  pc.engine = a->engine_.get();
  pc.ifname = dev->name;
  pc.mpa_holdoff_ms = a->mpa_holdoff_ms_;
  pc.tcp_congestion = a->tcp_congestion_;
  pc.samehost = a->samehost_;
  pc.silent_wake_ms = a->silent_wake_ms_;
  pc.begin_inline_notify = &Cq::begin_inline_notifications;
  pc.end_inline_notify = &Cq::end_inline_notifications;
  if (choice.backend == verbs::Backend::kVerbs) {
    std::string why;
    NTSTATUS st = plugin->open(pc, &a->provider_, &why);
    if (st != STATUS_SUCCESS) {
      std::fprintf(stderr, "softndk: %s: the verbs backend could not open: %s\n", dev->name.c_str(),
                   why.c_str());
      return st;
    }
    a->backend_.backend = SOFTNDK_BACKEND_VERBS;
  } else {
    if (NTSTATUS st = open_provider(pc, &a->provider_); st != STATUS_SUCCESS) return st;
    a->backend_.backend = SOFTNDK_BACKEND_IWARP_SW;
  }
  // The engine's own limits (a device's) replace or lower the defaults.
  a->provider_->adapter_info(&a->info_);
  a->backend_.device = a->provider_->describe();
  a->backend_.why = choice.why;
  a->port_state_.store(dev->up ? SoftNdkPortStateActive : SoftNdkPortStateDown);

  auto* h = new AdapterHandle{};
  h->ndk.Header.Version = run;
  h->ndk.Header.ObjectType = NdkObjectTypeAdapter;
  h->ndk.Dispatch = &kAdapterDispatch;
  h->self = a.get();
  h->magic.store(kMagicLive, std::memory_order_release);
  a->handle_ = h;

  Adapter* raw = a.get();
  a->monitor_id_ = NetMonitor::instance().subscribe(
      dev->ifindex, [raw](const NetDevice&, NetEvent ev) { raw->on_net_event(ev); });
  *out = a.release();
  return STATUS_SUCCESS;
}

Adapter::~Adapter() = default;

bool Adapter::reserve(Resource r) {
  auto& used = used_[static_cast<int>(r)];
  uint32_t cap = caps_[static_cast<int>(r)];
  uint32_t v = used.load(std::memory_order_relaxed);
  do {
    if (v >= cap) return false;
  } while (!used.compare_exchange_weak(v, v + 1, std::memory_order_relaxed));
  return true;
}

void Adapter::unreserve(Resource r) { used_[static_cast<int>(r)].fetch_sub(1); }

void Adapter::publish(Object* o) {
  std::lock_guard lk(objects_mu_);
  live_.insert(o);
}

void Adapter::retire(Object* o) {
  std::unique_ptr<Object> evicted;
  {
    std::lock_guard lk(objects_mu_);
    live_.erase(o);
    if (o->type() == NdkObjectTypeQp) {
      // Its data-path counts move into the adapter's own (counters.h): the
      // sum read_counters() reports does not change.
      const Counters& q = static_cast<Qp*>(o)->counters();
      for (auto [dst, src] : {std::pair{&counters_.rdma_in_octets, &q.rdma_in_octets},
                              std::pair{&counters_.rdma_out_octets, &q.rdma_out_octets},
                              std::pair{&counters_.rdma_in_frames, &q.rdma_in_frames},
                              std::pair{&counters_.rdma_out_frames, &q.rdma_out_frames}})
        dst->fetch_add(src->load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    unreserve(o->resource());
    o->mark_dead();
    quarantine_.emplace_back(o);
    if (!shutting_down_ && quarantine_.size() > Limits::kQuarantine) {
      evicted = std::move(quarantine_.front());
      quarantine_.pop_front();
    }
    if (live_.empty()) objects_cv_.notify_all();
  }
}

void Adapter::read_counters(SOFTNDK_COUNTERS* out) {
  std::lock_guard lk(objects_mu_);
  counters_.read(out);
  for (Object* o : live_)
    if (o->type() == NdkObjectTypeQp) add_data_path(static_cast<Qp*>(o)->counters(), out);
  out->RDMAInOctets -= data_path_base_.RDMAInOctets;
  out->RDMAOutOctets -= data_path_base_.RDMAOutOctets;
  out->RDMAInFrames -= data_path_base_.RDMAInFrames;
  out->RDMAOutFrames -= data_path_base_.RDMAOutFrames;
}

void Adapter::reset_counters() {
  std::lock_guard lk(objects_mu_);
  counters_.reset();
  data_path_base_ = {};
  for (Object* o : live_)
    if (o->type() == NdkObjectTypeQp)
      add_data_path(static_cast<Qp*>(o)->counters(), &data_path_base_);
}

size_t Adapter::live_objects() {
  std::lock_guard lk(objects_mu_);
  return live_.size();
}

std::vector<Object*> Adapter::snapshot_live() {
  std::lock_guard lk(objects_mu_);
  std::vector<Object*> v;
  v.reserve(live_.size());
  // Holds keep each one from finishing meanwhile; objects already finishing
  // (last reference gone, completion posted) are left alone.
  for (Object* o : live_)
    if (o->try_hold()) v.push_back(o);
  return v;
}

NTSTATUS Adapter::deliver_created(Object* o, NDK_FN_CREATE_COMPLETION cb, void* ctx, void** out) {
  publish(o);
  if (async_create()) {
    o->hold();
    post([o, cb, ctx] {
      cb(ctx, STATUS_SUCCESS, o->header());
      o->release();
    });
    return STATUS_PENDING;
  }
  *out = o->header();
  return STATUS_SUCCESS;
}

NTSTATUS Adapter::finish_request(Object* o, NDK_FN_REQUEST_COMPLETION cb, void* ctx,
                                 NTSTATUS status) {
  if (status != STATUS_SUCCESS || !async_create() || cb == nullptr) return status;
  if (o != nullptr) o->hold();
  post([o, cb, ctx] {
    cb(ctx, STATUS_SUCCESS);
    if (o != nullptr) o->release();
  });
  return STATUS_PENDING;
}

std::shared_ptr<util::PcapFile> Adapter::trace_file() {
  std::lock_guard lk(trace_mu_);
  return trace_;
}

bool Adapter::registration_fault() {
  uint32_t v = fail_registration_in_.load();
  while (v != 0) {
    if (fail_registration_in_.compare_exchange_weak(v, v - 1)) return v == 1;
  }
  return false;
}

NTSTATUS Adapter::query_info(NDK_ADAPTER_INFO* info, ULONG* size) {
  if (size == nullptr) return STATUS_INVALID_PARAMETER;
  if (info == nullptr || *size < sizeof(NDK_ADAPTER_INFO)) {
    *size = sizeof(NDK_ADAPTER_INFO);
    return STATUS_BUFFER_TOO_SMALL;
  }
  *info = info_;
  *size = sizeof(NDK_ADAPTER_INFO);
  return STATUS_SUCCESS;
}

void Adapter::raise_fatal() {
  std::deque<SOFTNDK_REQUEST*> fatal, port;
  {
    std::lock_guard lk(ctl_mu_);
    if (fatal_.exchange(true)) return;
    fatal.swap(fatal_reqs_);
    port.swap(port_reqs_);
  }
  std::vector<Object*> objs = snapshot_live();
  for (Object* o : objs)
    if (o->type() == NdkObjectTypeQp && !o->closing()) static_cast<Qp*>(o)->to_error();
  for (Object* o : objs) {
    if (o->type() == NdkObjectTypeCq) static_cast<Cq*>(o)->fail(STATUS_INTERNAL_ERROR);
    if (o->type() == NdkObjectTypeSrq) static_cast<Srq*>(o)->fail();
  }
  for (Object* o : objs) o->release();
  for (SOFTNDK_REQUEST* r : fatal) complete_request_async(r, STATUS_SUCCESS, 0);
  for (SOFTNDK_REQUEST* r : port) complete_request_async(r, STATUS_FILE_FORCED_CLOSED, 0);
}

bool Adapter::same_interface(const Adapter* other) const {
  return other == this ||
         (other != nullptr && other->dev_.ifindex == dev_.ifindex && other->netns_ == netns_);
}

uint32_t Adapter::close_bound_ms() const {
  // Long enough for every connection to finish its graceful disconnect
  // (DisconnectTimeoutMs) and its close completions to run.
  return params_.DisconnectTimeoutMs + kCloseGraceMs;
}

bool Adapter::wait_until_empty() {
  const uint32_t bound = close_bound_ms();
  std::unique_lock lk(objects_mu_);
  if (objects_cv_.wait_for(lk, std::chrono::milliseconds(bound), [this] { return live_.empty(); }))
    return true;
  // What it waited for, object by object: kind, references still held and
  // whether its close had started (NDKPI: a successor or a callback in
  // flight keeps an object alive).
  std::string what;
  for (Object* o : live_) {
    char one[96];
    std::snprintf(one, sizeof one, "%s%s %p (%u references, %s)", what.empty() ? "" : ", ",
                  object_type_name(o->type()), static_cast<void*>(o), o->refs(),
                  o->closing() ? "closing" : "open");
    what += one;
  }
  std::fprintf(stderr,
               "softndk: SoftNdkCloseAdapter(%s): gave up after %u ms waiting for %zu object(s) "
               "to finish closing: %s\n",
               dev_.name.c_str(), bound, live_.size(), what.c_str());
  return false;
}

void Adapter::close_blocking() {
  cancel_all_requests();
  std::vector<Object*> objs;
  {
    std::lock_guard lk(objects_mu_);
    shutting_down_ = true;
  }
  objs = snapshot_live();
  for (Object* o : objs)
    if (!o->closing()) o->close(nullptr, nullptr, false);
  // A QP of this instance held by a connector of another one (accepted or
  // connected through it) would keep this close waiting for as long as the
  // consumer keeps that connector open: the connector lets go of it.
  for (Object* o : objs)
    if (o->type() == NdkObjectTypeQp) static_cast<Qp*>(o)->release_from_holder();
  for (Object* o : objs) o->release();
  if (!wait_until_empty()) {
    // Gave up (reported on stderr): the objects still alive may call into
    // this adapter and its engine later, so both are kept (leaked) instead
    // of freed under them; only the handle is marked closed.
    NetMonitor::instance().unsubscribe(monitor_id_);
    PortCaps::release_all(this);
    handle_->magic.store(kMagicClosed, std::memory_order_release);
    return;
  }
  NetMonitor::instance().unsubscribe(monitor_id_);
  PortCaps::release_all(this);
  // Runs what is still posted (last close completions) and stops the
  // threads. A thread stuck in a consumer's callback past the bound is
  // reported (util::Reactor::shutdown) and, as above, the adapter and its
  // engine are kept (leaked on purpose): the thread may still call into them.
  if (!engine_->stop()) {
    std::fprintf(stderr,
                 "softndk: SoftNdkCloseAdapter(%s): gave up waiting for its event threads to "
                 "stop; the adapter is left allocated (leaked) so they never run on freed "
                 "memory\n",
                 dev_.name.c_str());
    handle_->magic.store(kMagicClosed, std::memory_order_release);
    return;
  }
  engine_.reset();
  provider_.reset();
  handle_->magic.store(kMagicClosed, std::memory_order_release);
  handle_->self = nullptr;
  {
    HandleQuarantine& hq = handle_quarantine();
    std::lock_guard lk(hq.mu);
    hq.q.emplace_back(handle_);
    if (hq.q.size() > 64) hq.q.pop_front();
  }
  {
    std::lock_guard lk(objects_mu_);
    for (auto& o : quarantine_) o->mark_dead();
    quarantine_.clear();
  }
  delete this;
}

}  // namespace softndk::ndk
