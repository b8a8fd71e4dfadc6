// SPDX-License-Identifier: Apache-2.0
// net_glue.h - the NDK connector/listener state machines over the
// provider's connection classes (provider/provider.h: ActiveConnect,
// IncomingConnection, Connection, Listener) and the QP engine they start.
//
// ConnectorNet is the networking state of one NDK_CONNECTOR, shared (by
// shared_ptr) with every engine callback that may run for it. Rules:
//  - mu_ guards the state; it is never held while calling the consumer or
//    while calling into the engine in a way that could call back.
//  - A pending NDK request (Connect, CompleteConnect, Accept, Disconnect)
//    holds a reference on the connector object until its completion
//    returned, so the connector's close pends until then (requests still
//    pending when the connector closes complete, usually STATUS_CANCELLED).
//  - Events (the disconnect event, the listener's connect event) check
//    `torn_down_` under mu_ and take a reference before calling out; after
//    begin_teardown() none starts, so no callback follows the close
//    completion.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "provider/provider.h"
#include "softndk/softndk.h"

namespace softndk::ndk {

class Adapter;
class Connector;
class Listener;
class Qp;
class Reservation;
class SharedEndpoint;

// SOFTNDK_CONNECTION_INFO.State values.
enum class ConnState : uint32_t {
  kIdle = 0,       // new active connector
  kConnecting,     // NdkConnect in flight
  kConnected,      // active: peer accepted, waiting for CompleteConnect
  kCompleting,     // CompleteConnect in flight
  kIncoming,       // passive: request shown to the consumer
  kAccepting,      // NdkAccept in flight
  kEstablished,    // data path running
  kDisconnecting,  // NdkDisconnect in flight
  kClosed,         // disconnected, rejected, failed or aborted: not reusable
  kFailed,         // connect failed: NdkConnect may be tried again
};

struct ConnectorNet : std::enable_shared_from_this<ConnectorNet> {
  explicit ConnectorNet(Connector* c);

  // The ABI (connector_net.cc). All non-blocking.
  NTSTATUS connect(Qp* qp, const SOCKADDR* src, ULONG src_len, SharedEndpoint* se,
                   const SOCKADDR* dst, ULONG dst_len, ULONG ird, ULONG ord, const void* pd,
                   ULONG pd_len, NDK_FN_REQUEST_COMPLETION done, void* ctx);
  NTSTATUS complete_connect(NDK_FN_DISCONNECT_EVENT_CALLBACK ev,
                            NDK_FN_DISCONNECT_EVENT_CALLBACK_EX ev_ex, void* ev_ctx,
                            NDK_FN_REQUEST_COMPLETION done, void* ctx);
  NTSTATUS accept(Qp* qp, ULONG ird, ULONG ord, const void* pd, ULONG pd_len,
                  NDK_FN_DISCONNECT_EVENT_CALLBACK ev, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX ev_ex,
                  void* ev_ctx, NDK_FN_REQUEST_COMPLETION done, void* ctx);
  NTSTATUS reject(const void* pd, ULONG pd_len);
  NTSTATUS connection_data(ULONG* ird, ULONG* ord, void* pd, ULONG* pd_len);
  NTSTATUS local_address(SOCKADDR* out, ULONG* len);
  NTSTATUS peer_address(SOCKADDR* out, ULONG* len);
  NTSTATUS disconnect(NDK_FN_REQUEST_COMPLETION done, void* ctx);
  // disconnect()'s second half, once the engine let the FIN go.
  void finish_disconnect(const std::shared_ptr<provider::Connection>& c,
                         const std::shared_ptr<provider::QpEngine>& s, Qp* q,
                         NDK_FN_REQUEST_COMPLETION done, void* ctx);
  NTSTATUS query(SOFTNDK_CONNECTION_INFO* info);
  NTSTATUS query_tcp(SOFTNDK_TCP_INFO* info);
  NTSTATUS query_path(SOFTNDK_PATH_INFO* info);  // connector_net.cc
  NTSTATUS query_activity(SOFTNDK_PEER_ACTIVITY* info);
  NTSTATUS inject(const SOFTNDK_FAULT* f);

  // Listener side: a request presented by the engine; the connector keeps
  // the listener's endpoint reservation until it is closed (NDKPI.md 6.1).
  void set_incoming(std::shared_ptr<provider::IncomingConnection> p,
                    std::shared_ptr<Reservation> res);
  // Connector close started.
  void teardown();
  // Connector close completed: drop the QP / shared-endpoint references.
  void closed();
  // The QP's adapter is closing: end the connection and drop the QP
  // reference now (no-op if `qp` is no longer this connector's).
  void let_go_of(Qp* qp);

 private:
  void on_connect_result(provider::ConnectResult r, NDK_FN_REQUEST_COMPLETION done, void* ctx);
  void on_accept_result(NTSTATUS st, std::shared_ptr<provider::Connection> c,
                        NDK_FN_REQUEST_COMPLETION done, void* ctx);
  void finish_complete_connect(NDK_FN_REQUEST_COMPLETION done, void* ctx);
  // Established (mu_ held): peer-close hook, data path, counters.
  bool establish_locked(bool initiator);
  void on_peer_close(NTSTATUS st);
  void bind_qp(Qp* qp);                                                   // mu_ held
  void complete(NDK_FN_REQUEST_COMPLETION done, void* ctx, NTSTATUS st);  // releases the hold
  void end_active_locked();  // ActiveConnection counter down once

  Connector* const obj_;
  Adapter* const adapter_;
  std::mutex mu_;
  ConnState state_ = ConnState::kIdle;
  bool torn_down_ = false;
  bool passive_ = false;
  bool event_done_ = false;  // disconnect event delivered or no longer wanted
  bool counted_active_ = false;
  Qp* qp_ = nullptr;              // held (object reference) until the connector closed
  SharedEndpoint* se_ = nullptr;  // held likewise
  // The local endpoint this connector holds until it is closed: the
  // listener's (passive) or an explicit NdkConnect source port (active).
  std::shared_ptr<Reservation> endpoint_;
  std::shared_ptr<provider::ActiveConnect> active_;
  std::shared_ptr<provider::IncomingConnection> pending_;
  std::shared_ptr<provider::Connection> conn_;
  std::shared_ptr<provider::QpEngine> stream_;
  NDK_FN_DISCONNECT_EVENT_CALLBACK ev_ = nullptr;
  NDK_FN_DISCONNECT_EVENT_CALLBACK_EX ev_ex_ = nullptr;
  void* ev_ctx_ = nullptr;
  // What NdkGetConnectionData / QueryConnectionInfo report.
  bool have_data_ = false;
  std::vector<uint8_t> peer_pd_;
  uint16_t ird_ = 0, ord_ = 0;
  provider::ConnectionFacts params_;  // negotiated
  bool have_params_ = false;
  sockaddr_storage local_{}, peer_{};
  bool have_addrs_ = false;
  uint32_t term_sent_ = 0xFFFFFFFFu, term_received_ = 0xFFFFFFFFu;
  // SoftNdkQueryPeerActivity: where the last NdkConnect failed (SOFTNDK_SETUP_*)
  // and the wake-up bound given to the stream.
  ULONG setup_phase_ = SOFTNDK_SETUP_NONE;
};

struct ListenerNet : std::enable_shared_from_this<ListenerNet> {
  explicit ListenerNet(Listener* l) : obj_(l) {}
  NTSTATUS listen(const SOCKADDR* addr, ULONG len);
  NTSTATUS local_address(SOCKADDR* out, ULONG* len);
  void pause(bool p);
  void teardown();

 private:
  void on_request(std::shared_ptr<provider::IncomingConnection> p);
  Listener* const obj_;
  std::mutex mu_;
  bool torn_down_ = false;
  bool paused_ = false;
  std::shared_ptr<provider::Listener> tl_;
  std::shared_ptr<Reservation> reservation_;  // the listener's reference
};

}  // namespace softndk::ndk
