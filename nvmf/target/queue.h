// SPDX-License-Identifier: Apache-2.0
// queue.h - one NVMe/RDMA queue: a connected QP with its receive buffers
// (one capsule each), its command slots (a pre-registered data buffer and a
// response buffer each) and the thread that serves it.
#pragma once

#include <memory>

#include "ndkapp/handshake_gate.h"
#include "ndkapp/session.h"
#include "target/subsystem.h"

namespace nvmf::target {

// Takes an incoming connection request: checks its RDMA CM private data
// (an MPA reject carrying the NVMe/RDMA CM status if it is bad), accepts
// it and serves the queue until the host leaves, the controller ends or
// the target stops. Returns when the queue is torn down; never throws.
// `ticket` is the connection's place in the target's HandshakeGate: the
// handshake ends with the host's first capsule, which must come within
// `handshake_s` seconds (the connection is dropped otherwise); only then
// does the queue take a service slot.
void serve_connection(Subsystem& s, softndk::tools::Adapter& a,
                      std::unique_ptr<softndk::tools::Connection> conn,
                      const std::atomic<bool>& stopping,
                      softndk::tools::HandshakeGate::Ticket ticket, double handshake_s);

}  // namespace nvmf::target
