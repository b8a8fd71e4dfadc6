// SPDX-License-Identifier: Apache-2.0
// ndk_peer_rdma.h - ndk_peer's data-path modes (rdma, serve): the ivx
// exchange (ivx_proto.h) against verbs_peer, as the active or the passive side.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "peer_common.h"

namespace ndk_peer {

struct RdmaOpts {
  std::vector<std::string> ops;
  size_t size = 65536;
  bool fr = false;  // advertise a fast-registered MR instead of a registered one
};

// rdma (active: connect, then run ro.ops) or serve (passive: listen and
// serve o.count connections one after another); 0 when every op passed.
int do_rdma(const interop::Options& o, const RdmaOpts& ro, bool active);

}  // namespace ndk_peer
