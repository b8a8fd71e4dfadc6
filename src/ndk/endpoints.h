// endpoints.h - connector, listener and shared endpoint objects.
//
// The object part only (creation, close, antecedents, state the connection
// layer fills in). Connection establishment is implemented by the
// connection layer; until then the networking calls answer
// STATUS_NOT_SUPPORTED. The shared endpoint already reserves its local
// address:port (endpoint_address.h) and keeps the bound socket for it.
#pragma once

#include <netinet/in.h>

#include <atomic>

#include "ndk/object.h"

namespace softndk::ndk {

class Connector final : public Object {
 public:
  static NTSTATUS create(Adapter* a, Connector** out);
  NDK_CONNECTOR* ndk() { return &handle_.ndk; }

 private:
  explicit Connector(Adapter* a);
  Handle<NDK_CONNECTOR> handle_{};
};

class Listener final : public Object {
 public:
  static NTSTATUS create(Adapter* a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void* ctx, Listener** out);
  NDK_LISTENER* ndk() { return &handle_.ndk; }
  void pause(bool p) { paused_.store(p, std::memory_order_release); }
  bool paused() const { return paused_.load(std::memory_order_acquire); }
  NDK_FN_CONNECT_EVENT_CALLBACK callback() const { return cb_; }
  void* callback_context() const { return cb_ctx_; }

 private:
  Listener(Adapter* a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void* ctx);
  Handle<NDK_LISTENER> handle_{};
  NDK_FN_CONNECT_EVENT_CALLBACK cb_;
  void* cb_ctx_;
  std::atomic<bool> paused_{false};
};

class SharedEndpoint final : public Object {
 public:
  static NTSTATUS create(Adapter* a, const SOCKADDR* addr, ULONG len, SharedEndpoint** out);
  ~SharedEndpoint() override;
  NDK_SHARED_ENDPOINT* ndk() { return &handle_.ndk; }
  const sockaddr_storage& local() const { return local_; }
  int fd() const { return fd_; }

 private:
  explicit SharedEndpoint(Adapter* a);
  void on_closed() override;
  Handle<NDK_SHARED_ENDPOINT> handle_{};
  sockaddr_storage local_{};
  int fd_ = -1;
};

}  // namespace softndk::ndk
