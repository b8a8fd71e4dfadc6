// SPDX-License-Identifier: Apache-2.0
// cq.h - completion queue: a ring of NDK_RESULT_EX plus the arm/notify logic.
//
// Producers (the data path on engine threads, NdkFlush on consumer threads,
// fatal errors) call push(); the consumer drains with NdkGetCqResults[Ex]
// and arms with NdkArmCq (NDKPI §8: those three are serialized by the
// consumer). Notifications:
//   - fire once per arm, only after an arm, on the CQ's reactor, never two at
//     a time (a notification due while the callback runs is deferred);
//   - or, when it became due on a thread inside an inline-delivery scope
//     (begin_inline_notifications, a backend's own completion thread), on
//     that thread at the scope's end, with no lock held (one thread wake-up
//     less: docs/verbs.md "Performance");
//   - arms combine by the NDKPI table (ANY wins, SOLICITED beats ERRORS);
//   - SOLICITED is met by a solicited receive or any error completion;
//   - arming while completions that arrived after the last notification are
//     in the ring fires at once;
//   - overrun -> STATUS_BUFFER_OVERFLOW, fatal -> STATUS_INTERNAL_ERROR; the
//     CQ is then dead: no more completions are queued (those already in the
//     ring can still be drained).
// Interrupt moderation delays a due notification by up to the interval or
// until `count` completions accumulated since the arm.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ndk/notify_queue.h"
#include "ndk/object.h"
#include "ndk/provider_names.h"
#include "util/reactor.h"

namespace softndk::ndk {

class Cq final : public Object {
 public:
  static NTSTATUS create(Adapter* a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, void* ctx,
                         Cq** out);
  NDK_CQ* ndk() { return &handle_.ndk; }

  // --- Producer side (data path, flush) ------------------------------------
  // Queues one completion; thread-safe, never calls the consumer inline.
  // `solicited` marks a receive of a solicited Send. Returns false if the CQ
  // is dead (the completion is dropped) or just overran.
  bool push(const NDK_RESULT_EX& r, bool solicited = false);
  // Fails the CQ (STATUS_INTERNAL_ERROR on fatal errors): notifies an armed
  // consumer now, an unarmed one at its next arm; no more completions.
  void fail(NTSTATUS status);
  bool dead() const { return dead_.load(std::memory_order_acquire); }

  // Inline delivery on the calling thread (provider::ProviderConfig's
  // begin/end_inline_notify). Between begin and the matching end (they
  // nest), a notification that becomes due on this thread is not posted to
  // the CQ's reactor: the outermost end() delivers it here, after the
  // producer released every lock, with the same rules (one per arm, never
  // two at a time per CQ, the CQ held until the callback returned). The
  // caller holds no lock at end() that a consumer's call may take: the
  // callback may post, arm and close. Notifications that become due while
  // end() delivers (a callback arming another CQ) are delivered by the same
  // end() before it returns.
  static void begin_inline_notifications();
  static void end_inline_notifications();

  // --- Consumer side -------------------------------------------------------
  ULONG get_results(NDK_RESULT* out, ULONG n);
  ULONG get_results_ex(NDK_RESULT_EX* out, ULONG n);
  void arm(ULONG type);
  NTSTATUS resize(ULONG depth);
  NTSTATUS moderate(ULONG interval_us, ULONG count);

  ULONG depth();
  ULONG size();  // completions queued now
  // A met arm whose notification moderation holds back (tests, diagnostics).
  bool notification_held();

  // --- Polling-driven progress ----------------------------------------------
  // get_results[_ex] on an empty ring runs every source once, then looks
  // again. The CQ keeps a reference until remove_progress().
  void add_progress(std::shared_ptr<ProgressSource> s);
  void remove_progress(const ProgressSource* s);

 private:
  Cq(Adapter* a, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, void* ctx);
  void begin_teardown() override;
  // Under mu_: decides whether the arm is met now and schedules.
  void maybe_fire_locked(bool solicited_or_error);
  void fire_locked(NTSTATUS status);
  // `on_reactor`: the CQ's reactor runs it (it lingers afterwards); else the
  // thread that ended an inline-delivery scope.
  void run_notifications(bool on_reactor);
  void run_progress();
  // get_results[_ex] front half: true if there is something to drain,
  // after running the progress sources once when the ring was empty.
  bool ready_or_progress(ULONG n);
  void notify_armed();  // ProgressSource::cq_armed() of every source
  template <class Fn>
  void for_each_source(Fn fn);

  Handle<NDK_CQ> handle_{};
  NDK_FN_CQ_NOTIFICATION_CALLBACK cb_;
  void* cb_ctx_;
  util::Reactor* reactor_;
  std::atomic<bool> dead_{false};

  std::mutex mu_;  // guards everything below
  std::vector<NDK_RESULT_EX> ring_;
  size_t head_ = 0, count_ = 0;
  // count_ != 0, stored under mu_ wherever count_ changes: the consumer's
  // poll of an empty CQ needs no lock. Only the (serialized) consumer
  // removes entries, so a "non-empty" it reads stays true until it drains.
  std::atomic<bool> ready_{false};
  enum : int { kUnarmed = -1 };
  int armed_ = kUnarmed;               // NDK_CQ_NOTIFY_* or kUnarmed
  bool new_since_notify_ = false;      // a completion arrived since the last callback
  bool special_since_notify_ = false;  // ... and it was solicited or an error
  NTSTATUS error_ = STATUS_SUCCESS;    // overrun/fatal status once dead
  bool error_reported_ = false;
  bool stopped_ = false;  // closing: no more notifications
  NotifyQueue notes_;     // serialized delivery
  // Moderation.
  ULONG mod_interval_us_ = 0, mod_count_ = 0;
  bool mod_waiting_ = false;  // a satisfied arm waits for count/interval
  uint32_t since_arm_ = 0;
  util::Reactor::TimerId mod_timer_ = 0;
  // Progress sources (own lock: sources push completions, which takes mu_).
  std::mutex progress_mu_;
  std::vector<std::shared_ptr<ProgressSource>> progress_;
  // Removed while the consumer was running the sources: released by the
  // consumer once it is done with them (progress_mu_; has_retired_ says so).
  std::vector<std::shared_ptr<ProgressSource>> retired_;
  std::atomic<bool> has_progress_{false};
  // Polls that found results since progress last ran (consumer side; NDKPI
  // 8 serializes the consumer, atomic only for consumers that do not).
  std::atomic<uint32_t> ready_polls_{0};
  std::atomic<bool> has_retired_{false};
  // Bumped under progress_mu_ by every add/remove: the consumer refreshes
  // its copy when it moved.
  std::atomic<uint64_t> progress_gen_{0};
  // The consumer is running sources from sources_ (and keeps a second,
  // NDKPI-violating consumer out); seq_cst against
  // progress_gen_, Dekker-style: a remover either sees it set and leaves
  // the reference in retired_, or the consumer sees the new generation).
  std::atomic<bool> in_sources_{false};
  // Consumer side only: get_results[_ex] and arm are serialized per CQ
  // (NDKPI 8), so a busy poll of an empty CQ takes no lock and copies no
  // reference (a lock, two refcount RMWs and a 16-entry array per poll).
  std::vector<ProgressSource*> sources_;
  uint64_t sources_gen_ = 0;
};

}  // namespace softndk::ndk
