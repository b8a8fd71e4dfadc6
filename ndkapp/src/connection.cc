// SPDX-License-Identifier: Apache-2.0
// connection.cc - a connection's life: the active connect, the passive
// accept (blocking or polled by a server's handshake loop), reject, the
// disconnect event and the graceful disconnect.
#include <algorithm>
#include <memory>
#include <vector>

#include "session_internal.h"

namespace softndk::tools {

void Connection::on_disconnect(PVOID ctx, ULONG reason) {
  auto* e = static_cast<Events*>(ctx);
  std::lock_guard lk(e->m);
  e->disconnected = true;
  e->reason = reason;
  if (e->interrupt) e->interrupt->interrupt();
  e->cv.notify_all();
}

void Connection::interrupt_on_disconnect(Cq& cq) {
  std::lock_guard lk(events_->m);
  events_->interrupt = &cq;
  if (events_->disconnected) cq.interrupt();
}

Connection::Connection(Adapter& a, NDK_CONNECTOR* connector)
    : a_(a), conn_(connector), events_(new Events) {}

Connection::~Connection() {
  if (accepting_ != nullptr) accept_status();
  if (connected_ && !disconnected_) disconnect();
  if (conn_ &&
      !close_object(&conn_->Header, conn_->Dispatch->NdkCloseConnector, a_.close_timeout()))
    return;  // events_ leaked: the disconnect callback may still come
  // An accept still running completes (cancelled) by the close; if it has
  // not, its Pending stays leaked for the late callback.
  if (accepting_ != nullptr && Pending::peek(accepting_) != STATUS_PENDING) delete accepting_;
  delete events_;
}

std::unique_ptr<Connection> Connection::connect(Adapter& a, Qp& qp, const SockAddr& local,
                                                const SockAddr& peer, ULONG ird, ULONG ord,
                                                const std::vector<uint8_t>& pdata,
                                                std::vector<uint8_t>* peer_pdata,
                                                std::vector<uint8_t>* reject_data) {
  auto* p = new Pending;
  NDK_CONNECTOR* c = nullptr;
  NTSTATUS st = a.get()->Dispatch->NdkCreateConnector(a.get(), &Pending::on_create, p, &c);
  NDK_OBJECT_HEADER* obj = nullptr;
  st = Pending::finish(p, st, a.timeout(), &obj);
  if (st != STATUS_SUCCESS) throw_status("NdkCreateConnector", st);
  auto conn = std::make_unique<Connection>(a, c ? c : reinterpret_cast<NDK_CONNECTOR*>(obj));
  NDK_CONNECTOR* k = conn->conn_;

  p = new Pending;
  st = k->Dispatch->NdkConnect(k, qp.get(), local.sa(), local.len, peer.sa(), peer.len, ird, ord,
                               const_cast<uint8_t*>(pdata.data()), static_cast<ULONG>(pdata.size()),
                               &Pending::on_request, p);
  // The library bounds the connect itself (ConnectTimeoutMs); give it a
  // little more before calling it a hang.
  st = Pending::finish(p, st, a.timeout() + 5);
  if (st != STATUS_SUCCESS) {
    if (reject_data && st == STATUS_CONNECTION_REFUSED) {
      // Not every provider keeps a reject's private data; try, quietly.
      std::vector<uint8_t> buf(512);
      ULONG len = static_cast<ULONG>(buf.size());
      NTSTATUS s2 = k->Dispatch->NdkGetConnectionData(k, nullptr, nullptr, buf.data(), &len);
      if (s2 == STATUS_SUCCESS) {
        buf.resize(std::min<size_t>(len, buf.size()));
        *reject_data = std::move(buf);
      }
    }
    SOFTNDK_PEER_ACTIVITY act{};
    act.Size = sizeof act;
    ULONG phase =
        SoftNdkQueryPeerActivity(k, &act) == STATUS_SUCCESS ? act.SetupPhase : SOFTNDK_SETUP_NONE;
    throw ToolError(connect_failure_text(st, peer.to_string(), phase));
  }
  if (peer_pdata) {
    std::vector<uint8_t> buf(512);
    ULONG len = static_cast<ULONG>(buf.size());
    NTSTATUS s2 = k->Dispatch->NdkGetConnectionData(k, nullptr, nullptr, buf.data(), &len);
    if (s2 != STATUS_SUCCESS && s2 != STATUS_BUFFER_TOO_SMALL)
      throw_status("NdkGetConnectionData", s2);
    buf.resize(std::min<size_t>(len, buf.size()));
    *peer_pdata = std::move(buf);
  }
  p = new Pending;
  // The _EX form tells a reset from a graceful close (end_cause).
  st = k->Dispatch->NdkCompleteConnectEx(k, &Connection::on_disconnect, conn->events_,
                                         &Pending::on_request, p);
  st = Pending::finish(p, st, a.timeout());
  if (st != STATUS_SUCCESS) throw_status("NdkCompleteConnect with " + peer.to_string(), st);
  conn->connected_ = true;
  return conn;
}

std::vector<uint8_t> Connection::peer_data(ULONG* ird, ULONG* ord) {
  std::vector<uint8_t> buf(512);
  ULONG len = static_cast<ULONG>(buf.size());
  NTSTATUS st = conn_->Dispatch->NdkGetConnectionData(conn_, ird, ord, buf.data(), &len);
  if (st != STATUS_SUCCESS && st != STATUS_BUFFER_TOO_SMALL)
    throw_status("NdkGetConnectionData", st);
  buf.resize(std::min<size_t>(len, buf.size()));
  return buf;
}

void Connection::accept(Qp& qp, ULONG ird, ULONG ord, const std::vector<uint8_t>& pdata) {
  auto* p = new Pending;
  NTSTATUS st =
      conn_->Dispatch->NdkAcceptEx(conn_, qp.get(), ird, ord, const_cast<uint8_t*>(pdata.data()),
                                   static_cast<ULONG>(pdata.size()), &Connection::on_disconnect,
                                   events_, &Pending::on_request, p);
  st = Pending::finish(p, st, a_.timeout() + 5);
  if (st != STATUS_SUCCESS) throw_status("NdkAccept", st);
  connected_ = true;
}

void Connection::accept_start(Qp& qp, ULONG ird, ULONG ord, const std::vector<uint8_t>& pdata) {
  if (accepting_ != nullptr || connected_) throw ToolError("NdkAccept: already accepted");
  accept_pdata_ = pdata;  // the call may read it after it returned
  auto* p = new Pending;
  NTSTATUS st = conn_->Dispatch->NdkAcceptEx(
      conn_, qp.get(), ird, ord, accept_pdata_.data(), static_cast<ULONG>(accept_pdata_.size()),
      &Connection::on_disconnect, events_, &Pending::on_request, p);
  if (st != STATUS_PENDING) {
    delete p;  // final inline status: no callback follows
    if (st != STATUS_SUCCESS) throw_status("NdkAccept", st);
    connected_ = true;
    return;
  }
  accepting_ = p;
}

NTSTATUS Connection::accept_status() {
  if (accepting_ == nullptr) return connected_ ? STATUS_SUCCESS : STATUS_CONNECTION_ABORTED;
  NTSTATUS st = Pending::peek(accepting_);
  if (st == STATUS_PENDING) return st;
  delete accepting_;
  accepting_ = nullptr;
  if (st == STATUS_SUCCESS) connected_ = true;
  return st;
}

bool Connection::handshake_done(Qp& qp) {
  if (accept_status() != STATUS_SUCCESS) return false;
  // On the verbs backend the device's connection manager finished the
  // handshake before the accept completed (the peer's RTU/RTR), and no FPDU
  // counters exist: an accepted connection is a served one.
  SOFTNDK_BACKEND_INFO bi{};
  bi.Size = sizeof(bi);
  if (SoftNdkQueryBackend(a_.get(), &bi) == STATUS_SUCCESS && bi.Backend == SOFTNDK_BACKEND_VERBS)
    return true;
  SOFTNDK_CONNECTION_INFO ci{};
  if (info(ci) && ci.RtrType != 0) return true;  // the accept waited for the RTR
  SOFTNDK_COUNTERS c{};
  return SoftNdkQueryQpCounters(qp.get(), &c) == STATUS_SUCCESS && c.RDMAInOctets > 0;
}

void Connection::reject(const std::vector<uint8_t>& pdata) {
  conn_->Dispatch->NdkReject(conn_, const_cast<uint8_t*>(pdata.data()),
                             static_cast<ULONG>(pdata.size()));
}

void Connection::disconnect() {
  if (!connected_ || disconnected_) return;
  disconnected_ = true;
  auto* p = Pending::try_make();
  if (!p) return;  // out of memory (a destructor may be calling): the close aborts instead
  NTSTATUS st = conn_->Dispatch->NdkDisconnect(conn_, &Pending::on_request, p);
  Pending::finish(p, st, a_.close_timeout());
}
}  // namespace softndk::tools
