// ping_run.cc - ndkping's two roles on the tools' session layer.
#include "ndkping/ping_run.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <list>
#include <mutex>
#include <thread>

#include "common/net_util.h"
#include "common/session.h"
#include "common/softndk_entry.h"
#include "common/status.h"
#include "common/watchdog.h"
#include "ndkping/rping_msg.h"

namespace softndk::ndkping {

using tools::Deadline;
using tools::deadline_in;
using tools::ToolError;

namespace {

std::mutex g_out;  // one line at a time from concurrent server connections

void line(std::ostream& os, const std::string& s) {
  std::lock_guard lk(g_out);
  os << s << "\n";
  os.flush();
}

enum Ctx : uintptr_t { kRecv = 1, kSend = 2, kRead = 3, kWrite = 4 };

// One rping endpoint: CQ, QP and the four buffers rping has (recv_buf,
// send_buf, rdma_buf, start_buf), plus a completion wait that tolerates the
// Send completions it is not waiting for.
class Endpoint {
 public:
  Endpoint(tools::Adapter& a, size_t rdma_size, bool client)
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

  tools::Qp& qp() { return qp_; }
  tools::Buffer& rdma() { return rdma_; }
  tools::Buffer& start() { return start_; }
  tools::Buffer& recv() { return recv_; }
  tools::Connection* conn = nullptr;

  void post_recv() {
    NDK_SGE s = recv_.sge(0, kRpingInfoSize);
    NTSTATUS st = qp_.receive(reinterpret_cast<void*>(kRecv), &s, 1);
    if (st != STATUS_SUCCESS) throw ToolError("post recv: " + tools::status_name(st));
  }

  void post_send_info(const RpingInfo& info) {
    encode_rping_info(info, send_.data());
    NDK_SGE s = send_.sge(0, kRpingInfoSize);
    check(qp_.send(reinterpret_cast<void*>(kSend), &s, 1, 0), "post send");
  }

  void check(NTSTATUS st, const char* what) {
    if (st == STATUS_SUCCESS) return;
    if (conn && conn->peer_disconnected()) throw ToolError("peer disconnected");
    throw ToolError(std::string(what) + ": " + tools::status_name(st));
  }

  // Waits for the completion of kind `want`. Returns its byte count, or -1
  // if the connection went away (flushed receive, or disconnect event).
  long wait(Ctx want, double timeout_s) {
    // Completions an earlier wait polled but did not need come first.
    for (size_t i = 0; i < pending_.size(); ++i) {
      NDK_RESULT r = pending_[i];
      auto kind = static_cast<Ctx>(reinterpret_cast<uintptr_t>(r.RequestContext));
      if (kind != want) continue;
      pending_.erase(pending_.begin() + static_cast<long>(i));
      if (r.Status != STATUS_SUCCESS) return -1;
      return static_cast<long>(r.BytesTransferred);
    }
    Deadline dl = deadline_in(timeout_s);
    for (;;) {
      NDK_RESULT r[8];
      ULONG n = cq_.wait(r, 8, /*events=*/true, std::min(dl, deadline_in(0.2)));
      // The peer's last message completes before its disconnect is
      // reported, but both can land after the wait gave up: a peer seen
      // gone gets one more look at the CQ before the wait says so.
      if (n == 0 && conn && conn->peer_disconnected()) n = cq_.poll(r, 8);
      for (ULONG i = 0; i < n; ++i) {
        auto kind = static_cast<Ctx>(reinterpret_cast<uintptr_t>(r[i].RequestContext));
        if (r[i].Status != STATUS_SUCCESS) {
          if (r[i].Status == STATUS_CANCELLED || (conn && conn->peer_disconnected())) return -1;
          throw ToolError(std::string(kind == kRecv    ? "recv"
                                      : kind == kRead  ? "RDMA Read"
                                      : kind == kWrite ? "RDMA Write"
                                                       : "send") +
                          " completed with " + tools::status_name(r[i].Status));
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
        if (conn && conn->peer_disconnected()) return -1;
        if (tools::Clock::now() >= dl) throw ToolError("timed out waiting for the peer");
      }
    }
  }

 private:
  tools::Pd pd_;
  tools::Cq cq_;
  tools::Buffer recv_, send_, rdma_, start_;
  tools::Qp qp_;
  std::vector<NDK_RESULT> pending_;
};

std::string ping_text(const uint8_t* buf, size_t size) {
  size_t n = strnlen(reinterpret_cast<const char*>(buf), size);
  return std::string(reinterpret_cast<const char*>(buf), n);
}

void debug(const PingOptions& o, std::ostream& out, const std::string& s) {
  if (o.debug) line(out, s);
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

// ---------------------------------------------------------------------------
// Client

int run_ping_client(const PingOptions& o, std::ostream& out, std::ostream& err) {
  try {
    tools::SockAddr server, local;
    std::string e;
    if (!tools::resolve(o.address, o.port, server, e)) throw ToolError(e);
    if (!tools::local_address_toward(server, local, e)) throw ToolError(e);
    tools::watchdog_arm(o.timeout * 3 + 20, "ndkping", kExitHung);
    tools::watchdog_phase("connecting to " + server.to_string());
    tools::AdapterOptions ao;
    ao.name = local.ip();
    ao.timeout_s = o.timeout;
    tools::Adapter adapter(ao);
    debug(o, out, "opened adapter " + ao.name);
    Endpoint ep(adapter, o.size, true);
    debug(o, out,
          "rdma_buf " + hex(ep.rdma().va()) + " rkey " + hex(ep.rdma().remote_token()) +
              ", start_buf " + hex(ep.start().va()) + " rkey " + hex(ep.start().remote_token()));
    debug(o, out, "connecting to " + server.to_string());
    auto conn =
        tools::Connection::connect(adapter, ep.qp(), local, server, 1, 1, {}, nullptr, nullptr);
    ep.conn = conn.get();
    debug(o, out, "ESTABLISHED");

    char start = kFirstChar;
    int rc = kExitOk;
    for (uint64_t ping = 0; o.count == 0 || ping < o.count; ++ping) {
      tools::watchdog_kick();
      tools::watchdog_phase("ping " + std::to_string(ping));
      start = format_ping(ep.start().data(), o.size, ping, start);
      // 1. advertise the source buffer; the server reads it and says go.
      ep.post_send_info(
          {ep.start().va(), ep.start().remote_token(), static_cast<uint32_t>(o.size)});
      if (ep.wait(kRecv, o.timeout) < 0) throw ToolError("server disconnected");
      ep.post_recv();
      debug(o, out, "received go-ahead after the RDMA Read");
      // 2. advertise the sink; the server writes it and says done.
      ep.post_send_info({ep.rdma().va(), ep.rdma().remote_token(), static_cast<uint32_t>(o.size)});
      if (ep.wait(kRecv, o.timeout) < 0) throw ToolError("server disconnected");
      ep.post_recv();
      if (o.validate && std::memcmp(ep.start().data(), ep.rdma().data(), o.size) != 0) {
        err << "ndkping: data mismatch in ping " << ping << "\n";
        rc = kExitFailed;
        break;
      }
      if (o.verbose) line(out, "ping data: " + ping_text(ep.rdma().data(), o.size));
    }
    tools::watchdog_phase("disconnecting");
    conn->disconnect();
    debug(o, out, "DISCONNECTED");
    conn.reset();
    return rc;
  } catch (const std::exception& e) {
    err << "ndkping: " << e.what() << "\n";
    return kExitFailed;
  }
}

// ---------------------------------------------------------------------------
// Server

namespace {

// Serves one connected client until it disconnects; throws on errors.
void serve_one(const PingOptions& o, tools::Adapter& adapter,
               std::unique_ptr<tools::Connection> client, std::ostream& out) {
  // rping's server buffer is its own -S; accept any rping client (< 64 KiB)
  // without one.
  size_t bufsize = std::max<size_t>(o.size, 65536);
  Endpoint ep(adapter, bufsize, false);
  // Declared after the endpoint so it is closed first: the connector is the
  // QP's successor, and the QP's close waits for it (NDKPI lifetime rules).
  std::unique_ptr<tools::Connection> conn = std::move(client);
  ep.conn = conn.get();
  std::string who = conn->peer_address().to_string();
  conn->accept(ep.qp(), 1, 1, {});
  debug(o, out, "accepted client " + who);
  std::vector<uint8_t> zeros(kRpingInfoSize, 0);
  for (uint64_t ping = 0;; ++ping) {
    // Between pings the client may end the session: that is success.
    long n = ep.wait(kRecv, o.timeout);
    if (n < 0) break;
    auto src = decode_rping_info(ep.recv().data(), static_cast<size_t>(n));
    if (!src) throw ToolError("received bogus data, size " + std::to_string(n));
    ep.post_recv();
    if (src->size > bufsize)
      throw ToolError("client advertised " + std::to_string(src->size) +
                      " bytes; this server takes up to " + std::to_string(bufsize) + " (-S)");
    debug(o, out,
          "source adv: rkey " + hex(src->rkey) + " addr " + hex(src->buf) + " len " +
              std::to_string(src->size));
    NDK_SGE s = ep.rdma().sge(0, src->size);
    ep.check(ep.qp().read(reinterpret_cast<void*>(kRead), &s, 1, src->buf, src->rkey, 0),
             "post RDMA Read");
    if (ep.wait(kRead, o.timeout) < 0) throw ToolError("client disconnected during the read");
    if (o.verbose) line(out, "server ping data: " + ping_text(ep.rdma().data(), src->size));
    ep.post_send_info({});  // go ahead: 16 zero bytes, as rping
    n = ep.wait(kRecv, o.timeout);
    if (n < 0) throw ToolError("client disconnected before advertising its sink");
    auto sink = decode_rping_info(ep.recv().data(), static_cast<size_t>(n));
    if (!sink) throw ToolError("received bogus data, size " + std::to_string(n));
    ep.post_recv();
    debug(o, out,
          "sink adv: rkey " + hex(sink->rkey) + " addr " + hex(sink->buf) + " len " +
              std::to_string(sink->size));
    // rping writes strlen(rdma_buf) + 1 bytes, bounded by both buffers.
    size_t len =
        std::min<size_t>({strnlen(reinterpret_cast<const char*>(ep.rdma().data()), src->size) + 1,
                          src->size, sink->size});
    s = ep.rdma().sge(0, len);
    ep.check(ep.qp().write(reinterpret_cast<void*>(kWrite), &s, 1, sink->buf, sink->rkey, 0),
             "post RDMA Write");
    if (ep.wait(kWrite, o.timeout) < 0) throw ToolError("client disconnected during the write");
    ep.post_send_info({});  // done: the client checks its sink and pings again
  }
  debug(o, out, "client " + who + " DISCONNECTED");
}

}  // namespace

int run_ping_server(const PingOptions& o, std::ostream& out, std::ostream& err) {
  try {
    tools::SockAddr at;
    std::string e;
    std::string where = o.address.empty() ? tools::default_server_address() : o.address;
    if (!tools::address_of_device(where, o.port, at, e)) {
      if (!tools::resolve(where, o.port, at, e)) throw ToolError(e);
    }
    tools::AdapterOptions ao;
    ao.name = at.ip();
    ao.timeout_s = o.timeout;
    tools::Adapter adapter(ao);
    tools::Listener listener(adapter, at);
    debug(o, out, "listening on " + at.ip() + ":" + std::to_string(listener.port()));
    if (!o.persistent) {
      auto conn = listener.next(deadline_in(365.0 * 86400));
      if (!conn) throw ToolError("no client came");
      serve_one(o, adapter, std::move(conn), out);
      tools::watchdog_arm(o.timeout * 3 + 20, "ndkping", kExitHung);
      tools::watchdog_phase("closing");
      return kExitOk;
    }
    // Persistent: each client on its own thread, until the process is killed.
    std::list<std::thread> workers;
    for (;;) {
      auto conn = listener.next(deadline_in(365.0 * 86400));
      if (!conn) continue;
      workers.emplace_back([&o, &adapter, &out, &err, c = std::move(conn)]() mutable {
        try {
          serve_one(o, adapter, std::move(c), out);
        } catch (const std::exception& ex) {
          line(err, std::string("ndkping: client failed: ") + ex.what());
        }
      });
    }
  } catch (const std::exception& e) {
    err << "ndkping: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace softndk::ndkping
