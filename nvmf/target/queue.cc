// SPDX-License-Identifier: Apache-2.0
// queue.cc - see queue.h. The data path: a capsule arrives in a receive
// buffer; its command takes a slot; host-to-controller data is fetched by an
// RDMA Read into the slot's buffer (or used in place from the capsule);
// controller-to-host data leaves by an RDMA Write from the slot's buffer;
// the receive buffer is reposted before the response is sent (iWARP has no
// receiver-not-ready retry: the host may send its next command as soon as
// it sees the response); the slot is free again when the Send completes.
// Nothing is allocated or registered per command.
#include "target/queue.h"

#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <vector>

#include "ndkapp/status.h"
#include "target/io.h"

namespace nvmf::target {

using softndk::tools::Adapter;
using softndk::tools::Buffer;
using softndk::tools::Connection;
using softndk::tools::Cq;
using softndk::tools::Pd;
using softndk::tools::Qp;
using softndk::tools::QpConfig;

namespace {

constexpr uint16_t kMaxAers = 4;

// Lets other threads (controller teardown, KATO, target stop) end a queue.
struct StopHandle {
  std::mutex m;
  std::atomic<bool> stop{false};
  Cq* cq = nullptr;
  void fire() {
    stop = true;
    std::lock_guard lk(m);
    if (cq) cq->interrupt();
  }
};

enum Kind : uint64_t { kRecv = 1, kRead = 2, kWrite = 3, kSend = 4 };
void* ctx(Kind k, uint32_t i) { return reinterpret_cast<void*>((uint64_t(k) << 32) | i); }

struct Slot {
  ParsedCapsule cap;
  bool busy = false;
};

class Queue {
 public:
  Queue(Subsystem& s, Adapter& a, const RdmaCmRequest& req, std::shared_ptr<StopHandle> stop)
      : s_(s),
        qid_(req.qid),
        entries_(uint16_t(req.hsqsize + 1)),
        nslots_(2u * entries_ + kMaxAers),
        capsule_size_(uint32_t(kSqeSize) + s.cfg().inline_data),
        data_size_(s.cfg().mdts_bytes),
        pd_(a),
        cq_(a, entries_ + 3 * nslots_ + 8),
        recv_(a, pd_, size_t(entries_) * capsule_size_, NDK_MR_FLAG_ALLOW_LOCAL_WRITE),
        data_(a, pd_, size_t(nslots_) * data_size_,
              NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK),
        resp_(a, pd_, size_t(nslots_) * kCqeSize, NDK_MR_FLAG_ALLOW_LOCAL_WRITE),
        qp_(a, pd_, cq_, cq_, nullptr, QpConfig{entries_, 3 * nslots_, 0}),
        slots_(nslots_),
        stop_(std::move(stop)) {
    free_.reserve(nslots_);
    for (uint32_t i = nslots_; i-- > 0;) free_.push_back(i);
    std::lock_guard lk(stop_->m);
    stop_->cq = &cq_;
  }
  ~Queue() {
    std::lock_guard lk(stop_->m);
    stop_->cq = nullptr;
  }
  Cq& cq() { return cq_; }
  Qp& qp() { return qp_; }
  uint16_t entries() const { return entries_; }

  bool post_receives() {
    for (uint32_t i = 0; i < entries_; ++i)
      if (!repost(i)) return false;
    return true;
  }

  // The handshake's bound and the place to move to a service slot at the
  // first capsule.
  void set_handshake(softndk::tools::HandshakeGate::Ticket* t, softndk::tools::Deadline d,
                     double seconds) {
    ticket_ = t;
    handshake_deadline_ = d;
    handshake_s_ = seconds;
  }

  // Serves until the end; returns why it ended (for the log), "" if clean.
  std::string run(Connection& conn, const std::atomic<bool>& stopping) {
    NDK_RESULT res[64];
    // The admin queue carries a few commands (and a Keep Alive every KATO/2):
    // it waits for events even with --poll, so it does not take a core.
    bool events = !s_.cfg().poll || qid_ == 0;
    for (;;) {
      if (stop_->stop || stopping) return ending_;
      if (closing_ && free_.size() == nslots_) return "";  // Disconnect answered
      ULONG n = cq_.wait(res, 64, events, softndk::tools::deadline_in(0.2));
      for (ULONG i = 0; i < n; ++i)
        if (!completion(res[i])) return ending_;
      if (n == 0 && conn.peer_disconnected()) return "";
      if (n == 0 && ticket_ != nullptr && !ticket_->serving() &&
          softndk::tools::Clock::now() >= handshake_deadline_) {
        char b[32];
        std::snprintf(b, sizeof b, "%g", handshake_s_);
        fail(std::string("no capsule within ") + b +
             " s of its connection request (handshake timed out, --timeout)");
        return ending_;
      }
    }
  }

  void end_association() {
    if (!ctrl_) return;
    if (qid_ == 0) {
      ctrl_->kill();
      s_.remove(ctrl_->cntlid);
    } else {
      std::lock_guard lk(ctrl_->mu);
      ctrl_->stoppers.erase(qid_);
    }
  }
  std::shared_ptr<Controller> ctrl() const { return ctrl_; }

 private:
  bool fail(std::string why) {
    if (ending_.empty()) ending_ = std::move(why);
    return false;
  }
  uint8_t* capsule(uint32_t r) { return recv_.data() + size_t(r) * capsule_size_; }
  uint8_t* slot_data(uint32_t k) { return data_.data() + size_t(k) * data_size_; }

  bool repost(uint32_t r) {
    NDK_SGE sge = recv_.sge(size_t(r) * capsule_size_, capsule_size_);
    NTSTATUS st = qp_.receive(ctx(kRecv, r), &sge, 1);
    if (st != STATUS_SUCCESS) return fail("post receive: " + softndk::tools::status_name(st));
    return true;
  }

  bool completion(const NDK_RESULT& r) {
    uint64_t v = reinterpret_cast<uint64_t>(r.RequestContext);
    auto kind = Kind(v >> 32);
    uint32_t idx = uint32_t(v);
    if (r.Status != STATUS_SUCCESS) {
      const char* what = kind == kRecv    ? "receive"
                         : kind == kRead  ? "RDMA Read"
                         : kind == kWrite ? "RDMA Write"
                                          : "send";
      return fail(std::string(what) + " completed with " + softndk::tools::status_name(r.Status));
    }
    switch (kind) {
      case kRecv:
        return on_capsule(idx, r.BytesTransferred);
      case kRead:
        return on_data_fetched(idx);
      case kSend:
        slots_[idx].busy = false;
        free_.push_back(idx);
        return true;
      default:
        return true;  // RDMA Writes are posted silent; failures come here
    }
  }

  bool on_capsule(uint32_t r, uint32_t len) {
    if (ticket_ != nullptr && !ticket_->serving()) {
      // The handshake is done: only now does the queue take a service slot.
      std::string why;
      if (!ticket_->serve(&why)) return fail(why);
    }
    ParsedCapsule p = parse_capsule({capsule(r), len});
    sqhd_ = uint16_t((sqhd_ + 1) % entries_);
    if (p.fatal)
      return fail("received a " + std::to_string(len) + "-byte capsule (shorter than an SQE)");
    if (free_.empty())
      return fail("host sent more commands than its queue depth (" + std::to_string(entries_) +
                  ")");
    uint32_t k = free_.back();
    free_.pop_back();
    Slot& sl = slots_[k];
    sl.busy = true;
    sl.cap = p;
    if (ctrl_) ctrl_->last_cmd_ms = now_ms();
    (qid_ == 0 ? s_.stats.admin_cmds : s_.stats.io_cmds)++;
    if (p.status != 0) {
      if (!repost(r)) return false;
      return respond(k, Reply{p.status});
    }
    uint16_t pre = precheck(k);
    if (pre != 0) {
      if (!repost(r)) return false;
      return respond(k, Reply{pre});
    }
    DataDir dir = data_direction(p.sqe);
    if (dir == DataDir::kHostToController && p.kind == DataKind::kKeyed) {
      if (!repost(r)) return false;
      NDK_SGE sge = data_.sge(size_t(k) * data_size_, p.length);
      NTSTATUS st = qp_.read(ctx(kRead, k), &sge, 1, p.address, p.key, 0);
      if (st != STATUS_SUCCESS) return fail("post RDMA Read: " + softndk::tools::status_name(st));
      return true;
    }
    if (p.kind == DataKind::kInCapsule) {
      s_.stats.in_capsule++;
      Reply rep = execute(k, {capsule(r) + p.address, p.length});
      if (!repost(r)) return false;
      return finish(k, rep);
    }
    if (!repost(r)) return false;
    return finish(k, execute(k, {}));
  }

  bool on_data_fetched(uint32_t k) {
    Slot& sl = slots_[k];
    return finish(k, execute(k, {slot_data(k), sl.cap.length}));
  }

  // Checks that need no data, before any is fetched.
  uint16_t precheck(uint32_t k) {
    const ParsedCapsule& p = slots_[k].cap;
    if (p.kind != DataKind::kNone && p.length > data_size_)
      return make_status(kSctGeneric, kScDataSglLengthInvalid);
    if (!ctrl_) {
      if (p.sqe.opcode != kFabricsCommand || p.sqe.fctype() != kFctConnect)
        return make_status(kSctGeneric, kScCommandSequenceError);
      if (p.length < kConnectDataSize) return make_status(kSctGeneric, kScDataSglLengthInvalid);
      return 0;
    }
    if (qid_ != 0 && p.sqe.opcode != kFabricsCommand) return io_precheck(s_, p);
    return 0;
  }

  Reply execute(uint32_t k, std::span<const uint8_t> in) {
    const ParsedCapsule& p = slots_[k].cap;
    std::span<uint8_t> out(slot_data(k), data_size_);
    if (!ctrl_) {
      std::shared_ptr<Controller> c;
      auto stop = stop_;
      Reply r = handle_connect(
          s_, p.sqe, in, qid_, entries_, [stop] { stop->fire(); }, &c);
      ctrl_ = c;
      return r;
    }
    if (ctrl_->dead) return Reply{make_status(kSctGeneric, kScAbortSqDeleted)};
    if (qid_ == 0) return handle_admin(s_, *ctrl_, p.sqe, out, in);
    if (p.sqe.opcode == kFabricsCommand) {
      if (p.sqe.fctype() == kFctDisconnect) {
        closing_ = true;
        return Reply{};
      }
      return Reply{make_status(kSctGeneric, kScInvalidOpcode)};
    }
    return io_execute(s_, p, in, out);
  }

  bool finish(uint32_t k, Reply rep) {
    Slot& sl = slots_[k];
    if (rep.hold) {
      if (held_aers_.size() >= kMaxAers)
        return respond(k,
                       Reply{make_status(kSctCommandSpecific, kScAsyncEventRequestLimitExceeded)});
      held_aers_.push_back(sl.cap.sqe.cid);
      sl.busy = false;
      free_.push_back(k);
      return true;
    }
    if (rep.abort_aers) {
      for (uint16_t cid : held_aers_) {
        if (free_.empty()) break;
        uint32_t a = free_.back();
        free_.pop_back();
        slots_[a].busy = true;
        slots_[a].cap = ParsedCapsule{};
        slots_[a].cap.sqe.cid = cid;
        if (!respond(a, Reply{make_status(kSctGeneric, kScAbortSqDeleted)})) return false;
      }
      held_aers_.clear();
    }
    if (rep.status == 0 && rep.data_len > 0 && sl.cap.kind == DataKind::kKeyed &&
        data_direction(sl.cap.sqe) != DataDir::kHostToController) {
      // Never beyond what the host advertised.
      uint32_t len = std::min(rep.data_len, sl.cap.length);
      NDK_SGE sge = data_.sge(size_t(k) * data_size_, len);
      NTSTATUS st = qp_.write(ctx(kWrite, k), &sge, 1, sl.cap.address, sl.cap.key,
                              NDK_OP_FLAG_SILENT_SUCCESS);
      if (st != STATUS_SUCCESS) return fail("post RDMA Write: " + softndk::tools::status_name(st));
    }
    if (rep.status != 0) s_.stats.errors++;
    return respond(k, rep);
  }

  bool respond(uint32_t k, const Reply& rep) {
    Slot& sl = slots_[k];
    Cqe c{};
    c.result = rep.result;
    c.sqhd = sqhd_;
    c.sqid = qid_;
    c.cid = sl.cap.sqe.cid;
    c.status = uint16_t(rep.status << 1);
    std::memcpy(resp_.data() + size_t(k) * kCqeSize, &c, sizeof c);
    NDK_SGE sge = resp_.sge(size_t(k) * kCqeSize, kCqeSize);
    NTSTATUS st;
    if (sl.cap.kind == DataKind::kKeyed && sl.cap.invalidate) {
      s_.stats.invalidations++;
      st = qp_.get()->Dispatch->NdkSendAndInvalidate(qp_.get(), ctx(kSend, k), &sge, 1, 0,
                                                     sl.cap.key);
    } else {
      st = qp_.send(ctx(kSend, k), &sge, 1, 0);
    }
    if (st != STATUS_SUCCESS) return fail("post send: " + softndk::tools::status_name(st));
    return true;
  }

  Subsystem& s_;
  uint16_t qid_;
  uint16_t entries_;
  uint32_t nslots_;
  uint32_t capsule_size_;
  uint32_t data_size_;
  Pd pd_;
  Cq cq_;
  Buffer recv_, data_, resp_;
  Qp qp_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  std::vector<uint16_t> held_aers_;
  std::shared_ptr<StopHandle> stop_;
  std::shared_ptr<Controller> ctrl_;
  uint16_t sqhd_ = 0;
  bool closing_ = false;
  std::string ending_;
  softndk::tools::HandshakeGate::Ticket* ticket_ = nullptr;
  softndk::tools::Deadline handshake_deadline_ = softndk::tools::Deadline::max();
  double handshake_s_ = 0;
};

}  // namespace

void serve_connection(Subsystem& s, Adapter& a, std::unique_ptr<Connection> conn,
                      const std::atomic<bool>& stopping,
                      softndk::tools::HandshakeGate::Ticket ticket, double handshake_s) {
  const auto handshake_deadline = softndk::tools::deadline_in(handshake_s);
  std::string who = "?";
  try {
    who = conn->peer_address().to_string();
    s.stats.connections++;
    ULONG ird = 0, ord = 0;
    auto pdata = conn->peer_data(&ird, &ord);
    CmLimits lim;
    lim.max_admin_depth = s.cfg().admin_depth;
    lim.max_io_depth = s.cfg().max_io_depth;
    lim.max_qid = s.cfg().max_io_queues;
    auto cm = parse_cm_request(pdata, lim);
    if (!cm.req) {
      s.stats.cm_rejects++;
      std::cerr << "ndk-nvmet: rejected " << who << ": NVMe/RDMA CM status " << cm.reject << "\n";
      conn->reject(cm_reject_data(cm.reject));
      return;
    }
    auto stop = std::make_shared<StopHandle>();
    std::unique_ptr<Queue> q;
    try {
      q = std::make_unique<Queue>(s, a, *cm.req, stop);
    } catch (const std::exception& e) {
      s.stats.cm_rejects++;
      std::cerr << "ndk-nvmet: rejected " << who << ": " << e.what() << "\n";
      conn->reject(cm_reject_data(kCmNoResources));
      return;
    }
    // The connection is closed before the queue's QP (NDKPI: the connector
    // goes first); declared after q for that.
    std::unique_ptr<Connection> c = std::move(conn);
    c->interrupt_on_disconnect(q->cq());
    q->set_handshake(&ticket, handshake_deadline, handshake_s);
    if (!q->post_receives()) throw std::runtime_error("cannot post receives");
    const NDK_ADAPTER_INFO& in = a.info();
    c->accept(q->qp(), in.MaxInboundReadLimit ? in.MaxInboundReadLimit : 16,
              in.MaxOutboundReadLimit ? in.MaxOutboundReadLimit : 16, cm_accept_data(q->entries()));
    std::string why;
    try {
      why = q->run(*c, stopping);
    } catch (const std::exception& e) {
      why = e.what();
    }
    auto ctrl = q->ctrl();
    q->end_association();
    if (!why.empty() && !stopping)
      std::cerr << "ndk-nvmet: queue " << cm.req->qid << " of " << who
                << (ctrl ? " (controller " + std::to_string(ctrl->cntlid) + ")" : "")
                << " ended: " << why << "\n";
    c->disconnect();
    c.reset();
  } catch (const std::exception& e) {
    std::cerr << "ndk-nvmet: connection from " << who << ": " << e.what() << "\n";
  }
}

}  // namespace nvmf::target
