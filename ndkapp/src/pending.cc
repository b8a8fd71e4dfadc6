// SPDX-License-Identifier: Apache-2.0
// pending.cc - turns an NDK call that may complete later through a callback
// into a bounded blocking wait (Pending), and closes objects that way.
#include <condition_variable>
#include <mutex>
#include <new>

#include "ndkapp/session.h"

namespace softndk::tools {

struct Pending::Impl {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  NTSTATUS status = STATUS_PENDING;
  NDK_OBJECT_HEADER* obj = nullptr;

  void complete(NTSTATUS st, NDK_OBJECT_HEADER* o) {
    std::lock_guard lk(m);
    status = st;
    obj = o;
    done = true;
    // Notify under the lock: once the waiter can run, this thread no longer
    // touches the (then freed) state.
    cv.notify_all();
  }
};

Pending::Pending() : impl_(new Impl) {}
Pending::~Pending() { delete impl_; }

void Pending::on_request(PVOID ctx, NTSTATUS status) {
  static_cast<Pending*>(ctx)->impl_->complete(status, nullptr);
}
void Pending::on_create(PVOID ctx, NTSTATUS status, NDK_OBJECT_HEADER* obj) {
  static_cast<Pending*>(ctx)->impl_->complete(status, obj);
}
void Pending::on_close(PVOID ctx) {
  static_cast<Pending*>(ctx)->impl_->complete(STATUS_SUCCESS, nullptr);
}

NTSTATUS Pending::finish(Pending* p, NTSTATUS returned, double timeout_s, NDK_OBJECT_HEADER** obj) {
  if (returned != STATUS_PENDING) {
    delete p;  // final inline status: no callback follows
    return returned;
  }
  Impl& s = *p->impl_;
  {
    std::unique_lock lk(s.m);
    if (!s.cv.wait_until(lk, deadline_in(timeout_s), [&] { return s.done; })) {
      return STATUS_IO_TIMEOUT;  // p leaked: the callback may still come
    }
  }
  NTSTATUS st = s.status;
  if (obj) *obj = s.obj;
  delete p;
  return st;
}

Pending* Pending::try_make() noexcept {
  try {
    return new Pending;
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

NTSTATUS Pending::peek(Pending* p) {
  std::lock_guard lk(p->impl_->m);
  return p->impl_->done ? p->impl_->status : STATUS_PENDING;
}

bool close_object(NDK_OBJECT_HEADER* obj, NDK_FN_CLOSE_OBJECT close, double timeout_s) {
  if (!obj || !close) return true;
  auto* p = Pending::try_make();
  if (!p) {
    // Out of memory (destructors run here, so nothing may throw): close
    // without waiting; the caller treats the object as still open.
    close(obj, nullptr, nullptr);
    return false;
  }
  NTSTATUS st = close(obj, &Pending::on_close, p);
  return Pending::finish(p, st, timeout_s) != STATUS_IO_TIMEOUT;
}
}  // namespace softndk::tools
