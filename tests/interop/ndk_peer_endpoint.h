// SPDX-License-Identifier: Apache-2.0
// ndk_peer_endpoint.h - ndk_peer's objects on softndk's public C ABI: Peer
// is one adapter (or a listener's, shared) with the PD, CQ, QP, registered
// buffers and connector a connection needs, and the calls the modes make of
// them with bounded waits; Incoming and start_listener take connection
// requests. Header-only, like peer_common.h.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "ivx_proto.h"
#include "peer_common.h"
#include "softndk/softndk.hpp"

namespace ndk_peer {

using namespace interop;
using namespace std::chrono_literals;
using softndk::close_and_wait;
using softndk::create_and_wait;
using softndk::request_and_wait;
using softndk::status_name;

inline std::string term_name(ULONG t) {
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

// Connection requests as the listener delivers them.
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
inline NDK_LISTENER* start_listener(NDK_ADAPTER* a, const Options& o, Incoming* in, Json& err) {
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

}  // namespace ndk_peer
