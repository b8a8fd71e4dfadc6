// SPDX-License-Identifier: Apache-2.0
// ndk_peer - the interop suite's host-side driver on softndk's public C ABI
// (softndk/ndkpi.h, softndk.h, softndk.hpp only: what a consumer sees).
//
//   ndk_peer connect HOST:PORT [MPA options]   connect, report, disconnect
//   ndk_peer listen HOST:PORT [--reject-len N] accept (or reject) --count requests
//   ndk_peer rdma HOST:PORT --ops LIST --size S   connect, then drive the
//            ivx exchange (ivx_proto.h) as the active side against verbs_peer
//   ndk_peer serve HOST:PORT --size S [--count N] [--fr]  listen, serve as
//            passive side; --fr: the advertised buffer is a fast-registered MR
//            (NdkFastRegister), the kind NDK lets a peer invalidate remotely
//
// One JSON object per connection (connect/listen) or per op (rdma/serve) on
// stdout; the fields match mpa_peer's where they mean the same thing.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "ivx_proto.h"
#include "peer_common.h"
#include "softndk/softndk.hpp"

using namespace interop;
using namespace std::chrono_literals;
using softndk::close_and_wait;
using softndk::create_and_wait;
using softndk::request_and_wait;
using softndk::status_name;

namespace {

struct RdmaOpts {
  std::vector<std::string> ops;
  size_t size = 65536;
  bool fr = false;  // advertise a fast-registered MR instead of a registered one
};

std::string term_name(ULONG t) {
  if (t == 0xFFFFFFFFu) return "none";
  char b[32];
  std::snprintf(b, sizeof b, "layer%u/etype%u/code0x%02x", (t >> 16) & 0xff, (t >> 8) & 0xff,
                t & 0xff);
  return b;
}

// One softndk adapter with the objects a connection needs.
class Peer {
 public:
  // `shared`: use that adapter (a listener's) instead of opening one; the
  // per-connection objects are then closed here, the adapter is not.
  Peer(const Options& o, size_t size, NDK_ADAPTER* shared = nullptr)
      : o_(o), size_(size), adapter_(shared), owns_adapter_(shared == nullptr) {}
  ~Peer() {
    if (owns_adapter_ && adapter_) {
      SoftNdkCloseAdapter(adapter_);  // closes whatever is still open
    } else {
      close_and_wait(conn_);
      close_and_wait(qp_);
      close_and_wait(frmr_);
      for (NDK_MR* m : {mr_, rmr_, cmr_}) {
        if (!m) continue;
        request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
          return m->Dispatch->NdkDeregisterMr(m, cb, ctx);
        });
        close_and_wait(m);
      }
      close_and_wait(pd_);
      close_and_wait(cq_);
    }
    if (buf_) ::munmap(buf_, size_);
    if (rbuf_) ::munmap(rbuf_, slot_ * IVX_RECVS);
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  NDK_ADAPTER* adapter() const { return adapter_; }

  NTSTATUS open() {
    if (!owns_adapter_) return STATUS_SUCCESS;
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    if (o_.rev) p.MpaRevision = o_.rev;
    ULONG f = 0;
    if (o_.crc) f |= SOFTNDK_MPA_CRC_REQUIRED;
    if (o_.p2p.empty()) {
      // The library's default: P2P offered (Write and Read RTR).
    } else if (o_.p2p == "none") {
      f |= SOFTNDK_MPA_NO_PEER_TO_PEER | SOFTNDK_MPA_RTR_WRITE | SOFTNDK_MPA_RTR_READ;
    } else {
      f |= SOFTNDK_MPA_PEER_TO_PEER;
      if (o_.p2p != "read") f |= SOFTNDK_MPA_RTR_WRITE;
      if (o_.p2p != "write") f |= SOFTNDK_MPA_RTR_READ;
    }
    p.MpaFlags = f;
    p.ConnectTimeoutMs = 20000;
    return SoftNdkOpenAdapter(o_.host.c_str(), {NDK_VERSION_MAJOR, NDK_VERSION_MINOR}, &p,
                              &adapter_);
  }

  // CQ, PD, QP, the data buffer and the receive slots, all registered.
  NTSTATUS create_qp() {
    auto* ad = adapter_->Dispatch;
    NTSTATUS s = create_and_wait<NDK_CQ>(
        [&](NDK_FN_CREATE_COMPLETION cb, PVOID ctx, NDK_CQ** out) {
          return ad->NdkCreateCq(adapter_, 256, &Peer::cq_notify, this, nullptr, cb, ctx, out);
        },
        &cq_);
    if (s != STATUS_SUCCESS) return s;
    s = create_and_wait<NDK_PD>(
        [&](NDK_FN_CREATE_COMPLETION cb, PVOID ctx, NDK_PD** out) {
          return ad->NdkCreatePd(adapter_, cb, ctx, out);
        },
        &pd_);
    if (s != STATUS_SUCCESS) return s;
    s = create_and_wait<NDK_QP>(
        [&](NDK_FN_CREATE_COMPLETION cb, PVOID ctx, NDK_QP** out) {
          return pd_->Dispatch->NdkCreateQp(pd_, cq_, cq_, this, IVX_RECVS + 4, 64, 1, 1, 0, cb,
                                            ctx, out);
        },
        &qp_);
    if (s != STATUS_SUCCESS) return s;
    slot_ = std::max<size_t>(size_, 64);
    buf_ = static_cast<uint8_t*>(
        ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    rbuf_ = static_cast<uint8_t*>(::mmap(nullptr, slot_ * IVX_RECVS, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if ((s = reg(buf_, size_, &mr_)) != STATUS_SUCCESS) return s;
    if ((s = reg(rbuf_, slot_ * IVX_RECVS, &rmr_)) != STATUS_SUCCESS) return s;
    if ((s = reg(ctrl_, sizeof ctrl_, &cmr_)) != STATUS_SUCCESS) return s;
    for (unsigned i = 0; i < IVX_RECVS; ++i)
      if ((s = post_recv(i)) != STATUS_SUCCESS) return s;
    return STATUS_SUCCESS;
  }

  NTSTATUS create_connector(NDK_CONNECTOR** out) {
    auto* ad = adapter_->Dispatch;
    return create_and_wait<NDK_CONNECTOR>(
        [&](NDK_FN_CREATE_COMPLETION cb, PVOID ctx, NDK_CONNECTOR** o) {
          return ad->NdkCreateConnector(adapter_, cb, ctx, o);
        },
        out);
  }

  // ---- connect / accept ----
  NTSTATUS connect(Json& j) {
    NTSTATUS s = create_connector(&conn_);
    if (s != STATUS_SUCCESS) return s;
    sockaddr_in dst = make_addr(o_.host, o_.port);
    // NdkConnect needs a source address: the wildcard, any port.
    sockaddr_in src{};
    src.sin_family = AF_INET;
    s = request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
      return conn_->Dispatch->NdkConnect(
          conn_, qp_, reinterpret_cast<const SOCKADDR*>(&src), sizeof src,
          reinterpret_cast<const SOCKADDR*>(&dst), sizeof dst, o_.ird, o_.ord,
          o_.pd.empty() ? nullptr : const_cast<uint8_t*>(o_.pd.data()),
          static_cast<ULONG>(o_.pd.size()), cb, ctx);
    });
    if (s != STATUS_SUCCESS) {
      // A reject carries the peer's private data (NdkGetConnectionData).
      uint8_t pd[512];
      ULONG len = sizeof pd, ird = 0, ord = 0;
      if (conn_->Dispatch->NdkGetConnectionData(conn_, &ird, &ord, pd, &len) == STATUS_SUCCESS)
        j.s("peer_pd", hex(pd, len)).n("peer_pd_len", len);
      return s;
    }
    s = request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
      return conn_->Dispatch->NdkCompleteConnectEx(conn_, &Peer::disconnect_event, this, cb, ctx);
    });
    if (s != STATUS_SUCCESS) j.s("complete_connect", status_name(s));
    // The guest capture shows the host's source port (slirp keeps it).
    sockaddr_storage la{};
    ULONG ll = sizeof la;
    if (conn_->Dispatch->NdkGetLocalAddress(conn_, reinterpret_cast<SOCKADDR*>(&la), &ll) ==
            STATUS_SUCCESS &&
        la.ss_family == AF_INET)
      j.n("local_port", ntohs(reinterpret_cast<sockaddr_in*>(&la)->sin_port));
    return s;
  }

  NTSTATUS accept(NDK_CONNECTOR* c) {
    conn_ = c;
    return request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
      return c->Dispatch->NdkAcceptEx(
          c, qp_, o_.ird, o_.ord, o_.pd.empty() ? nullptr : const_cast<uint8_t*>(o_.pd.data()),
          static_cast<ULONG>(o_.pd.size()), &Peer::disconnect_event, this, cb, ctx);
    });
  }

  void add_info(Json& j, NDK_CONNECTOR* c) {
    SOFTNDK_CONNECTION_INFO ci{};
    NTSTATUS s = SoftNdkQueryConnectionInfo(c, &ci);
    if (s != STATUS_SUCCESS) {
      j.s("info", status_name(s));
      return;
    }
    j.n("mpa_rev", ci.MpaRevision)
        .b("crc", ci.Crc)
        .b("markers", ci.Markers)
        .b("p2p", ci.PeerToPeer)
        .s("rtr", rtr_name(ci.RtrType))
        .n("ird", ci.Ird)
        .n("ord", ci.Ord)
        .s("terminate_sent", term_name(ci.LastTerminateSent))
        .s("terminate_received", term_name(ci.LastTerminateReceived));
    uint8_t pd[512];
    ULONG len = sizeof pd, ird = 0, ord = 0;
    if (c->Dispatch->NdkGetConnectionData(c, &ird, &ord, pd, &len) == STATUS_SUCCESS)
      j.n("peer_ird", ird).n("peer_ord", ord).n("peer_pd_len", len).s("peer_pd", hex(pd, len));
  }

  std::string disconnect() {
    if (!conn_) return "no connector";
    NTSTATUS s = request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
      return conn_->Dispatch->NdkDisconnect(conn_, cb, ctx);
    });
    return status_name(s);
  }

  // ---- data path ----
  // The advertised token: the fast-registered MR's once fast_register_buf()
  // ran, else the registered MR's.
  UINT32 remote_token() {
    NDK_MR* m = frmr_ ? frmr_ : mr_;
    return m->Dispatch->NdkGetRemoteTokenFromMr(m);
  }

  // Fast-registers the data buffer (needs a connected QP: NdkFastRegister is
  // a work request) so that remote_token() names a region a peer's Send with
  // Invalidate may invalidate (NDK: only fast-registered MRs and windows).
  NTSTATUS fast_register_buf() {
    auto* pdd = pd_->Dispatch;
    NTSTATUS s =
        create_and_wait<NDK_MR>([&](NDK_FN_CREATE_COMPLETION cb, PVOID ctx,
                                    NDK_MR** o) { return pdd->NdkCreateMr(pd_, TRUE, cb, ctx, o); },
                                &frmr_);
    if (s != STATUS_SUCCESS) return s;
    const ULONG pages = static_cast<ULONG>((size_ + NDK_PAGE_SIZE - 1) / NDK_PAGE_SIZE + 1);
    s = request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
      return frmr_->Dispatch->NdkInitializeFastRegisterMr(frmr_, pages, TRUE, cb, ctx);
    });
    if (s != STATUS_SUCCESS) return s;
    lam_.resize(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) + pages * sizeof(NDK_LOGICAL_ADDRESS));
    auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_.data());
    ULONG lam_size = static_cast<ULONG>(lam_.size()), fbo = 0;
    MDL mdl{nullptr, buf_, size_};
    auto* ad = adapter_->Dispatch;
    s = request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
      return ad->NdkBuildLAM(adapter_, &mdl, size_, cb, ctx, lam, &lam_size, &fbo);
    });
    if (s != STATUS_SUCCESS) return s;
    // The tagged offsets are the buffer's own addresses, as for the plain MR.
    s = qp_->Dispatch->NdkFastRegister(
        qp_, reinterpret_cast<PVOID>(kCtxSend), frmr_, lam->AdapterPageCount, lam->AdapterPageArray,
        fbo, size_, buf_,
        NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
            NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    if (s != STATUS_SUCCESS) return s;
    return wait_send();
  }
  uint8_t* buf() { return buf_; }
  size_t size() const { return size_; }

  NTSTATUS send_ctrl(uint32_t type, uint64_t va, uint32_t stag, uint32_t len, uint32_t seed,
                     uint32_t arg) {
    // One control message in flight at a time (each is awaited), so one
    // buffer suffices; its completion is consumed by wait_send().
    ivx_ctrl c{IVX_MAGIC, type, va, stag, len, seed, arg};
    ivx_swap(&c);
    std::memcpy(ctrl_, &c, sizeof c);
    NDK_SGE sge{};
    sge.VirtualAddress = ctrl_;
    sge.Length = IVX_CTRL_SIZE;
    sge.MemoryRegionToken = cmr_->Dispatch->NdkGetLocalTokenFromMr(cmr_);
    NTSTATUS s = qp_->Dispatch->NdkSend(qp_, reinterpret_cast<PVOID>(kCtxSend), &sge, 1, 0);
    if (s != STATUS_SUCCESS) return s;
    return wait_send();
  }

  NTSTATUS post_data(NDK_OPERATION_TYPE op, size_t len, uint64_t rva = 0, uint32_t rtoken = 0) {
    NDK_SGE sge{};
    sge.VirtualAddress = buf_;
    sge.Length = static_cast<ULONG>(len);
    sge.MemoryRegionToken = mr_->Dispatch->NdkGetLocalTokenFromMr(mr_);
    auto* qd = qp_->Dispatch;
    PVOID ctx = reinterpret_cast<PVOID>(kCtxSend);
    switch (op) {
      case NdkOperationTypeWrite:
        return qd->NdkWrite(qp_, ctx, &sge, 1, rva, rtoken, 0);
      case NdkOperationTypeRead:
        return qd->NdkRead(qp_, ctx, &sge, 1, rva, rtoken, 0);
      case NdkOperationTypeSend:
        return qd->NdkSend(qp_, ctx, &sge, 1, 0);
      default:
        return qd->NdkSendAndInvalidate(qp_, ctx, &sge, 1, 0, rtoken);
    }
  }

  // Next initiator-side completion.
  NTSTATUS wait_send(std::chrono::milliseconds d = 30s) {
    NDK_RESULT_EX r{};
    if (!next(&r, true, d)) return STATUS_IO_TIMEOUT;
    return r.Status;
  }

  // Next receive completion (and repost its slot). `data` points into the slot.
  bool wait_recv(NDK_RESULT_EX* r, uint8_t** data, std::chrono::milliseconds d = 30s) {
    if (!next(r, false, d)) return false;
    auto slot = reinterpret_cast<uintptr_t>(r->RequestContext) - kCtxRecv;
    *data = rbuf_ + slot * slot_;
    last_slot_ = static_cast<unsigned>(slot);
    return true;
  }
  NTSTATUS repost() { return post_recv(last_slot_); }

  bool recv_ctrl(ivx_ctrl* c, std::chrono::milliseconds d = 30s) {
    NDK_RESULT_EX r{};
    uint8_t* p = nullptr;
    if (!wait_recv(&r, &p, d) || r.Status != STATUS_SUCCESS || r.BytesTransferred != IVX_CTRL_SIZE)
      return false;
    std::memcpy(c, p, sizeof *c);
    ivx_swap(c);
    repost();
    return c->magic == IVX_MAGIC;
  }

  std::atomic<bool> disconnected{false};
  std::atomic<ULONG> disconnect_reason{0};
  unsigned flushed = 0;      // error completions seen after a failure
  NTSTATUS first_error = 0;  // first error completion
  NDK_CONNECTOR* connector() { return conn_; }

 private:
  static constexpr uintptr_t kCtxSend = 1;
  static constexpr uintptr_t kCtxRecv = 0x1000;

  static void cq_notify(PVOID, NTSTATUS) {}
  static void disconnect_event(PVOID ctx, ULONG reason) {
    auto* p = static_cast<Peer*>(ctx);
    p->disconnect_reason = reason;
    p->disconnected = true;
  }

  NTSTATUS reg(void* p, size_t n, NDK_MR** out) {
    NTSTATUS s = create_and_wait<NDK_MR>(
        [&](NDK_FN_CREATE_COMPLETION cb, PVOID ctx, NDK_MR** o) {
          return pd_->Dispatch->NdkCreateMr(pd_, FALSE, cb, ctx, o);
        },
        out);
    if (s != STATUS_SUCCESS) return s;
    mdls_.push_back(std::make_unique<MDL>(MDL{nullptr, p, n}));
    MDL* m = mdls_.back().get();
    return request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
      return (*out)->Dispatch->NdkRegisterMr(*out, m, n,
                                             NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
                                                 NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                                 NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                                             cb, ctx);
    });
  }

  NTSTATUS post_recv(unsigned i) {
    NDK_SGE sge{};
    sge.VirtualAddress = rbuf_ + i * slot_;
    sge.Length = static_cast<ULONG>(slot_);
    sge.MemoryRegionToken = rmr_->Dispatch->NdkGetLocalTokenFromMr(rmr_);
    return qp_->Dispatch->NdkReceive(qp_, reinterpret_cast<PVOID>(kCtxRecv + i), &sge, 1);
  }

  // Polls the CQ; results of the other kind are queued for later.
  bool next(NDK_RESULT_EX* out, bool initiator, std::chrono::milliseconds d) {
    auto end = Clock::now() + d;
    for (;;) {
      auto& q = initiator ? sq_ : rq_;
      if (!q.empty()) {
        *out = q.front();
        q.pop_front();
        return true;
      }
      NDK_RESULT_EX r[16];
      ULONG n = cq_->Dispatch->NdkGetCqResultsEx(cq_, r, 16);
      for (ULONG i = 0; i < n; ++i) {
        if (r[i].Status != STATUS_SUCCESS) {
          if (!first_error) first_error = r[i].Status;
          ++flushed;
        }
        bool is_recv = reinterpret_cast<uintptr_t>(r[i].RequestContext) >= kCtxRecv;
        (is_recv ? rq_ : sq_).push_back(r[i]);
      }
      if (n == 0) {
        if (Clock::now() > end) return false;
        std::this_thread::sleep_for(200us);
      }
    }
  }

  const Options& o_;
  size_t size_;
  size_t slot_ = 64;
  NDK_ADAPTER* adapter_ = nullptr;
  bool owns_adapter_ = true;
  NDK_CQ* cq_ = nullptr;
  NDK_PD* pd_ = nullptr;
  NDK_QP* qp_ = nullptr;
  NDK_MR* mr_ = nullptr;
  NDK_MR* rmr_ = nullptr;
  NDK_MR* cmr_ = nullptr;
  NDK_MR* frmr_ = nullptr;  // fast_register_buf()
  std::vector<uint8_t> lam_;
  NDK_CONNECTOR* conn_ = nullptr;
  uint8_t* buf_ = nullptr;
  uint8_t* rbuf_ = nullptr;
  alignas(64) uint8_t ctrl_[IVX_CTRL_SIZE]{};
  unsigned last_slot_ = 0;
  std::vector<std::unique_ptr<MDL>> mdls_;
  std::deque<NDK_RESULT_EX> sq_, rq_;
};

// ---------------------------------------------------------------- connect
int do_connect(const Options& o) {
  Peer p(o, 4096);
  Json j;
  j.s("driver", "ndk_peer").s("role", "initiator").n("pd_len", static_cast<long long>(o.pd.size()));
  auto t0 = Clock::now();
  NTSTATUS s = p.open();
  if (s == STATUS_SUCCESS) s = p.create_qp();
  if (s != STATUS_SUCCESS) {
    j.s("status", status_name(s)).s("step", "setup").print();
    return 1;
  }
  s = p.connect(j);
  j.s("status", status_name(s)).n("ms", ms_since(t0));
  if (s != STATUS_SUCCESS) {
    j.print();
    return 1;
  }
  p.add_info(j, p.connector());
  std::this_thread::sleep_for(std::chrono::milliseconds(o.hold_ms));
  // FPDUs received while held: with a Read RTR toward rping (which sends
  // nothing of its own) a count >= 1 means the peer's zero-length Read
  // Response arrived before the disconnect (docs/compatibility.md, note 1).
  SOFTNDK_COUNTERS ctr{};
  if (SoftNdkQueryAdapterCounters(p.adapter(), &ctr) == STATUS_SUCCESS)
    j.n("rdma_in_frames", static_cast<long long>(ctr.RDMAInFrames));
  j.s("disconnect", p.disconnect());
  j.print();
  return 0;
}

// ---------------------------------------------------------------- listen
struct Incoming {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<NDK_CONNECTOR*> q;
  static void event(PVOID ctx, NDK_CONNECTOR* c) {
    auto* in = static_cast<Incoming*>(ctx);
    std::lock_guard lk(in->mu);
    in->q.push_back(c);
    in->cv.notify_all();
  }
  NDK_CONNECTOR* wait(Clock::time_point until) {
    std::unique_lock lk(mu);
    if (!cv.wait_until(lk, until, [&] { return !q.empty(); })) return nullptr;
    auto* c = q.front();
    q.pop_front();
    return c;
  }
};

// Listens on the adapter of `owner`; returns the listener or nullptr.
NDK_LISTENER* start_listener(NDK_ADAPTER* a, const Options& o, Incoming* in, Json& err) {
  NDK_LISTENER* l = nullptr;
  NTSTATUS s = create_and_wait<NDK_LISTENER>(
      [&](NDK_FN_CREATE_COMPLETION cb, PVOID ctx, NDK_LISTENER** out) {
        return a->Dispatch->NdkCreateListener(a, &Incoming::event, in, cb, ctx, out);
      },
      &l);
  if (s == STATUS_SUCCESS) {
    sockaddr_in at = make_addr(o.host, o.port);
    s = request_and_wait([&](NDK_FN_REQUEST_COMPLETION cb, PVOID ctx) {
      return l->Dispatch->NdkListen(l, reinterpret_cast<const SOCKADDR*>(&at), sizeof at, cb, ctx);
    });
  }
  if (s != STATUS_SUCCESS) {
    err.s("status", status_name(s)).s("step", "listen");
    return nullptr;
  }
  if (!o.ready_file.empty()) std::fclose(std::fopen(o.ready_file.c_str(), "w"));
  return l;
}

// The listener's adapter is opened with the MPA options; each accepted
// connection gets its own QP and buffers on that adapter (a QP must belong
// to the adapter of the connector it is accepted on).
int do_listen(const Options& o) {
  Peer base(o, 4096);
  Json e;
  e.s("driver", "ndk_peer").s("role", "listener");
  NTSTATUS s = base.open();
  if (s != STATUS_SUCCESS) {
    e.s("status", status_name(s)).s("step", "open").print();
    return 1;
  }
  Incoming in;
  NDK_LISTENER* l = start_listener(base.adapter(), o, &in, e);
  if (!l) {
    e.print();
    return 1;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(o.timeout_ms);
  int rc = 0;
  for (unsigned i = 0; i < o.count; ++i) {
    NDK_CONNECTOR* c = in.wait(deadline);
    Json j;
    j.s("driver", "ndk_peer").s("role", "responder");
    if (!c) {
      j.s("status", "timeout").print();
      rc = 3;
      break;
    }
    auto t0 = Clock::now();
    SOFTNDK_CONNECTION_INFO ci{};
    if (SoftNdkQueryConnectionInfo(c, &ci) == STATUS_SUCCESS)
      j.n("req_rev", ci.MpaRevision).b("req_crc", ci.Crc).b("req_p2p", ci.PeerToPeer);
    uint8_t pd[512];
    ULONG len = sizeof pd, ird = 0, ord = 0;
    if (c->Dispatch->NdkGetConnectionData(c, &ird, &ord, pd, &len) == STATUS_SUCCESS)
      j.n("req_ird", ird).n("req_ord", ord).n("req_pd_len", len).s("req_pd", hex(pd, len));
    if (o.reject) {
      NTSTATUS rs = c->Dispatch->NdkReject(
          c, o.reject_pd.empty() ? nullptr : const_cast<uint8_t*>(o.reject_pd.data()),
          static_cast<ULONG>(o.reject_pd.size()));
      j.s("action", "reject").n("reject_pd_len", static_cast<long long>(o.reject_pd.size()));
      j.s("status", status_name(rs)).n("ms", ms_since(t0)).print();
      close_and_wait(c);
      if (rs != STATUS_SUCCESS) rc = 1;
      continue;
    }
    Peer cp(o, 4096, base.adapter());
    NTSTATUS as = cp.create_qp();
    if (as == STATUS_SUCCESS) as = cp.accept(c);
    j.s("action", "accept").s("status", status_name(as)).n("ms", ms_since(t0));
    if (as == STATUS_SUCCESS) {
      cp.add_info(j, c);
      std::this_thread::sleep_for(std::chrono::milliseconds(o.hold_ms));
      j.s("disconnect", cp.disconnect());
    } else {
      close_and_wait(c);
      rc = 1;
    }
    j.print();
  }
  close_and_wait(l);
  return rc;
}

// ---------------------------------------------------------------- data path
struct Remote {
  uint64_t va = 0;
  uint32_t stag = 0;
  uint32_t len = 0;
};

bool exchange_adv(Peer& p, Remote* r, uint32_t seed) {
  if (p.send_ctrl(IVX_ADV, reinterpret_cast<uint64_t>(p.buf()), p.remote_token(),
                  static_cast<uint32_t>(p.size()), seed, 0) != STATUS_SUCCESS)
    return false;
  ivx_ctrl c{};
  if (!p.recv_ctrl(&c) || c.type != IVX_ADV) return false;
  *r = {c.va, c.stag, c.len};
  return true;
}

// Waits for the passive side's RESULT of `op`.
bool result_ok(Peer& p, uint32_t op, uint32_t* detail = nullptr) {
  ivx_ctrl c{};
  if (!p.recv_ctrl(&c) || c.type != IVX_RESULT || c.arg != op) return false;
  if (detail) *detail = c.len;
  return c.seed == 1;
}

int run_active(Peer& p, const RdmaOpts& ro) {
  Remote r;
  if (!exchange_adv(p, &r, 0)) {
    Json().s("op", "adv").b("ok", false).print();
    return 1;
  }
  int rc = 0;
  uint32_t seed = 100;
  for (const auto& op : ro.ops) {
    auto t0 = Clock::now();
    Json j;
    j.s("op", op);
    bool ok = false;
    size_t n = std::min<size_t>(p.size(), r.len);
    ++seed;
    if (op == "write") {
      ivx_fill(p.buf(), n, seed);
      NTSTATUS s = p.post_data(NdkOperationTypeWrite, n, r.va, r.stag);
      if (s == STATUS_SUCCESS) s = p.wait_send();
      j.s("write", status_name(s));
      ok = s == STATUS_SUCCESS &&
           p.send_ctrl(IVX_DONE, 0, 0, static_cast<uint32_t>(n), seed, IVX_OP_WRITE) ==
               STATUS_SUCCESS &&
           result_ok(p, IVX_OP_WRITE);
    } else if (op == "read") {
      ok = p.send_ctrl(IVX_FILL, 0, 0, static_cast<uint32_t>(n), seed, IVX_OP_READ) ==
               STATUS_SUCCESS &&
           result_ok(p, IVX_OP_READ);
      std::memset(p.buf(), 0, n);
      NTSTATUS s = ok ? p.post_data(NdkOperationTypeRead, n, r.va, r.stag) : STATUS_CANCELLED;
      if (s == STATUS_SUCCESS) s = p.wait_send();
      int64_t bad = ivx_check(p.buf(), n, seed);
      j.s("read", status_name(s)).n("first_bad", bad);
      ok = ok && s == STATUS_SUCCESS && bad < 0;
      p.send_ctrl(IVX_DONE, 0, 0, static_cast<uint32_t>(n), ok ? 1 : 0, IVX_OP_READ);
    } else if (op == "send" || op == "sendinv") {
      bool inv = op == "sendinv";
      size_t m = inv ? 64 : n;
      uint32_t code = inv ? IVX_OP_SENDINV : IVX_OP_SEND;
      ivx_fill(p.buf(), m, seed);
      NTSTATUS s = p.send_ctrl(IVX_EXPECT, 0, r.stag, static_cast<uint32_t>(m), seed, code);
      if (s == STATUS_SUCCESS)
        s = p.post_data(inv ? NdkOperationTypeReceiveAndInvalidate : NdkOperationTypeSend, m, 0,
                        r.stag);
      if (s == STATUS_SUCCESS) s = p.wait_send();
      j.s(inv ? "sendinv" : "send", status_name(s));
      uint32_t detail = 0;
      ok = s == STATUS_SUCCESS && result_ok(p, code, &detail);
      if (inv) {
        // siw's user-space completions never carry the invalidated rkey
        // (docs/compatibility.md, note 7): reported here, and the
        // invalidation itself is proven by `invread`.
        j.n("stag", r.stag).b("peer_wc_reported_invalidation", detail == 1);
      }
    } else if (op == "badwrite") {
      // An STag the peer never handed out: its index bits flipped.
      ivx_fill(p.buf(), 64, seed);
      uint32_t bogus = r.stag ^ 0x00ffff00u;
      NTSTATUS s = p.post_data(NdkOperationTypeWrite, 64, r.va, bogus);
      if (s == STATUS_SUCCESS) s = p.wait_send();
      j.s("write", status_name(s)).n("bogus_stag", bogus);
      // The Terminate arrives asynchronously: wait for the QP to fail.
      NTSTATUS s2 = STATUS_SUCCESS;
      for (int i = 0; i < 50 && s2 == STATUS_SUCCESS; ++i) {
        std::this_thread::sleep_for(100ms);
        s2 = p.send_ctrl(IVX_DONE, 0, 0, 0, 0, IVX_OP_BADWRITE);
        if (s2 == STATUS_SUCCESS) {
          ivx_ctrl c{};
          p.recv_ctrl(&c, 200ms);  // the passive side answers nothing
        }
      }
      j.s("later_send", status_name(s2)).b("flushed", s2 != STATUS_SUCCESS);
      j.b("disconnect_event", p.disconnected.load());
      p.add_info(j, p.connector());
      j.b("ok", true).n("ms", ms_since(t0)).print();
      return 0;
    } else if (op == "invread") {
      // After `sendinv`: an RDMA Read of the invalidated STag must be refused
      // by the peer (a Terminate) and complete with an error; nothing lands.
      std::memset(p.buf(), 0xA5, n);
      NTSTATUS s = p.post_data(NdkOperationTypeRead, n, r.va, r.stag);
      if (s == STATUS_SUCCESS) s = p.wait_send();
      bool intact = std::all_of(p.buf(), p.buf() + n, [](uint8_t x) { return x == 0xA5; });
      for (int i = 0; i < 50 && !p.disconnected; ++i) std::this_thread::sleep_for(100ms);
      j.n("stag", r.stag).s("read", status_name(s)).b("buffer_untouched", intact);
      j.b("disconnect_event", p.disconnected.load());
      p.add_info(j, p.connector());
      j.b("ok", s != STATUS_SUCCESS && s != STATUS_IO_TIMEOUT && intact)
          .n("ms", ms_since(t0))
          .print();
      return 0;
    } else if (op == "stream") {
      // Data Sends until the peer goes away (it dies mid-transfer).
      ivx_fill(p.buf(), n, seed);
      unsigned sent = 0, done = 0;
      NTSTATUS last = STATUS_SUCCESS;
      auto end = Clock::now() + 60s;
      while (last == STATUS_SUCCESS && Clock::now() < end) {
        while (sent - done < 8) {
          if (p.post_data(NdkOperationTypeSend, n) != STATUS_SUCCESS) break;
          ++sent;
        }
        last = p.wait_send(1s);
        if (last == STATUS_IO_TIMEOUT) {
          if (p.disconnected) break;  // the peer closed: see below
          last = STATUS_SUCCESS;
          continue;
        }
        ++done;
      }
      // A peer's graceful close flushes nothing until our own NdkDisconnect
      // (NDKPI 6.4); a reset or Terminate flushes at once.
      if (p.disconnected && done < sent) j.s("disconnect", p.disconnect());
      // Everything still outstanding must come back flushed.
      while (done < sent && p.wait_send(5s) != STATUS_IO_TIMEOUT) ++done;
      j.n("sent", sent).n("completed", done).s("first_error", status_name(last));
      j.b("flushed", done == sent && p.flushed > 0);
      for (int i = 0; i < 50 && !p.disconnected; ++i) std::this_thread::sleep_for(100ms);
      if (p.disconnected)
        j.s("disconnect_event", "reason " + std::to_string(p.disconnect_reason.load()));
      p.add_info(j, p.connector());
      j.b("ok", true).n("ms", ms_since(t0)).print();
      return 0;
    } else {
      j.s("error", "unknown op");
    }
    j.b("ok", ok).n("ms", ms_since(t0)).n("size", static_cast<long long>(n)).print();
    if (!ok) rc = 1;
  }
  p.send_ctrl(IVX_BYE, 0, 0, 0, 0, 0);
  return rc;
}

// Passive side: serve the active side's requests until BYE or an error.
int run_passive(Peer& p) {
  Remote r;
  uint32_t seed = 7;
  ivx_fill(p.buf(), p.size(), seed);
  if (!exchange_adv(p, &r, seed)) {
    Json().s("op", "adv").b("ok", false).print();
    return 1;
  }
  uint32_t inv_seed = 0;
  uint64_t inv_len = 0;  // after a Send with Invalidate: what the buffer must keep
  for (;;) {
    ivx_ctrl c{};
    if (!p.recv_ctrl(&c, 60s)) {
      Json j;
      j.s("op", "serve").s("end", "connection failed or timed out");
      p.add_info(j, p.connector());
      if (inv_len) j.b("buffer_kept_after_invalidate", ivx_check(p.buf(), inv_len, inv_seed) < 0);
      j.b("disconnect_event", p.disconnected.load()).print();
      return 0;
    }
    auto t0 = Clock::now();
    Json j;
    j.s("op", ivx_op_name(c.arg));
    if (c.type == IVX_BYE) return 0;
    if (c.type == IVX_FILL) {
      ivx_fill(p.buf(), c.len, c.seed);
      p.send_ctrl(IVX_RESULT, 0, 0, 0, 1, c.arg);
      continue;  // reported by the active side's DONE
    }
    if (c.type == IVX_DONE && c.arg == IVX_OP_WRITE) {
      int64_t bad = ivx_check(p.buf(), c.len, c.seed);
      j.n("first_bad", bad).b("ok", bad < 0);
      p.send_ctrl(IVX_RESULT, 0, 0, 0, bad < 0 ? 1 : 0, c.arg);
    } else if (c.type == IVX_DONE) {
      j.b("ok", c.seed == 1);
    } else if (c.type == IVX_EXPECT) {
      NDK_RESULT_EX rr{};
      uint8_t* d = nullptr;
      bool got = p.wait_recv(&rr, &d);
      bool ok = got && rr.Status == STATUS_SUCCESS && rr.BytesTransferred == c.len &&
                ivx_check(d, c.len, c.seed) < 0;
      bool inv = false;
      if (got && c.arg == IVX_OP_SENDINV) {
        inv = rr.Type == NdkOperationTypeReceiveAndInvalidate &&
              static_cast<uint32_t>(rr.TypeSpecificCompletionOutput) == p.remote_token();
        // `va` is the length the peer RDMA-Wrote into our buffer first.
        int64_t wbad = c.va ? ivx_check(p.buf(), c.va, c.seed) : -1;
        j.b("invalidated", inv)
            .n("completion_type", rr.Type)
            .n("invalidated_token", static_cast<long long>(rr.TypeSpecificCompletionOutput))
            .n("token", p.remote_token())
            .n("written", static_cast<long long>(c.va))
            .n("written_first_bad", wbad);
        ok = ok && inv && wbad < 0;
        if (ok) inv_seed = c.seed, inv_len = c.va;
      }
      if (got) p.repost();
      j.s("status", got ? status_name(rr.Status) : "timeout")
          .n("bytes", got ? rr.BytesTransferred : 0);
      j.b("ok", ok);
      p.send_ctrl(IVX_RESULT, 0, 0, inv ? 1 : 0, ok ? 1 : 0, c.arg);
    }
    j.n("ms", ms_since(t0)).print();
  }
}

int do_rdma(const Options& o, const RdmaOpts& ro, bool active) {
  Peer p(o, ro.size);
  NTSTATUS s = p.open();
  if (s == STATUS_SUCCESS) s = p.create_qp();
  if (s != STATUS_SUCCESS) {
    Json().s("op", "setup").s("status", status_name(s)).b("ok", false).print();
    return 1;
  }
  if (active) {
    Json j;
    j.s("op", "connect");
    s = p.connect(j);
    j.s("status", status_name(s)).b("ok", s == STATUS_SUCCESS);
    if (s == STATUS_SUCCESS) p.add_info(j, p.connector());
    j.print();
    if (s != STATUS_SUCCESS) return 1;
    int rc = run_active(p, ro);
    p.disconnect();
    return rc;
  }
  // serve: one listener; connections are served one after another, each
  // with its own QP and buffers on the listener's adapter.
  Incoming in;
  Json e;
  e.s("op", "listen");
  NDK_LISTENER* l = start_listener(p.adapter(), o, &in, e);
  if (!l) {
    e.b("ok", false).print();
    return 1;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(o.timeout_ms);
  int rc = 0;
  for (unsigned i = 0; i < o.count; ++i) {
    NDK_CONNECTOR* c = in.wait(deadline);
    if (!c) {
      Json().s("op", "accept").s("status", "timeout").b("ok", false).print();
      rc = 1;
      break;
    }
    Peer cp(o, ro.size, p.adapter());
    Json j;
    j.s("op", "accept");
    NTSTATUS as = cp.create_qp();
    if (as == STATUS_SUCCESS) as = cp.accept(c);
    j.s("status", status_name(as)).b("ok", as == STATUS_SUCCESS);
    if (as == STATUS_SUCCESS) cp.add_info(j, c);
    j.print();
    if (as != STATUS_SUCCESS) {
      close_and_wait(c);
      rc = 1;
      continue;
    }
    if (ro.fr && (as = cp.fast_register_buf()) != STATUS_SUCCESS) {
      Json().s("op", "fast_register").s("status", status_name(as)).b("ok", false).print();
      rc = 1;
      continue;
    }
    if (run_passive(cp) != 0) rc = 1;
    Json end;
    end.s("op", "end");
    cp.add_info(end, c);
    end.s("disconnect", cp.disconnect()).print();
  }
  close_and_wait(l);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  // rdma/serve take a few options of their own; the rest is peer_common's.
  std::vector<char*> args;
  RdmaOpts ro;
  std::string mode = argc > 1 ? argv[1] : "";
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ops" && i + 1 < argc) {
      std::string l = argv[++i];
      size_t pos = 0;
      while (pos <= l.size()) {
        size_t c = l.find(',', pos);
        if (c == std::string::npos) c = l.size();
        if (c > pos) ro.ops.push_back(l.substr(pos, c - pos));
        pos = c + 1;
      }
    } else if (a == "--fr") {
      ro.fr = true;
    } else if (a == "--size" && i + 1 < argc) {
      ro.size = std::strtoul(argv[++i], nullptr, 0);
    } else {
      args.push_back(argv[i]);
    }
  }
  bool data = mode == "rdma" || mode == "serve";
  if (data) args[1] = const_cast<char*>(mode == "rdma" ? "connect" : "listen");
  Options o = parse(static_cast<int>(args.size()), args.data());
  std::thread([ms = o.timeout_ms + 30000] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    std::fprintf(stderr, "ndk_peer: overall timeout\n");
    std::_Exit(3);
  }).detach();
  if (data) return do_rdma(o, ro, mode == "rdma");
  return o.mode == "connect" ? do_connect(o) : do_listen(o);
}
