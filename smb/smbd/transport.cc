// SPDX-License-Identifier: Apache-2.0
#include "transport.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "backoff.h"
#include "data_message.h"
#include "ndkapp/status.h"
#include "transport_detail.h"

namespace smbd {

using namespace transport_detail;

Transport::Transport(tools::Adapter& a, const TransportConfig& cfg)
    : a_(a), cfg_(cfg), reasm_(cfg.max_fragmented_size) {
  pace_.hot_max = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::micro>(std::clamp(cfg.hot_spin_us, 0.0, 1e6)));
}

TransportStats Transport::stats() const {
  TransportStats s = stats_;
  s.poll_yields = pace_.yields;
  s.poll_switches = pace_.switches;
  s.poll_sleeps = pace_.sleeps;
  s.poll_hot = pace_.hot_polls;
  s.poll_events = pace_.event_waits;
  return s;
}

Transport::~Transport() {
  try {
    disconnect();
  } catch (...) {
  }
}

void Transport::setup_queues() {
  if (cfg_.receive_credits == 0 || cfg_.send_credit_target == 0)
    throw TransportError(Error::kNone, "smbd: receive_credits and send_credit_target must be > 0");
  if (cfg_.max_receive_size < kMinReceiveSize || cfg_.max_send_size < kMinReceiveSize)
    throw TransportError(Error::kNone, "smbd: send/receive sizes below 128 bytes");
  if (cfg_.max_fragmented_size < kMinFragmentedSize)
    throw TransportError(Error::kNone, "smbd: max_fragmented_size below 131072");
  recv_slot_size_ = cfg_.max_receive_size;
  send_slot_size_ = std::max<uint32_t>(cfg_.max_send_size, kNegotiateResponseSize);
  send_slots_ = cfg_.send_credit_target;
  const ULONG rdma_depth = 64;  // RDMA channel requests beside the sends
  pd_ = std::make_unique<tools::Pd>(a_);
  cq_ = std::make_unique<tools::Cq>(a_, ULONG(cfg_.receive_credits) + send_slots_ + rdma_depth);
  tools::QpConfig qc;
  qc.receive_depth = cfg_.receive_credits;
  qc.initiator_depth = send_slots_ + rdma_depth;
  qc.initiator_sge = 1;
  qp_ = std::make_unique<tools::Qp>(a_, *pd_, *cq_, *cq_, this, qc);
  recv_buf_ = std::make_unique<tools::Buffer>(
      a_, *pd_, size_t(recv_slot_size_) * cfg_.receive_credits, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
  send_buf_ = std::make_unique<tools::Buffer>(a_, *pd_, size_t(send_slot_size_) * send_slots_,
                                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
  for (uint32_t i = send_slots_; i-- > 0;) free_send_.push_back(i);
  ready_.resize(4);
  for (uint32_t i = 0; i < cfg_.receive_credits; ++i) post_receive(i);
}

void Transport::post_receive(uint32_t i) {
  NDK_SGE sge = recv_buf_->sge(size_t(i) * recv_slot_size_, recv_slot_size_);
  NTSTATUS st = qp_->receive(tag(kRecvTag, i), &sge, 1);
  if (st != STATUS_SUCCESS) fail(Error::kNone, "NdkReceive: " + tools::status_name(st));
  ++posted_;
}

uint16_t Transport::grant_target() const {
  // 3.1.5.9: the peer's CreditsRequested, never beyond the receives posted.
  return std::min<uint16_t>(std::max<uint16_t>(receive_credit_target_, 1), posted_);
}

uint16_t Transport::credits_to_grant() const {
  const uint16_t target = grant_target();
  return target > granted_ ? uint16_t(target - granted_) : 0;
}

unsigned Transport::poll_once(OtherCompletion other, void* other_arg) {
  NDK_RESULT_EX rs[16];
  const ULONG n = cq_->get()->Dispatch->NdkGetCqResultsEx(cq_->get(), rs, 16);
  for (ULONG k = 0; k < n; ++k) {
    const NDK_RESULT_EX& r = rs[k];
    const uintptr_t ctx = reinterpret_cast<uintptr_t>(r.RequestContext);
    const uint32_t idx = uint32_t(ctx & ~kTagMask);
    if ((ctx & kTagMask) == kRecvTag) {
      ++answers_;
      handle_receive(r, idx);
    } else if ((ctx & kTagMask) == kSendTag) {
      free_send_.push_back(idx);
      if (r.Status != STATUS_SUCCESS && !ended_) fail_request("send", r.Status);
    } else {
      ++answers_;  // an RDMA transfer's: the peer's side of it is done
      if (!(other && other(other_arg, r)) && !(handler_ && handler_(handler_arg_, r)))
        ++stats_.unclaimed_completions;
    }
  }
  return n;
}

unsigned Transport::poll_or_wait(Backoff& b, tools::Deadline deadline, OtherCompletion other,
                                 void* other_arg) {
  const uint64_t seen = answers_;
  unsigned n = poll_once(other, other_arg);
  if (!n && b.long_idle()) {
    // Armed before the last look, so a completion after that look
    // notifies: the sleep cannot miss it.
    const uint64_t ticket = cq_->arm();
    n = poll_once(other, other_arg);
    if (!n) {
      b.event_wait();
      cq_->wait_notified(ticket, std::min(deadline, tools::deadline_in(kIdleSlice)));
      return 0;
    }
  }
  if (n)
    b.hit(answers_ != seen);
  else
    b.wait();
  return n;
}

void Transport::set_completion_handler(OtherCompletion handler, void* arg) {
  if (handler && handler_ && (handler != handler_ || arg != handler_arg_))
    throw TransportError(Error::kNone, "smbd: a completion handler is already registered");
  handler_ = handler;
  handler_arg_ = handler ? arg : nullptr;
}

void Transport::handle_receive(const NDK_RESULT_EX& r, uint32_t slot) {
  --posted_;
  if (r.Status != STATUS_SUCCESS) {
    if (ended_) return;  // flushed by our own disconnect
    fail_request("receive", r.Status);
  }
  const std::span<const uint8_t> bytes(recv_buf_->data() + size_t(slot) * recv_slot_size_,
                                       r.BytesTransferred);
  last_rx_ = Clock::now();
  keepalive_pending_ = false;
  if (!negotiated_) {
    first_.assign(bytes.begin(), bytes.end());
    first_seen_ = true;
    post_receive(slot);
    return;
  }
  if (granted_ > 0) --granted_;
  ++stats_.messages_received;
  DataMessage m;
  Error e = parse_data_message(bytes, neg_.max_fragmented_receive_size, &m);
  if (e != Error::kNone) fail(e, error_name(e));
  receive_credit_target_ = m.header.credits_requested;
  send_credits_ =
      uint16_t(std::min<uint32_t>(0xFFFF, uint32_t(send_credits_) + m.header.credits_granted));
  if (m.response_requested()) response_owed_ = true;
  if (!m.payload.empty()) ++stats_.segments_received;
  auto st = reasm_.add(m, &e);
  if (e != Error::kNone) fail(e, error_name(e));
  if (st == Reassembler::State::kComplete) {
    const uint32_t inv = r.Type == NdkOperationTypeReceiveAndInvalidate
                             ? uint32_t(r.TypeSpecificCompletionOutput)
                             : 0;
    push_ready(inv);
  }
  post_receive(slot);
}

void Transport::push_ready(uint32_t invalidated) {
  if (ready_count_ == ready_.size()) {
    // More messages waiting than ever before: a larger ring, in order.
    std::vector<Ready> bigger(std::max<size_t>(4, 2 * ready_.size()));
    for (size_t k = 0; k < ready_count_; ++k)
      bigger[k] = std::move(ready_[(ready_head_ + k) % ready_.size()]);
    ready_.swap(bigger);
    ready_head_ = 0;
  }
  Ready& r = ready_[(ready_head_ + ready_count_) % ready_.size()];
  reasm_.take(&r.message);  // a swap: the ring's old vector becomes the next buffer
  r.invalidated = invalidated;
  ++ready_count_;
}

void Transport::service() {
  if (ended_ || !negotiated_) return;
  const auto now = Clock::now();
  const uint16_t grant = credits_to_grant();
  // Prompt grant when the peer runs low (half of what we can grant it), or
  // the answer it asked for. Half of what it asked for was wrong whenever it
  // asked for more than twice our receives (ndk-smbd asks 64 of ndk-smb's
  // 32, ksmbd 255): the peer always looked low, and every message it sent
  // drew an empty grant back (two Sends per 4 KiB QD1 READ, not one).
  const bool low = grant > 0 && granted_ <= grant_target() / 2;
  if ((response_owed_ || low) && send_credits_ > 0 &&
      (send_credits_ > 1 || grant > 0 || granted_ > 0)) {
    response_owed_ = false;
    send_data_message(0, {}, 0, nullptr);
    return;
  }
  const auto idle = std::chrono::duration<double>(now - last_rx_).count();
  if (!keepalive_pending_ && idle > cfg_.keepalive_interval_s && send_credits_ > 0) {
    keepalive_pending_ = true;
    keepalive_sent_ = now;
    send_data_message(kFlagResponseRequested, {}, 0, nullptr);
    return;
  }
  if (keepalive_pending_ &&
      std::chrono::duration<double>(now - keepalive_sent_).count() > cfg_.keepalive_timeout_s)
    fail(Error::kNone, "keepalive: no answer from the peer within " +
                           std::to_string(cfg_.keepalive_timeout_s) + " s");
}

bool Transport::receive(std::vector<uint8_t>* message, tools::Deadline deadline,
                        uint32_t* invalidated) {
  Backoff b(pace_);
  for (;;) {
    if (ready_count_) {
      // Swapped, not moved: the caller's old vector stays in the ring and
      // carries a later message (no allocation per message).
      Ready& r = ready_[ready_head_];
      message->swap(r.message);
      if (invalidated) *invalidated = r.invalidated;
      ready_head_ = (ready_head_ + 1) % ready_.size();
      --ready_count_;
      service();
      return true;
    }
    if (ended_) throw TransportError(Error::kNone, "smbd: connection ended: " + end_reason_);
    const bool got = poll_or_wait(b, deadline) > 0;
    if (!got) {
      // The disconnect event (a mutex) periodically too: it was ~4% of a
      // server's samples at 4 KiB QD1, looked at on every empty poll.
      if (b.periodic() && conn_->peer_disconnected() && poll_once() == 0 && !ready_count_) {
        ended_ = true;
        end_reason_ = tools::with_end_cause("the peer disconnected", conn_.get());
        peer_gone_ = true;
        throw TransportError(Error::kNone, "smbd: " + end_reason_);
      }
    }
    // Grants and answers follow completions; the timers and the deadline
    // are looked at periodically (Backoff::periodic).
    if (got || b.periodic()) {
      service();
      if (!ready_count_ && Clock::now() > deadline) return false;
    }
  }
}

bool Transport::poll_until(bool (*done)(void*), void* arg, OtherCompletion other, void* other_arg,
                           tools::Deadline deadline) {
  Backoff b(pace_);
  while (!done(arg)) {
    if (ended_) throw TransportError(Error::kNone, "smbd: connection ended: " + end_reason_);
    poll_or_wait(b, deadline, other, other_arg);
    if (done(arg)) break;
    if (!b.periodic()) continue;  // the event and the clock: periodically
    if (conn_->peer_disconnected()) {
      // What the peer sent before its close comes first: drain once more.
      poll_once(other, other_arg);
      if (done(arg)) break;
      fail(Error::kNone, tools::with_end_cause("the peer disconnected", conn_.get()));
    }
    if (Clock::now() > deadline) return false;
  }
  return true;
}

void Transport::fail_request(const char* what, NTSTATUS status) {
  fail(Error::kNone, std::string("a posted ") + what + " ended " + tools::status_name(status));
}

bool Transport::peer_gone(double wait_s) const {
  if (peer_gone_) return true;
  if (!conn_ || ended_) return false;  // after our own disconnect the event says nothing
  return conn_->peer_disconnected() || (wait_s > 0 && conn_->wait_disconnected(wait_s));
}

void Transport::fail(Error code, const std::string& why) {
  if (!ended_) {
    // A connection that breaks flushes its requests (and fails new ones)
    // before the disconnect event that says why arrives; softndk's
    // same-host path sees the peer's exit at once. An NDK failure or a
    // flush therefore waits for that event, briefly and bounded, so that
    // the reason says the peer went, with the failure that showed it.
    std::string reason = why;
    if (code == Error::kNone && why.rfind("the peer disconnected", 0) != 0 && peer_gone(0.5))
      reason = tools::with_end_cause("the peer disconnected", conn_.get()) + " (" + why + ")";
    if (reason.rfind("the peer disconnected", 0) == 0) peer_gone_ = true;
    ended_ = true;
    end_reason_ = reason;
    if (conn_) conn_->disconnect();
    throw TransportError(code, "smbd: " + reason);
  }
  throw TransportError(code, "smbd: " + why);
}

void Transport::disconnect() {
  if (ended_) return;
  ended_ = true;
  end_reason_ = "local disconnect";
  if (conn_) conn_->disconnect();
}

std::vector<uint8_t> Transport::wait_first_message(const char* what) {
  const auto deadline = tools::deadline_in(cfg_.negotiate_timeout_s);
  Backoff b(pace_);
  while (!first_seen_) {
    poll_or_wait(b, deadline);
    if (first_seen_) break;
    // The peer's last message comes before its disconnect: drain once more
    // after seeing the disconnect.
    if (conn_->peer_disconnected() && (poll_once(), !first_seen_))
      fail(Error::kNone, tools::with_end_cause(
                             std::string("the peer disconnected before its ") + what, conn_.get()));
    if (Clock::now() > deadline)
      fail(Error::kNone, std::string("no ") + what + " within " +
                             std::to_string(cfg_.negotiate_timeout_s) + " s");
  }
  return first_;
}

std::unique_ptr<Transport> Transport::connect(tools::Adapter& a, const tools::SockAddr& local,
                                              const tools::SockAddr& peer,
                                              const TransportConfig& cfg) {
  std::unique_ptr<Transport> t(new Transport(a, cfg));
  try {
    t->setup_queues();
  } catch (const tools::ToolError& e) {
    throw TransportError(Error::kNone, std::string("smbd: ") + e.what());
  }
  const ULONG ird = std::min<ULONG>(cfg.ird, a.info().MaxInboundReadLimit);
  const ULONG ord = std::min<ULONG>(cfg.ord, a.info().MaxOutboundReadLimit);
  t->neg_.ird = ird;
  t->neg_.ord = ord;
  auto hdr = build_ird_ord(ird, ord);
  std::vector<uint8_t> pdata(hdr.begin(), hdr.end()), accept_pd, reject_pd;
  try {
    t->conn_ = tools::Connection::connect(a, *t->qp_, local, peer, ird, ord, pdata, &accept_pd,
                                          &reject_pd);
  } catch (const tools::ToolError& e) {
    throw TransportError(Error::kNone,
                         std::string("smbd: connect to ") + peer.to_string() + ": " + e.what());
  }
  if (parse_ird_ord(accept_pd, &t->neg_.peer_ird_ord) == Error::kNone)
    t->neg_.peer_sent_ird_ord = true;
  t->negotiate_as_initiator();
  return t;
}

void Transport::negotiate_as_initiator() {
  NegotiateRequest rq;
  rq.min_version = cfg_.min_version;
  rq.max_version = cfg_.max_version;
  rq.credits_requested = cfg_.send_credit_target;
  rq.preferred_send_size = cfg_.max_send_size;
  rq.max_receive_size = cfg_.max_receive_size;
  rq.max_fragmented_size = cfg_.max_fragmented_size;
  auto b = build_negotiate_request(rq);
  post_send(b, nullptr);
  auto msg = wait_first_message("negotiate response");
  NegotiateResponse rs;
  Error e = parse_negotiate_response(msg, cfg_.max_receive_size, &rs);
  if (e == Error::kPeerStatus) fail(e, std::string(error_name(e)) + ": " + hex32(rs.status));
  if (e != Error::kNone) fail(e, std::string("negotiate response: ") + error_name(e));
  // 3.1.5.7
  receive_credit_target_ = rs.credits_requested;
  neg_.max_receive_size =
      std::max(kMinReceiveSize, std::min(cfg_.max_receive_size, rs.preferred_send_size));
  neg_.max_send_size = std::min(cfg_.max_send_size, rs.max_receive_size);
  neg_.max_read_write_size = std::min(cfg_.max_read_write_size, rs.max_read_write_size);
  neg_.max_fragmented_send_size = rs.max_fragmented_size;
  neg_.max_fragmented_receive_size = cfg_.max_fragmented_size;
  send_credits_ = rs.credits_granted;
  negotiated_ = true;
  last_rx_ = Clock::now();
  // The responder holds no credit of ours yet: grant at once (as cifs does).
  service();
}

std::unique_ptr<Transport> Transport::accept(tools::Adapter& a,
                                             std::unique_ptr<tools::Connection> in,
                                             const TransportConfig& cfg) {
  std::unique_ptr<Transport> t(new Transport(a, cfg));
  ULONG peer_ird = 0, peer_ord = 0;
  auto pd = in->peer_data(&peer_ird, &peer_ord);
  if (parse_ird_ord(pd, &t->neg_.peer_ird_ord) == Error::kNone) t->neg_.peer_sent_ird_ord = true;
  try {
    t->setup_queues();
  } catch (const tools::ToolError& e) {
    in->reject({});
    throw TransportError(Error::kNone, std::string("smbd: ") + e.what());
  }
  ULONG ird = std::min<ULONG>(cfg.ird, a.info().MaxInboundReadLimit);
  ULONG ord = std::min<ULONG>(cfg.ord, a.info().MaxOutboundReadLimit);
  t->neg_.ird = ird;
  t->neg_.ord = ord;
  auto hdr = build_ird_ord(ird, ord);
  t->conn_ = std::move(in);
  try {
    t->conn_->accept(*t->qp_, ird, ord, std::vector<uint8_t>(hdr.begin(), hdr.end()));
  } catch (const tools::ToolError& e) {
    throw TransportError(Error::kNone, std::string("smbd: accept: ") + e.what());
  }
  t->negotiate_as_responder();
  return t;
}

void Transport::negotiate_as_responder() {
  auto msg = wait_first_message("negotiate request");
  NegotiateRequest rq;
  Error e = parse_negotiate_request(msg, &rq);
  if (e == Error::kNoCommonVersion) {
    // 3.1.5.3: the failure response, then the connection ends.
    NegotiateResponse no;
    no.negotiated_version = 0;
    no.status = kStatusNotSupported;
    auto b = build_negotiate_response(no);
    post_send(b, nullptr);
    const auto deadline = tools::deadline_in(cfg_.timeout_s);
    while (free_send_.size() < send_slots_ && Clock::now() < deadline) poll_once();
    fail(e, std::string("negotiate request: ") + error_name(e) + " (offered " +
                hex32(rq.min_version) + ".." + hex32(rq.max_version) + ")");
  }
  if (e != Error::kNone) fail(e, std::string("negotiate request: ") + error_name(e));
  // 3.1.5.6
  receive_credit_target_ = rq.credits_requested;
  neg_.max_receive_size =
      std::max(kMinReceiveSize, std::min(cfg_.max_receive_size, rq.preferred_send_size));
  neg_.max_send_size = std::min(cfg_.max_send_size, rq.max_receive_size);
  neg_.max_read_write_size = cfg_.max_read_write_size;
  neg_.max_fragmented_send_size = rq.max_fragmented_size;
  neg_.max_fragmented_receive_size = cfg_.max_fragmented_size;
  NegotiateResponse rs;
  rs.credits_requested = cfg_.send_credit_target;
  rs.credits_granted = credits_to_grant();
  rs.max_read_write_size = neg_.max_read_write_size;
  rs.preferred_send_size = neg_.max_send_size;
  rs.max_receive_size = cfg_.max_receive_size;
  rs.max_fragmented_size = cfg_.max_fragmented_size;
  granted_ = rs.credits_granted;
  auto b = build_negotiate_response(rs);
  post_send(b, nullptr);
  negotiated_ = true;
  last_rx_ = Clock::now();
}

}  // namespace smbd
