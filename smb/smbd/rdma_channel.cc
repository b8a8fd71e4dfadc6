// SPDX-License-Identifier: Apache-2.0
#include "rdma_channel.h"

#include <algorithm>
#include <cstdio>

#include "ndkapp/session.h"
#include "ndkapp/status.h"

namespace smbd {

namespace {

constexpr uint32_t kPage = NDK_PAGE_SIZE;

template <typename Op>
bool on_op(void* arg, const NDK_RESULT_EX& r) {
  auto* op = static_cast<Op*>(arg);
  if (r.RequestContext != op) return false;
  if (op->pending) --op->pending;
  if (r.Status != STATUS_SUCCESS && op->status == STATUS_SUCCESS) op->status = r.Status;
  return true;
}

template <typename Op>
bool op_idle(void* arg) {
  return static_cast<Op*>(arg)->pending == 0;
}

[[noreturn]] void channel_fail(const std::string& why) {
  throw TransportError(Error::kNone, "smbd rdma channel: " + why);
}

}  // namespace

BufferPool::BufferPool(Transport& t, unsigned count, uint32_t slot_size, uint32_t max_mr_bytes)
    : t_(t), slot_size_((slot_size + kPage - 1) / kPage * kPage) {
  if (count == 0 || slot_size_ == 0) channel_fail("empty buffer pool");
  const ULONG frmr_pages = t.adapter().info().FRMRPageCount;
  uint32_t mr_pages = max_mr_bytes ? (max_mr_bytes + kPage - 1) / kPage : frmr_pages;
  if (mr_pages == 0) mr_pages = slot_size_ / kPage;  // no limit reported
  mr_size_ = std::min<uint32_t>(slot_size_, mr_pages * kPage);
  const double tmo = t.adapter().timeout();
  region_ = std::make_unique<tools::Buffer>(t.adapter(), t.pd(), size_t(count) * slot_size_,
                                            NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
  // The page list of the whole region, once; each I/O fast-registers its
  // slot's slices of it.
  const ULONG pages = ULONG(size_t(count) * slot_size_ / kPage);
  lam_.resize(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) + size_t(pages) * sizeof(NDK_LOGICAL_ADDRESS));
  auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_.data());
  ULONG lam_size = ULONG(lam_.size()), fbo = 0;
  MDL mdl{nullptr, region_->data(), size_t(count) * slot_size_};
  NDK_ADAPTER* a = t.adapter().get();
  auto* pend = new tools::Pending;
  NTSTATUS st = a->Dispatch->NdkBuildLAM(a, &mdl, mdl.ByteCount, &tools::Pending::on_request, pend,
                                         lam, &lam_size, &fbo);
  st = tools::Pending::finish(pend, st, tmo);
  if (st != STATUS_SUCCESS) channel_fail("NdkBuildLAM: " + tools::status_name(st));
  if (fbo != 0 || lam->AdapterPageCount < pages)
    channel_fail("NdkBuildLAM gave an unexpected page list");
  slots_.resize(count);
  NDK_PD* pd = t.pd().get();
  const unsigned per_slot = (slot_size_ + mr_size_ - 1) / mr_size_;
  for (auto& s : slots_) {
    s.pieces.resize(per_slot);
    for (auto& piece : s.pieces) {
      pend = new tools::Pending;
      NDK_OBJECT_HEADER* obj = nullptr;
      st = pd->Dispatch->NdkCreateMr(pd, TRUE, &tools::Pending::on_create, pend, &piece.mr);
      st = tools::Pending::finish(pend, st, tmo, &obj);
      if (!piece.mr) piece.mr = reinterpret_cast<NDK_MR*>(obj);
      if (st != STATUS_SUCCESS || !piece.mr)
        channel_fail("NdkCreateMr(fast register): " + tools::status_name(st));
      pend = new tools::Pending;
      st = piece.mr->Dispatch->NdkInitializeFastRegisterMr(piece.mr, mr_size_ / kPage, TRUE,
                                                           &tools::Pending::on_request, pend);
      st = tools::Pending::finish(pend, st, tmo);
      if (st != STATUS_SUCCESS)
        channel_fail("NdkInitializeFastRegisterMr(" + std::to_string(mr_size_ / kPage) +
                     " pages): " + tools::status_name(st));
    }
  }
}

BufferPool::~BufferPool() {
  const double tmo = t_.adapter().timeout();
  for (auto& s : slots_)
    for (auto& piece : s.pieces)
      if (piece.mr) tools::close_object(&piece.mr->Header, piece.mr->Dispatch->NdkCloseMr, tmo);
}

uint8_t* BufferPool::data(unsigned slot) const {
  return region_->data() + size_t(slot) * slot_size_;
}

void BufferPool::wait_op(const char* what) {
  // Bounded by the transport's timeout (the user's --timeout); the peer's
  // disconnect ends it at once (poll_until).
  const double tmo = t_.timeout_s();
  if (!t_.poll_until(&op_idle<Op>, &op_, &on_op<Op>, &op_, tools::deadline_in(tmo))) {
    char b[48];
    std::snprintf(b, sizeof b, "%g s", tmo);
    channel_fail(std::string(what) + ": " + std::to_string(op_.pending) +
                 " request(s) not completed within " + b);
  }
  if (op_.status != STATUS_SUCCESS) {
    NTSTATUS st = op_.status;
    op_.status = STATUS_SUCCESS;
    channel_fail(std::string(what) + ": " + tools::status_name(st));
  }
}

std::vector<BufferDescriptor> BufferPool::expose(unsigned slot, uint32_t len, bool peer_writes) {
  if (slot >= slots_.size() || len == 0 || len > slot_size_)
    channel_fail("expose: bad slot or length");
  Slot& s = slots_[slot];
  if (s.exposed) channel_fail("expose: slot still exposed to the peer");
  auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_.data());
  const ULONG access = peer_writes
                           ? NDK_OP_FLAG_ALLOW_REMOTE_WRITE
                           : (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_LOCAL_WRITE);
  NDK_QP* qp = t_.qp().get();
  // Every piece's fast register posted, then one wait for them all.
  const unsigned n = (len + mr_size_ - 1) / mr_size_;
  for (unsigned i = 0; i < n; ++i) {
    const uint32_t at = i * mr_size_, bytes = std::min(mr_size_, len - at);
    const ULONG pages = (bytes + kPage - 1) / kPage;
    ++op_.pending;
    NTSTATUS st = qp->Dispatch->NdkFastRegister(
        qp, &op_, s.pieces[i].mr, pages,
        &lam->AdapterPageArray[(size_t(slot) * slot_size_ + at) / kPage], 0, bytes, data(slot) + at,
        access);
    if (st != STATUS_SUCCESS) {
      --op_.pending;
      if (i > 0) wait_op("NdkFastRegister");
      s.exposed = i;  // the ones registered are released (invalidated) as usual
      channel_fail("NdkFastRegister: " + tools::status_name(st));
    }
  }
  s.exposed = n;
  wait_op("NdkFastRegister");
  std::vector<BufferDescriptor> d;
  d.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    Piece& p = s.pieces[i];
    p.token = p.mr->Dispatch->NdkGetRemoteTokenFromMr(p.mr);
    const uint32_t at = i * mr_size_;
    d.push_back(
        {reinterpret_cast<uint64_t>(data(slot) + at), p.token, std::min(mr_size_, len - at)});
  }
  return d;
}

void BufferPool::release(unsigned slot, uint32_t invalidated) {
  if (slot >= slots_.size()) channel_fail("release: bad slot");
  Slot& s = slots_[slot];
  if (!s.exposed) return;
  unsigned first_local = 0;
  if (invalidated != 0) {
    // MS-SMB2: the server's Send with Invalidate names the token of the
    // request's first buffer descriptor.
    if (invalidated != s.pieces[0].token)
      channel_fail("the reply invalidated token " + std::to_string(invalidated) +
                   ", not the request's " + std::to_string(s.pieces[0].token));
    ++remote_invalidations_;
    first_local = 1;
  }
  NDK_QP* qp = t_.qp().get();
  for (unsigned i = first_local; i < s.exposed; ++i) {
    ++op_.pending;
    NTSTATUS st = qp->Dispatch->NdkInvalidate(qp, &op_, &s.pieces[i].mr->Header, 0);
    if (st != STATUS_SUCCESS) {
      --op_.pending;
      if (op_.pending) wait_op("NdkInvalidate");
      channel_fail("NdkInvalidate: " + tools::status_name(st));
    }
    ++local_invalidations_;
  }
  if (op_.pending) wait_op("NdkInvalidate");
  s.exposed = 0;
}

// RDMA channel requests in flight at once over all staging buffers (the
// transport sizes its QP for 64 beside the Sends).
constexpr unsigned kMaxInFlight = 48;

RdmaMover::RdmaMover(Transport& t, uint32_t buffer_size, unsigned staging)
    : t_(t), size_(buffer_size), staging_(std::max(1u, staging)) {
  cur_ = &staging_[0];
  cur_->buf = std::make_unique<tools::Buffer>(
      t.adapter(), t.pd(), size_, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
  t_.set_completion_handler(&RdmaMover::on_completion, this);
}

RdmaMover::~RdmaMover() {
  // Posted Writes still reference the buffers: wait for them (bounded)
  // while the connection lasts; after its end they are flushed.
  if (in_flight_ && !t_.ended()) {
    try {
      wait_idle();
    } catch (const std::exception&) {
    }
  }
  t_.set_completion_handler(nullptr, nullptr);
}

bool RdmaMover::on_completion(void* arg, const NDK_RESULT_EX& r) {
  auto* m = static_cast<RdmaMover*>(arg);
  for (auto& s : m->staging_) {
    if (r.RequestContext != &s.op) continue;
    if (s.op.pending) --s.op.pending, --m->in_flight_;
    if (r.Status != STATUS_SUCCESS && s.op.status == STATUS_SUCCESS) s.op.status = r.Status;
    return true;
  }
  return false;
}

unsigned RdmaMover::staging_registered() const {
  unsigned n = 0;
  for (const auto& s : staging_) n += s.buf != nullptr;
  return n;
}

void RdmaMover::check(Op& op, const char* what) {
  if (op.status == STATUS_SUCCESS) return;
  NTSTATUS st = op.status;
  op.status = STATUS_SUCCESS;
  fail_ndk(what, st);
}

void RdmaMover::fail_ndk(const char* what, NTSTATUS st) {
  // A broken connection fails (or flushes) our requests before the
  // disconnect event that says why comes (a Terminate of the peer's, e.g.
  // a token it does not know): wait for it, briefly and bounded, so that
  // the reason names the cause and not only the failure that showed it.
  std::string why = std::string(what) + ": " + tools::status_name(st);
  if (t_.peer_gone(0.5))
    why = tools::with_end_cause("the peer disconnected", t_.connection()) + " (" + why + ")";
  channel_fail(why);
}

void RdmaMover::wait_op(Op& op, tools::Deadline dl, const char* what) {
  if (!t_.poll_until(&op_idle<Op>, &op, nullptr, nullptr, dl)) {
    char b[160];
    std::snprintf(b, sizeof b, "%s: %u request(s) not completed within %g s", what, op.pending,
                  t_.transfer_timeout_s());
    channel_fail(b);
  }
  check(op, what);
}

uint8_t* RdmaMover::acquire() {
  for (auto& s : staging_) check(s.op, "RDMA Write (posted earlier)");
  if (in_flight_) ++overlapped_;
  Staging* pick = nullptr;
  for (auto& s : staging_)
    if (s.buf && s.op.pending == 0) {
      pick = &s;
      break;
    }
  if (!pick)
    for (auto& s : staging_)
      if (!s.buf) {
        s.buf = std::make_unique<tools::Buffer>(
            t_.adapter(), t_.pd(), size_,
            NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
        pick = &s;
        break;
      }
  if (!pick) {
    // Every buffer busy: the one posted first finishes first.
    pick = &staging_[0];
    for (auto& s : staging_)
      if (s.posted_at < pick->posted_at) pick = &s;
    wait_op(pick->op, tools::deadline_in(t_.transfer_timeout_s()),
            "RDMA Writes of an earlier READ (waited for a free staging buffer)");
  }
  cur_ = pick;
  return cur_->buf->data();
}

void RdmaMover::write_to(std::span<const BufferDescriptor> d, uint32_t len) {
  const auto dl = tools::deadline_in(t_.transfer_timeout_s());
  post(d, len, false, dl);
  wait_op(cur_->op, dl, "RDMA Write");
}

void RdmaMover::post_write_to(std::span<const BufferDescriptor> d, uint32_t len) {
  post(d, len, false, tools::deadline_in(t_.transfer_timeout_s()));
}

void RdmaMover::write_from(std::span<const BufferDescriptor> d, uint32_t len, const uint8_t* source,
                           uint32_t source_token) {
  if (!source) channel_fail("write_from: no source");
  const auto dl = tools::deadline_in(t_.transfer_timeout_s());
  // post() names the local side `sink` for both directions; a Write only
  // reads it.
  post(d, len, false, dl, const_cast<uint8_t*>(source), source_token);
  wait_op(cur_->op, dl, "RDMA Write");
}

void RdmaMover::read_from(std::span<const BufferDescriptor> d, uint32_t len) {
  const auto dl = tools::deadline_in(t_.transfer_timeout_s());
  post(d, len, true, dl);
  wait_op(cur_->op, dl, "RDMA Read");
}

void RdmaMover::read_into(std::span<const BufferDescriptor> d, uint32_t len, uint8_t* sink,
                          uint32_t sink_token) {
  if (!sink) channel_fail("read_into: no sink");
  const auto dl = tools::deadline_in(t_.transfer_timeout_s());
  post(d, len, true, dl, sink, sink_token);
  wait_op(cur_->op, dl, "RDMA Read");
}

void RdmaMover::wait_idle() {
  const auto dl = tools::deadline_in(t_.transfer_timeout_s());
  for (auto& s : staging_) wait_op(s.op, dl, "RDMA Write (posted earlier)");
}

void RdmaMover::check_transfer(std::span<const BufferDescriptor> d, uint32_t len) {
  const uint32_t limit = t_.negotiated().max_read_write_size;
  if (len > limit)
    channel_fail(std::to_string(len) + " bytes exceed the negotiated MaxReadWriteSize " +
                 std::to_string(limit));
  if (len > size()) channel_fail("transfer larger than the mover's buffer");
  if (cur_->op.pending) channel_fail("staging buffer still in use (acquire() first)");
  check(cur_->op, "RDMA Write (posted earlier)");
  uint64_t room = 0;
  for (const auto& x : d) room += x.length;
  if (room < len)
    channel_fail("the descriptors cover " + std::to_string(room) + " bytes, not " +
                 std::to_string(len));
}

uint32_t RdmaMover::chunk_max() const {
  const uint32_t mtl = t_.adapter().info().MaxTransferLength;
  return std::max<uint32_t>(kPage, std::min<uint32_t>(1u << 20, mtl ? mtl : (1u << 20)));
}

bool RdmaMover::read_streamed_impl(std::span<const BufferDescriptor> d, uint32_t len,
                                   uint32_t piece, bool (*consume)(void*, uint32_t, uint32_t),
                                   void* arg) {
  check_transfer(d, len);
  const auto deadline = tools::deadline_in(t_.transfer_timeout_s());
  const uint32_t most = piece ? std::min(piece, chunk_max()) : chunk_max();
  const unsigned depth = std::max<uint32_t>(1, t_.max_reads_in_flight());
  NDK_QP* qp = t_.qp().get();
  Op& op = cur_->op;
  cur_->posted_at = ++posts_;
  // Ends of the pieces posted, in order: the first (posted - pending) have
  // arrived.
  std::vector<uint32_t> ends;
  ends.reserve(len / most + d.size() + 1);
  size_t di = 0;
  uint32_t doff = 0, posted = 0, consumed = 0;
  bool stopped = false;
  struct Want {
    RdmaMover* m;
    Op* op;
    unsigned depth;
    unsigned arrived;  // pieces arrived when the wait began
    size_t posted;
    bool more;  // pieces left to post
  };
  for (;;) {
    // Post while the peer's IRD (and the QP) allow.
    while (!stopped && posted < len && op.pending < depth && in_flight_ < kMaxInFlight &&
           op.status == STATUS_SUCCESS) {
      const BufferDescriptor& x = d[di];
      if (doff == x.length) {  // an empty descriptor: nothing to read from it
        ++di, doff = 0;
        continue;
      }
      const uint32_t n = std::min({most, x.length - doff, len - posted});
      NDK_SGE sge = cur_->buf->sge(posted, n);
      ++op.pending;
      ++in_flight_;
      NTSTATUS st = qp->Dispatch->NdkRead(qp, &op, &sge, 1, x.offset + doff, x.token, 0);
      if (st != STATUS_SUCCESS) {
        --op.pending;
        --in_flight_;
        fail_ndk("NdkRead", st);
      }
      ++reads_;
      max_in_flight_ = std::max(max_in_flight_, op.pending);
      posted += n;
      ends.push_back(posted);
      doff += n;
      if (doff == x.length) ++di, doff = 0;
    }
    if (op.status != STATUS_SUCCESS) break;  // thrown below, once nothing is in flight
    const size_t arrived = ends.size() - op.pending;
    const uint32_t ready = arrived ? ends[arrived - 1] : 0;
    if (!stopped && ready > consumed) {
      if (!consume(arg, consumed, ready - consumed)) stopped = true;
      consumed = ready;
      continue;
    }
    if (op.pending == 0 && (stopped || consumed == len)) break;
    // Nothing to do until another piece arrives (or, with none in flight
    // and room to post, the loop posts at once).
    Want w{this, &op, depth, unsigned(arrived), ends.size(), !stopped && posted < len};
    auto progressed = [](void* a) {
      auto* w = static_cast<Want*>(a);
      if (w->op->status != STATUS_SUCCESS) return true;
      if (w->posted - w->op->pending > w->arrived) return true;
      return w->more && w->op->pending < w->depth && w->m->in_flight_ < kMaxInFlight;
    };
    if (!t_.poll_until(progressed, &w, nullptr, nullptr, deadline)) {
      char b[200];
      std::snprintf(b, sizeof b,
                    "RDMA Read of %u bytes in pieces (%u posted, %u handed on): %u request(s) not "
                    "completed within %g s",
                    len, posted, consumed, op.pending, t_.transfer_timeout_s());
      channel_fail(b);
    }
  }
  wait_op(op, deadline, "RDMA Read");
  return !stopped;
}

void RdmaMover::post(std::span<const BufferDescriptor> d, uint32_t len, bool read,
                     tools::Deadline deadline, uint8_t* sink, uint32_t sink_token) {
  check_transfer(d, len);
  const uint32_t chunk_max = this->chunk_max();
  const unsigned depth = read ? std::max<uint32_t>(1, t_.max_reads_in_flight()) : 16;
  NDK_QP* qp = t_.qp().get();
  Op& op = cur_->op;
  cur_->posted_at = ++posts_;
  // What the wait was for, when it ends at the deadline.
  auto late = [&](uint32_t moved) {
    char b[160];
    std::snprintf(b, sizeof b,
                  "RDMA %s of %u bytes (%u posted): %u request(s) not completed within %g s",
                  read ? "Read" : "Write", len, moved, op.pending, t_.transfer_timeout_s());
    channel_fail(b);
  };
  struct Want {
    RdmaMover* m;
    Op* op;
    unsigned depth;
  };
  uint32_t done = 0;
  for (const auto& x : d) {
    uint32_t off = 0;
    while (off < x.length && done < len) {
      const uint32_t n = std::min({chunk_max, x.length - off, len - done});
      // Bound what is in flight (Reads: the peer's IRD; all: the QP).
      Want w{this, &op, depth};
      auto below = [](void* a) {
        auto* w = static_cast<Want*>(a);
        return w->op->pending < w->depth && w->m->in_flight_ < kMaxInFlight;
      };
      if (!t_.poll_until(below, &w, nullptr, nullptr, deadline)) late(done);
      if (op.status != STATUS_SUCCESS) return;  // thrown by the caller's wait
      NDK_SGE sge = cur_->buf->sge(done, n);
      if (sink) {
        sge.VirtualAddress = sink + done;
        sge.MemoryRegionToken = sink_token;
      }
      ++op.pending;
      ++in_flight_;
      NTSTATUS st = read ? qp->Dispatch->NdkRead(qp, &op, &sge, 1, x.offset + off, x.token, 0)
                         : qp->Dispatch->NdkWrite(qp, &op, &sge, 1, x.offset + off, x.token, 0);
      if (st != STATUS_SUCCESS) {
        --op.pending;
        --in_flight_;
        fail_ndk(read ? "NdkRead" : "NdkWrite", st);
      }
      read ? ++reads_ : ++writes_;
      if (read) max_in_flight_ = std::max(max_in_flight_, op.pending);
      off += n;
      done += n;
    }
  }
}

}  // namespace smbd
