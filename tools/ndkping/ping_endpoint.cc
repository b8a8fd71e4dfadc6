// SPDX-License-Identifier: Apache-2.0
// ping_endpoint.cc - the rping endpoint and its completion wait.
#include "ndkping/ping_endpoint.h"

#include <algorithm>

#include "ndkapp/status.h"

namespace softndk::ndkping {

using tools::Deadline;
using tools::deadline_in;
using tools::ToolError;

Endpoint::Endpoint(tools::Adapter& a, size_t rdma_size, bool client)
    : pd_(a),
      cq_(a, 16),
      recv_(a, pd_, kRpingInfoSize, NDK_MR_FLAG_ALLOW_LOCAL_WRITE),
      send_(a, pd_, kRpingInfoSize, NDK_MR_FLAG_ALLOW_LOCAL_WRITE),
      // The client's sink is written remotely; the server's is a read sink
      // and the source of its Write.
      rdma_(a, pd_, rdma_size,
            client ? NDK_MR_FLAG_ALLOW_REMOTE_WRITE
                   : NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK),
      start_(a, pd_, client ? rdma_size : 1,
             client ? NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ
                    : NDK_MR_FLAG_ALLOW_LOCAL_WRITE),
      qp_(a, pd_, cq_, cq_, nullptr, tools::QpConfig{2, 4, 0}) {
  post_recv();
}

void Endpoint::attach(tools::Connection& c) {
  conn_ = &c;
  c.interrupt_on_disconnect(cq_);
}

void Endpoint::post_recv() {
  NDK_SGE s = recv_.sge(0, kRpingInfoSize);
  NTSTATUS st = qp_.receive(reinterpret_cast<void*>(kRecv), &s, 1);
  if (st != STATUS_SUCCESS) throw ToolError("post recv: " + tools::status_name(st));
}

void Endpoint::post_send_info(const RpingInfo& info) {
  encode_rping_info(info, send_.data());
  NDK_SGE s = send_.sge(0, kRpingInfoSize);
  check(qp_.send(reinterpret_cast<void*>(kSend), &s, 1, 0), "post send");
}

void Endpoint::check(NTSTATUS st, const char* what) {
  if (st == STATUS_SUCCESS) return;
  if (conn_ && conn_->peer_disconnected()) throw ToolError(with_cause("peer disconnected", *this));
  throw ToolError(std::string(what) + ": " + tools::status_name(st));
}

long Endpoint::wait(Ctx want, double timeout_s) {
  // Completions an earlier wait polled but did not need come first.
  for (size_t i = 0; i < pending_.size(); ++i) {
    NDK_RESULT r = pending_[i];
    auto kind = static_cast<Ctx>(reinterpret_cast<uintptr_t>(r.RequestContext));
    if (kind != want) continue;
    pending_.erase(pending_.begin() + static_cast<long>(i));
    if (r.Status != STATUS_SUCCESS) {
      if (flushed_ == STATUS_SUCCESS) flushed_ = r.Status;
      return -1;
    }
    return static_cast<long>(r.BytesTransferred);
  }
  Deadline dl = deadline_in(timeout_s);
  for (;;) {
    NDK_RESULT r[8];
    // The disconnect event interrupts the CQ (attach), so this sleeps until
    // a completion, the peer's disconnect or the deadline. The peer's last
    // message completes before its disconnect is reported; an interrupted
    // wait has looked at the CQ once more before returning 0.
    ULONG n = cq_.wait(r, 8, /*events=*/true, dl);
    for (ULONG i = 0; i < n; ++i) {
      auto kind = static_cast<Ctx>(reinterpret_cast<uintptr_t>(r[i].RequestContext));
      if (r[i].Status != STATUS_SUCCESS) {
        if (flushed_ == STATUS_SUCCESS) flushed_ = r[i].Status;
        if (r[i].Status == STATUS_CANCELLED || (conn_ && conn_->peer_disconnected())) return -1;
        throw ToolError(with_cause(std::string(kind == kRecv    ? "recv"
                                               : kind == kRead  ? "RDMA Read"
                                               : kind == kWrite ? "RDMA Write"
                                                                : "send") +
                                       " completed with " + tools::status_name(r[i].Status),
                                   *this));
      }
      if (kind == want) {
        // Keep the rest of the batch for later waits (Send completions
        // are never waited for; failed ones would show as flushed
        // receives too).
        for (ULONG k = i + 1; k < n; ++k)
          if (reinterpret_cast<uintptr_t>(r[k].RequestContext) != kSend) pending_.push_back(r[k]);
        return static_cast<long>(r[i].BytesTransferred);
      }
    }
    // Kinds we were not waiting for (Send completions) need no action;
    // they are dropped here (only the batch's tail after a match is kept).
    if (n == 0) {
      if (conn_ && conn_->peer_disconnected()) return -1;
      if (tools::Clock::now() >= dl) {
        tools::throw_if_silent("timed out waiting for the peer", conn_);
        throw ToolError("timed out waiting for the peer");
      }
    }
  }
}

std::string Endpoint::end_cause() const {
  // A flush may come before the disconnect event that tells a reset from a
  // graceful close: give the event a moment.
  if (conn_ && flushed_ != STATUS_SUCCESS) conn_->wait_disconnected(1.0);
  std::string c = conn_ ? conn_->end_cause() : "";
  if (!c.empty()) return c;
  // No Terminate and no reset, but requests failed without the peer's
  // disconnect: the connection broke on this side.
  if (flushed_ != STATUS_SUCCESS && !(conn_ && conn_->peer_disconnected()))
    return "requests flushed (" + tools::status_name(flushed_) + ") without a disconnect";
  return "";
}

std::string with_cause(const std::string& what, const Endpoint& ep) {
  std::string c = ep.end_cause();
  return c.empty() ? what : what + ": " + c;
}

}  // namespace softndk::ndkping
