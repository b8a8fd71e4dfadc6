// object.h - the NDK object model shared by every object kind.
//
// Every NDK object the consumer sees (NDK_QP, NDK_CQ, ...) is the first
// member of a Handle<Ndk> that also carries a magic word and a pointer to
// the C++ object behind it. Calls validate the handle before touching
// anything (wrong kind, closed, garbage -> a clear NTSTATUS, never a crash
// for handles softndk issued). Closed handles are quarantined rather than
// freed at once, so a double close is detected instead of being a
// use-after-free; the quarantine is bounded (kQuarantine entries) and
// emptied when the adapter closes.
//
// Lifetime rules (NDKPI "object lifetime requirements"):
//  - an antecedent (parent, CQ of a QP, ...) counts its live successors;
//  - closing an antecedent that still has successors returns STATUS_PENDING
//    and completes when the last successor's close has completed AND its
//    close-completion callback has returned;
//  - after the close completion (or a synchronous STATUS_SUCCESS close) no
//    callback is ever made for the object.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "softndk/ndkpi.h"

namespace softndk::ndk {

class Adapter;

inline constexpr uint32_t kMagicLive = 0x4e444b4fu;    // "NDKO"
inline constexpr uint32_t kMagicClosed = 0x44454144u;  // "DEAD"

class Object;

// The consumer-visible part. Ndk is NDK_QP, NDK_CQ, ...; it must stay the
// first member so that the consumer's pointer converts back to the handle.
template <typename Ndk>
struct Handle {
  Ndk ndk;
  uint32_t magic;
  Object* self;
};

class Object {
 public:
  Object(Adapter* adapter, NDK_OBJECT_TYPE type) : adapter_(adapter), type_(type) {}
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  NDK_OBJECT_TYPE type() const { return type_; }
  Adapter* adapter() const { return adapter_; }

  // Successor bookkeeping. add_successor() when a successor starts to depend
  // on this object; successor_gone() once the successor's close (including
  // its close-completion callback) is finished.
  void add_successor() { successors_.fetch_add(1, std::memory_order_acq_rel); }
  void successor_gone();

  bool closing() const { return closing_.load(std::memory_order_acquire); }

  // NDK close entry: marks the object closing, lets the subclass start its
  // teardown (flush, stop listening), and completes now or later.
  NTSTATUS close(NDK_FN_CLOSE_COMPLETION completion, void* context);

 protected:
  // Subclass hook, called once when close starts. Return true if the object
  // needs more time (it must then call teardown_done() later, from any
  // thread, when nothing of it runs anymore).
  virtual bool begin_teardown() { return false; }
  void teardown_done();
  // Antecedents this object depends on; released when its close finishes.
  virtual void release_antecedents() {}
  // Quarantines the handle; the subclass owns the handle memory.
  virtual void retire_handle() = 0;

 private:
  void maybe_finish();
  void finish();

  Adapter* adapter_;
  NDK_OBJECT_TYPE type_;
  std::atomic<uint32_t> successors_{0};
  std::atomic<bool> closing_{false};
  std::atomic<bool> teardown_pending_{false};
  std::atomic<bool> finished_{false};
  std::mutex close_mu_;
  NDK_FN_CLOSE_COMPLETION close_completion_ = nullptr;
  void* close_context_ = nullptr;
  bool close_returned_ = false;  // close() has returned STATUS_PENDING
};

// Validates a consumer pointer as a live handle of kind `type`. Returns the
// object or nullptr (caller answers STATUS_INVALID_HANDLE or
// STATUS_OBJECT_TYPE_MISMATCH as the function's contract allows).
template <typename T, typename Ndk>
T* from_handle(Ndk* p, NDK_OBJECT_TYPE type) {
  if (p == nullptr) return nullptr;
  auto* h = reinterpret_cast<Handle<Ndk>*>(p);
  if (h->magic != kMagicLive || h->ndk.Header.ObjectType != type) return nullptr;
  return static_cast<T*>(h->self);
}

}  // namespace softndk::ndk
