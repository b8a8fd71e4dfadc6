// SPDX-License-Identifier: Apache-2.0
// verbs/verbs_backend.h - the verbs backend's classes (plugin
// libsoftndk-verbs.so): the provider of one adapter (VerbsProvider), its
// connections (VerbsConnection: rdma_cm id + RC QP + device CQ, also the
// QP engine), listeners and incoming requests. docs/verbs.md.
//
// Threads: one Loop per adapter runs rdma_cm (the event channel), the
// completion channel and memory registration; consumer threads only post
// (ibv_post_send/ibv_post_recv) and poll (ibv_poll_cq, through
// ProgressSource when their NDK CQ is empty).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "provider/provider.h"
#include "verbs/seq_table.h"
#include "verbs/verbs_loop.h"
#include "verbs/verbs_map.h"

namespace softndk::verbs {

class VerbsProvider;

// An NDK SRQ's device SRQ (verbs_srq.cc): NdkSrqReceive's receives go to
// ibv_post_srq_recv at once; each keeps its record here until a
// connection's CQ reports it (any QP created with the SRQ may take it);
// the limit arms ibv_modify_srq(IBV_SRQ_LIMIT) and the async event
// IBV_EVENT_SRQ_LIMIT_REACHED reaches the host. The ibv_srq is destroyed
// on the loop thread when the last holder (the NDK SRQ, the connections of
// its QPs) lets go.
class VerbsSrq final : public provider::SrqEngine {
 public:
  VerbsSrq(VerbsProvider* p, provider::SrqHost* host, ibv_srq* srq, QpLimits lim, uint32_t depth,
           bool can_resize);
  ~VerbsSrq() override;
  void srq_posted() override;
  NTSTATUS arm(uint32_t threshold) override;
  // ibv_modify_srq(IBV_SRQ_MAX_WR) where the device resizes SRQs
  // (srq_can_resize()); growing grows the CQs of its QPs first
  // (srq_qp_cq_entries()), so no QP's CQ can overflow.
  NTSTATUS resize(uint32_t depth) override;
  void detach() override;
  // A QP on this SRQ was created with CQ `cq` of srq_qp_cq_entries(sq_wqes,
  // sized_for): it is grown with the SRQ until cq_detached (before its
  // ibv_destroy_cq).
  void cq_attached(ibv_cq* cq, uint32_t sq_wqes, uint32_t sized_for);
  void cq_detached(ibv_cq* cq);
  // A connection's CQ reported receive `wr_id` of this SRQ: its record.
  bool finish(uint64_t wr_id, provider::ReceiveRequest* out);
  void limit_reached();  // loop thread, from the async event
  ibv_srq* srq() const { return srq_; }
  // Receives it can hold: all of them may complete on one QP's CQ.
  uint32_t depth() const { return depth_.load(std::memory_order_acquire); }
  // SRQ receive wr_ids: kRecvBit | kSrqBit | n (VerbsConnection::kRecvBit).
  static constexpr uint64_t kSrqBit = 1ull << 62;

 private:
  VerbsProvider* const prov_;
  ibv_srq* const srq_;
  const QpLimits lim_;
  std::atomic<uint32_t> depth_;
  const bool can_resize_;
  void post_locked();
  std::mutex mu_;
  provider::SrqHost* host_;  // null once detached
  std::map<uint64_t, provider::ReceiveRequest> recvs_;
  uint64_t next_ = 0;
  bool stalled_ = false;  // the device refused a receive: retried as receives complete
  struct AttachedCq {
    ibv_cq* cq;
    uint32_t sq_wqes;
  };
  std::vector<AttachedCq> cqs_;  // the CQs of its QPs, grown with it
};

// An rdma_cm event, copied before it is acked (so a handler may destroy
// its id).
struct CmEvent {
  rdma_cm_event_type type{};
  int status = 0;
  rdma_cm_id* id = nullptr;
  rdma_cm_id* listen_id = nullptr;
  std::vector<uint8_t> private_data;
  uint8_t responder_resources = 0, initiator_depth = 0;
};

class CmHandler {
 public:
  virtual ~CmHandler() = default;
  virtual void on_cm_event(const CmEvent& e) = 0;  // loop thread
};

class VerbsConnection final : public provider::Connection,
                              public provider::QpEngine,
                              public provider::ProgressSource,
                              public CmHandler,
                              public std::enable_shared_from_this<VerbsConnection> {
 public:
  VerbsConnection(VerbsProvider* p, provider::QpHost* qp);
  ~VerbsConnection() override;

  // Active side (loop thread): resolve, create the QP, connect.
  void start_connect(provider::ConnectArgs args, std::function<void(provider::ConnectResult)> done);
  void cancel_connect();
  // Passive side (loop thread): the request's id; QP, then rdma_accept.
  // `peer`: the request's read limits (cm_read_limits), which lower ours.
  void start_accept(rdma_cm_id* id, uint16_t ird, uint16_t ord, CmReadLimits peer,
                    std::vector<uint8_t> pd,
                    std::function<void(NTSTATUS, std::shared_ptr<provider::Connection>)> cb);
  void on_cm_event(const CmEvent& e) override;
  // The completion channel reported this connection's CQ (loop thread).
  void on_cq_event();

  // provider::Connection
  const provider::ConnectionFacts& facts() const override { return facts_; }
  const std::vector<uint8_t>& peer_private_data() const override { return peer_pd_; }
  bool closed() const override { return closed_.load(); }
  void post(std::function<void()> fn) override;
  std::shared_ptr<provider::QpEngine> start(provider::QpHost* qp, bool initiator) override;
  void on_peer_close(std::function<void(NTSTATUS)> cb) override;
  void disconnect(std::function<void(NTSTATUS)> cb) override;
  void abort() override;
  bool tcp_info(SOFTNDK_TCP_INFO* out) const override {
    (void)out;
    return false;
  }

  // provider::QpEngine
  void sq_posted(bool deferred, uint64_t bytes) override;
  void rq_posted() override;
  void flushing() override;
  void flushed() override;
  void set_trace(TraceSlot slot, std::shared_ptr<util::PcapFile> file) override {
    (void)slot, (void)file;  // no wire of ours to trace: the device's
  }
  void stop() override;
  void query_path(SOFTNDK_PATH_INFO* out) override;

  // provider::ProgressSource
  void progress() override;
  void cq_armed() override;

 private:
  enum class Phase {
    kIdle,
    kResolvingAddr,
    kResolvingRoute,
    kConnecting,
    kAccepting,
    kEstablished,
    kDisconnecting,
    kClosed
  };
  // The device QP and CQ on id_, the receives queued so far posted.
  NTSTATUS create_qp();
  void post_receives_locked();
  void post_sends_locked();
  void post_batch_locked();  // one ibv_post_send for what batch_ holds
  void reregister_locked(const provider::WorkRequest& wr, uint64_t seq);
  void poll_locked();
  // One device receive completion to the host (host_ set).
  void complete_device_receive(const ibv_wc& c, const provider::ReceiveRequest& rr, NTSTATUS st);
  // Polled mode (docs/verbs.md "Completions and polled mode"): while a
  // consumer busy-polls, the device CQ stays unarmed.
  void arm_device_locked();
  void enter_polled();
  void start_watchdog();  // loop thread: a polled period begins
  void watch_polling();   // loop thread
  void poll_watchdog();   // loop thread
  // NdkFastRegister / NdkBind as a window bind (provider.h v3); false: the
  // request completed at once with the failure.
  bool build_window_bind(const provider::WorkRequest& wr, uint64_t seq, SendWqes* w);
  void cancel_receives_locked();
  void return_receives_locked();  // back to the QP's queue (never used)
  void fail_connect(NTSTATUS st, bool rejected, std::vector<uint8_t> pd);
  void destroy();  // loop thread: QP, CQ, id
  void fill_addresses();
  CmPhase cm_phase() const;
  bool iwarp() const;  // the id's device speaks iWARP (its CM's field use)

  VerbsProvider* const prov_;
  rdma_cm_id* id_ = nullptr;  // loop thread
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  Phase phase_ = Phase::kIdle;  // loop thread
  provider::ConnectionFacts facts_;
  std::vector<uint8_t> peer_pd_;
  std::vector<uint8_t> pending_pd_;  // NdkConnect's private data
  std::atomic<bool> closed_{false};
  uint16_t want_ird_ = 0, want_ord_ = 0;
  std::function<void(provider::ConnectResult)> connect_done_;
  std::function<void(NTSTATUS, std::shared_ptr<provider::Connection>)> accept_done_;
  std::function<void(NTSTATUS)> peer_close_cb_, disconnect_cb_;  // loop thread
  bool peer_closed_ = false;        // the peer-close callback ran (or may not: our disconnect)
  bool peer_disconnected_ = false;  // DISCONNECTED arrived while established
  uint64_t disconnect_timer_ = 0, connect_timer_ = 0;

  // The QP side, guarded by mu_ (consumer threads post, the loop and
  // polling consumers complete).
  std::mutex mu_;
  provider::QpHost* host_ = nullptr;  // null once stopped
  bool attached_ = false;
  QpLimits lim_;
  // The WQEs of the post being built: the first batch_n_ of batch_, kept
  // from post to post (a deque leaves its elements in place as it grows, so
  // the SGE pointers into them hold). Each post reuses them: no node
  // allocated, freed and cleared per request (batch_add).
  std::deque<SendWqes> batch_;
  size_t batch_n_ = 0;
  SendWqes& batch_add() {
    if (batch_n_ == batch_.size()) batch_.emplace_back();
    SendWqes& w = batch_[batch_n_++];
    // What a builder may leave as it was (build_bind writes wr[0] only);
    // the SGEs are written up to the count a WQE names.
    w.wr[0].next = w.wr[1].next = nullptr;
    w.count = 0;
    w.deferred = false;
    w.signaled = true;
    w.coalesce_inline = false;
    w.length = 0;
    return w;
  }
  provider::WorkRequest sq_wr_;               // post_sends_locked's scratch
  SeqTable<PostedRecord> sends_;              // by SQ sequence number (the wr_id)
  SignalPolicy signal_;                       // silent successes: unsignaled WQEs
  SeqTable<provider::ReceiveRequest> recvs_;  // by n (the wr_id is kRecvBit | n)
  uint64_t next_recv_ = 0;
  std::shared_ptr<VerbsSrq> srq_;  // the QP's device SRQ, if any (set before qp_)
  bool device_armed_ = true;       // a notification is requested (create_qp arms the new CQ)

  // Polled mode: progress() counts polls (relaxed: pollers of the QP's two
  // CQs may race and lose a count, which only delays the switch by a poll).
  std::atomic<uint64_t> polls_{0};
  std::atomic<uint64_t> arm_mark_{0};  // polls_ at the last NdkArmCq
  std::atomic<bool> polled_{false};
  bool watchdog_on_ = false;        // loop thread
  uint64_t watchdog_seen_ = 0;      // loop thread: activity() when the watchdog was set
  std::atomic<uint64_t> posts_{0};  // sq_posted() calls (on_cq_event, the watchdog)
  // What says the consumer is at work (polled mode): its polls and posts.
  uint64_t activity() const {
    return polls_.load(std::memory_order_relaxed) + posts_.load(std::memory_order_relaxed);
  }
  std::atomic<uint64_t> arms_{0};  // cq_armed() calls (on_cq_event)
  uint64_t event_seen_ = 0;        // loop thread: activity() at the last CQ event (on_cq_event)
  uint64_t event_arms_ = 0;        // loop thread: arms_ at the last CQ event
  int watchdog_ms_ = 0;            // loop thread: the watchdog's period now (verbs_datapath.cc)

 public:
  // Receive wr_ids carry this bit; SQ wr_ids are ring sequence numbers.
  static constexpr uint64_t kRecvBit = 1ull << 63;
};

// The object model's inline notification delivery (ProviderConfig v4) as a
// scope: opened on the loop thread around work that reports completions,
// closed (delivering) once no connection lock is held. The loop thread may
// then run consumer callbacks: they must not block (NDK callbacks run at
// DISPATCH_LEVEL), and what a callback asks of the loop synchronously
// (Loop::run_sync) runs inline.
class InlineNotify {
 public:
  explicit InlineNotify(const provider::ProviderConfig& cfg) : end_(cfg.end_inline_notify) {
    if (end_ != nullptr && cfg.begin_inline_notify != nullptr) {
      cfg.begin_inline_notify();
    } else {
      end_ = nullptr;
    }
  }
  ~InlineNotify() {
    if (end_ != nullptr) end_();
  }
  InlineNotify(const InlineNotify&) = delete;
  InlineNotify& operator=(const InlineNotify&) = delete;

 private:
  void (*end_)();
};

class VerbsProvider final : public provider::Provider {
 public:
  VerbsProvider() = default;
  ~VerbsProvider() override;
  // Opens the device behind cfg.ifname. STATUS_NO_SUCH_DEVICE etc. + why.
  NTSTATUS open(const provider::ProviderConfig& cfg, std::string* why);

  const char* name() const override { return "verbs"; }
  NTSTATUS connect(provider::ConnectArgs args, std::function<void(provider::ConnectResult)> done,
                   std::shared_ptr<provider::ActiveConnect>* out) override;
  NTSTATUS listen(const provider::Address& addr,
                  std::function<void(std::shared_ptr<provider::IncomingConnection>)> on_request,
                  std::shared_ptr<provider::Listener>* out) override;
  NTSTATUS create_shared_endpoint(const provider::Address& addr,
                                  std::shared_ptr<provider::SharedEndpoint>* out) override;
  void adapter_info(NDK_ADAPTER_INFO* info) const override;
  std::string describe() const override;
  bool registers_memory() const override { return true; }
  NTSTATUS register_memory(uint64_t va, uint64_t length, ULONG flags,
                           std::function<void(NTSTATUS, MemoryKeys)> done) override;
  void deregister_memory(uint64_t handle, std::function<void(NTSTATUS)> done) override;
  FrSupport fr_support() const override { return fr_; }
  NTSTATUS alloc_window(WindowKeys* out) override;
  void free_window(uint64_t handle) override;
  NTSTATUS register_lam(uint64_t va, uint64_t length, std::function<void(NTSTATUS)> done) override;
  void release_lam(uint64_t va, uint64_t length) override;
  bool device_srq() const override { return info_.MaxSrqDepth > 0; }
  NTSTATUS create_srq(provider::SrqHost* host, uint32_t depth, uint32_t max_sge,
                      std::shared_ptr<provider::SrqEngine>* out) override;
  FrStrategy fr_strategy() const { return strategy_; }
  // The arena (NdkBuildLAM's registration) holding [addr, addr+len), or null.
  ibv_mr* find_arena(uint64_t addr, uint64_t len);
  // A local SGE that names a window's rkey: the arena's lkey for its bytes
  // (verbs takes only MR lkeys in SGEs). False: not a window token.
  bool window_sge_lkey(uint32_t token, uint64_t addr, uint64_t len, uint32_t* lkey);
  // Window states (WindowStates): a bind posted, a local invalidate about
  // to be posted (kRefuse: the window is not bound), a peer's reported
  // invalidation.
  void window_bound(uint32_t rkey);
  WindowStates::Invalidate window_invalidate(uint32_t rkey);
  void window_peer_invalidated(uint32_t rkey);
  void srq_created(ibv_srq* s, std::weak_ptr<VerbsSrq> v);
  void srq_gone(ibv_srq* s);

  // For the connection classes.
  Loop& loop() { return *loop_; }
  rdma_event_channel* channel() { return ch_; }
  ibv_pd* pd() { return pd_; }
  ibv_comp_channel* comp_channel() { return cc_; }
  Transport transport() const { return facts_.transport; }
  WcFlagsAbi wc_abi() const { return wc_abi_; }
  bool fence_local_ops() const { return fence_local_ops_; }  // local_ops_rerun_on_retry
  bool zero_based() const { return zero_based_; }            // zero_based_windows
  // SOFTNDK_VERBS_TRACE=1: every send-queue WQE posted and every device
  // completion on stderr, one line each (docs/verbs.md, "Tracing").
  bool trace() const { return trace_; }
  const NDK_ADAPTER_INFO& info() const { return info_; }
  const provider::ProviderConfig& config() const { return cfg_; }
  const sockaddr_storage& local_address() const { return local_; }
  uint32_t read_sge() const { return read_sge_; }
  // id -> handler (loop thread).
  void own(rdma_cm_id* id, std::shared_ptr<CmHandler> h) { handlers_[id] = std::move(h); }
  void disown(rdma_cm_id* id) { handlers_.erase(id); }
  // Only if `id` still belongs to `h` (a destroyed id's address may be
  // reused by a new id before a deferred disown runs).
  void disown_if(rdma_cm_id* id, const CmHandler* h) {
    auto it = handlers_.find(id);
    if (it != handlers_.end() && it->second.get() == h) handlers_.erase(it);
  }
  void cq_created(ibv_cq* cq, std::weak_ptr<VerbsConnection> c) { cqs_[cq] = std::move(c); }
  void cq_gone(ibv_cq* cq) { cqs_.erase(cq); }

 private:
  void on_cm_channel();
  void on_comp_channel();
  void on_async_event();

  provider::ProviderConfig cfg_;
  FrStrategy strategy_ = FrStrategy::kUnsupported;
  FrSupport fr_ = FrSupport::kNone;
  std::mutex mem_mu_;                        // arenas_, windows_, srqs_
  std::multimap<uint64_t, ibv_mr*> arenas_;  // by address
  WindowStates windows_;                     // live window rkeys and which are bound
  std::atomic<int> window_count_{0};
  std::map<ibv_srq*, std::weak_ptr<VerbsSrq>> srqs_;
  NDK_ADAPTER_INFO info_{};
  DeviceFacts facts_;
  WcFlagsAbi wc_abi_ = WcFlagsAbi::kUser;
  bool fence_local_ops_ = false;
  bool trace_ = false;
  std::string device_;
  uint32_t read_sge_ = 1;
  bool srq_resize_ = false;  // srq_can_resize(): NdkModifySrq may change the depth
  bool zero_based_ = false;  // zero_based_windows(): NdkFastRegister at BaseVirtualAddress 0
  sockaddr_storage local_{};
  rdma_event_channel* ch_ = nullptr;
  rdma_cm_id* bind_id_ = nullptr;  // holds the device context open
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* cc_ = nullptr;
  std::map<rdma_cm_id*, std::shared_ptr<CmHandler>> handlers_;  // loop thread
  std::map<ibv_cq*, std::weak_ptr<VerbsConnection>> cqs_;       // loop thread
  std::unique_ptr<Loop> loop_;                                  // last member: joined first
};

}  // namespace softndk::verbs
