// SPDX-License-Identifier: Apache-2.0
// rdma_queue.h - one NVMe over Fabrics queue (admin or I/O) on one softndk
// QP, the way an RDMA host drives it (NVMe RDMA Transport 1.0):
//  - RDMA CM private data in the MPA request names the queue (qid, hrqsize,
//    hsqsize, cntlid); a reject's private data says why the target refused;
//  - per command slot: a 64-byte capsule, a data buffer cut from one
//    region registered once per queue (its page list built once), and a
//    fast-register MR. A command with data fast-registers the slot's
//    buffer for exactly the access the target needs and advertises it in
//    a keyed SGL with the Invalidate subtype; the response must then come
//    by Send with Invalidate of exactly that key (else the host invalidates
//    locally); a mismatch is a protocol error;
//  - small writes go in the capsule (in-capsule data) when the controller
//    allows it (IOCCSZ);
//  - one CQ per queue, polled by the caller's thread; nothing is allocated
//    per command.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host_error.h"
#include "ndkapp/session.h"
#include "nvmf_wire.h"

namespace nvmf::host {

namespace tools = softndk::tools;

enum class DataDir : uint8_t { kNone, kToHost, kToController };

struct QueueParams {
  uint16_t qid = 0;
  uint16_t entries = 32;    // queue size: hsqsize = entries - 1, at most entries - 1 outstanding
  uint16_t cntlid = 0;      // I/O queues: the controller (RDMA CM private data)
  uint32_t max_io = 65536;  // data buffer per slot (bytes)
  uint32_t in_capsule = 0;  // in-capsule data allowed (IOCCSZ * 16 - 64), 0 = none
  bool remote_invalidate = true;  // ask for Send with Invalidate (keyed SGL subtype Fh)
};

class Queue {
 public:
  // Creates the QP and its resources and connects it (RDMA CM level only;
  // the caller sends the Fabrics Connect command). Throws HostError.
  Queue(tools::Adapter& a, tools::Pd& pd, const tools::SockAddr& local, const tools::SockAddr& peer,
        const QueueParams& p, double timeout_s);
  ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  uint16_t qid() const { return p_.qid; }
  unsigned depth() const { return p_.entries - 1u; }  // commands in flight at most
  unsigned outstanding() const { return outstanding_; }
  uint32_t max_io() const { return p_.max_io; }
  uint16_t crqsize() const { return crqsize_; }
  void set_in_capsule(uint32_t bytes) { p_.in_capsule = bytes; }

  // A free slot, or -1. The slot's SQE is zeroed; its buffer is max_io().
  int acquire();
  Sqe& sqe(int slot) { return slots_[slot].sqe_copy; }
  uint8_t* buffer(int slot) { return data_->data() + size_t(slot) * stride_; }
  // Sends the slot's command with `len` bytes of its buffer as data in
  // direction `dir` (fills the SGL, cid and flags). Throws HostError.
  void submit(int slot, uint32_t len, DataDir dir);
  // Polls the CQ once; calls on_done(slot, cqe, user) for every command
  // whose response arrived and whose Send completed, then frees the slot.
  template <typename F>
  unsigned poll(F&& on_done);
  // Submit and wait (admin and setup commands). Returns the CQE; throws
  // HostError(kExitConnectionLost) at the deadline.
  Cqe execute(int slot, uint32_t len, DataDir dir, double timeout_s);
  // Sets slot's user word (the caller's I/O bookkeeping).
  uint64_t& user(int slot) { return slots_[slot].user; }
  uint64_t submitted_ns(int slot) const { return slots_[slot].start_ns; }

  tools::Connection* connection() { return conn_.get(); }
  void disconnect();
  // How many responses came with/without remote invalidation (for reports
  // and tests: the target honoured the Invalidate subtype).
  uint64_t remote_invalidations() const { return remote_inv_; }
  uint64_t local_invalidations() const { return local_inv_; }
  uint64_t in_capsule_writes() const { return in_capsule_; }

 private:
  struct Slot {
    Sqe sqe_copy;  // built here, copied into the registered capsule at submit
    uint64_t user = 0;
    uint64_t start_ns = 0;
    uint16_t cid = 0;
    uint8_t gen = 0;
    bool busy = false, sent = false, answered = false, keyed = false;
    Cqe cqe{};
    NDK_MR* mr = nullptr;
    uint32_t key = 0;
  };
  // A request's context: slot << 2 | kind (kInvalidate of slot 0 is a null
  // context, which NDK passes through like any other).
  enum Kind : uintptr_t { kInvalidate = 0, kSend = 1, kRecv = 2, kFastRegister = 3 };
  static void* ctx(unsigned idx, Kind k) {
    return reinterpret_cast<void*>((uintptr_t(idx) << 2) | k);
  }
  void setup(tools::Adapter& a, tools::Pd& pd, const tools::SockAddr& local,
             const tools::SockAddr& peer, double timeout_s);
  void close_mrs() noexcept;
  // Handles one CQ result; returns the slot that finished, or -1.
  int handle(const NDK_RESULT_EX& r);
  void post_receive(unsigned idx);
  [[noreturn]] void lost(const std::string& what);
  uint64_t now_ns() const;

  tools::Adapter& a_;
  QueueParams p_;
  size_t stride_;
  tools::Cq cq_;
  tools::Qp qp_;
  std::unique_ptr<tools::Buffer> capsules_;   // entries x 64 bytes
  std::unique_ptr<tools::Buffer> responses_;  // entries x 16 bytes (receives)
  std::unique_ptr<tools::Buffer> data_;       // entries x stride
  std::vector<uint8_t> lam_;                  // page list of data_
  std::vector<Slot> slots_;
  std::vector<int> free_;
  unsigned outstanding_ = 0;
  uint32_t idle_polls_ = 0;
  uint16_t crqsize_ = 0;
  uint64_t remote_inv_ = 0, local_inv_ = 0, in_capsule_ = 0;
  std::unique_ptr<tools::Connection> conn_;  // last: disconnects before the QP closes
};

template <typename F>
unsigned Queue::poll(F&& on_done) {
  NDK_RESULT_EX r[32];
  NDK_CQ* cq = cq_.get();
  ULONG n = cq->Dispatch->NdkGetCqResultsEx(cq, r, 32);
  unsigned done = 0;
  for (ULONG i = 0; i < n; ++i) {
    int s = handle(r[i]);
    if (s < 0) continue;
    Slot& sl = slots_[s];
    on_done(s, sl.cqe);
    sl.busy = false;
    --outstanding_;
    free_.push_back(s);
    ++done;
  }
  if (n == 0 && (++idle_polls_ & 1023) == 0 && conn_ && conn_->peer_disconnected())
    lost("the target closed the connection of queue " + std::to_string(p_.qid));
  return done;
}

}  // namespace nvmf::host
