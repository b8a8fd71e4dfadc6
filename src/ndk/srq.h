// SPDX-License-Identifier: Apache-2.0
// srq.h - shared receive queue: a ring of receives any attached QP consumes.
//
// NdkSrqReceive queues; the data path takes the oldest with take() and
// completes it on the consuming QP's receive CQ. When a take() leaves fewer
// queued receives than the armed NotifyThreshold the SRQ disarms and calls
// the notification on the engine (serialized, never concurrent with itself).
// NdkModifySrq with a threshold > 0 re-arms (and fires at once if already
// below); 0 keeps the current threshold and arm state.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "ndk/notify_queue.h"
#include "ndk/object.h"
#include "ndk/provider_names.h"
#include "provider/provider.h"
#include "util/reactor.h"

namespace softndk::ndk {

class Pd;

// On a device engine (provider.h v3, device_srq()) the SRQ also has an
// engine side: posted receives move to the device SRQ at once, the
// threshold arms the device's limit and its event fires the notification.
class Srq final : public Object, public provider::SrqHost {
 public:
  static NTSTATUS create(Pd* pd, ULONG depth, ULONG max_sge, ULONG threshold,
                         NDK_FN_SRQ_NOTIFICATION_CALLBACK cb, void* ctx, Srq** out);
  NDK_SRQ* ndk() { return &handle_.ndk; }
  Pd* pd() const { return pd_; }

  NTSTATUS modify(ULONG depth, ULONG threshold);
  NTSTATUS post(void* ctx, const NDK_SGE* sgl, ULONG nsge);
  // Data path: the oldest queued receive, false if none.
  bool take(ReceiveRequest* out);
  // Fatal errors: STATUS_INTERNAL_ERROR to the notification, no more takes.
  void fail();

  ULONG depth();
  ULONG queued();
  ULONG max_sge() const { return max_sge_; }
  std::shared_ptr<provider::SrqEngine> engine() {
    std::lock_guard lk(mu_);
    return engine_;
  }
  // provider::SrqHost
  bool srq_take(ReceiveRequest* out) override;
  void srq_limit_reached() override;
  void srq_untake(const ReceiveRequest& r) override;
  void srq_done() override;

 private:
  Srq(Pd* pd, ULONG max_sge, NDK_FN_SRQ_NOTIFICATION_CALLBACK cb, void* ctx);
  void begin_teardown() override;
  void on_closed() override;
  NTSTATUS enqueue(void* ctx, const NDK_SGE* sgl, ULONG nsge);
  NTSTATUS modify_device(provider::SrqEngine* e, ULONG depth, ULONG threshold);
  void notify_locked(NTSTATUS status);
  void run_notifications();

  Handle<NDK_SRQ> handle_{};
  Pd* pd_;
  ULONG max_sge_;
  NDK_FN_SRQ_NOTIFICATION_CALLBACK cb_;
  void* cb_ctx_;
  util::Reactor* reactor_;

  std::mutex mu_;  // guards everything below
  std::vector<ReceiveRequest> ring_;
  size_t head_ = 0, count_ = 0;
  // A device SRQ: receives the engine took from the ring and the device
  // holds until they complete (srq_take .. srq_done). Always 0 otherwise.
  size_t device_held_ = 0;
  ULONG threshold_ = 0;
  bool armed_ = false;
  bool failed_ = false;
  bool stopped_ = false;
  NotifyQueue notes_;  // serialized delivery
  // Set at create; dropped when the SRQ has closed (its QPs closed before
  // it), while the adapter's engine is still there to destroy the device SRQ.
  std::shared_ptr<provider::SrqEngine> engine_;
  bool device_ = false;  // engine_ was set at create (never changes): the software path skips it
};

}  // namespace softndk::ndk
