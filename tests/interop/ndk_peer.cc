// SPDX-License-Identifier: Apache-2.0
// ndk_peer - the interop suite's host-side driver on softndk's public C ABI
// (softndk/ndkpi.h, softndk.h, softndk.hpp only: what a consumer sees).
//
//   ndk_peer connect HOST:PORT [MPA options]   connect, report, disconnect
//   ndk_peer listen HOST:PORT [--reject-len N] accept (or reject) --count requests
//   ndk_peer rdma HOST:PORT --ops LIST --size S   connect, then drive the
//            ivx exchange (ivx_proto.h) as the active side against verbs_peer
//   ndk_peer serve HOST:PORT --size S [--count N] [--fr]  listen, serve as
//            passive side; --fr: the advertised buffer is a fast-registered MR
//            (NdkFastRegister), the kind NDK lets a peer invalidate remotely
//
// One JSON object per connection (connect/listen) or per op (rdma/serve) on
// stdout; the fields match mpa_peer's where they mean the same thing.
#include <thread>

#include "ndk_peer_endpoint.h"
#include "ndk_peer_rdma.h"

using namespace ndk_peer;

namespace {

// ---------------------------------------------------------------- connect
int do_connect(const Options& o) {
  Peer p(o, 4096);
  Json j;
  j.s("driver", "ndk_peer").s("role", "initiator").n("pd_len", static_cast<long long>(o.pd.size()));
  auto t0 = Clock::now();
  NTSTATUS s = p.open();
  if (s == STATUS_SUCCESS) s = p.create_qp();
  if (s != STATUS_SUCCESS) {
    j.s("status", status_name(s)).s("step", "setup").print();
    return 1;
  }
  s = p.connect(j);
  j.s("status", status_name(s)).n("ms", ms_since(t0));
  if (s != STATUS_SUCCESS) {
    j.print();
    return 1;
  }
  p.add_info(j, p.connector());
  std::this_thread::sleep_for(std::chrono::milliseconds(o.hold_ms));
  // FPDUs received while held: with a Read RTR toward rping (which sends
  // nothing of its own) a count >= 1 means the peer's zero-length Read
  // Response arrived before the disconnect (docs/compatibility.md, note 1).
  SOFTNDK_COUNTERS ctr{};
  if (SoftNdkQueryAdapterCounters(p.adapter(), &ctr) == STATUS_SUCCESS)
    j.n("rdma_in_frames", static_cast<long long>(ctr.RDMAInFrames));
  j.s("disconnect", p.disconnect());
  j.print();
  return 0;
}

// The listener's adapter is opened with the MPA options; each accepted
// connection gets its own QP and buffers on that adapter (a QP must belong
// to the adapter of the connector it is accepted on).
int do_listen(const Options& o) {
  Peer base(o, 4096);
  Json e;
  e.s("driver", "ndk_peer").s("role", "listener");
  NTSTATUS s = base.open();
  if (s != STATUS_SUCCESS) {
    e.s("status", status_name(s)).s("step", "open").print();
    return 1;
  }
  Incoming in;
  NDK_LISTENER* l = start_listener(base.adapter(), o, &in, e);
  if (!l) {
    e.print();
    return 1;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(o.timeout_ms);
  int rc = 0;
  for (unsigned i = 0; i < o.count; ++i) {
    NDK_CONNECTOR* c = in.wait(deadline);
    Json j;
    j.s("driver", "ndk_peer").s("role", "responder");
    if (!c) {
      j.s("status", "timeout").print();
      rc = 3;
      break;
    }
    auto t0 = Clock::now();
    SOFTNDK_CONNECTION_INFO ci{};
    if (SoftNdkQueryConnectionInfo(c, &ci) == STATUS_SUCCESS)
      j.n("req_rev", ci.MpaRevision).b("req_crc", ci.Crc).b("req_p2p", ci.PeerToPeer);
    uint8_t pd[512];
    ULONG len = sizeof pd, ird = 0, ord = 0;
    if (c->Dispatch->NdkGetConnectionData(c, &ird, &ord, pd, &len) == STATUS_SUCCESS)
      j.n("req_ird", ird).n("req_ord", ord).n("req_pd_len", len).s("req_pd", hex(pd, len));
    if (o.reject) {
      NTSTATUS rs = c->Dispatch->NdkReject(
          c, o.reject_pd.empty() ? nullptr : const_cast<uint8_t*>(o.reject_pd.data()),
          static_cast<ULONG>(o.reject_pd.size()));
      j.s("action", "reject").n("reject_pd_len", static_cast<long long>(o.reject_pd.size()));
      j.s("status", status_name(rs)).n("ms", ms_since(t0)).print();
      close_and_wait(c);
      if (rs != STATUS_SUCCESS) rc = 1;
      continue;
    }
    Peer cp(o, 4096, base.adapter());
    NTSTATUS as = cp.create_qp();
    if (as == STATUS_SUCCESS) as = cp.accept(c);
    j.s("action", "accept").s("status", status_name(as)).n("ms", ms_since(t0));
    if (as == STATUS_SUCCESS) {
      cp.add_info(j, c);
      std::this_thread::sleep_for(std::chrono::milliseconds(o.hold_ms));
      j.s("disconnect", cp.disconnect());
    } else {
      close_and_wait(c);
      rc = 1;
    }
    j.print();
  }
  close_and_wait(l);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  // rdma/serve take a few options of their own; the rest is peer_common's.
  std::vector<char*> args;
  RdmaOpts ro;
  std::string mode = argc > 1 ? argv[1] : "";
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ops" && i + 1 < argc) {
      std::string l = argv[++i];
      size_t pos = 0;
      while (pos <= l.size()) {
        size_t c = l.find(',', pos);
        if (c == std::string::npos) c = l.size();
        if (c > pos) ro.ops.push_back(l.substr(pos, c - pos));
        pos = c + 1;
      }
    } else if (a == "--fr") {
      ro.fr = true;
    } else if (a == "--size" && i + 1 < argc) {
      ro.size = std::strtoul(argv[++i], nullptr, 0);
    } else {
      args.push_back(argv[i]);
    }
  }
  bool data = mode == "rdma" || mode == "serve";
  if (data) args[1] = const_cast<char*>(mode == "rdma" ? "connect" : "listen");
  Options o = parse(static_cast<int>(args.size()), args.data());
  std::thread([ms = o.timeout_ms + 30000] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    std::fprintf(stderr, "ndk_peer: overall timeout\n");
    std::_Exit(3);
  }).detach();
  if (data) return do_rdma(o, ro, mode == "rdma");
  return o.mode == "connect" ? do_connect(o) : do_listen(o);
}