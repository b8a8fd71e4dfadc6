// SPDX-License-Identifier: Apache-2.0
// qp.h - queue pair: an initiator queue (SQ) and a receive queue (RQ or SRQ).
//
// Posting calls validate against the QP's creation limits, copy the request
// into a preallocated ring slot and poke the attached transport. Requests
// stay in the SQ ring until the data path completes them, so NdkFlush can
// cancel everything still pending, in posting order. (One exception: a
// direct send posted on an empty SQ takes no slot; direct_ stands for it,
// see push().)
//
// States: Idle (created; receives may be posted), Connected (a transport is
// attached; initiator requests accepted), Error (fatal error, CQ overrun or
// connection loss; posts fail), Closing. The connection layer attaches a
// QpTransport when the connection is established and detaches it on
// teardown.
//
// Data-path API (engine threads):
//   sq_start(&wr, &seq)       next not-yet-started initiator request (copy)
//   sq_complete(seq, st, n)   that request is done: CQEs go out in posting
//                             order, silent successes produce none
//   rq_take(&rr)              next receive (from the RQ or the SRQ)
//   complete_receive(...)     receive CQE on the receive CQ
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ndk/object.h"
#include "ndk/provider_names.h"
#include "util/pcap_writer.h"

namespace softndk::ndk {

class Pd;
class Cq;
class Srq;
class Mr;
class Mw;
struct ConnectorNet;

struct QpConfig {
  void* context = nullptr;
  ULONG rq_depth = 0, sq_depth = 0, rq_sge = 0, sq_sge = 0, inline_size = 0;
};

class Qp final : public Object, public provider::QpHost {
 public:
  static NTSTATUS create(Pd* pd, Cq* rcq, Cq* icq, Srq* srq, const QpConfig& cfg, Qp** out);
  NDK_QP* ndk() { return &handle_.ndk; }

  // --- Posting (the ABI) ----------------------------------------------------
  NTSTATUS send(void* ctx, const NDK_SGE* sgl, ULONG nsge, ULONG flags, bool invalidate,
                uint32_t remote_token);
  NTSTATUS write(void* ctx, const NDK_SGE* sgl, ULONG nsge, uint64_t addr, uint32_t token,
                 ULONG flags);
  NTSTATUS read(void* ctx, const NDK_SGE* sgl, ULONG nsge, uint64_t addr, uint32_t token,
                ULONG flags);
  NTSTATUS bind(void* ctx, Mr* mr, Mw* mw, uint64_t va, uint64_t length, ULONG flags);
  NTSTATUS fast_register(void* ctx, Mr* mr, ULONG pages, const NDK_LOGICAL_ADDRESS* page_array,
                         ULONG fbo, uint64_t length, uint64_t va, ULONG flags);
  NTSTATUS invalidate(void* ctx, Object* mr_or_mw, ULONG flags);
  NTSTATUS receive(void* ctx, const NDK_SGE* sgl, ULONG nsge);
  void flush();
  // NDKPI deferred processing: an initiator call that fails inline first
  // starts the requests queued with NDK_OP_FLAG_DEFER. The ABI shims call it
  // on every failure, also one refused before the request reached the QP.
  void kick_on_failure();

  // --- Connection layer -----------------------------------------------------
  QpState state() const override { return state_.load(std::memory_order_acquire); }
  void set_state(QpState s) { state_.store(s, std::memory_order_release); }
  // Shared ownership: a post that picked the transport may still be calling
  // it while the data path detaches.
  void attach(std::shared_ptr<QpTransport> t) override;
  void detach() override;
  // Fatal error / CQ death: to Error and flush.
  void to_error() override;
  // The connector that holds this QP (ConnectorNet::bind_qp), possibly one
  // of another open of the interface. When this QP's adapter closes, that
  // connector must let go of it, or the close waits for a connector the
  // consumer keeps open on another instance (issue 28, hang 1).
  void set_holder(std::weak_ptr<ConnectorNet> c);
  void release_from_holder();

  // --- Data path -------------------------------------------------------------
  // local_only: start the head only if it is a local operation
  // (FastRegister, Bind, Invalidate), which never waits for the peer.
  bool sq_start(WorkRequest* out, uint64_t* seq, bool local_only = false) override;
  // Returns false if the request was flushed meanwhile (no CQE then).
  bool sq_complete(uint64_t seq, NTSTATUS status, ULONG bytes, ULONG_PTR type_specific = 0,
                   ULONG provider_error = 0) override;
  // The same for the slotless direct send (kDirectNoSlot). False if a flush
  // cancelled it meanwhile (its CQE is out then).
  bool direct_finish(NTSTATUS status, ULONG bytes) override;
  bool rq_take(ReceiveRequest* out) override;
  bool rq_untake(const ReceiveRequest& r) override;
  void complete_receive(const ReceiveRequest& r, NTSTATUS status, ULONG bytes, bool solicited,
                        uint32_t invalidated_stag = 0, ULONG provider_error = 0) override;

  Pd* pd() const { return pd_; }
  Cq* receive_cq() const { return rcq_; }
  Cq* initiator_cq() const { return icq_; }
  Srq* srq() const { return srq_; }
  std::shared_ptr<provider::SrqEngine> srq_engine() const override;
  void* context() const { return cfg_.context; }
  // This QP's own SOFTNDK_COUNTERS (counters.h).
  Counters& counters() override { return counters_; }
  // SoftNdkTraceQp: the QP's pcap trace (null stops). Applies to the running
  // stream at once and to a stream started later; the data path reads it
  // with trace_file() when it starts.
  void set_trace(std::shared_ptr<util::PcapFile> file);
  std::shared_ptr<util::PcapFile> trace_file() override;
  // The attached data path, if any (adapter-wide trace start/stop).
  std::shared_ptr<QpTransport> transport();

  // --- provider::QpHost (the rest; provider/provider.h) --------------------
  void add_progress(std::shared_ptr<ProgressSource> s) override;
  void remove_progress(const ProgressSource* s) override;
  const void* pd_key() const override { return pd_; }
  StagTable& stags() override;
  Counters& adapter_counters() override;
  std::shared_ptr<util::PcapFile> adapter_trace_file() override;
  Shape shape() const override {
    return {cfg_.sq_depth, cfg_.rq_depth,    cfg_.sq_sge,
            cfg_.rq_sge,   cfg_.inline_size, srq_ != nullptr};
  }
  void set_receive_notice(std::shared_ptr<QpTransport> e) override;
  const QpConfig& config() const { return cfg_; }
  ULONG sq_pending();
  ULONG rq_pending();

 private:
  Qp(Pd* pd, Cq* rcq, Cq* icq, Srq* srq, const QpConfig& cfg);
  void begin_teardown() override;
  // Shared front half of initiator posts: QP state and flag checks.
  NTSTATUS check_initiator(ULONG flags, ULONG allowed_flags);
  // Back half: SGL/inline checks, copy into the next SQ slot, kick. Takes
  // the head only: the SGL goes from the caller's array straight into the
  // slot (a WorkRequest on the stack zeroed 16 SGEs per post).
  NTSTATUS enqueue(WorkRequestHead&& wr, const NDK_SGE* sgl, ULONG nsge, ULONG max_sge);
  // enqueue()'s copy into the ring (sq_mu_ taken here). With `start`, the
  // request is also marked started when nothing older waits to start, and
  // *started gets its slot's head and sequence number (direct sends); its
  // inline payload is then not copied (the transmitter encodes it from the
  // caller's SGL before the post returns). When nothing at all is
  // outstanding, a started request takes no slot: *started gets `wr`
  // itself and kDirectNoSlot, and direct_ stands for it until
  // direct_finish() or a flush.
  struct Started {
    const WorkRequestHead* wr = nullptr;
    uint64_t seq = 0;
  };
  NTSTATUS push(const WorkRequestHead& wr, const NDK_SGE* sgl, ULONG nsge, bool start,
                Started* started);
  void kick(bool deferred, uint64_t bytes = 0);
  // An SQ request's CQE (none for a silent success), sq_mu_ held: the
  // completion order is the order of these calls.
  void report_sq_locked(NTSTATUS status, ULONG bytes, void* ctx, NDK_OPERATION_TYPE type,
                        ULONG flags, ULONG_PTR type_specific, ULONG provider_error = 0);

  struct SqSlot {
    WorkRequestHead wr;  // its SGL: sq_sge_[slot * cfg_.sq_sge ...]
    bool started = false;
    bool done = false;
    NTSTATUS status = STATUS_SUCCESS;
    ULONG bytes = 0;
    ULONG_PTR type_specific = 0;
    ULONG provider_error = 0;  // NDK_RESULT_EX.ProviderErrorCode
  };

  Handle<NDK_QP> handle_{};
  Pd* pd_;
  Cq* rcq_;
  Cq* icq_;
  Srq* srq_;
  QpConfig cfg_;
  std::atomic<QpState> state_{QpState::kIdle};

  std::mutex sq_mu_;  // guards the SQ ring and its sequence numbers
  std::vector<SqSlot> sq_;
  std::vector<NDK_SGE> sq_sge_;  // sq_depth * sq_sge entries
  std::vector<uint8_t> inline_;  // sq_depth * inline_size bytes
  uint64_t sq_head_ = 0, sq_next_ = 0, sq_tail_ = 0;
  // Mirror of sq_tail_ - sq_next_ != 0, written under sq_mu_ wherever those
  // change: sq_start() answers "nothing new" without the lock (the
  // transmitter asks after every batch). A post it misses kicks again.
  std::atomic<bool> sq_unstarted_{false};
  bool deferred_pending_ = false;
  // The slotless direct send in flight (sq_mu_): it counts against the SQ
  // depth, and a flush completes it first (it is older than anything in
  // the ring, which was empty when it started).
  struct DirectSend {
    bool active = false;
    void* context = nullptr;
    ULONG flags = 0;
    NDK_OPERATION_TYPE type = NdkOperationTypeSend;
  } direct_;

  std::mutex rq_mu_;  // guards the RQ ring
  std::vector<ReceiveHead> rq_;
  std::vector<NDK_SGE> rq_sge_;  // rq_depth * rq_sge entries
  size_t rq_head_ = 0, rq_count_ = 0;

  std::mutex holder_mu_;  // guards holder_ only (taken under ConnectorNet::mu_)
  std::weak_ptr<ConnectorNet> holder_;

  std::mutex transport_mu_;
  std::shared_ptr<QpTransport> transport_;
  std::shared_ptr<util::PcapFile> trace_;  // transport_mu_
  // An engine that posts receives to a device (provider.h v2): told of
  // every receive. The flag spares the software engine's receives the lock.
  std::shared_ptr<QpTransport> rq_notice_;  // transport_mu_
  std::atomic<bool> has_rq_notice_{false};
  Counters counters_;
};

}  // namespace softndk::ndk
