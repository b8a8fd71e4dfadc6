// SPDX-License-Identifier: Apache-2.0
// endpoints.h - connector, listener and shared endpoint objects.
//
// The object part (creation, close, antecedents) lives here; the networking
// behind NdkConnect/NdkListen/... is the connection glue in
// connector_net.cc / listener_net.cc (state in net_glue.h), built on the
// tcp engine (docs/connections.md) and the QP data path (rdmap::Stream).
// The shared endpoint owns the provider::SharedEndpoint that reserves its local
// address:port: one reservation for the object and every connection over it.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <memory>

#include "ndk/object.h"
#include "provider/provider.h"

namespace softndk::tcp {
class SharedEndpoint;
}

namespace softndk::ndk {

struct ConnectorNet;  // net_glue.h
struct ListenerNet;
class Reservation;  // endpoint_reservation.h

class Connector final : public Object {
 public:
  static NTSTATUS create(Adapter* a, Connector** out);
  ~Connector() override;
  NDK_CONNECTOR* ndk() { return &handle_.ndk; }
  ConnectorNet& net() { return *net_; }
  const std::shared_ptr<ConnectorNet>& net_ptr() const { return net_; }

 private:
  explicit Connector(Adapter* a);
  void begin_teardown() override;
  void on_closed() override;
  Handle<NDK_CONNECTOR> handle_{};
  std::shared_ptr<ConnectorNet> net_;
};

class Listener final : public Object {
 public:
  static NTSTATUS create(Adapter* a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void* ctx, Listener** out);
  ~Listener() override;
  NDK_LISTENER* ndk() { return &handle_.ndk; }
  void pause(bool p);
  bool paused() const { return paused_.load(std::memory_order_acquire); }
  NDK_FN_CONNECT_EVENT_CALLBACK callback() const { return cb_; }
  void* callback_context() const { return cb_ctx_; }
  ListenerNet& net() { return *net_; }

 private:
  Listener(Adapter* a, NDK_FN_CONNECT_EVENT_CALLBACK cb, void* ctx);
  void begin_teardown() override;
  Handle<NDK_LISTENER> handle_{};
  NDK_FN_CONNECT_EVENT_CALLBACK cb_;
  void* cb_ctx_;
  std::atomic<bool> paused_{false};
  std::shared_ptr<ListenerNet> net_;
};

class SharedEndpoint final : public Object {
 public:
  static NTSTATUS create(Adapter* a, const SOCKADDR* addr, ULONG len, SharedEndpoint** out);
  ~SharedEndpoint() override;
  NDK_SHARED_ENDPOINT* ndk() { return &handle_.ndk; }
  const sockaddr_storage& local() const { return local_; }
  // The engine's reservation of local(); connections over this endpoint
  // share it (null once the close completed).
  std::shared_ptr<provider::SharedEndpoint> endpoint() const;

 private:
  explicit SharedEndpoint(Adapter* a);
  void on_closed() override;
  Handle<NDK_SHARED_ENDPOINT> handle_{};
  sockaddr_storage local_{};
  std::shared_ptr<provider::SharedEndpoint> ep_;
  std::shared_ptr<Reservation> reservation_;  // NDKPI.md 6.1, until the close completed
};

}  // namespace softndk::ndk
