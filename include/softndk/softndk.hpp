// SPDX-License-Identifier: Apache-2.0
// softndk/softndk.hpp - thin, header-only C++20 helpers over the C ABI.
//
//   softndk::Adapter    opens an adapter, closes it (blocking) on destruction
//   softndk::Object<T>  owns one NDK object; close_and_wait() on destruction
//   softndk::Waiter     collects one NdkCreate/Request/CloseCompletion so that
//                       STATUS_PENDING results can be waited for (tests, tools)
//   softndk::status_name(s)  "STATUS_CANCELLED" or "0xC0000120"
//
// These helpers block; never use them from inside a provider callback.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

#include "softndk/ndkpi.h"
#include "softndk/softndk.h"

namespace softndk {

inline std::string status_name(NTSTATUS s) {
  if (const char* n = SoftNdkStatusName(s)) return n;
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", static_cast<unsigned>(s));
  return buf;
}

// One completion of any kind. Pass `this` as the context and the matching
// static callback; wait() blocks until the callback ran (or the timeout).
class Waiter {
 public:
  static void create_cb(PVOID ctx, NTSTATUS s, NDK_OBJECT_HEADER* obj) {
    static_cast<Waiter*>(ctx)->done(s, obj);
  }
  static void request_cb(PVOID ctx, NTSTATUS s) { static_cast<Waiter*>(ctx)->done(s, nullptr); }
  static void close_cb(PVOID ctx) { static_cast<Waiter*>(ctx)->done(STATUS_SUCCESS, nullptr); }

  bool wait(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, timeout, [this] { return done_; });
  }
  NTSTATUS status() {
    std::lock_guard lk(mu_);
    return status_;
  }
  NDK_OBJECT_HEADER* object() {
    std::lock_guard lk(mu_);
    return object_;
  }
  int calls() {
    std::lock_guard lk(mu_);
    return calls_;
  }
  void reset() {
    std::lock_guard lk(mu_);
    done_ = false;
    status_ = STATUS_PENDING;
    object_ = nullptr;
    calls_ = 0;
  }

 private:
  void done(NTSTATUS s, NDK_OBJECT_HEADER* obj) {
    std::lock_guard lk(mu_);
    status_ = s;
    object_ = obj;
    done_ = true;
    ++calls_;
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  NTSTATUS status_ = STATUS_PENDING;
  NDK_OBJECT_HEADER* object_ = nullptr;
  int calls_ = 0;
};

// Runs a create call `f(NDK_FN_CREATE_COMPLETION, PVOID, T**)` and resolves a
// STATUS_PENDING result by waiting for the completion.
template <typename T, typename F>
NTSTATUS create_and_wait(F&& f, T** out) {
  Waiter w;
  *out = nullptr;
  NTSTATUS s = f(&Waiter::create_cb, &w, out);
  if (s == STATUS_PENDING) {
    if (!w.wait()) return STATUS_IO_TIMEOUT;
    s = w.status();
    *out = reinterpret_cast<T*>(w.object());
  }
  return s;
}

// Runs an asynchronous request `f(NDK_FN_REQUEST_COMPLETION, PVOID)` to its end.
template <typename F>
NTSTATUS request_and_wait(F&& f) {
  Waiter w;
  NTSTATUS s = f(&Waiter::request_cb, &w);
  if (s == STATUS_PENDING) {
    if (!w.wait()) return STATUS_IO_TIMEOUT;
    s = w.status();
  }
  return s;
}

// Closes any NDK object (every object dispatch table starts with its close
// function) and waits for a pended close to complete.
template <typename T>
NTSTATUS close_and_wait(T* obj) {
  if (obj == nullptr) return STATUS_SUCCESS;
  auto close = *reinterpret_cast<const NDK_FN_CLOSE_OBJECT*>(obj->Dispatch);
  Waiter w;
  NTSTATUS s = close(&obj->Header, &Waiter::close_cb, &w);
  if (s == STATUS_PENDING && !w.wait()) return STATUS_IO_TIMEOUT;
  return s == STATUS_PENDING ? STATUS_SUCCESS : s;
}

// Owns one NDK object (NDK_CQ, NDK_PD, ...).
template <typename T>
class Object {
 public:
  Object() = default;
  explicit Object(T* p) : p_(p) {}
  ~Object() { reset(); }
  Object(Object&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Object& operator=(Object&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }
  T* release() { return std::exchange(p_, nullptr); }
  NTSTATUS reset(T* p = nullptr) {
    NTSTATUS s = close_and_wait(p_);
    p_ = p;
    return s;
  }
  // For create calls: `create_and_wait<NDK_CQ>(..., obj.out())`.
  T** out() {
    reset();
    return &p_;
  }

 private:
  T* p_ = nullptr;
};

// Owns an open adapter.
class Adapter {
 public:
  Adapter() = default;
  ~Adapter() { close(); }
  Adapter(Adapter&& o) noexcept : a_(std::exchange(o.a_, nullptr)) {}
  Adapter& operator=(Adapter&& o) noexcept {
    if (this != &o) {
      close();
      a_ = std::exchange(o.a_, nullptr);
    }
    return *this;
  }
  Adapter(const Adapter&) = delete;
  Adapter& operator=(const Adapter&) = delete;

  NTSTATUS open(const char* name_or_address,
                NDK_VERSION version = {NDK_VERSION_MAJOR, NDK_VERSION_MINOR},
                const SOFTNDK_OPEN_PARAMETERS* params = nullptr) {
    close();
    return SoftNdkOpenAdapter(name_or_address, version, params, &a_);
  }
  void close() {
    if (a_ != nullptr) SoftNdkCloseAdapter(std::exchange(a_, nullptr));
  }
  NDK_ADAPTER* get() const { return a_; }
  NDK_ADAPTER* operator->() const { return a_; }
  explicit operator bool() const { return a_ != nullptr; }
  NDK_ADAPTER* release() { return std::exchange(a_, nullptr); }

  NTSTATUS info(NDK_ADAPTER_INFO* out) const {
    ULONG size = sizeof *out;
    return a_->Dispatch->NdkQueryAdapterInfo(a_, out, &size);
  }

 private:
  NDK_ADAPTER* a_ = nullptr;
};

}  // namespace softndk
