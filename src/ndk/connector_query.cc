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
#include "rdmap/stream.h"

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
  std::shared_ptr<rdmap::Stream> s;
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
      const mpa::PeerRequest& r = pending_->request();
      info->MpaRevision = r.rev;
      info->Crc = r.crc;
      info->Markers = r.markers;
      info->PeerToPeer = r.p2p;
      info->RtrType = r.p2p ? r.rtr_offered : 0;
      info->Ird = r.proposed_ird;
      info->Ord = r.proposed_ord;
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
  std::shared_ptr<rdmap::Stream> s;
  std::shared_ptr<tcp::Connection> c;
  SOFTNDK_PEER_ACTIVITY out{};
  out.Size = info->Size;
  {
    std::lock_guard lk(mu_);
    out.SetupPhase = setup_phase_;
    out.WakeAfterMs = wake_after_ms_;
    s = stream_;
    c = conn_;
  }
  if (c != nullptr) {
    out.MpaRoundTripUs = static_cast<ULONG>(
        std::min<int64_t>(c->mpa_round_trip().count(), std::numeric_limits<ULONG>::max()));
  }
  if (s != nullptr) {
    out.Established = TRUE;
    out.SentFpdu = s->sent_anything();
    out.PeerSpoke = s->peer_spoke();
    out.WakeUpsSent = s->wake_ups_sent();
  }
  std::memcpy(info, &out, sizeof out);
  return STATUS_SUCCESS;
}

static_assert(offsetof(SOFTNDK_PATH_INFO, RingIn) == SOFTNDK_PATH_INFO_V1_SIZE);
static_assert(rdmap::kMaxWakeUps == SOFTNDK_MAX_WAKE_UPS);

namespace {
void fill_path(const rdmap::SamehostStats& s, SOFTNDK_PATH_INFO* info) {
  info->Path = s.rx && s.tx ? SOFTNDK_PATH_SAMEHOST
               : s.probing  ? SOFTNDK_PATH_PROBING
                            : SOFTNDK_PATH_TCP;
  info->Reason = info->Path == SOFTNDK_PATH_TCP && s.reason == rdmap::SamehostReason::kNone
                     ? SOFTNDK_PATH_REASON_PEER_DECLINED  // one direction only
                     : static_cast<ULONG>(s.reason);
  if (info->Path != SOFTNDK_PATH_TCP) info->Reason = SOFTNDK_PATH_REASON_NONE;
  info->PeerPid = s.peer_pid;
  info->PullFromPeer = s.rx;
  info->PeerPulls = s.tx;
  info->PulledOctets = s.pulled_octets;
  info->PulledMessages = s.pulled_messages;
  info->DescriptorsSent = s.descriptors_sent;
  info->RingIn = s.ring_rx;
  info->RingOut = s.ring_tx;
  info->RingInOctets = s.ring_rx_octets;
  info->RingOutOctets = s.ring_tx_octets;
  info->MappedOctets = s.mapped_octets;
  info->MappedDescriptors = s.mapped_descriptors;
  info->CmaFallbacks = s.cma_fallbacks;
  info->SegmentDescriptorsSent = s.segment_descriptors_sent;
}
}  // namespace

NTSTATUS ConnectorNet::query_path(SOFTNDK_PATH_INFO* info) {
  std::shared_ptr<rdmap::Stream> st;
  {
    std::lock_guard lk(mu_);
    st = stream_;
  }
  if (st == nullptr) return STATUS_CONNECTION_INVALID;
  const rdmap::SamehostStats s = st->samehost_stats();
  // A caller built with an older, shorter structure gets its fields only.
  const ULONG size = info->Size;
  SOFTNDK_PATH_INFO out{};
  fill_path(s, &out);
  out.Size = size;
  std::memcpy(info, &out, std::min<size_t>(size, sizeof out));
  return STATUS_SUCCESS;
}

NTSTATUS ConnectorNet::query_tcp(SOFTNDK_TCP_INFO* info) {
  std::shared_ptr<tcp::Connection> c;
  {
    std::lock_guard lk(mu_);
    c = conn_;
  }
  tcp::TcpStats t;
  if (c == nullptr || !c->tcp_stats(&t)) return STATUS_CONNECTION_INVALID;
  const ULONG size = info->Size;
  std::memset(info, 0, sizeof *info);
  info->Size = size;
  std::strncpy(info->CongestionControl, t.congestion.c_str(), sizeof info->CongestionControl - 1);
  info->RttUs = t.rtt_us;
  info->RttVarUs = t.rttvar_us;
  info->SendCwnd = t.snd_cwnd;
  info->SendMss = t.snd_mss;
  info->TotalRetransmits = t.total_retrans;
  info->ReorderingSeen = t.reord_seen;
  info->OutOfOrderReceived = t.rcv_ooopack;
  info->DsackDups = t.dsack_dups;
  info->PacingRate = t.pacing_rate;
  info->DeliveryRate = t.delivery_rate;
  info->BytesSent = t.bytes_sent;
  info->BytesRetransmitted = t.bytes_retrans;
  info->BytesReceived = t.bytes_received;
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
      // Transmit faults live in the data path (rdmap/tx_faults.h).
      std::shared_ptr<rdmap::Stream> s;
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
  std::shared_ptr<tcp::Connection> c;
  std::shared_ptr<rdmap::Stream> s;
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
