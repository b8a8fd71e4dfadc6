// SPDX-License-Identifier: Apache-2.0
// cq.cc - completion ring, arming, serialized notifications, moderation.
#include "ndk/cq.h"

#include <chrono>
#include <new>

#include "ndk/adapter.h"
#include "ndk/dispatch.h"

namespace softndk::ndk {

namespace {
// How long the reactor keeps polling after delivering a notification.
constexpr std::chrono::microseconds kNotifyLinger{50};
// ready_or_progress(): progress also runs on every this many polls that found
// results.
constexpr uint32_t kProgressEvery = 16;

// The calling thread's inline-delivery scope (Cq::begin_inline_notifications):
// its depth and the CQs whose runner it owes (each holds a reference).
struct InlineScope {
  int depth = 0;
  std::vector<Cq*> due;
};
thread_local InlineScope t_inline;
}  // namespace

void Cq::begin_inline_notifications() { ++t_inline.depth; }

void Cq::end_inline_notifications() {
  InlineScope& sc = t_inline;
  if (sc.depth > 1) {
    --sc.depth;
    return;
  }
  // Still open while delivering: what becomes due meanwhile on this thread
  // (a callback that arms another CQ with completions waiting) joins the
  // list and is delivered here too, after that callback returned.
  while (!sc.due.empty()) {
    std::vector<Cq*> now;
    now.swap(sc.due);
    for (Cq* cq : now) cq->run_notifications(false);
  }
  sc.depth = 0;
}

Cq::Cq(Adapter* a, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, void* ctx)
    : Object(a, NdkObjectTypeCq, Resource::kCq),
      cb_(cb),
      cb_ctx_(ctx),
      reactor_(&a->engine().pick()) {
  handle_.self = this;
  handle_.ndk.Dispatch = &kCqDispatch;
  bind_handle(&handle_.ndk.Header, &handle_.magic);
}

NTSTATUS Cq::create(Adapter* a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK cb, void* ctx,
                    Cq** out) {
  if (depth == 0 || depth > a->info().MaxCqDepth) return STATUS_INVALID_PARAMETER;
  auto cq = std::unique_ptr<Cq>(new Cq(a, cb, ctx));
  cq->ring_.resize(depth);
  *out = cq.release();
  return STATUS_SUCCESS;
}

ULONG Cq::depth() {
  std::lock_guard lk(mu_);
  return static_cast<ULONG>(ring_.size());
}

ULONG Cq::size() {
  std::lock_guard lk(mu_);
  return static_cast<ULONG>(count_);
}

bool Cq::notification_held() {
  std::lock_guard lk(mu_);
  return mod_waiting_;
}

bool Cq::push(const NDK_RESULT_EX& r, bool solicited) {
  bool error = r.Status != STATUS_SUCCESS;
  if (error) adapter()->counters().cq_error.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lk(mu_);
  if (dead_.load(std::memory_order_relaxed)) return false;
  if (count_ == ring_.size()) {
    // Overrun: the CQ and its QPs are dead from now on (NDKPI §8).
    dead_.store(true, std::memory_order_release);
    error_ = STATUS_BUFFER_OVERFLOW;
    if (armed_ != kUnarmed) fire_locked(error_);
    return false;
  }
  ring_[(head_ + count_) % ring_.size()] = r;
  ++count_;
  ready_.store(true, std::memory_order_release);
  ++since_arm_;
  new_since_notify_ = true;
  if (solicited || error) special_since_notify_ = true;
  if (mod_waiting_) {
    if (mod_count_ > 1 && mod_count_ != MAXULONG && since_arm_ >= mod_count_) {
      fire_locked(STATUS_SUCCESS);
    }
    return true;
  }
  maybe_fire_locked(solicited || error);
  return true;
}

void Cq::fail(NTSTATUS status) {
  std::lock_guard lk(mu_);
  if (dead_.load(std::memory_order_relaxed)) return;
  dead_.store(true, std::memory_order_release);
  error_ = status;
  if (armed_ != kUnarmed) fire_locked(error_);
}

void Cq::maybe_fire_locked(bool special) {
  if (armed_ == kUnarmed || armed_ == NDK_CQ_NOTIFY_ERRORS) return;
  if (armed_ == NDK_CQ_NOTIFY_SOLICITED && !special) return;
  // The arm is met; moderation may hold the notification back. The interval
  // is the longest it may wait: the reactor's timers count whole
  // milliseconds, so it is rounded down (NdkControlCqInterruptModeration
  // allows that), and under a millisecond, like 0, nothing is held.
  const bool bounded = mod_interval_us_ != MAXULONG;
  const ULONG interval_ms = bounded ? mod_interval_us_ / 1000 : 0;
  bool use_interval = bounded && interval_ms != 0;
  bool use_count = (!bounded || interval_ms != 0) && mod_count_ > 1 && mod_count_ != MAXULONG &&
                   mod_count_ <= ring_.size();
  if (use_count && since_arm_ >= mod_count_) use_count = false;
  if (!use_interval && !use_count) {
    fire_locked(STATUS_SUCCESS);
    return;
  }
  mod_waiting_ = true;
  if (use_interval) {
    auto ms = std::chrono::milliseconds(interval_ms);
    hold();
    mod_timer_ = reactor_->after(ms, [this] {
      {
        std::lock_guard lk(mu_);
        mod_timer_ = 0;
        if (mod_waiting_) fire_locked(STATUS_SUCCESS);
      }
      release();
    });
  }
}

void Cq::fire_locked(NTSTATUS status) {
  if (status != STATUS_SUCCESS) error_reported_ = true;
  armed_ = kUnarmed;
  mod_waiting_ = false;
  new_since_notify_ = false;
  special_since_notify_ = false;
  if (mod_timer_ != 0 && reactor_->cancel(mod_timer_)) {
    // The timer's hold is ours to drop; deferred so that no release() runs
    // under mu_.
    reactor_->post([this] { release(); });
  }
  mod_timer_ = 0;
  if (stopped_ || cb_ == nullptr) return;
  if (notes_.push_locked(status)) {
    hold();
    if (t_inline.depth > 0) {
      // Delivered by this thread's end_inline_notifications(), once the
      // producer above us released its locks.
      t_inline.due.push_back(this);
    } else {
      reactor_->post([this] { run_notifications(true); });
    }
  }
}

void Cq::run_notifications(bool on_reactor) {
  notes_.run(
      mu_, [this] { return stopped_; }, [this](NTSTATUS s) { cb_(cb_ctx_, s); },
      // The consumer just woken will likely post and arm again at once:
      // catch its traffic without a wake-up of this thread.
      [this, on_reactor] {
        if (on_reactor) reactor_->linger(kNotifyLinger);
      });
  release();
}

void Cq::arm(ULONG type) {
  if (type > NDK_CQ_NOTIFY_SOLICITED) return;
  // First, so that a completion produced after the arm does not wait for a
  // poller that has stopped polling.
  if (has_progress_.load(std::memory_order_relaxed)) notify_armed();
  std::lock_guard lk(mu_);
  if (stopped_) return;
  if (armed_ == kUnarmed) {
    armed_ = static_cast<int>(type);
    since_arm_ = 0;
  } else if (armed_ == NDK_CQ_NOTIFY_ANY || type == NDK_CQ_NOTIFY_ANY) {
    armed_ = NDK_CQ_NOTIFY_ANY;
  } else if (armed_ == NDK_CQ_NOTIFY_SOLICITED || type == NDK_CQ_NOTIFY_SOLICITED) {
    armed_ = NDK_CQ_NOTIFY_SOLICITED;
  }  // else ERRORS + ERRORS stays ERRORS
  if (dead_.load(std::memory_order_relaxed)) {
    if (!error_reported_) fire_locked(error_);
    return;
  }
  if (mod_waiting_ || count_ == 0 || !new_since_notify_) return;
  maybe_fire_locked(special_since_notify_);
}

bool Cq::ready_or_progress(ULONG n) {
  if (n == 0) return false;
  if (ready_.load(std::memory_order_acquire)) {
    // Progress runs on an empty CQ, and also on every 16th poll that found
    // results: a consumer whose CQ never runs empty (each of its Sends
    // completes as it is posted, or a CQ shared with busy QPs) still drives
    // its streams - their receive side, and their polled mode, in which large
    // posts wait for a poll and leave together (rdmap/stream.cc).
    uint32_t k = ready_polls_.load(std::memory_order_relaxed) + 1;
    ready_polls_.store(k, std::memory_order_relaxed);
    if (k >= kProgressEvery && has_progress_.load(std::memory_order_relaxed)) run_progress();
    return true;
  }
  if (!has_progress_.load(std::memory_order_relaxed)) return false;
  run_progress();
  return ready_.load(std::memory_order_acquire);
}

ULONG Cq::get_results(NDK_RESULT* out, ULONG n) {
  // An empty CQ returns without taking mu_ (a busy poller's common case).
  if (!ready_or_progress(n)) return 0;
  std::lock_guard lk(mu_);
  ULONG k = 0;
  for (; k < n && count_ > 0; ++k) {
    const NDK_RESULT_EX& r = ring_[head_];
    out[k].Status = r.Status;
    out[k].BytesTransferred = r.BytesTransferred;
    out[k].QPContext = r.QPContext;
    out[k].RequestContext = r.RequestContext;
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  ready_.store(count_ != 0, std::memory_order_relaxed);
  return k;
}

ULONG Cq::get_results_ex(NDK_RESULT_EX* out, ULONG n) {
  if (!ready_or_progress(n)) return 0;
  std::lock_guard lk(mu_);
  ULONG k = 0;
  for (; k < n && count_ > 0; ++k) {
    out[k] = ring_[head_];
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
  ready_.store(count_ != 0, std::memory_order_relaxed);
  return k;
}

void Cq::add_progress(std::shared_ptr<ProgressSource> s) {
  std::lock_guard lk(progress_mu_);
  progress_.push_back(std::move(s));
  progress_gen_.fetch_add(1, std::memory_order_seq_cst);
  has_progress_.store(true, std::memory_order_relaxed);
}

void Cq::remove_progress(const ProgressSource* s) {
  std::shared_ptr<ProgressSource> gone;  // released outside the lock
  std::lock_guard lk(progress_mu_);
  for (auto& p : progress_) {
    if (p.get() == s) {
      gone = std::move(p);
      p = std::move(progress_.back());
      progress_.pop_back();
      break;
    }
  }
  progress_gen_.fetch_add(1, std::memory_order_seq_cst);
  has_progress_.store(!progress_.empty(), std::memory_order_relaxed);
  if (gone != nullptr && in_sources_.load(std::memory_order_seq_cst)) {
    // The consumer may be calling it through sources_ right now (possibly
    // this very call comes from inside it): it releases the reference.
    retired_.push_back(std::move(gone));
    has_retired_.store(true, std::memory_order_release);
  }
}

template <class Fn>
void Cq::for_each_source(Fn fn) {
  // No lock is held while a source runs (it pushes completions and may
  // remove itself); a source removed meanwhile stays alive in retired_.
  // Also a guard: a second consumer running into the first (which NDKPI 8
  // forbids) skips the sources rather than race on sources_.
  if (in_sources_.exchange(true, std::memory_order_seq_cst)) return;
  if (progress_gen_.load(std::memory_order_seq_cst) != sources_gen_) {
    std::lock_guard lk(progress_mu_);
    sources_.clear();
    for (const auto& p : progress_) sources_.push_back(p.get());
    sources_gen_ = progress_gen_.load(std::memory_order_relaxed);
  }
  for (ProgressSource* src : sources_) fn(*src);
  in_sources_.store(false, std::memory_order_release);
  if (has_retired_.load(std::memory_order_acquire)) {
    std::vector<std::shared_ptr<ProgressSource>> drop;  // released outside the lock
    std::lock_guard lk(progress_mu_);
    drop.swap(retired_);
    has_retired_.store(false, std::memory_order_relaxed);
  }
}

void Cq::run_progress() {
  ready_polls_.store(0, std::memory_order_relaxed);
  for_each_source([](ProgressSource& s) { s.progress(); });
}

void Cq::notify_armed() {
  for_each_source([](ProgressSource& s) { s.cq_armed(); });
}

NTSTATUS Cq::resize(ULONG depth) {
  if (depth == 0 || depth > adapter()->info().MaxCqDepth) return STATUS_INVALID_PARAMETER;
  std::vector<NDK_RESULT_EX> ring;
  try {
    ring.resize(depth);
  } catch (const std::bad_alloc&) {
    return STATUS_INSUFFICIENT_RESOURCES;
  }
  std::lock_guard lk(mu_);
  if (depth < count_) return STATUS_INVALID_PARAMETER;
  for (size_t i = 0; i < count_; ++i) ring[i] = ring_[(head_ + i) % ring_.size()];
  ring_.swap(ring);
  head_ = 0;
  return STATUS_SUCCESS;
}

NTSTATUS Cq::moderate(ULONG interval_us, ULONG count) {
  std::lock_guard lk(mu_);
  // "The interval decides" and "the count decides" at once leaves nothing
  // to decide: a count of MAXULONG or above the depth hands the decision to
  // the interval (NdkControlCqInterruptModeration's page).
  if (interval_us == MAXULONG && (count == MAXULONG || count > ring_.size()))
    return STATUS_INVALID_PARAMETER_MIX;
  mod_interval_us_ = interval_us;
  mod_count_ = count;
  return STATUS_SUCCESS;
}

void Cq::begin_teardown() {
  std::lock_guard lk(mu_);
  stopped_ = true;
  mod_waiting_ = false;
  if (mod_timer_ != 0 && reactor_->cancel(mod_timer_)) {
    reactor_->post([this] { release(); });
  }
  mod_timer_ = 0;
}

}  // namespace softndk::ndk
