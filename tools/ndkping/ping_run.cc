// SPDX-License-Identifier: Apache-2.0
// ping_run.cc - ndkping's client role on the tools' session layer (the
// server is in ping_server.cc).
#include "ndkping/ping_run.h"

#include <cstring>
#include <iostream>

#include "ndkapp/net_util.h"
#include "ndkapp/session.h"
#include "ndkapp/softndk_entry.h"
#include "ndkapp/status.h"
#include "ndkapp/watchdog.h"
#include "ndkping/ping_endpoint.h"
#include "ndkping/ping_output.h"
#include "ndkping/rping_msg.h"

namespace softndk::ndkping {

using tools::ToolError;

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
    ep.attach(*conn);
    debug(o, out, "ESTABLISHED");

    char start = kFirstChar;
    int rc = kExitOk;
    for (uint64_t ping = 0; o.count == 0 || ping < o.count; ++ping) {
      tools::watchdog_kick();
      tools::watchdog_phase("ping " + std::to_string(ping));
      auto gone = [&] {
        return ToolError(with_cause("server disconnected in ping " + std::to_string(ping), ep));
      };
      start = format_ping(ep.start().data(), o.size, ping, start);
      // 1. advertise the source buffer; the server reads it and says go.
      ep.post_send_info(
          {ep.start().va(), ep.start().remote_token(), static_cast<uint32_t>(o.size)});
      if (ep.wait(kRecv, o.timeout) < 0) throw gone();
      ep.post_recv();
      debug(o, out, "received go-ahead after the RDMA Read");
      // 2. advertise the sink; the server writes it and says done.
      ep.post_send_info({ep.rdma().va(), ep.rdma().remote_token(), static_cast<uint32_t>(o.size)});
      if (ep.wait(kRecv, o.timeout) < 0) throw gone();
      ep.post_recv();
      if (o.validate && std::memcmp(ep.start().data(), ep.rdma().data(), o.size) != 0) {
        err << "ndkping: data mismatch in ping " << ping << "\n";
        rc = kExitFailed;
        break;
      }
      if (o.verbose) line(out, "ping data: " + ping_text(ep.rdma().data(), o.size));
      // After the first exchange the library knows the path the data takes.
      if (ping == 0 && o.debug) debug(o, out, "data path: " + conn->path_text());
    }
    // A Terminate either way after the last ping still means the session
    // did not end cleanly.
    std::string cause = ep.end_cause();
    tools::watchdog_phase("disconnecting");
    conn->disconnect();
    debug(o, out, "DISCONNECTED");
    conn.reset();
    if (rc == kExitOk && !cause.empty()) {
      err << "ndkping: connection ended: " << cause << "\n";
      rc = kExitFailed;
    }
    return rc;
  } catch (const tools::PeerSilentError& e) {
    err << "ndkping: " << e.what() << "\n";
    return kExitPeerSilent;
  } catch (const std::exception& e) {
    err << "ndkping: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace softndk::ndkping
