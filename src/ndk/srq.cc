// SPDX-License-Identifier: Apache-2.0
// srq.cc - shared receive queue ring, threshold arming and notifications.
#include "ndk/srq.h"

#include <algorithm>
#include <memory>
#include <new>

#include "ndk/adapter.h"
#include "ndk/dispatch.h"
#include "ndk/pd.h"

namespace softndk::ndk {

Srq::Srq(Pd* pd, ULONG max_sge, NDK_FN_SRQ_NOTIFICATION_CALLBACK cb, void* ctx)
    : Object(pd->adapter(), NdkObjectTypeSrq, Resource::kSrq),
      pd_(pd),
      max_sge_(max_sge),
      cb_(cb),
      cb_ctx_(ctx),
      reactor_(&pd->adapter()->engine().pick()) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kSrqDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

NTSTATUS Srq::create(Pd* pd, ULONG depth, ULONG max_sge, ULONG threshold,
                     NDK_FN_SRQ_NOTIFICATION_CALLBACK cb, void* ctx, Srq** out) {
  const NDK_ADAPTER_INFO& info = pd->adapter()->info();
  if (depth == 0 || depth > info.MaxSrqDepth) return STATUS_INVALID_PARAMETER;
  if (max_sge == 0 || max_sge > info.MaxReceiveRequestSge) return STATUS_INVALID_PARAMETER;
  if (threshold > depth) return STATUS_INVALID_PARAMETER;
  auto srq = std::unique_ptr<Srq>(new Srq(pd, max_sge, cb, ctx));
  srq->ring_.resize(depth);
  srq->threshold_ = threshold;
  srq->armed_ = threshold > 0;
  provider::Provider& p = pd->adapter()->provider();
  if (p.device_srq()) {
    NTSTATUS s = p.create_srq(srq.get(), depth, max_sge, &srq->engine_);
    if (s != STATUS_SUCCESS) return s;
    srq->device_ = true;
    if (threshold > 0 && (s = srq->engine_->arm(threshold)) != STATUS_SUCCESS) {
      srq->engine_->detach();
      return s;
    }
  }
  srq->depend_on(pd);
  *out = srq.release();
  return STATUS_SUCCESS;
}

ULONG Srq::depth() {
  std::lock_guard lk(mu_);
  return static_cast<ULONG>(ring_.size());
}

ULONG Srq::queued() {
  std::lock_guard lk(mu_);
  return static_cast<ULONG>(count_ + device_held_);
}

NTSTATUS Srq::modify(ULONG depth, ULONG threshold) {
  if (depth > adapter()->info().MaxSrqDepth) return STATUS_INVALID_PARAMETER;
  if (auto e = device_ ? engine() : nullptr) return modify_device(e.get(), depth, threshold);
  std::vector<ReceiveRequest> ring;
  if (depth != 0) {
    try {
      ring.resize(depth);
    } catch (const std::bad_alloc&) {
      return STATUS_INSUFFICIENT_RESOURCES;
    }
  }
  std::lock_guard lk(mu_);
  ULONG new_depth = depth != 0 ? depth : static_cast<ULONG>(ring_.size());
  if (new_depth < count_) return STATUS_INVALID_PARAMETER;
  if (threshold > new_depth) return STATUS_INVALID_PARAMETER;
  if (depth != 0) {
    for (size_t i = 0; i < count_; ++i) ring[i] = ring_[(head_ + i) % ring_.size()];
    ring_.swap(ring);
    head_ = 0;
  }
  if (threshold > 0) {
    threshold_ = threshold;
    armed_ = true;
    if (count_ < threshold_) notify_locked(STATUS_SUCCESS);
  }
  return STATUS_SUCCESS;
}

// A device SRQ: the depth is the device's (ibv_modify_srq IBV_SRQ_MAX_WR
// where the device resizes SRQs, else STATUS_NOT_SUPPORTED), the limit is
// the device's (IBV_SRQ_LIMIT). The receives outstanding are the ring's
// and the device's (device_held_).
NTSTATUS Srq::modify_device(provider::SrqEngine* e, ULONG depth, ULONG threshold) {
  if (depth != 0) {
    {
      std::lock_guard lk(mu_);
      if (depth < count_ + device_held_ || threshold > depth) return STATUS_INVALID_PARAMETER;
    }
    if (depth != this->depth()) {
      NTSTATUS s = e->resize(depth);  // outside mu_: the engine takes it through SrqHost
      if (s != STATUS_SUCCESS) return s;
      std::lock_guard lk(mu_);
      // (A receive posted meanwhile still fits: the ring never drops one.)
      std::vector<ReceiveRequest> ring(std::max<size_t>(depth, count_ + device_held_));
      for (size_t i = 0; i < count_; ++i) ring[i] = ring_[(head_ + i) % ring_.size()];
      ring_.swap(ring);
      head_ = 0;
    }
  }
  {
    std::lock_guard lk(mu_);
    if (threshold > ring_.size()) return STATUS_INVALID_PARAMETER;
    if (threshold == 0) return STATUS_SUCCESS;
    threshold_ = threshold;
    armed_ = true;
    // NDK: already below the threshold -> the notification now (a device
    // fires its limit only when a later receive is consumed).
    if (count_ + device_held_ < threshold_) {
      notify_locked(STATUS_SUCCESS);
      return STATUS_SUCCESS;
    }
  }
  return e->arm(threshold);
}

NTSTATUS Srq::enqueue(void* ctx, const NDK_SGE* sgl, ULONG nsge) {
  if (nsge > max_sge_ || (nsge > 0 && sgl == nullptr)) return STATUS_INVALID_PARAMETER;
  uint64_t total = 0;
  for (ULONG i = 0; i < nsge; ++i) total += sgl[i].Length;
  if (total > adapter()->info().MaxTransferLength) return STATUS_INVALID_PARAMETER;
  std::lock_guard lk(mu_);
  if (failed_) return STATUS_INTERNAL_ERROR;
  if (count_ + device_held_ >= ring_.size()) return STATUS_INSUFFICIENT_RESOURCES;
  ReceiveRequest& r = ring_[(head_ + count_) % ring_.size()];
  r.context = ctx;
  r.nsge = nsge;
  r.length = total;
  for (ULONG i = 0; i < nsge; ++i) r.sge[i] = sgl[i];
  ++count_;
  return STATUS_SUCCESS;
}

NTSTATUS Srq::post(void* ctx, const NDK_SGE* sgl, ULONG nsge) {
  NTSTATUS s = enqueue(ctx, sgl, nsge);
  if (s != STATUS_SUCCESS) return s;
  if (!device_) return s;
  if (auto e = engine()) e->srq_posted();  // outside mu_: the engine takes it with srq_take
  return s;
}

bool Srq::srq_take(ReceiveRequest* out) {
  std::lock_guard lk(mu_);
  if (count_ == 0 || failed_) return false;
  *out = ring_[head_];
  head_ = (head_ + 1) % ring_.size();
  --count_;
  ++device_held_;
  return true;
}

void Srq::srq_untake(const ReceiveRequest& r) {
  std::lock_guard lk(mu_);
  // Its slot is still counted (device_held_): the ring has room for it.
  head_ = (head_ + ring_.size() - 1) % ring_.size();
  ring_[head_] = r;
  ++count_;
  if (device_held_ > 0) --device_held_;
}

void Srq::srq_done() {
  std::lock_guard lk(mu_);
  if (device_held_ > 0) --device_held_;
}

void Srq::srq_limit_reached() {
  std::lock_guard lk(mu_);
  if (armed_) notify_locked(STATUS_SUCCESS);
}

bool Srq::take(ReceiveRequest* out) {
  std::lock_guard lk(mu_);
  if (count_ == 0 || failed_) return false;
  *out = ring_[head_];
  head_ = (head_ + 1) % ring_.size();
  --count_;
  if (armed_ && count_ < threshold_) notify_locked(STATUS_SUCCESS);
  return true;
}

void Srq::fail() {
  std::lock_guard lk(mu_);
  if (failed_) return;
  failed_ = true;
  notify_locked(STATUS_INTERNAL_ERROR);
}

void Srq::notify_locked(NTSTATUS status) {
  armed_ = false;  // disarmed until the next NdkModifySrq with a threshold
  if (cb_ == nullptr || stopped_) return;
  if (notes_.push_locked(status)) {
    hold();
    reactor_->post([this] { run_notifications(); });
  }
}

void Srq::run_notifications() {
  notes_.run(
      mu_, [this] { return stopped_; }, [this](NTSTATUS s) { cb_(cb_ctx_, s); }, [] {});
  release();
}

void Srq::begin_teardown() {
  {
    std::lock_guard lk(mu_);
    stopped_ = true;
  }
  if (auto e = engine()) e->detach();  // no more calls into this object
}

void Srq::on_closed() {
  std::shared_ptr<provider::SrqEngine> e;
  {
    std::lock_guard lk(mu_);
    e.swap(engine_);
  }
  // The device SRQ goes once the connections of its QPs let go too.
}

}  // namespace softndk::ndk
