// SPDX-License-Identifier: Apache-2.0
// ping_server.cc - ndkping's server role: one client (rping's default), or
// with -P every client, each on a worker thread of a bounded set.
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <memory>

#include "ndkapp/handshake_gate.h"
#include "ndkapp/net_util.h"
#include "ndkapp/session.h"
#include "ndkapp/softndk_entry.h"
#include "ndkapp/status.h"
#include "ndkapp/watchdog.h"
#include "ndkapp/workers.h"
#include "ndkping/ping_endpoint.h"
#include "ndkping/ping_output.h"
#include "ndkping/ping_run.h"
#include "ndkping/rping_msg.h"

namespace softndk::ndkping {

using tools::deadline_in;
using tools::ToolError;

namespace {

// Serves one connected client until it disconnects. Returns normally only
// for a clean end: the client disconnected gracefully between pings, after
// the -C count when there is one. Throws with the cause otherwise.
// With -P, `ticket` is the connection's place in the server's
// HandshakeGate: a handshake until the client's first message, a service
// slot from then on.
void serve_one(const PingOptions& o, tools::Adapter& adapter,
               std::unique_ptr<tools::Connection> client, std::ostream& out,
               tools::HandshakeGate::Ticket* ticket = nullptr) {
  // rping's server buffer is its own -S; accept any rping client (< 64 KiB)
  // without one.
  size_t bufsize = std::max<size_t>(o.size, 65536);
  Endpoint ep(adapter, bufsize, false);
  // Declared after the endpoint so it is closed first: the connector is the
  // QP's successor, and the QP's close waits for it (NDKPI lifetime rules).
  std::unique_ptr<tools::Connection> conn = std::move(client);
  ep.attach(*conn);
  std::string who = conn->peer_address().to_string();
  conn->accept(ep.qp(), 1, 1, {});
  // Without peer-to-peer MPA the Accept completes on the MPA exchange
  // alone: the handshake ends with the client's first message (below).
  debug(o, out, "accepted client " + who);
  auto gone = [&](const std::string& when) {
    return ToolError(with_cause("client " + who + " disconnected " + when, ep));
  };
  uint64_t pings = 0;
  for (;; ++pings) {
    // Between pings the client may end the session.
    long n = ep.wait(kRecv, o.timeout);
    if (n < 0) break;
    if (pings == 0 && ticket != nullptr) {
      // The handshake is done: only now does the client take a service slot.
      std::string why;
      if (!ticket->serve(&why)) throw ToolError(why);
    }
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
    if (ep.wait(kRead, o.timeout) < 0) throw gone("during the read");
    if (o.verbose) line(out, "server ping data: " + ping_text(ep.rdma().data(), src->size));
    ep.post_send_info({});  // go ahead: 16 zero bytes, as rping
    n = ep.wait(kRecv, o.timeout);
    if (n < 0) throw gone("before advertising its sink");
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
    if (ep.wait(kWrite, o.timeout) < 0) throw gone("during the write");
    ep.post_send_info({});  // done: the client checks its sink and pings again
    if (pings == 0 && o.debug) debug(o, out, "client " + who + " data path: " + conn->path_text());
  }
  // The session ended between pings: clean only for a graceful disconnect
  // (no Terminate either way, no reset, no flush of its own) after the
  // agreed count.
  std::string cause = ep.end_cause();
  if (!cause.empty())
    throw ToolError((ep.peer_disconnected() ? "the client " + who + " disconnected after "
                                            : "connection with " + who + " ended after ") +
                    std::to_string(pings) + " pings: " + cause);
  if (o.count != 0 && pings != o.count)
    throw ToolError("client " + who + " disconnected after " + std::to_string(pings) +
                    " pings; -C asked for " + std::to_string(o.count));
  debug(o, out, "client " + who + " DISCONNECTED");
}

// Serves clients until the process is killed (or the listener fails).
// Every failure is about one client: it is refused or dropped with one
// line on stderr, and the server goes on.
void serve_persistent(const PingOptions& o, tools::Adapter& adapter, tools::Listener& listener,
                      std::ostream& out, std::ostream& err) {
  // One worker per connection, whether in its handshake or served; the two
  // are counted (and bounded) apart.
  tools::Workers workers(o.max_clients + o.max_handshakes);
  tools::HandshakeGate gate({o.max_handshakes, o.max_clients, "clients", "--max-clients"});
  for (;;) {
    // Wake at least every second, so finished workers are joined while
    // no client comes.
    workers.reap();
    std::string who = "a client";
    try {
      auto conn = listener.next(deadline_in(1.0));
      if (!conn) continue;
      who = conn->peer_address().to_string();
      std::string why;
      auto admitted = gate.admit(&why);
      if (!admitted) {
        conn->reject({});
        line(err, "ndkping: refused client " + who + ": " + why);
        continue;
      }
      // The worker takes the connection and the ticket from these holders
      // when it starts; if it never starts, the connection is still here to
      // refuse and the ticket goes with the holder.
      auto holder = std::make_shared<std::unique_ptr<tools::Connection>>(std::move(conn));
      auto ticket = std::make_shared<tools::HandshakeGate::Ticket>(std::move(*admitted));
      auto started = workers.start(
          [&o, &adapter, &out, &err, holder, ticket, who] {
            try {
              tools::HandshakeGate::Ticket mine = std::move(*ticket);
              serve_one(o, adapter, std::move(*holder), out, &mine);
            } catch (const std::exception& ex) {
              line(err, std::string("ndkping: client ") + who + ": " + ex.what());
            } catch (...) {
              line(err, "ndkping: client " + who + ": unknown failure");
            }
          },
          &why);
      if (started == tools::Workers::Start::kStarted) continue;
      ticket->release();  // the worker never ran
      if (started == tools::Workers::Start::kFull)
        why = "already serving " + std::to_string(workers.cap()) + " clients (--max-clients)";
      if (*holder) (*holder)->reject({});
      holder->reset();
      line(err, "ndkping: refused client " + who + ": " + why);
    } catch (const std::exception& ex) {
      // Out of memory or a library failure while taking the request: that
      // client is lost (its connector closed, which refuses it).
      try {
        line(err, "ndkping: refused client " + who + ": " + ex.what());
      } catch (...) {
      }
    }
  }
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
    if (o.persistent) {
      // glibc gives a new thread its own malloc arena, 64 MiB of address
      // space each, up to 8 per core: hundreds of MiB, growing in steps as
      // clients overlap, for workers that need ~1.5 MiB. Two arenas keep
      // the server's size flat and predictable (under prlimit --as too).
      mallopt(M_ARENA_MAX, 2);
      serve_persistent(o, adapter, listener, out, err);
    }
    auto conn = listener.next(deadline_in(365.0 * 86400));
    if (!conn) throw ToolError("no client came");
    serve_one(o, adapter, std::move(conn), out);
    tools::watchdog_arm(o.timeout * 3 + 20, "ndkping", kExitHung);
    tools::watchdog_phase("closing");
    return kExitOk;
  } catch (const std::exception& e) {
    err << "ndkping: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace softndk::ndkping
