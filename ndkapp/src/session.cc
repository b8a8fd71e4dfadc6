// SPDX-License-Identifier: Apache-2.0
// session.cc - blocking, bounded, RAII use of the NDKPI dispatch tables.
#include "ndkapp/session.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <thread>

#include "ndkapp/softndk_entry.h"
#include "ndkapp/status.h"

namespace softndk::tools {

namespace {

[[noreturn]] void fail(const std::string& what, NTSTATUS st) {
  throw ToolError(what + ": " + status_name(st));
}

NDK_VERSION kVersion{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};

}  // namespace

// ---------------------------------------------------------------------------
// Pending

struct Pending::Impl {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  NTSTATUS status = STATUS_PENDING;
  NDK_OBJECT_HEADER* obj = nullptr;

  void complete(NTSTATUS st, NDK_OBJECT_HEADER* o) {
    std::lock_guard lk(m);
    status = st;
    obj = o;
    done = true;
    // Notify under the lock: once the waiter can run, this thread no longer
    // touches the (then freed) state.
    cv.notify_all();
  }
};

Pending::Pending() : impl_(new Impl) {}
Pending::~Pending() { delete impl_; }

void Pending::on_request(PVOID ctx, NTSTATUS status) {
  static_cast<Pending*>(ctx)->impl_->complete(status, nullptr);
}
void Pending::on_create(PVOID ctx, NTSTATUS status, NDK_OBJECT_HEADER* obj) {
  static_cast<Pending*>(ctx)->impl_->complete(status, obj);
}
void Pending::on_close(PVOID ctx) {
  static_cast<Pending*>(ctx)->impl_->complete(STATUS_SUCCESS, nullptr);
}

NTSTATUS Pending::finish(Pending* p, NTSTATUS returned, double timeout_s, NDK_OBJECT_HEADER** obj) {
  if (returned != STATUS_PENDING) {
    delete p;  // final inline status: no callback follows
    return returned;
  }
  Impl& s = *p->impl_;
  {
    std::unique_lock lk(s.m);
    if (!s.cv.wait_until(lk, deadline_in(timeout_s), [&] { return s.done; })) {
      return STATUS_IO_TIMEOUT;  // p leaked: the callback may still come
    }
  }
  NTSTATUS st = s.status;
  if (obj) *obj = s.obj;
  delete p;
  return st;
}

Pending* Pending::try_make() noexcept {
  try {
    return new Pending;
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

NTSTATUS Pending::peek(Pending* p) {
  std::lock_guard lk(p->impl_->m);
  return p->impl_->done ? p->impl_->status : STATUS_PENDING;
}

bool close_object(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_OBJECT close, double timeout_s) {
  if (!obj || !close) return true;
  auto* p = Pending::try_make();
  if (!p) {
    // Out of memory (destructors run here, so nothing may throw): close
    // without waiting; the caller treats the object as still open.
    close(obj, nullptr, nullptr);
    return false;
  }
  NTSTATUS st = close(obj, &Pending::on_close, p);
  return Pending::finish(p, st, timeout_s) != STATUS_IO_TIMEOUT;
}

// ---------------------------------------------------------------------------
// Adapter

Adapter::Adapter(const AdapterOptions& opt) : timeout_s_(opt.timeout_s) {
  SOFTNDK_OPEN_PARAMETERS params{};
  params.Size = sizeof params;
  params.MpaRevision = opt.mpa_revision;
  if (opt.crc >= 0) {
    // A non-zero MpaFlags replaces the default set, so keep the default RTR
    // types. On: require CRC. Off: do not ask for it, not even off-host
    // (a peer that asks still gets it, as RFC 5044 wants).
    params.MpaFlags = SOFTNDK_MPA_RTR_WRITE | SOFTNDK_MPA_RTR_READ;
    params.MpaFlags |= opt.crc == 1 ? SOFTNDK_MPA_CRC_REQUIRED : SOFTNDK_MPA_CRC_WHEN_ASKED;
  }
  params.ConnectTimeoutMs = static_cast<ULONG>(opt.timeout_s * 1000);
  params.Flags |= opt.open_flags;
  if (opt.disconnect_timeout_s > 0)
    params.DisconnectTimeoutMs =
        std::max<ULONG>(1, static_cast<ULONG>(opt.disconnect_timeout_s * 1000));
  NTSTATUS st = SoftNdkOpenAdapter(opt.name.c_str(), kVersion, &params, &adapter_);
  if (st != STATUS_SUCCESS || !adapter_) {
    if (st == STATUS_NO_SUCH_DEVICE)
      throw ToolError("no softndk adapter for '" + opt.name + "' (no such interface or address)");
    fail("cannot open adapter '" + opt.name + "'", st);
  }
  ULONG size = sizeof info_;
  st = adapter_->Dispatch->NdkQueryAdapterInfo(adapter_, &info_, &size);
  if (st != STATUS_SUCCESS) {
    SoftNdkCloseAdapter(adapter_);
    adapter_ = nullptr;
    fail("NdkQueryAdapterInfo", st);
  }
}

Adapter::~Adapter() {
  if (adapter_) SoftNdkCloseAdapter(adapter_);
}

void Adapter::limit_teardown(double seconds) {
  const Clock::rep end = deadline_in(seconds).time_since_epoch().count();
  Clock::rep cur = teardown_end_.load();
  // Only ever earlier: a second error does not extend the first one's bound.
  while ((cur == 0 || end < cur) && !teardown_end_.compare_exchange_weak(cur, end)) {
  }
}

double Adapter::close_timeout() const {
  const Clock::rep end = teardown_end_.load();
  if (end == 0) return timeout_s_;
  const double left =
      std::chrono::duration<double>(Deadline(Clock::duration(end)) - Clock::now()).count();
  return std::clamp(left, 0.01, timeout_s_);
}

// ---------------------------------------------------------------------------
// PD

Pd::Pd(Adapter& a) : a_(a) {
  auto* p = new Pending;
  NDK_PD* pd = nullptr;
  NTSTATUS st = a.get()->Dispatch->NdkCreatePd(a.get(), &Pending::on_create, p, &pd);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) fail("NdkCreatePd", st);
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
  if (st != STATUS_SUCCESS) fail("NdkCreateCq", st);
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
    if (notify_->status != STATUS_SUCCESS) fail("completion queue failed", notify_->status);
  }
}

// ---------------------------------------------------------------------------
// Buffer

Buffer::Buffer(Adapter& a, Pd& pd, size_t length, ULONG mr_flags, bool shared)
    : a_(a), shared_(shared), length_(length) {
  size_t alloc = (std::max<size_t>(length, 1) + 4095) & ~size_t{4095};
  if (shared) {
    void* p = nullptr;
    NTSTATUS st = SoftNdkAllocateSharedMemory(alloc, &p);
    if (st != STATUS_SUCCESS)
      throw ToolError("SoftNdkAllocateSharedMemory of " + std::to_string(alloc) +
                      " bytes: " + status_name(st));
    data_ = static_cast<uint8_t*>(p);  // zeroed
  } else {
    // Anonymous pages: zeroed and committed only when touched, so a
    // server's buffers for a peer still in its handshake cost address
    // space, not memory (HandshakeGate).
    void* m = mmap(nullptr, alloc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
      throw ToolError("out of memory for a " + std::to_string(length) + "-byte buffer");
    data_ = static_cast<uint8_t*>(m);
  }
  auto* p = new Pending;
  NDK_MR* mr = nullptr;
  NTSTATUS st = pd.get()->Dispatch->NdkCreateMr(pd.get(), FALSE, &Pending::on_create, p, &mr);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) fail("NdkCreateMr", st);
  mr_ = mr ? mr : reinterpret_cast<NDK_MR*>(obj);
  mdl_.Next = nullptr;
  mdl_.VirtualAddress = data_;
  mdl_.ByteCount = alloc;
  p = new Pending;
  st = mr_->Dispatch->NdkRegisterMr(mr_, &mdl_, alloc, mr_flags, &Pending::on_request, p);
  st = Pending::finish(p, st, a.timeout());
  if (st != STATUS_SUCCESS) fail("NdkRegisterMr of " + std::to_string(length) + " bytes", st);
  registered_ = true;
  ltoken_ = mr_->Dispatch->NdkGetLocalTokenFromMr(mr_);
  rtoken_ = mr_->Dispatch->NdkGetRemoteTokenFromMr(mr_);
}

Buffer::~Buffer() {
  bool freed_ok = true;
  if (mr_) {
    if (registered_) {
      auto* p = Pending::try_make();
      if (p) {
        NTSTATUS st = mr_->Dispatch->NdkDeregisterMr(mr_, &Pending::on_request, p);
        freed_ok = Pending::finish(p, st, a_.close_timeout()) != STATUS_IO_TIMEOUT;
      } else {
        freed_ok = false;  // out of memory: the close below still goes
      }
    }
    freed_ok =
        close_object(&mr_->Header, mr_->Dispatch->NdkCloseMr, a_.close_timeout()) && freed_ok;
  }
  // Memory still registered (a close that timed out) is leaked, not freed.
  if (!freed_ok) return;
  if (shared_) {
    SoftNdkFreeSharedMemory(data_);
  } else {
    munmap(data_, (std::max<size_t>(length_, 1) + 4095) & ~size_t{4095});
  }
}

NDK_SGE Buffer::sge(size_t offset, size_t length) const {
  NDK_SGE s{};
  s.VirtualAddress = data_ + offset;
  s.Length = static_cast<ULONG>(length);
  s.MemoryRegionToken = ltoken_;
  return s;
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
  if (st != STATUS_SUCCESS) fail("NdkCreateQp", st);
  qp_ = qp ? qp : reinterpret_cast<NDK_QP*>(obj);
}

Qp::~Qp() {
  if (qp_) close_object(&qp_->Header, qp_->Dispatch->NdkCloseQp, a_.close_timeout());
}

// ---------------------------------------------------------------------------
// Connection

struct Connection::Events {
  std::mutex m;
  std::condition_variable cv;
  bool disconnected = false;
  ULONG reason = 0;  // the _EX event's: 0 graceful (FIN), else an NTSTATUS
  Cq* interrupt = nullptr;
};

void Connection::on_disconnect(PVOID ctx, ULONG reason) {
  auto* e = static_cast<Events*>(ctx);
  std::lock_guard lk(e->m);
  e->disconnected = true;
  e->reason = reason;
  if (e->interrupt) e->interrupt->interrupt();
  e->cv.notify_all();
}

bool Connection::wait_disconnected(double seconds) const {
  std::unique_lock lk(events_->m);
  return events_->cv.wait_until(lk, deadline_in(seconds), [&] { return events_->disconnected; });
}

void Connection::interrupt_on_disconnect(Cq& cq) {
  std::lock_guard lk(events_->m);
  events_->interrupt = &cq;
  if (events_->disconnected) cq.interrupt();
}

Connection::Connection(Adapter& a, NDK_CONNECTOR* connector)
    : a_(a), conn_(connector), events_(new Events) {}

Connection::~Connection() {
  if (accepting_ != nullptr) accept_status();
  if (connected_ && !disconnected_) disconnect();
  if (conn_ &&
      !close_object(&conn_->Header, conn_->Dispatch->NdkCloseConnector, a_.close_timeout()))
    return;  // events_ leaked: the disconnect callback may still come
  // An accept still running completes (cancelled) by the close; if it has
  // not, its Pending stays leaked for the late callback.
  if (accepting_ != nullptr && Pending::peek(accepting_) != STATUS_PENDING) delete accepting_;
  delete events_;
}

std::unique_ptr<Connection> Connection::connect(Adapter& a, Qp& qp, const SockAddr& local,
                                                const SockAddr& peer, ULONG ird, ULONG ord,
                                                const std::vector<uint8_t>& pdata,
                                                std::vector<uint8_t>* peer_pdata,
                                                std::vector<uint8_t>* reject_data) {
  auto* p = new Pending;
  NDK_CONNECTOR* c = nullptr;
  NTSTATUS st = a.get()->Dispatch->NdkCreateConnector(a.get(), &Pending::on_create, p, &c);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) fail("NdkCreateConnector", st);
  auto conn = std::make_unique<Connection>(a, c ? c : reinterpret_cast<NDK_CONNECTOR*>(obj));
  NDK_CONNECTOR* k = conn->conn_;

  p = new Pending;
  st = k->Dispatch->NdkConnect(k, qp.get(), local.sa(), local.len, peer.sa(), peer.len, ird, ord,
                               const_cast<uint8_t*>(pdata.data()), static_cast<ULONG>(pdata.size()),
                               &Pending::on_request, p);
  // The library bounds the connect itself (ConnectTimeoutMs); give it a
  // little more before calling it a hang.
  st = Pending::finish(p, st, a.timeout() + 5);
  if (st != STATUS_SUCCESS) {
    if (reject_data && st == STATUS_CONNECTION_REFUSED) {
      // Not every provider keeps a reject's private data; try, quietly.
      std::vector<uint8_t> buf(512);
      ULONG len = static_cast<ULONG>(buf.size());
      NTSTATUS s2 = k->Dispatch->NdkGetConnectionData(k, nullptr, nullptr, buf.data(), &len);
      if (s2 == STATUS_SUCCESS) {
        buf.resize(std::min<size_t>(len, buf.size()));
        *reject_data = std::move(buf);
      }
    }
    SOFTNDK_PEER_ACTIVITY act{};
    act.Size = sizeof act;
    ULONG phase =
        SoftNdkQueryPeerActivity(k, &act) == STATUS_SUCCESS ? act.SetupPhase : SOFTNDK_SETUP_NONE;
    throw ToolError(connect_failure_text(st, peer.to_string(), phase));
  }
  if (peer_pdata) {
    std::vector<uint8_t> buf(512);
    ULONG len = static_cast<ULONG>(buf.size());
    NTSTATUS s2 = k->Dispatch->NdkGetConnectionData(k, nullptr, nullptr, buf.data(), &len);
    if (s2 != STATUS_SUCCESS && s2 != STATUS_BUFFER_TOO_SMALL) fail("NdkGetConnectionData", s2);
    buf.resize(std::min<size_t>(len, buf.size()));
    *peer_pdata = std::move(buf);
  }
  p = new Pending;
  // The _EX form tells a reset from a graceful close (end_cause).
  st = k->Dispatch->NdkCompleteConnectEx(k, &Connection::on_disconnect, conn->events_,
                                         &Pending::on_request, p);
  st = Pending::finish(p, st, a.timeout());
  if (st != STATUS_SUCCESS) fail("NdkCompleteConnect with " + peer.to_string(), st);
  conn->connected_ = true;
  return conn;
}

std::vector<uint8_t> Connection::peer_data(ULONG* ird, ULONG* ord) {
  std::vector<uint8_t> buf(512);
  ULONG len = static_cast<ULONG>(buf.size());
  NTSTATUS st = conn_->Dispatch->NdkGetConnectionData(conn_, ird, ord, buf.data(), &len);
  if (st != STATUS_SUCCESS && st != STATUS_BUFFER_TOO_SMALL) fail("NdkGetConnectionData", st);
  buf.resize(std::min<size_t>(len, buf.size()));
  return buf;
}

void Connection::accept(Qp& qp, ULONG ird, ULONG ord, const std::vector<uint8_t>& pdata) {
  auto* p = new Pending;
  NTSTATUS st =
      conn_->Dispatch->NdkAcceptEx(conn_, qp.get(), ird, ord, const_cast<uint8_t*>(pdata.data()),
                                   static_cast<ULONG>(pdata.size()), &Connection::on_disconnect,
                                   events_, &Pending::on_request, p);
  st = Pending::finish(p, st, a_.timeout() + 5);
  if (st != STATUS_SUCCESS) fail("NdkAccept", st);
  connected_ = true;
}

void Connection::accept_start(Qp& qp, ULONG ird, ULONG ord, const std::vector<uint8_t>& pdata) {
  if (accepting_ != nullptr || connected_) throw ToolError("NdkAccept: already accepted");
  accept_pdata_ = pdata;  // the call may read it after it returned
  auto* p = new Pending;
  NTSTATUS st = conn_->Dispatch->NdkAcceptEx(
      conn_, qp.get(), ird, ord, accept_pdata_.data(), static_cast<ULONG>(accept_pdata_.size()),
      &Connection::on_disconnect, events_, &Pending::on_request, p);
  if (st != STATUS_PENDING) {
    delete p;  // final inline status: no callback follows
    if (st != STATUS_SUCCESS) fail("NdkAccept", st);
    connected_ = true;
    return;
  }
  accepting_ = p;
}

NTSTATUS Connection::accept_status() {
  if (accepting_ == nullptr) return connected_ ? STATUS_SUCCESS : STATUS_CONNECTION_ABORTED;
  NTSTATUS st = Pending::peek(accepting_);
  if (st == STATUS_PENDING) return st;
  delete accepting_;
  accepting_ = nullptr;
  if (st == STATUS_SUCCESS) connected_ = true;
  return st;
}

bool Connection::handshake_done(Qp& qp) {
  if (accept_status() != STATUS_SUCCESS) return false;
  // On the verbs backend the device's connection manager finished the
  // handshake before the accept completed (the peer's RTU/RTR), and no FPDU
  // counters exist: an accepted connection is a served one.
  SOFTNDK_BACKEND_INFO bi{};
  bi.Size = sizeof(bi);
  if (SoftNdkQueryBackend(a_.get(), &bi) == STATUS_SUCCESS && bi.Backend == SOFTNDK_BACKEND_VERBS)
    return true;
  SOFTNDK_CONNECTION_INFO ci{};
  if (info(ci) && ci.RtrType != 0) return true;  // the accept waited for the RTR
  SOFTNDK_COUNTERS c{};
  return SoftNdkQueryQpCounters(qp.get(), &c) == STATUS_SUCCESS && c.RDMAInOctets > 0;
}

void Connection::reject(const std::vector<uint8_t>& pdata) {
  conn_->Dispatch->NdkReject(conn_, const_cast<uint8_t*>(pdata.data()),
                             static_cast<ULONG>(pdata.size()));
}

bool Connection::peer_disconnected() const {
  std::lock_guard lk(events_->m);
  return events_->disconnected;
}

void Connection::disconnect() {
  if (!connected_ || disconnected_) return;
  disconnected_ = true;
  auto* p = Pending::try_make();
  if (!p) return;  // out of memory (a destructor may be calling): the close aborts instead
  NTSTATUS st = conn_->Dispatch->NdkDisconnect(conn_, &Pending::on_request, p);
  Pending::finish(p, st, a_.close_timeout());
}

bool Connection::info(SOFTNDK_CONNECTION_INFO& out) const {
  if (&SoftNdkQueryConnectionInfo == nullptr) return false;
  return SoftNdkQueryConnectionInfo(conn_, &out) == STATUS_SUCCESS;
}

namespace {

// "LLP layer, MPA CRC error (0x00020002)" for a SOFTNDK_CONNECTION_INFO
// Terminate (layer<<16 | etype<<8 | code; RFC 5040 4.8 layers).
std::string terminate_text(ULONG code) {
  if (code == 0x00FFFFFF) return "a Terminate that could not be parsed";
  static const char* const kLayers[] = {"RDMAP", "DDP", "LLP"};
  ULONG layer = code >> 16;
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08X", static_cast<unsigned>(code));
  const char* name = SoftNdkTerminateName(code);
  std::string s = layer < 3 ? std::string(kLayers[layer]) + " layer" : "unknown layer";
  return s + ", " + (name ? name : "unknown error") + " (" + hex + ")";
}

}  // namespace

std::string Connection::end_cause() const {
  SOFTNDK_CONNECTION_INFO ci{};
  if (info(ci)) {
    // What this side sent explains the end best: it saw the error first.
    if (ci.LastTerminateSent != 0xFFFFFFFF)
      return "sent a Terminate: " + terminate_text(ci.LastTerminateSent);
    if (ci.LastTerminateReceived != 0xFFFFFFFF)
      return "the peer sent a Terminate: " + terminate_text(ci.LastTerminateReceived);
  }
  std::lock_guard lk(events_->m);
  if (events_->disconnected && events_->reason != 0) {
    auto st = static_cast<NTSTATUS>(events_->reason);
    if (st == STATUS_CONNECTION_RESET || st == STATUS_CONNECTION_ABORTED)
      return "connection reset (" + status_name(st) + ")";
    return "connection lost (" + status_name(st) + ")";
  }
  return "";
}

std::string with_end_cause(const std::string& what, const Connection* c) {
  std::string cause = c ? c->end_cause() : "";
  return cause.empty() ? what : what + ": " + cause;
}

std::string Connection::silence() const {
  SOFTNDK_PEER_ACTIVITY a{};
  a.Size = sizeof a;
  if (conn_ == nullptr || SoftNdkQueryPeerActivity(conn_, &a) != STATUS_SUCCESS) return "";
  return silent_peer_text(a);
}

void throw_if_silent(const std::string& what, const Connection* c) {
  if (c == nullptr) return;
  std::string s = c->silence();
  if (!s.empty()) throw PeerSilentError(what + ": " + s);
}

bool Connection::tcp_info(SOFTNDK_TCP_INFO& out) const {
  out = SOFTNDK_TCP_INFO{};
  out.Size = sizeof out;
  return SoftNdkQueryConnectionTcpInfo(conn_, &out) == STATUS_SUCCESS;
}

bool Connection::path_info(SOFTNDK_PATH_INFO& out) const {
  out = SOFTNDK_PATH_INFO{};
  out.Size = sizeof out;
  return SoftNdkQueryConnectionPath(conn_, &out) == STATUS_SUCCESS;
}

std::string Connection::path_text(double settle_seconds) const {
  SOFTNDK_PATH_INFO pi{};
  if (!path_info(pi)) return "";
  // The rendezvous runs beside the first messages; it ends within the
  // library's grace (docs/samehost.md), so a short bounded wait gives the
  // path the data takes rather than "probing".
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(settle_seconds);
  while (pi.Path == SOFTNDK_PATH_PROBING && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!path_info(pi)) return "";
  }
  const char* name = SoftNdkPathName(pi.Path);
  std::string s = name ? name : "unknown (" + std::to_string(pi.Path) + ")";
  if (pi.Path == SOFTNDK_PATH_PROBING) {
    char b[64];
    std::snprintf(b, sizeof b, " (no answer within %g s)", settle_seconds);
    return s + b;
  }
  const char* why = SoftNdkPathReasonName(pi.Reason);
  if (pi.Path == SOFTNDK_PATH_TCP && why != nullptr) s += std::string(" (") + why + ")";
  // The FPDU stream itself on the same-host ring (docs/samehost.md 4).
  if (pi.RingIn || pi.RingOut)
    s += pi.RingIn && pi.RingOut ? " (ring)" : pi.RingOut ? " (ring out)" : " (ring in)";
  // Shared memory (--shm-buffers) copied from a mapping, by either end.
  if (pi.MappedDescriptors > 0 || pi.SegmentDescriptorsSent > 0) s += " (mapped)";
  return s;
}

SockAddr Connection::peer_address() const {
  SockAddr s;
  ULONG len = sizeof s.ss;
  if (conn_->Dispatch->NdkGetPeerAddress(conn_, s.sa(), &len) == STATUS_SUCCESS)
    s.len = static_cast<socklen_t>(len);
  return s;
}

// ---------------------------------------------------------------------------
// Listener

struct Listener::Queue {
  std::mutex m;
  std::condition_variable cv;
  std::deque<NDK_CONNECTOR*> q;
  bool cancelled = false;
  bool closing = false;  // the listener goes: refuse what still comes
};

void Listener::on_connect(PVOID ctx, NDK_CONNECTOR* connector) {
  auto* q = static_cast<Queue*>(ctx);
  {
    std::lock_guard lk(q->m);
    if (!q->closing) {
      q->q.push_back(connector);
      q->cv.notify_all();
      return;
    }
  }
  connector->Dispatch->NdkCloseConnector(&connector->Header, nullptr, nullptr);
}

Listener::Listener(Adapter& a, const SockAddr& address) : a_(a), queue_(new Queue) {
  auto* p = new Pending;
  NDK_LISTENER* l = nullptr;
  NTSTATUS st = a.get()->Dispatch->NdkCreateListener(a.get(), &Listener::on_connect, queue_,
                                                     &Pending::on_create, p, &l);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) {
    delete queue_;
    fail("NdkCreateListener", st);
  }
  listener_ = l ? l : reinterpret_cast<NDK_LISTENER*>(obj);
  p = new Pending;
  st =
      listener_->Dispatch->NdkListen(listener_, address.sa(), address.len, &Pending::on_request, p);
  st = Pending::finish(p, st, a.timeout());
  if (st != STATUS_SUCCESS) {
    release();
    throw ToolError(listen_failure_text(st, address.to_string()));
  }
  SockAddr bound;
  ULONG len = sizeof bound.ss;
  if (listener_->Dispatch->NdkGetLocalAddress(listener_, bound.sa(), &len) == STATUS_SUCCESS) {
    bound.len = static_cast<socklen_t>(len);
    port_ = bound.port();
  }
  if (port_ == 0) port_ = address.port();
}

void Listener::release() {
  if (!listener_) return;
  // Requests nobody took: close their connectors (which refuses them)
  // first, since a listener's close completes only once the connectors it
  // delivered are closed (NDKPI 6.1).
  std::deque<NDK_CONNECTOR*> left;
  {
    std::lock_guard lk(queue_->m);
    queue_->closing = true;
    left.swap(queue_->q);
  }
  for (NDK_CONNECTOR* c : left)
    close_object(&c->Header, c->Dispatch->NdkCloseConnector, a_.timeout());
  if (!close_object(&listener_->Header, listener_->Dispatch->NdkCloseListener, a_.timeout()))
    return;  // queue_ leaked: a connect event may still come
  delete queue_;
}

void Listener::cancel() {
  std::lock_guard lk(queue_->m);
  queue_->cancelled = true;
  queue_->cv.notify_all();
}

std::unique_ptr<Connection> Listener::next(Deadline deadline) {
  std::unique_lock lk(queue_->m);
  if (!queue_->cv.wait_until(lk, deadline, [&] { return !queue_->q.empty() || queue_->cancelled; }))
    return nullptr;
  if (queue_->cancelled) return nullptr;
  NDK_CONNECTOR* c = queue_->q.front();
  queue_->q.pop_front();
  return std::make_unique<Connection>(a_, c);
}

}  // namespace softndk::tools
