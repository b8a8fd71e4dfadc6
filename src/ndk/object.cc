// SPDX-License-Identifier: Apache-2.0
// object.cc - reference counting and the close protocol of object.h.
#include "ndk/object.h"

#include "ndk/adapter.h"

namespace softndk::ndk {

Object::Object(Adapter* adapter, NDK_OBJECT_TYPE type, Resource res)
    : adapter_(adapter), type_(type), res_(res) {}

void Object::bind_handle(NDK_OBJECT_HEADER* header, std::atomic<uint32_t>* magic) {
  header_ = header;
  magic_ = magic;
  header->Version = adapter_->version();
  header->ObjectType = type_;
  header->NdkReserved = {};
  magic->store(kMagicLive, std::memory_order_release);
}

void Object::depend_on(Object* antecedent) {
  antecedent->hold();
  antecedents_.push_back(antecedent);
}

void Object::mark_dead() {
  if (magic_ != nullptr) magic_->store(kMagicClosed, std::memory_order_release);
}

NTSTATUS Object::close(NDK_FN_CLOSE_COMPLETION completion, void* context, bool force_async) {
  if (closing_.exchange(true, std::memory_order_acq_rel)) return STATUS_FILE_CLOSED;
  close_completion_ = completion;
  close_context_ = context;
  begin_teardown();
  if (force_async) {
    // A posted task holds the object, so the close always pends and its
    // completion always comes from the engine. The open reference goes
    // first: the task may run before post() returns.
    hold();
    refs_.fetch_sub(1, std::memory_order_acq_rel);
    adapter_->post([this] { release(); });
    return STATUS_PENDING;
  }
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    finish_sync();
    return STATUS_SUCCESS;
  }
  return STATUS_PENDING;
}

void Object::release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) finish_async();
}

void Object::finish_sync() { retire(); }

void Object::finish_async() {
  // The last reference may go away on any thread (a successor's close, a
  // consumer thread); the completion always runs on the engine and the
  // antecedents are released only after it returned (NDKPI §10).
  adapter_->post([this] {
    if (close_completion_ != nullptr) close_completion_(close_context_);
    retire();
  });
}

void Object::retire() {
  on_closed();
  auto antecedents = std::move(antecedents_);
  Adapter* a = adapter_;
  a->retire(this);  // quarantines; `this` stays valid until the adapter frees it
  for (Object* o : antecedents) o->release();
}

NTSTATUS check_handle(const void* p, NDK_OBJECT_TYPE type, Object** out, bool allow_closing) {
  *out = nullptr;
  if (p == nullptr) return STATUS_INVALID_HANDLE;
  auto* h = static_cast<const Handle<NDK_CQ>*>(p);
  uint32_t magic = h->magic.load(std::memory_order_acquire);
  if (magic == kMagicClosed) return STATUS_FILE_CLOSED;
  if (magic != kMagicLive) return STATUS_INVALID_HANDLE;
  if (h->ndk.Header.ObjectType != type) return STATUS_OBJECT_TYPE_MISMATCH;
  Object* o = h->self;
  if (!allow_closing && o->closing()) return STATUS_FILE_CLOSED;
  *out = o;
  return STATUS_SUCCESS;
}

}  // namespace softndk::ndk
