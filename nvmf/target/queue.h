// SPDX-License-Identifier: Apache-2.0
// queue.h - one NVMe/RDMA queue: a connected QP with its receive buffers
// (one capsule each), its command slots (a pre-registered data buffer and a
// response buffer each) and the thread that serves it.
#pragma once

#include <memory>

#include "ndkapp/session.h"
#include "target/subsystem.h"

namespace nvmf::target {

// Takes an incoming connection request: checks its RDMA CM private data
// (an MPA reject carrying the NVMe/RDMA CM status if it is bad), accepts
// it and serves the queue until the host leaves, the controller ends or
// the target stops. Returns when the queue is torn down; never throws.
void serve_connection(Subsystem& s, softndk::tools::Adapter& a,
                      std::unique_ptr<softndk::tools::Connection> conn,
                      const std::atomic<bool>& stopping);

}  // namespace nvmf::target
