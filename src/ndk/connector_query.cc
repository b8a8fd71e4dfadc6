// SPDX-License-Identifier: Apache-2.0
// connector_query.cc - what a connector reports about its connection:
// NdkGetConnectionData, the local and peer addresses, and the softndk
// extensions SoftNdkQueryConnectionInfo, SoftNdkQueryConnectionPath,
// SoftNdkQueryConnectionTcpInfo, SoftNdkQueryPeerActivity and
// SoftNdkInjectConnectionFault
// (docs/connections.md, docs/samehost.md, docs/observability.md). Split
// from connector_net.cc, which makes and ends the connection.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>

#include "ndk/adapter.h"
#include "ndk/endpoint_address.h"
#include "ndk/net_glue.h"
#include "ndk/qp.h"

namespace softndk::ndk {

NTSTATUS ConnectorNet::connection_data(ULONG* ird, ULONG* ord, void* pd, ULONG* pd_len) {
  std::lock_guard lk(mu_);
  if (!have_data_) return STATUS_CONNECTION_INVALID;
  if (pd_len == nullptr) {
    if (pd != nullptr) return STATUS_INVALID_PARAMETER;
  } else if (pd == nullptr && *pd_len != 0) {
    return STATUS_INVALID_PARAMETER;
  }
  if (ird != nullptr) *ird = ird_;
  if (ord != nullptr) *ord = ord_;
  if (pd_len == nullptr) return STATUS_SUCCESS;
  // RDS: the peer's private data without the MPA v2 IRD/ORD block.
  ULONG rds = static_cast<ULONG>(peer_pd_.size());
  if (pd == nullptr) {
    *pd_len = rds;
    return STATUS_SUCCESS;
  }
  ULONG n = std::min(*pd_len, rds);
  if (n > 0) std::memcpy(pd, peer_pd_.data(), n);
  NTSTATUS st = *pd_len >= rds ? STATUS_SUCCESS : STATUS_BUFFER_TOO_SMALL;
  *pd_len = rds;
  return st;
}

NTSTATUS ConnectorNet::local_address(SOCKADDR* out, ULONG* len) {
  std::lock_guard lk(mu_);
  if (!have_addrs_) return STATUS_CONNECTION_INVALID;
  return copy_address_out(local_, out, len);
}

NTSTATUS ConnectorNet::peer_address(SOCKADDR* out, ULONG* len) {
  std::lock_guard lk(mu_);
  if (!have_addrs_) return STATUS_CONNECTION_INVALID;
  return copy_address_out(peer_, out, len);
}

NTSTATUS ConnectorNet::query(SOFTNDK_CONNECTION_INFO* info) {
  std::shared_ptr<provider::QpEngine> s;
  std::memset(info, 0, sizeof *info);
  {
    std::lock_guard lk(mu_);
    info->State = static_cast<ULONG>(state_);
    if (have_params_) {
      info->MpaRevision = params_.revision;
      info->Crc = params_.crc;
      info->Markers = params_.markers;
      info->PeerToPeer = params_.p2p;
      info->RtrType = params_.p2p ? params_.rtr : 0;
      info->Ird = params_.ird;
      info->Ord = params_.ord;
    } else if (state_ == ConnState::kIncoming && pending_) {
      // Not negotiated yet: what the peer's MPA Request asks for, so that a
      // listener can judge a request before accepting or rejecting it.
      const provider::ConnectionFacts& r = pending_->request();
      info->MpaRevision = r.revision;
      info->Crc = r.crc;
      info->Markers = r.markers;
      info->PeerToPeer = r.p2p;
      info->RtrType = r.p2p ? r.rtr : 0;
      info->Ird = r.ird;
      info->Ord = r.ord;
    }
    info->LastTerminateSent = term_sent_;
    info->LastTerminateReceived = term_received_;
    if (have_addrs_) {
      info->Local = local_;
      info->Peer = peer_;
    }
    s = stream_;
  }
  if (s) {
    info->LastTerminateSent = s->last_terminate_sent();
    info->LastTerminateReceived = s->last_terminate_received();
  }
  return STATUS_SUCCESS;
}

NTSTATUS ConnectorNet::query_activity(SOFTNDK_PEER_ACTIVITY* info) {
  std::shared_ptr<provider::QpEngine> s;
  std::shared_ptr<provider::Connection> c;
  ULONG phase;
  {
    std::lock_guard lk(mu_);
    phase = setup_phase_;
    s = stream_;
    c = conn_;
  }
  SOFTNDK_PEER_ACTIVITY out{};
  if (s != nullptr) s->query_activity(&out);  // Established and the engine's facts
  out.Size = info->Size;
  out.SetupPhase = phase;
  if (c != nullptr) out.MpaRoundTripUs = c->facts().mpa_round_trip_us;
  std::memcpy(info, &out, sizeof out);
  return STATUS_SUCCESS;
}

static_assert(offsetof(SOFTNDK_PATH_INFO, RingIn) == SOFTNDK_PATH_INFO_V1_SIZE);

NTSTATUS ConnectorNet::query_path(SOFTNDK_PATH_INFO* info) {
  std::shared_ptr<provider::QpEngine> st;
  {
    std::lock_guard lk(mu_);
    st = stream_;
  }
  if (st == nullptr) return STATUS_CONNECTION_INVALID;
  // A caller built with an older, shorter structure gets its fields only.
  const ULONG size = info->Size;
  SOFTNDK_PATH_INFO out{};
  st->query_path(&out);
  out.Size = size;
  std::memcpy(info, &out, std::min<size_t>(size, sizeof out));
  return STATUS_SUCCESS;
}

NTSTATUS ConnectorNet::query_tcp(SOFTNDK_TCP_INFO* info) {
  std::shared_ptr<provider::Connection> c;
  {
    std::lock_guard lk(mu_);
    c = conn_;
  }
  if (c == nullptr || !c->tcp_info(info)) return STATUS_CONNECTION_INVALID;
  return STATUS_SUCCESS;
}

NTSTATUS ConnectorNet::inject(const SOFTNDK_FAULT* f) {
  if (f == nullptr) return STATUS_INVALID_PARAMETER;
  switch (fault_type(*f)) {
    case SoftNdkFaultResetConnection:
      break;
    case SoftNdkFaultDropTx:
    case SoftNdkFaultDelayTx:
    case SoftNdkFaultCorruptTx: {
      // Transmit faults live in the engine (rdmap/tx_faults.h).
      std::shared_ptr<provider::QpEngine> s;
      {
        std::lock_guard lk(mu_);
        if (state_ != ConnState::kEstablished) return STATUS_CONNECTION_INVALID;
        s = stream_;
      }
      return s ? s->inject_fault(*f) : STATUS_CONNECTION_INVALID;
    }
    default:
      return STATUS_INVALID_PARAMETER;
  }
  std::shared_ptr<provider::Connection> c;
  std::shared_ptr<provider::QpEngine> s;
  Qp* q = nullptr;
  {
    std::lock_guard lk(mu_);
    if (state_ != ConnState::kEstablished) return STATUS_CONNECTION_INVALID;
    state_ = ConnState::kClosed;
    event_done_ = true;
    end_active_locked();
    c = conn_;
    s = stream_;
    q = qp_;
  }
  // Abort with RST now; the QP is dead like after any connection loss.
  if (s) {
    s->stop();
    std::lock_guard lk(mu_);
    term_sent_ = s->last_terminate_sent();
    term_received_ = s->last_terminate_received();
  }
  c->abort();
  q->to_error();
  return STATUS_SUCCESS;
}

}  // namespace softndk::ndk
