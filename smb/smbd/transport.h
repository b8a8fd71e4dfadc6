// SPDX-License-Identifier: Apache-2.0
// transport.h - the MS-SMBD transport (both roles) over the public NDK ABI:
// connection with the 6.1 IRD/ORD private data, negotiate, data transfer with
// credit accounting, fragmentation and reassembly, RESPONSE_REQUESTED and the
// idle keepalive, disconnect. Every protocol error of MS-SMBD 3.1.5 ends the
// connection and is thrown as TransportError with its reason.
//
// One thread drives a Transport: send() and receive() poll its completion
// queue (which also drives softndk's receive progress), answer the peer's
// RESPONSE_REQUESTED, grant credits and run the keepalive timer. Between
// calls nothing is serviced: a peer that asks for a response while the
// owner is busy elsewhere gets it at the next call.
//
// Credits (3.1.5.1, 3.1.5.9): a message is sent only with a send credit the
// peer granted; credits granted are never more than the receives posted;
// the last send credit is spent only in a message that grants credits (or
// while the peer still holds credits of ours), and such a message asks for
// a response (RESPONSE_REQUESTED) so the peer replenishes promptly.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "backoff.h"
#include "error.h"
#include "ird_ord.h"
#include "ndkapp/session.h"
#include "negotiate.h"
#include "reassembly.h"

namespace smbd {

namespace tools = softndk::tools;

struct TransportConfig {
  uint16_t receive_credits = 32;            // receives posted: the most we grant
  uint16_t send_credit_target = 32;         // CreditsRequested we ask of the peer
  uint32_t max_send_size = 8192;            // PreferredSendSize (bytes per Send we would like)
  uint32_t max_receive_size = 8192;         // MaxReceiveSize (size of each posted receive)
  uint32_t max_fragmented_size = 1u << 20;  // largest message we reassemble
  uint32_t max_read_write_size = 8u << 20;  // RDMA channel bound we offer/accept
  uint32_t ird = 16, ord = 16;              // RDMA Read depths (capped by the adapter)
  // MS-SMBD 3.1.1.1: KeepaliveInterval 120 s; the idle connection asks the
  // peer for a response after that long and ends if none comes in time.
  double keepalive_interval_s = 120;
  double keepalive_timeout_s = 5;
  double negotiate_timeout_s = 5;  // 3.1.1.1 NegotiateTimer (SHOULD be 5 s)
  double timeout_s = 10;           // every other wait (credits, send slots, disconnect)
  // The wait for an RDMA Read or Write of the peer's buffers (RdmaMover):
  // the peer's side of the transfer. A peer that disconnects ends it at
  // once; this bounds one that stays connected but does not move the data.
  // Longer than timeout_s: a cifs guest under TCG on a loaded host took
  // 14.5 s to send the 1 MiB Read Response of its first WRITE (the host had
  // acknowledged every byte; the guest sent nothing for 5.6 s at a time),
  // and the 10 s bound dropped a healthy connection (interop cifs_dd).
  double transfer_timeout_s = 60;
  // A wait for the peer whose previous answer came within this many
  // microseconds spins without yielding its core for up to 4x that answer
  // time + 4 us (at most this bound) before it yields on every empty poll
  // (backoff.h). 0: always yield, as before (an opt-out for a host where
  // the peer shares the core).
  double hot_spin_us = 20;
  // Offered version range (initiator). 0x0100 is the only version; other
  // values exist to test a responder's refusal.
  uint16_t min_version = kVersion1, max_version = kVersion1;
};

// What the negotiation settled (3.1.1.1's Connection fields).
struct Negotiated {
  uint32_t max_send_size = 0;             // bytes per Send we may send
  uint32_t max_receive_size = 0;          // bytes per Send the peer sends
  uint32_t max_fragmented_send_size = 0;  // largest message we may send
  uint32_t max_fragmented_receive_size = 0;
  uint32_t max_read_write_size = 0;
  uint32_t ird = 0, ord = 0;  // ours, as offered (capped by the adapter)
  IrdOrd peer_ird_ord;        // the peer's 6.1 header (if it sent one)
  bool peer_sent_ird_ord = false;
};

struct TransportStats {
  uint64_t messages_sent = 0, messages_received = 0;  // data transfer messages, incl. empty
  uint64_t segments_sent = 0, segments_received = 0;  // those that carried upper-layer data
  uint64_t empty_sent = 0;                            // credit grants and keepalive answers
  uint64_t keepalives_sent = 0;                       // RESPONSE_REQUESTED on an idle connection
  uint64_t credit_waits = 0;                          // sends that had to wait for a credit
  uint64_t unclaimed_completions = 0;                 // not ours, no handler claimed them (dropped)
  // The poll loops' empty polls past the first 64 of a wait (backoff.h):
  uint64_t poll_hot = 0;       // kept the core (the peer answered promptly lately)
  uint64_t poll_yields = 0;    // yielded it (sched_yield)
  uint64_t poll_switches = 0;  // of those, yields that ran another task (backoff.h)
  uint64_t poll_sleeps = 0;    // slept (the peer went quiet)
  uint64_t poll_events = 0;    // slept on the CQ's notification (idle for long)
};

class TransportError : public std::runtime_error {
 public:
  TransportError(Error code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Error code() const { return code_; }  // kNone: not a protocol error (NDK failure, timeout)

 private:
  Error code_;
};

class Transport {
 public:
  // Initiator: connects to `peer`, negotiates. Throws TransportError.
  static std::unique_ptr<Transport> connect(tools::Adapter& a, const tools::SockAddr& local,
                                            const tools::SockAddr& peer,
                                            const TransportConfig& cfg);
  // Responder: accepts a connection request from a tools::Listener and
  // negotiates. A request without 0x0100 gets the STATUS_NOT_SUPPORTED
  // response, then the connection ends (TransportError kNoCommonVersion).
  static std::unique_ptr<Transport> accept(tools::Adapter& a, std::unique_ptr<tools::Connection> in,
                                           const TransportConfig& cfg);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // Sends one upper-layer message (fragmented as needed). With
  // `invalidate_token` set, its last segment is a Send with Invalidate of
  // that token (SMB2 READ/WRITE answer for an RDMA_V1_INVALIDATE channel).
  void send(std::span<const uint8_t> message, const uint32_t* invalidate_token = nullptr);
  // A message built in place, in its registered send slot (no copy): waits
  // for a send credit and a free slot like send(), and returns the slot's
  // payload area (send_capacity() bytes, never less than 128 - 24). Fill a
  // prefix, then commit_send() it (one segment) or abandon_send() it; until
  // then the slot and the credit are reserved and nothing else may send.
  // A message that does not fit in one segment goes through send().
  std::span<uint8_t> begin_send();
  void commit_send(size_t length, const uint32_t* invalidate_token = nullptr);
  void abandon_send();
  // Upper-layer bytes one segment carries (what begin_send() offers).
  uint32_t send_capacity() const;
  // The next whole upper-layer message; false when `deadline` passed first.
  // `invalidated` (optional) gets the token the peer invalidated with the
  // message's last segment (0: a plain Send).
  // *message is swapped with the transport's buffer, not reallocated: a
  // caller that passes the same vector each time (its capacity comes back
  // as the buffer of a later message) receives without a heap allocation.
  bool receive(std::vector<uint8_t>* message, tools::Deadline deadline,
               uint32_t* invalidated = nullptr);
  // Graceful end; idempotent. After a protocol error the transport already
  // disconnected.
  void disconnect();

  const Negotiated& negotiated() const { return neg_; }
  TransportStats stats() const;
  bool ended() const { return ended_; }
  const std::string& end_reason() const { return end_reason_; }
  // The peer went (its disconnect event came, or the transport ended on
  // it); waits up to `wait_s` for the event while the connection is ours.
  // For callers whose NDK request failed outside the transport (the RDMA
  // channel): a flush comes before the event that explains it.
  bool peer_gone(double wait_s = 0) const;
  uint16_t send_credits() const { return send_credits_; }
  uint16_t granted_outstanding() const { return granted_; }
  // RDMA Reads we may have in flight: our ORD, bounded by the peer's IRD
  // when its 6.1 header told us.
  uint32_t max_reads_in_flight() const {
    uint32_t n = neg_.ord ? neg_.ord : 1;
    if (neg_.peer_sent_ird_ord && neg_.peer_ird_ord.ird < n) n = neg_.peer_ird_ord.ird;
    return n;
  }

  // The bound of every wait for the peer (TransportConfig::timeout_s, the
  // user's --timeout): the RDMA channel's waits use it too.
  double timeout_s() const { return cfg_.timeout_s; }
  double transfer_timeout_s() const { return cfg_.transfer_timeout_s; }

  // For the RDMA channel (same PD and QP; completions of its requests come
  // to the same CQ, with contexts the channel registered via on_other()).
  tools::Adapter& adapter() { return a_; }
  tools::Pd& pd() { return *pd_; }
  tools::Qp& qp() { return *qp_; }
  // The NDK connection under the transport (path and TCP queries); null
  // before the connection exists.
  const tools::Connection* connection() const { return conn_.get(); }
  // Polls until `done()` or the deadline; completions that are not the
  // transport's own go to `other` (RequestContext, status, type), which
  // returns whether the request was its own; those it does not claim go to
  // the registered handler. The peer's disconnect event ends the wait at
  // once (TransportError naming it), whatever the deadline.
  using OtherCompletion = bool (*)(void* arg, const NDK_RESULT_EX& r);
  bool poll_until(bool (*done)(void*), void* arg, OtherCompletion other, void* other_arg,
                  tools::Deadline deadline);
  // A handler for the completions of requests the transport does not own
  // that arrive whenever the CQ is polled, also inside send() and
  // receive(): the RDMA channel's Writes that a server does not wait for
  // before its response (the response Send is ordered after them by
  // RDMAP) complete while it waits for the next request. One handler at a
  // time (a second registration throws); null unregisters. A completion no
  // one claims is counted (stats().unclaimed_completions) and dropped.
  void set_completion_handler(OtherCompletion handler, void* arg);

 private:
  struct Slot;
  Transport(tools::Adapter& a, const TransportConfig& cfg);
  void setup_queues();
  void post_receive(uint32_t i);
  uint16_t grant_target() const;  // what the peer may hold: min(its request, our receives)
  uint16_t credits_to_grant() const;
  // Sends one message (header + payload) consuming a credit unless `negotiate`.
  void post_send(std::span<const uint8_t> bytes, const uint32_t* invalidate_token);
  // Posts send slot `i` (taken, filled with `length` bytes).
  void post_slot(uint32_t i, size_t length, const uint32_t* invalidate_token);
  uint32_t take_send_slot();
  // The credit and the slot of one segment (begin_send(), send_data_message()).
  uint8_t* reserve_segment();
  // Posts the reserved slot with its data header; the payload is already at
  // kDataOffset.
  void post_reserved(uint16_t flags, uint32_t payload_length, uint32_t remaining,
                     const uint32_t* invalidate_token);
  void send_data_message(uint16_t flags, std::span<const uint8_t> payload, uint32_t remaining,
                         const uint32_t* invalidate_token);
  void wait_for_credit(bool will_grant);
  // One pass over the CQ; returns the number of completions handled.
  unsigned poll_once(OtherCompletion other = nullptr, void* other_arg = nullptr);
  // One step of a poll loop: poll_once(); if it found nothing, the
  // backoff's wait, or once idle for long a sleep on the CQ's notification
  // (until `deadline`, and kIdleSlice at most, so that the loop's periodic
  // work still runs). Returns what poll_once() found.
  unsigned poll_or_wait(Backoff& b, tools::Deadline deadline, OtherCompletion other = nullptr,
                        void* other_arg = nullptr);
  void handle_receive(const NDK_RESULT_EX& r, uint32_t slot);
  void push_ready(uint32_t invalidated);  // the reassembled message, to the ring
  void service();                         // prompt grants, keepalive answers and the idle timer
  [[noreturn]] void fail(Error code, const std::string& why);
  // A send or receive completed with an error: fail() with the reason.
  [[noreturn]] void fail_request(const char* what, NTSTATUS status);
  void negotiate_as_initiator();
  void negotiate_as_responder();
  std::vector<uint8_t> wait_first_message(const char* what);

  tools::Adapter& a_;
  TransportConfig cfg_;
  OtherCompletion handler_ = nullptr;
  void* handler_arg_ = nullptr;
  Negotiated neg_;
  TransportStats stats_;
  std::unique_ptr<tools::Pd> pd_;
  std::unique_ptr<tools::Cq> cq_;
  std::unique_ptr<tools::Qp> qp_;
  std::unique_ptr<tools::Buffer> recv_buf_, send_buf_;
  std::unique_ptr<tools::Connection> conn_;  // declared after the QP: closed first
  uint32_t recv_slot_size_ = 0, send_slot_size_ = 0, send_slots_ = 0;
  std::vector<uint32_t> free_send_;
  uint16_t posted_ = 0;                 // receives posted
  uint16_t granted_ = 0;                // credits the peer holds (granted, not yet used)
  uint16_t send_credits_ = 0;           // credits we hold
  uint16_t receive_credit_target_ = 1;  // what the peer last asked for
  bool negotiated_ = false;
  bool response_owed_ = false;  // the peer set RESPONSE_REQUESTED
  bool ended_ = false;
  bool peer_gone_ = false;  // ended because the peer disconnected
  std::string end_reason_;
  // Whole messages not yet taken by receive(): a ring whose vectors keep
  // their capacity (no allocation per message; see receive()).
  struct Ready {
    std::vector<uint8_t> message;
    uint32_t invalidated = 0;
  };
  std::vector<Ready> ready_;
  size_t ready_head_ = 0, ready_count_ = 0;
  int64_t reserved_slot_ = -1;  // begin_send()'s, until commit_send()/abandon_send()
  std::vector<uint8_t> first_;  // the negotiate message, before negotiation
  bool first_seen_ = false;
  Reassembler reasm_;
  std::chrono::steady_clock::time_point last_rx_;
  bool keepalive_pending_ = false;
  std::chrono::steady_clock::time_point keepalive_sent_;
  Pace pace_;             // what the poll loops learned of the peer's answer times
  uint64_t answers_ = 0;  // completions that came from the peer (not our Sends')
};

}  // namespace smbd
