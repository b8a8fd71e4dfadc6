// SPDX-License-Identifier: Apache-2.0
// ping_run.h - ndkping's client and server over softndk, speaking rping's
// exchange (docs/ndkping.md, shared/interop/README.md "rping exchange"):
//   client Send(source adv) -> server RDMA Read of it -> server Send(go
//   ahead) -> client Send(sink adv) -> server RDMA Write into it -> server
//   Send(go ahead); repeated -C times; then the client disconnects.
// IRD/ORD 1/1 and no ULP private data, as rping.
#pragma once

#include <iosfwd>

#include "ndkping/ping_options.h"

namespace softndk::ndkping {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // connection, peer, timeout or data mismatch
inline constexpr int kExitUsage = 2;
inline constexpr int kExitHung = 3;        // the watchdog fired
inline constexpr int kExitPeerSilent = 4;  // the peer accepted, then never sent a byte

int run_ping_client(const PingOptions& o, std::ostream& out, std::ostream& err);
int run_ping_server(const PingOptions& o, std::ostream& out, std::ostream& err);

}  // namespace softndk::ndkping
