// SPDX-License-Identifier: Apache-2.0
// The send side of the SMB Direct transport: send slots, peer credits,
// data messages (built in their slot or copied there) and their posting.
#include <algorithm>
#include <cstring>
#include <thread>

#include "backoff.h"
#include "data_message.h"
#include "ndkapp/status.h"
#include "transport.h"
#include "transport_detail.h"

namespace smbd {

using namespace transport_detail;

uint32_t Transport::take_send_slot() {
  const auto deadline = tools::deadline_in(cfg_.timeout_s);
  Backoff b(pace_);
  while (free_send_.empty()) {
    poll_or_wait(b, deadline);
    if (free_send_.empty() && conn_ && conn_->peer_disconnected())
      fail(Error::kNone, tools::with_end_cause("the peer disconnected", conn_.get()) + " (while " +
                             std::to_string(send_slots_) + " Sends waited for their completion)");
    if (free_send_.empty() && Clock::now() > deadline)
      fail(Error::kNone, "no completion of our " + std::to_string(send_slots_) +
                             " outstanding Sends within " + seconds_text(cfg_.timeout_s) +
                             " (waiting for a free send slot)");
  }
  uint32_t i = free_send_.back();
  free_send_.pop_back();
  return i;
}

void Transport::post_send(std::span<const uint8_t> bytes, const uint32_t* invalidate_token) {
  const uint32_t i = take_send_slot();
  std::memcpy(send_buf_->data() + size_t(i) * send_slot_size_, bytes.data(), bytes.size());
  post_slot(i, bytes.size(), invalidate_token);
}

void Transport::post_slot(uint32_t i, size_t length, const uint32_t* invalidate_token) {
  NDK_SGE sge = send_buf_->sge(size_t(i) * send_slot_size_, length);
  NTSTATUS st;
  if (invalidate_token)
    st = qp_->get()->Dispatch->NdkSendAndInvalidate(qp_->get(), tag(kSendTag, i), &sge, 1, 0,
                                                    *invalidate_token);
  else
    st = qp_->send(tag(kSendTag, i), &sge, 1, 0);
  if (st != STATUS_SUCCESS) {
    free_send_.push_back(i);
    fail(Error::kNone, "NdkSend: " + tools::status_name(st));
  }
}

void Transport::wait_for_credit(bool may_grant) {
  const auto deadline = tools::deadline_in(cfg_.timeout_s);
  bool waited = false;
  Backoff b(pace_);
  for (;;) {
    if (ended_) throw TransportError(Error::kNone, "smbd: connection ended: " + end_reason_);
    // The last credit only in a message that grants, or while the peer
    // can still send to us (it holds credits of ours).
    const bool grants = may_grant && credits_to_grant() > 0;
    if (send_credits_ > 1 || (send_credits_ == 1 && (grants || granted_ > 0))) break;
    if (!waited) ++stats_.credit_waits, waited = true;
    poll_or_wait(b, deadline);
    if (conn_->peer_disconnected())
      fail(Error::kNone, tools::with_end_cause("the peer disconnected", conn_.get()) +
                             " (while we waited for a send credit)");
    if (Clock::now() > deadline)
      fail(Error::kNone, "no send credit from the peer within " + seconds_text(cfg_.timeout_s));
  }
}

uint8_t* Transport::reserve_segment() {
  if (reserved_slot_ >= 0)
    throw TransportError(Error::kNone, "smbd: a message is already being built in a send slot");
  wait_for_credit(true);
  reserved_slot_ = take_send_slot();
  return send_buf_->data() + size_t(reserved_slot_) * send_slot_size_;
}

void Transport::post_reserved(uint16_t flags, uint32_t payload_length, uint32_t remaining,
                              const uint32_t* invalidate_token) {
  const uint32_t i = uint32_t(reserved_slot_);
  reserved_slot_ = -1;
  // The grant is decided now, not when the slot was reserved: receives
  // completed meanwhile may have left the peer with fewer of our credits.
  const uint16_t grant = credits_to_grant();
  if (send_credits_ == 1) flags |= kFlagResponseRequested;  // refill us promptly
  DataHeader h{cfg_.send_credit_target, grant, flags, remaining, 0, 0};
  uint8_t* slot = send_buf_->data() + size_t(i) * send_slot_size_;
  const size_t n = build_data_header(h, payload_length, std::span<uint8_t>(slot, send_slot_size_));
  if (n == 0 || (payload_length && n != kDataOffset) || n + payload_length > send_slot_size_) {
    free_send_.push_back(i);
    fail(Error::kNone, "smbd: a segment larger than its send slot");
  }
  post_slot(i, n + payload_length, invalidate_token);
  --send_credits_;
  granted_ = uint16_t(granted_ + grant);
  ++stats_.messages_sent;
  if (payload_length == 0)
    ++stats_.empty_sent;
  else
    ++stats_.segments_sent;
  if (flags & kFlagResponseRequested && payload_length == 0) ++stats_.keepalives_sent;
}

void Transport::send_data_message(uint16_t flags, std::span<const uint8_t> payload,
                                  uint32_t remaining, const uint32_t* invalidate_token) {
  // The message is built in its send slot: one copy of the payload (a
  // 4 KiB READ answer was copied twice more, through a vector).
  uint8_t* slot = reserve_segment();
  if (payload.size() > send_capacity()) {
    abandon_send();
    fail(Error::kNone, "smbd: a segment larger than its send slot");
  }
  if (!payload.empty()) std::memcpy(slot + kDataOffset, payload.data(), payload.size());
  post_reserved(flags, uint32_t(payload.size()), remaining, invalidate_token);
}

uint32_t Transport::send_capacity() const {
  return std::min<uint32_t>(segment_capacity(neg_.max_send_size),
                            send_slot_size_ > kDataOffset ? send_slot_size_ - kDataOffset : 0);
}

std::span<uint8_t> Transport::begin_send() {
  if (ended_) throw TransportError(Error::kNone, "smbd: connection ended: " + end_reason_);
  if (!negotiated_) throw TransportError(Error::kNone, "smbd: begin_send before negotiation");
  uint8_t* slot = reserve_segment();
  return {slot + kDataOffset, send_capacity()};
}

void Transport::commit_send(size_t length, const uint32_t* invalidate_token) {
  if (reserved_slot_ < 0)
    throw TransportError(Error::kNone, "smbd: commit_send without begin_send");
  if (length == 0 || length > send_capacity() || length > neg_.max_fragmented_send_size) {
    abandon_send();
    throw TransportError(Error::kNone, "smbd: commit_send of " + std::to_string(length) +
                                           " bytes (1.." + std::to_string(send_capacity()) +
                                           " fit in one segment)");
  }
  post_reserved(0, uint32_t(length), 0, invalidate_token);
}

void Transport::abandon_send() {
  if (reserved_slot_ < 0) return;
  free_send_.push_back(uint32_t(reserved_slot_));
  reserved_slot_ = -1;
}

void Transport::send(std::span<const uint8_t> message, const uint32_t* invalidate_token) {
  if (ended_) throw TransportError(Error::kNone, "smbd: connection ended: " + end_reason_);
  if (message.empty()) throw TransportError(Error::kNone, "smbd: empty upper-layer message");
  // 3.1.4.1: longer than the peer reassembles is a local error; the
  // connection stays up.
  if (message.size() > neg_.max_fragmented_send_size)
    throw TransportError(Error::kNone, "smbd: message of " + std::to_string(message.size()) +
                                           " bytes exceeds the peer's MaxFragmentedSize " +
                                           std::to_string(neg_.max_fragmented_send_size));
  const uint32_t cap = segment_capacity(neg_.max_send_size);
  size_t off = 0;
  while (off < message.size()) {
    const size_t n = std::min<size_t>(cap, message.size() - off);
    const uint32_t remaining = uint32_t(message.size() - off - n);
    send_data_message(0, message.subspan(off, n), remaining,
                      remaining == 0 ? invalidate_token : nullptr);
    off += n;
  }
}

}  // namespace smbd
