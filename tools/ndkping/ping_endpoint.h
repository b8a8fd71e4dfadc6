// SPDX-License-Identifier: Apache-2.0
// ping_endpoint.h - one rping endpoint on the tools' session layer: CQ, QP
// and the four buffers rping has (recv_buf, send_buf, rdma_buf, start_buf),
// plus a completion wait that tolerates the Send completions it is not
// waiting for and wakes at once when the peer disconnects.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "ndkapp/session.h"
#include "ndkping/rping_msg.h"

namespace softndk::ndkping {

enum Ctx : uintptr_t { kRecv = 1, kSend = 2, kRead = 3, kWrite = 4 };

class Endpoint {
 public:
  Endpoint(tools::Adapter& a, size_t rdma_size, bool client);

  tools::Qp& qp() { return qp_; }
  tools::Buffer& rdma() { return rdma_; }
  tools::Buffer& start() { return start_; }
  tools::Buffer& recv() { return recv_; }

  // The connection this endpoint's QP is (about to be) connected through:
  // its disconnect event interrupts wait(). The connection must be
  // destroyed before the endpoint.
  void attach(tools::Connection& c);
  // The peer's disconnect event came (graceful or a reset).
  bool peer_disconnected() const { return conn_ != nullptr && conn_->peer_disconnected(); }

  void post_recv();
  void post_send_info(const RpingInfo& info);
  void check(NTSTATUS st, const char* what);

  // Waits for the completion of kind `want`. Returns its byte count, or -1
  // if the connection went away (a flushed request, or the disconnect
  // event); ended_text() then says how.
  long wait(Ctx want, double timeout_s);

  // Why the connection ended, for an error line: empty for a graceful
  // disconnect by the peer; otherwise the Terminate sent or received, the
  // reset, or the flush (connection end_cause, then what wait() saw).
  std::string end_cause() const;

 private:
  tools::Pd pd_;
  tools::Cq cq_;
  tools::Buffer recv_, send_, rdma_, start_;
  tools::Qp qp_;
  tools::Connection* conn_ = nullptr;
  std::vector<NDK_RESULT> pending_;
  NTSTATUS flushed_ = STATUS_SUCCESS;  // the first failed completion's status
};

// `what` plus the connection's end cause when there is one:
// "client disconnected during the read: sent a Terminate: ...".
std::string with_cause(const std::string& what, const Endpoint& ep);

}  // namespace softndk::ndkping
