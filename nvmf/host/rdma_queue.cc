// SPDX-License-Identifier: Apache-2.0
// rdma_queue.cc - see rdma_queue.h.
#include "rdma_queue.h"

#include <chrono>
#include <cstring>

#include "ndkapp/status.h"

namespace nvmf::host {

namespace {

constexpr size_t kPage = NDK_PAGE_SIZE;

void check(NTSTATUS st, const char* what) {
  if (st != STATUS_SUCCESS)
    throw HostError(kExitError, std::string(what) + " failed: " + softndk::tools::status_name(st));
}

}  // namespace

uint64_t Queue::now_ns() const {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

Queue::Queue(tools::Adapter& a, tools::Pd& pd, const tools::SockAddr& local,
             const tools::SockAddr& peer, const QueueParams& p, double timeout_s)
    : a_(a),
      p_(p),
      stride_((size_t(p.max_io) + kPage - 1) / kPage * kPage),
      // Per slot: fast register + Send + local invalidate on the SQ.
      cq_(a, ULONG(p.entries) * 4 + 8),
      qp_(a, pd, cq_, cq_, this,
          tools::QpConfig{p.entries, ULONG(p.entries) * 3 + 4, ULONG(kSqeSize), 2}) {
  if (p.entries < 2 || p.entries > 1024)
    throw HostError(kExitUsage, "queue size must be 2..1024, not " + std::to_string(p.entries));
  // No destructor runs for a constructor that throws: close the MRs made so
  // far here, or the PD's close would wait for them (a refused connect
  // used to cost the host its whole --timeout on the way out).
  try {
    setup(a, pd, local, peer, timeout_s);
  } catch (...) {
    close_mrs();
    throw;
  }
}

void Queue::close_mrs() noexcept {
  for (Slot& s : slots_)
    if (s.mr) tools::close_object(&s.mr->Header, s.mr->Dispatch->NdkCloseMr, a_.timeout());
  slots_.clear();
}

void Queue::setup(tools::Adapter& a, tools::Pd& pd, const tools::SockAddr& local,
                  const tools::SockAddr& peer, double timeout_s) {
  const QueueParams& p = p_;
  capsules_ = std::make_unique<tools::Buffer>(a, pd, size_t(p.entries) * kSqeSize,
                                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
  responses_ = std::make_unique<tools::Buffer>(a, pd, size_t(p.entries) * kCqeSize,
                                               NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
  data_ = std::make_unique<tools::Buffer>(a, pd, size_t(p.entries) * stride_,
                                          NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
  // The page list of the whole data region, built once; each command
  // fast-registers its slot's slice of it.
  const ULONG pages = ULONG(size_t(p.entries) * stride_ / kPage);
  lam_.resize(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) + size_t(pages) * sizeof(NDK_LOGICAL_ADDRESS));
  auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_.data());
  ULONG lam_size = ULONG(lam_.size()), fbo = 0;
  MDL mdl{nullptr, data_->data(), size_t(p.entries) * stride_};
  auto* pend = new tools::Pending;
  NTSTATUS st = a.get()->Dispatch->NdkBuildLAM(
      a.get(), &mdl, mdl.ByteCount, &tools::Pending::on_request, pend, lam, &lam_size, &fbo);
  check(tools::Pending::finish(pend, st, timeout_s), "NdkBuildLAM");
  if (fbo != 0 || lam->AdapterPageCount < pages)
    throw HostError(kExitError, "NdkBuildLAM gave an unexpected page list");

  slots_.resize(p.entries);
  const ULONG slot_pages = ULONG(stride_ / kPage);
  for (unsigned i = 0; i < p.entries; ++i) {
    Slot& s = slots_[i];
    pend = new tools::Pending;
    NDK_MR* mr = nullptr;
    st = pd.get()->Dispatch->NdkCreateMr(pd.get(), TRUE, &tools::Pending::on_create, pend, &mr);
    NDK_OBJECT_HEADER* obj = nullptr;
    check(tools::Pending::finish(pend, st, timeout_s, &obj), "NdkCreateMr(fast register)");
    s.mr = mr ? mr : reinterpret_cast<NDK_MR*>(obj);
    pend = new tools::Pending;
    st = s.mr->Dispatch->NdkInitializeFastRegisterMr(s.mr, slot_pages, TRUE,
                                                     &tools::Pending::on_request, pend);
    check(tools::Pending::finish(pend, st, timeout_s), "NdkInitializeFastRegisterMr");
    s.key = s.mr->Dispatch->NdkGetRemoteTokenFromMr(s.mr);
  }
  for (int i = int(p.entries) - 1; i >= 0; --i) free_.push_back(i);
  for (unsigned i = 0; i < p.entries; ++i) post_receive(i);

  RdmaCmRequest req{};
  req.recfmt = 0;
  req.qid = p.qid;
  req.hrqsize = p.entries;
  req.hsqsize = uint16_t(p.entries - 1);
  req.cntlid = p.cntlid;
  std::vector<uint8_t> pdata(sizeof req), accept, reject;
  std::memcpy(pdata.data(), &req, sizeof req);
  const ULONG ird = std::min<ULONG>(16, a.info().MaxInboundReadLimit);
  const ULONG ord = std::min<ULONG>(16, a.info().MaxOutboundReadLimit);
  try {
    conn_ = tools::Connection::connect(a, qp_, local, peer, ird, ord, pdata, &accept, &reject);
  } catch (const tools::ToolError& e) {
    std::string why = cm_refusal_text(reject, p.qid, peer.to_string());
    throw HostError(kExitConnect, why.empty() ? std::string(e.what()) : why);
  }
  // A peer that accepted without an NVMe/RDMA CM accept is another service.
  std::string odd = cm_accept_problem(accept, peer.to_string());
  if (!odd.empty()) {
    conn_.reset();
    throw HostError(kExitConnect, odd);
  }
  RdmaCmAccept ac;
  std::memcpy(&ac, accept.data(), sizeof ac);
  crqsize_ = ac.crqsize;
}

Queue::~Queue() {
  conn_.reset();  // disconnect first: no more remote access to the MRs
  close_mrs();
}

void Queue::disconnect() {
  if (conn_) conn_->disconnect();
}

void Queue::post_receive(unsigned idx) {
  NDK_SGE sge = responses_->sge(size_t(idx) * kCqeSize, kCqeSize);
  NTSTATUS st = qp_.receive(ctx(idx, kRecv), &sge, 1);
  if (st != STATUS_SUCCESS) lost("posting a receive failed: " + tools::status_name(st));
}

void Queue::lost(const std::string& what) {
  // A target that accepted the queue's connection and never sent a byte is
  // named as such (siw 6.1's first-FPDU race, docs/compatibility.md note 1).
  if (conn_) {
    std::string silent = conn_->silence();
    if (!silent.empty()) throw HostError(kExitPeerSilent, what + ": " + silent);
  }
  throw HostError(kExitConnectionLost, tools::with_end_cause(what, conn_.get()));
}

int Queue::acquire() {
  if (free_.empty()) return -1;
  int s = free_.back();
  free_.pop_back();
  Slot& sl = slots_[s];
  sl.busy = true;
  sl.sent = sl.answered = sl.keyed = false;
  std::memset(&sl.sqe_copy, 0, sizeof sl.sqe_copy);
  ++outstanding_;
  return s;
}

void Queue::submit(int slot, uint32_t len, DataDir dir) {
  Slot& sl = slots_[slot];
  Sqe& cmd = sl.sqe_copy;
  sl.gen = uint8_t((sl.gen + 1) & 0x3F);
  sl.cid = uint16_t((uint16_t(sl.gen) << 10) | uint16_t(slot));
  cmd.cid = sl.cid;
  cmd.flags = uint8_t((cmd.flags & 0x3F) | kFlagsSgl);
  NDK_QP* qp = qp_.get();
  NDK_SGE sge[2];
  ULONG nsge = 1;
  if (len > p_.max_io) throw HostError(kExitUsage, "transfer larger than the queue's buffers");
  if (dir == DataDir::kNone || len == 0) {
    // No data: a keyed SGL of length 0 (what the Linux host sends).
    cmd.sgl1.set_keyed(0, 0, 0, false);
  } else if (dir == DataDir::kToController && len <= p_.in_capsule) {
    cmd.sgl1.set_in_capsule(0, len);
    sge[1] = data_->sge(size_t(slot) * stride_, len);
    nsge = 2;
    ++in_capsule_;
  } else {
    const ULONG pages = ULONG((len + kPage - 1) / kPage);
    auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_.data());
    const ULONG access = dir == DataDir::kToHost
                             ? NDK_OP_FLAG_ALLOW_REMOTE_WRITE
                             : (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_LOCAL_WRITE);
    NTSTATUS st =
        qp->Dispatch->NdkFastRegister(qp, ctx(unsigned(slot), kFastRegister), sl.mr, pages,
                                      &lam->AdapterPageArray[size_t(slot) * (stride_ / kPage)], 0,
                                      len, buffer(slot), access | NDK_OP_FLAG_SILENT_SUCCESS);
    if (st != STATUS_SUCCESS) lost("NdkFastRegister failed: " + tools::status_name(st));
    // NDKPI keeps the token of NdkInitializeFastRegisterMr across fast
    // registers, but the verbs backend's degraded mode (--fr-register:
    // devices without type-2 windows) registers the pages anew each time,
    // with new keys, at the post (docs/verbs.md): the key to advertise is
    // read after it. A stable token reads the same.
    sl.key = sl.mr->Dispatch->NdkGetRemoteTokenFromMr(sl.mr);
    cmd.sgl1.set_keyed(reinterpret_cast<uint64_t>(buffer(slot)), len, sl.key, p_.remote_invalidate);
    sl.keyed = true;
  }
  std::memcpy(capsules_->data() + size_t(slot) * kSqeSize, &cmd, kSqeSize);
  sge[0] = capsules_->sge(size_t(slot) * kSqeSize, kSqeSize);
  sl.start_ns = now_ns();
  // A bare capsule is copied into the SQ at post time (like ndkperf's
  // latency tests' inline Sends): nothing is left to read from the slot.
  NTSTATUS st = qp->Dispatch->NdkSend(qp, ctx(unsigned(slot), kSend), sge, nsge,
                                      nsge == 1 ? NDK_OP_FLAG_INLINE : 0);
  if (st != STATUS_SUCCESS) lost("NdkSend of a command capsule failed: " + tools::status_name(st));
}

int Queue::handle(const NDK_RESULT_EX& r) {
  const auto v = reinterpret_cast<uintptr_t>(r.RequestContext);
  const unsigned idx = unsigned(v >> 2);
  const Kind kind = Kind(v & 3);
  if (r.Status != STATUS_SUCCESS) {
    const char* what = kind == kRecv           ? "a receive"
                       : kind == kSend         ? "a command Send"
                       : kind == kFastRegister ? "the fast register"
                                               : "the invalidate";
    std::string m = std::string(what) + " of slot " + std::to_string(idx) + " on queue " +
                    std::to_string(p_.qid) + " completed with " + tools::status_name(r.Status);
    // The device's own code, where the provider has one (the verbs
    // backend: the work completion's status and vendor error), tells a
    // device's refusal from the provider's.
    if (r.ProviderErrorCode != 0) {
      char b[48];
      std::snprintf(b, sizeof b, " (provider error 0x%08x)", unsigned(r.ProviderErrorCode));
      m += b;
    }
    lost(m);
  }
  if (kind == kFastRegister || kind == kInvalidate) return -1;  // silent success: errors only
  if (idx >= slots_.size()) throw HostError(kExitError, "completion with an unknown context");
  if (kind == kSend) {
    Slot& sl = slots_[idx];
    sl.sent = true;
    return sl.answered ? int(idx) : -1;
  }
  // A response capsule.
  if (r.BytesTransferred < kCqeSize) {
    throw HostError(kExitProtocol, "queue " + std::to_string(p_.qid) + ": a response of " +
                                       std::to_string(r.BytesTransferred) + " bytes (a CQE is 16)");
  }
  Cqe cqe;
  std::memcpy(&cqe, responses_->data() + size_t(idx) * kCqeSize, sizeof cqe);
  const unsigned slot = cqe.cid & 0x3FF;
  if (slot >= slots_.size() || !slots_[slot].busy || slots_[slot].cid != cqe.cid ||
      slots_[slot].answered) {
    throw HostError(kExitProtocol, "queue " + std::to_string(p_.qid) +
                                       ": a response for command id " + std::to_string(cqe.cid) +
                                       ", which is not outstanding");
  }
  Slot& sl = slots_[slot];
  if (r.Type == NdkOperationTypeReceiveAndInvalidate) {
    const auto token = uint32_t(r.TypeSpecificCompletionOutput);
    if (!sl.keyed || token != sl.key) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "queue %u: the response to command %u invalidated key 0x%08x, but the "
                    "command advertised %s 0x%08x",
                    p_.qid, cqe.cid, token, sl.keyed ? "key" : "no key", sl.keyed ? sl.key : 0);
      throw HostError(kExitProtocol, buf);
    }
    ++remote_inv_;
  } else if (sl.keyed) {
    // The target did not invalidate: do it here so the key cannot reach
    // the buffer after the command is done (and so the next fast register
    // finds the MR invalid). Ordered before that fast register on the SQ.
    NDK_QP* qp = qp_.get();
    NTSTATUS st = qp->Dispatch->NdkInvalidate(qp, ctx(slot, kInvalidate), &sl.mr->Header,
                                              NDK_OP_FLAG_SILENT_SUCCESS);
    if (st != STATUS_SUCCESS) lost("NdkInvalidate failed: " + tools::status_name(st));
    ++local_inv_;
  }
  // Reposted only after the checks: a target that broke the rules may also
  // have broken the QP, and the violation is what the user must hear of.
  post_receive(idx);
  sl.cqe = cqe;
  sl.answered = true;
  return sl.sent ? int(slot) : -1;
}

Cqe Queue::execute(int slot, uint32_t len, DataDir dir, double timeout_s) {
  submit(slot, len, dir);
  Cqe out{};
  bool done = false;
  auto deadline = tools::deadline_in(timeout_s);
  for (uint32_t spins = 0; !done; ++spins) {
    poll([&](int s, const Cqe& c) {
      if (s == slot) {
        out = c;
        done = true;
      }
    });
    if (!done && (spins & 255) == 255 && tools::Clock::now() >= deadline) {
      lost("queue " + std::to_string(p_.qid) + ": no response to command " +
           std::to_string(slots_[slot].cid) + " within " + std::to_string(int(timeout_s)) + " s");
    }
  }
  return out;
}

}  // namespace nvmf::host
