// SPDX-License-Identifier: Apache-2.0
// object.h - the NDK object model shared by every object kind.
//
// Every NDK object the consumer sees (NDK_QP, NDK_CQ, ...) is the first
// member of a Handle<Ndk> that also carries a magic word and a pointer to
// the C++ object behind it. Calls validate the handle before touching
// anything (wrong kind, closed, garbage -> a clear NTSTATUS, never a crash
// for handles softndk issued). Closed objects are quarantined by the adapter
// rather than freed at once, so a double close is detected instead of being
// a use-after-free; the quarantine is bounded and emptied when the adapter
// closes.
//
// Lifetime rules (NDKPI §10), implemented with one reference count:
//  - the object starts with one "open" reference, dropped by close();
//  - every live successor (child, QP on a CQ, ...) holds a reference on each
//    of its antecedents until its own close has completed AND its
//    close-completion callback has returned;
//  - every piece of provider work that may still call the consumer for this
//    object (a posted create completion, a CQ notification, a pended request
//    completion) holds a reference ("hold") while it is in flight;
//  - close() drops the open reference: if it was the last one the close is
//    synchronous (STATUS_SUCCESS); otherwise it returns STATUS_PENDING and
//    whoever drops the last reference schedules the close completion on the
//    adapter's engine. After the close completion no callback is made.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "softndk/ndkpi.h"

namespace softndk::ndk {

class Adapter;
class Object;

inline constexpr uint32_t kMagicLive = 0x4e444b4fu;    // "NDKO"
inline constexpr uint32_t kMagicClosed = 0x44454144u;  // "DEAD"

// The consumer-visible part. Ndk is NDK_QP, NDK_CQ, ...; it must stay the
// first member so that the consumer's pointer converts back to the handle.
// All NDK_* structs have the same layout (header + dispatch pointer), so the
// magic sits at the same offset whatever kind the consumer claims.
template <typename Ndk>
struct Handle {
  Ndk ndk;
  std::atomic<uint32_t> magic;
  Object* self;
};

// Resource kinds with an open-time cap (SOFTNDK_OPEN_PARAMETERS).
enum class Resource : uint8_t { kQp, kCq, kPd, kMr, kMw, kSrq, kConnector, kNone, kCount };

class Object {
 public:
  Object(Adapter* adapter, NDK_OBJECT_TYPE type, Resource res);
  virtual ~Object() = default;
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  NDK_OBJECT_TYPE type() const { return type_; }
  Adapter* adapter() const { return adapter_; }
  Resource resource() const { return res_; }
  NDK_OBJECT_HEADER* header() { return header_; }

  // Reference counting (see the banner). hold()/release() are cheap atomics
  // and may be called from any thread; release() must not be called while
  // holding a provider lock that close-side code also takes.
  void hold() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // hold() unless the object is already finishing (no reference left):
  // for code that finds objects through the adapter's registry.
  bool try_hold() {
    uint32_t r = refs_.load(std::memory_order_relaxed);
    while (r != 0)
      if (refs_.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel)) return true;
    return false;
  }
  void release();

  // Makes `antecedent` an antecedent of this object for this object's whole
  // life (CQ of a QP, PD of an MR, ...). Call before the object is published.
  void depend_on(Object* antecedent);

  bool closing() const { return closing_.load(std::memory_order_acquire); }
  // References now held (diagnostics: what a bounded close waited for).
  uint32_t refs() const { return refs_.load(std::memory_order_relaxed); }

  // NDK close entry. Never fails: STATUS_SUCCESS or STATUS_PENDING.
  // `force_async` (SOFTNDK_OPEN_FLAG_ASYNC_CLOSE) makes it always pend.
  NTSTATUS close(NDK_FN_CLOSE_COMPLETION completion, void* context, bool force_async);

  // Called by the adapter when it frees a quarantined object or when it
  // shuts down; marks the handle dead.
  void mark_dead();

 protected:
  // Subclass hook, called once when close starts, before the open reference
  // is dropped: stop producing callbacks, flush, unbind. Subclasses that
  // start asynchronous teardown hold() a reference and release() it later.
  virtual void begin_teardown() {}
  // Subclass hook, called once when the close has fully completed (no
  // successor, no callback in flight): release STags, ports, rings.
  virtual void on_closed() {}
  // Points header_ at the handle's header and stamps it (subclass ctor).
  void bind_handle(NDK_OBJECT_HEADER* header, std::atomic<uint32_t>* magic);

 private:
  void finish_sync();
  void finish_async();
  void retire();

  Adapter* adapter_;
  NDK_OBJECT_TYPE type_;
  Resource res_;
  NDK_OBJECT_HEADER* header_ = nullptr;
  std::atomic<uint32_t>* magic_ = nullptr;
  std::vector<Object*> antecedents_;
  std::atomic<uint32_t> refs_{1};
  std::atomic<bool> closing_{false};
  // Written by close() before the open reference is dropped, read by the
  // thread that drops the last one (ordered by the acq_rel decrement).
  NDK_FN_CLOSE_COMPLETION close_completion_ = nullptr;
  void* close_context_ = nullptr;
};

// Handle validation. Returns STATUS_SUCCESS and the object, or the status the
// ABI reports: NULL -> STATUS_INVALID_HANDLE, a closed (quarantined) or
// closing handle -> STATUS_FILE_CLOSED, not a softndk handle ->
// STATUS_INVALID_HANDLE, another kind -> STATUS_OBJECT_TYPE_MISMATCH.
// `allow_closing` lets teardown-tolerant calls through.
NTSTATUS check_handle(const void* p, NDK_OBJECT_TYPE type, Object** out, bool allow_closing);

template <typename T>
NTSTATUS resolve(const void* p, NDK_OBJECT_TYPE type, T** out, bool allow_closing = false) {
  Object* o = nullptr;
  NTSTATUS s = check_handle(p, type, &o, allow_closing);
  *out = static_cast<T*>(o);
  return s;
}

}  // namespace softndk::ndk
