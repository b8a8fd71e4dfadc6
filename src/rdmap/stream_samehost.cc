// SPDX-License-Identifier: Apache-2.0
// rdmap/stream_samehost.cc - the same-host fast path of a Stream
// (docs/samehost.md).
//
// Once the rendezvous (samehost.h) says the peer can read our memory, a
// large RDMA Write or Read Response leaves as descriptor FPDUs on the TCP
// stream - the tagged header (STag, TO) of the data and a 12-byte body
// naming where the bytes are in our process - instead of the payload. The
// receiver checks the STag/TO/length against its own STag table (Write) or
// its outstanding Read (Read Response) exactly as for payload FPDUs, and
// only then copies the bytes out of our process with process_vm_readv: no
// process ever writes another's memory. A Write completes at its initiator
// only when the target's ack says it was pulled (the source buffer is the
// consumer's to reuse after the completion). Everything else - ordering,
// fences, Terminate, flush, disconnect, peer death - stays with the TCP
// stream, which still carries every FPDU.
#include <cerrno>

#include "rdmap/placement.h"
#include "rdmap/stream.h"
#include "transport/samehost/samehost_wire.h"

namespace softndk::rdmap {

namespace {
// Smaller messages go as payload: a descriptor, a pull and an ack cost more
// than TCP moving a few KiB.
constexpr uint64_t kSamehostMinBytes = 16384;
}  // namespace

void Stream::samehost_begin() {
  if (!samehost_ || sock_.fd() < 0) return;
  // A trace asked for before the connection wants every payload byte in
  // it: we take no descriptors (the peer sends payload), and our own
  // messages go as payload while the hook is on (samehost_tx).
  sh_ = Rendezvous::start(conn_->reactor(), sock_.fd(), conn_->role() == tcp::Role::kInitiator,
                          /*may_pull=*/!rx_hooked_);
}

SamehostStats Stream::samehost_stats() const {
  SamehostStats s;
  s.enabled = samehost_;
  std::shared_ptr<Rendezvous> sh;
  {
    std::lock_guard lk(const_cast<std::mutex&>(rx_mu_));
    sh = sh_;
  }
  if (!samehost_) {
    s.reason = crc_ ? SamehostReason::kCrc : SamehostReason::kDisabled;
  } else if (!sh) {
    s.probing = true;  // begin() has not run yet
  } else {
    s.probing = !sh->done();
    s.rx = sh->rx_ok();
    s.tx = sh->tx_ok();
    s.reason = sh->reason();
    s.peer_pid = static_cast<uint32_t>(sh->peer_pid());
  }
  s.pulled_octets = sh_pulled_octets_.load(std::memory_order_relaxed);
  s.pulled_messages = sh_pulled_msgs_.load(std::memory_order_relaxed);
  s.descriptors_sent = sh_desc_sent_.load(std::memory_order_relaxed);
  s.ring_rx = rx_on_ring_.load(std::memory_order_acquire);
  s.ring_tx = tx_on_ring_.load(std::memory_order_acquire);
  s.ring_rx_octets = ring_rx_octets_.load(std::memory_order_relaxed);
  s.ring_tx_octets = ring_tx_octets_.load(std::memory_order_relaxed);
  s.mapped_octets = sh_mapped_octets_.load(std::memory_order_relaxed);
  s.mapped_descriptors = sh_mapped_descs_.load(std::memory_order_relaxed);
  s.cma_fallbacks = sh_cma_fallbacks_.load(std::memory_order_relaxed);
  s.segment_descriptors_sent = sh_seg_desc_sent_.load(std::memory_order_relaxed);
  return s;
}

bool Stream::samehost_tx(uint64_t length) const {
  // A trace or a fault hook wants the bytes on the wire: such messages go
  // as payload (docs/samehost.md).
  return sh_ != nullptr && length >= kSamehostMinBytes && !tx_hooked_ && sh_->tx_ok();
}

size_t Stream::encode_desc(uint64_t source, uint32_t length, uint8_t* body) {
  wire::SamehostDesc d{source, length, std::nullopt};
  // Name the shared segment holding the whole range, if any, to a peer
  // that maps segments: it then copies with memcpy from its own mapping
  // instead of process_vm_readv.
  if (sh_->tx_map_ok()) d.segment = samehost::shared_segment_find(source, length);
  if (d.segment) sh_seg_desc_sent_.fetch_add(1, std::memory_order_relaxed);
  return wire::encode_samehost_desc(d, {body, wire::kSamehostSegDescSize});
}

bool Stream::add_samehost_write() {
  Batch& b = *b_;
  const provider::WorkRequest& wr = msg_.wr;
  int n = 0;
  for (ULONG i = 0; i < wr.nsge; ++i) n += wr.sge[i].Length != 0 ? 1 : 0;
  // One descriptor per SGE; all of them in this batch, or wait for the next.
  if (b.niov + 2 * n + 2 > kMaxIov || b.nfpdu + n > kMaxFpdu || b.nmarks >= kMaxMarks) return false;
  {
    // Before the bytes leave: the ack may come back at once.
    std::lock_guard lk(q_mu_);
    sh_writes_.emplace_back(msg_.seq, static_cast<ULONG>(wr.length));
  }
  uint64_t off = 0;
  int k = 0;
  for (ULONG i = 0; i < wr.nsge; ++i) {
    const NDK_SGE& s = wr.sge[i];
    if (s.Length == 0) continue;
    ++k;
    uint8_t body[wire::kSamehostSegDescSize];
    const size_t blen = encode_desc(reinterpret_cast<uintptr_t>(s.VirtualAddress), s.Length, body);
    auto h = wire::DdpHeader::tagged_hdr(wire::Opcode::kSamehostWrite, k == n, wr.remote_token,
                                         wr.remote_addr + off);
    wire::FpduWriter w;
    auto hdr = w.begin(h, {body, blen}, 0, crc_, b.scratch[b.nfpdu++]);
    auto tr = w.finish();
    b.iov[b.niov++] = {const_cast<uint8_t*>(hdr.data()), hdr.size()};
    b.iov[b.niov++] = {const_cast<uint8_t*>(tr.data()), tr.size()};
    b.total += hdr.size() + tr.size();
    off += s.Length;
  }
  sh_desc_sent_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  // The RDMA octet counters count the payload the QP moved, whichever way
  // (the peer counts it in when it pulls): docs/samehost.md.
  provider::count_qp(qc_.rdma_out_octets, wr.length);
  msg_.active = false;
  return true;
}

bool Stream::add_samehost_response(const InboundRead& r) {
  if (!batch_room(0)) return false;
  Batch& b = *b_;
  uint8_t body[wire::kSamehostSegDescSize];
  const size_t blen = encode_desc(reinterpret_cast<uintptr_t>(r.source), r.size, body);
  auto h = wire::DdpHeader::tagged_hdr(wire::Opcode::kSamehostReadResponse, true, r.sink_stag,
                                       r.sink_to);
  wire::FpduWriter w;
  auto hdr = w.begin(h, {body, blen}, 0, crc_, b.scratch[b.nfpdu++]);
  auto tr = w.finish();
  b.iov[b.niov++] = {const_cast<uint8_t*>(hdr.data()), hdr.size()};
  b.iov[b.niov++] = {const_cast<uint8_t*>(tr.data()), tr.size()};
  b.total += hdr.size() + tr.size();
  sh_desc_sent_.fetch_add(1, std::memory_order_relaxed);
  provider::count_qp(qc_.rdma_out_octets, r.size);
  std::lock_guard lk(q_mu_);
  irq_.pop();
  resp_off_ = 0;
  return true;
}

void Stream::add_samehost_ack() {
  if (sh_acks_owed_.load(std::memory_order_acquire) == 0 || !batch_room(0)) return;
  Batch& b = *b_;
  const uint32_t n = sh_acks_owed_.exchange(0, std::memory_order_acq_rel);
  uint8_t body[wire::kSamehostAckSize];
  wire::encode_samehost_ack(n, body);
  auto h = wire::DdpHeader::untagged_hdr(wire::Opcode::kSamehostAck, true, 0, 0, 0);
  wire::FpduWriter w;
  auto hdr = w.begin(h, {body, sizeof body}, 0, crc_, b.scratch[b.nfpdu++]);
  auto tr = w.finish();
  b.iov[b.niov++] = {const_cast<uint8_t*>(hdr.data()), hdr.size()};
  b.iov[b.niov++] = {const_cast<uint8_t*>(tr.data()), tr.size()};
  b.total += hdr.size() + tr.size();
}

bool Stream::on_samehost_placement(const wire::SegmentInfo& seg) {
  const wire::Opcode op = seg.opcode();
  // Only a peer we verified may send descriptors: anything else is an
  // opcode this connection does not carry.
  const pid_t pid = sh_ != nullptr && sh_->rx_ok() ? sh_->peer_pid() : 0;
  auto d = wire::parse_samehost_desc(seg.body);
  if (pid == 0 || !d) {
    rx_fail_term(segment_terminate({wire::TermLayer::kRdmap, wire::term::kRdmapRemoteOperation,
                                    wire::term::kRdmapUnexpectedOpcode},
                                   seg, false),
                 STATUS_CANCELLED);
    return false;
  }
  // The same checks as for payload, before a byte lands.
  uint8_t* dst;
  if (op == wire::Opcode::kSamehostWrite) {
    AccessCheck c = check_remote_access(stags_, seg.hdr.stag, pd_, qp_, seg.hdr.to, d->length,
                                        provider::kAccessRemoteWrite, false);
    if (!c.ok) {
      rx_fail_term(segment_terminate(c.code, seg, false), STATUS_CANCELLED);
      return false;
    }
    dst = c.ptr;
  } else {
    if (!match_response(seg, d->length)) return false;
    dst = rd_.sink + rd_off_;
  }
  if (d->segment) {
    if (sh_maps_ == nullptr) sh_maps_ = std::make_unique<SegmentMaps>(pid);
    if (sh_maps_->copy(*d->segment, d->length, dst)) {
      sh_mapped_octets_.fetch_add(d->length, std::memory_order_relaxed);
      sh_mapped_descs_.fetch_add(1, std::memory_order_relaxed);
      return pulled(d->length);
    }
    // Not a segment we can map (closed, not sealed, another inode, out of
    // its range): the address is still the sender's, so pull it.
    sh_cma_fallbacks_.fetch_add(1, std::memory_order_relaxed);
  }
  const int e = samehost::samehost_pull(pid, dst, d->source, d->length);
  if (e != 0) {
    if (e == ESRCH) {
      // The peer process is gone (its TCP end goes with it): as a reset.
      fail(STATUS_CONNECTION_RESET, ECONNRESET);
      return false;
    }
    // The peer named memory it does not have (unmapped meanwhile) or took
    // our access away: its request cannot be carried out.
    rx_fail_term(segment_terminate({wire::TermLayer::kRdmap, wire::term::kRdmapRemoteOperation,
                                    wire::term::kRdmapCatastrophicStream},
                                   seg, false),
                 STATUS_CANCELLED);
    return false;
  }
  return pulled(d->length);
}

bool Stream::pulled(uint32_t length) {
  sh_len_ = length;
  sh_pulled_octets_.fetch_add(length, std::memory_order_relaxed);
  rx_beats_.store(rx_beats_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  provider::count_qp(qc_.rdma_in_octets, length);
  return true;
}

bool Stream::on_samehost_done(const wire::SegmentInfo& seg) {
  const uint32_t len = sh_len_;
  sh_len_ = 0;
  if (seg.opcode() == wire::Opcode::kSamehostReadResponse) {
    sh_pulled_msgs_.fetch_add(1, std::memory_order_relaxed);
    return finish_response_segment(len, seg.last());
  }
  if (seg.last()) {
    // The whole Write is in place: its initiator may complete it.
    sh_pulled_msgs_.fetch_add(1, std::memory_order_relaxed);
    sh_acks_owed_.fetch_add(1, std::memory_order_acq_rel);
    kick_after_rx_ = true;
  }
  return true;
}

bool Stream::on_samehost_ack(const wire::SegmentInfo& seg) {
  auto n = wire::parse_samehost_ack(seg.body);
  uint32_t left = n ? *n : 0;
  while (left > 0) {
    std::pair<uint64_t, ULONG> w;
    {
      std::lock_guard lk(q_mu_);
      if (sh_writes_.empty()) break;
      w = sh_writes_.front();
      sh_writes_.pop_front();
    }
    qp_->sq_complete(w.first, STATUS_SUCCESS, w.second);
    rx_completed_ = true;
    --left;
  }
  if (!n || left > 0) {
    // Acks for Writes we never sent as descriptors.
    rx_fail_term(segment_terminate({wire::TermLayer::kRdmap, wire::term::kRdmapRemoteOperation,
                                    wire::term::kRdmapUnexpectedOpcode},
                                   seg, false),
                 STATUS_CANCELLED);
    return false;
  }
  return true;
}

namespace {

void fill_path(const SamehostStats& s, SOFTNDK_PATH_INFO* info) {
  info->Path = s.rx && s.tx ? SOFTNDK_PATH_SAMEHOST
               : s.probing  ? SOFTNDK_PATH_PROBING
                            : SOFTNDK_PATH_TCP;
  info->Reason = info->Path == SOFTNDK_PATH_TCP && s.reason == SamehostReason::kNone
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

void Stream::query_path(SOFTNDK_PATH_INFO* out) { fill_path(samehost_stats(), out); }

}  // namespace softndk::rdmap
