// SPDX-License-Identifier: Apache-2.0
// softndk-verbs-exercise - the NDK -> verbs translation (verbs_map.h) run
// on a real RDMA device (issue 30): one process, two RC endpoints over
// rdma_cm on ADDRESS (a loopback connection through the device), every
// work request built by build_send()/build_recv() and every completion
// read back through result_of(), with the data verified. On devices with
// type-2 memory windows it also proves the fast-register strategy: a window
// bound over an arena MR, invalidated (by the peer's Send with Invalidate,
// by a Read with local invalidate) and re-bound with the SAME rkey, the peer
// writing through that unchanged token each time. One JSON object per line
// on stdout ({"op", "ok", "detail"}); exit 0 when every step passed.
//
//   softndk-verbs-exercise ADDRESS [PORT]
// This is a test program: it blocks on rdma_cm events (the backend never
// does), and every wait is bounded.
#include <arpa/inet.h>
#include <fcntl.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "verbs/device_probe.h"
#include "verbs/exercise_rig.h"
#include "verbs/exercise_steps.h"

using namespace softndk::verbs;
using namespace softndk::verbs::exercise;

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    std::fprintf(
        stderr,
        "usage: softndk-verbs-exercise ADDRESS [PORT [CALLER_DATA_LEN [CALLEE_DATA_LEN]]]\n");
    return 64;
  }
  const std::string addr = argv[1];
  const uint16_t port = static_cast<uint16_t>(argc >= 3 ? std::atoi(argv[2]) : 7190);
  // Optional: the private data length to connect with (default: the
  // transport's limit, private_data_limits()).
  const int pd_override = argc >= 4 ? std::atoi(argv[3]) : -1;
  const int callee_override = argc >= 5 ? std::atoi(argv[4]) : -1;

  ProbeResult pr = probe_device(addr);
  if (pr.status != STATUS_SUCCESS) {
    report("probe", false, pr.error);
    return 1;
  }
  const Transport tr = pr.facts.transport;
  const FrStrategy fr = choose_fr_strategy(pr.attr, pr.facts, false);
  NDK_ADAPTER_INFO info = adapter_info(pr.attr, pr.port, pr.facts, NDK_VERSION{2, 1}, 16384);
  QpLimits lim;
  lim.send_sge = std::min<uint32_t>(info.MaxInitiatorRequestSge, 4);
  lim.recv_sge = std::min<uint32_t>(info.MaxReceiveRequestSge, 4);
  lim.read_sge = std::min<uint32_t>(info.MaxReadRequestSge, 4);
  lim.max_inline = std::min<uint32_t>(info.MaxInlineDataSize, 64);
  lim.max_transfer = info.MaxTransferLength;
  lim.local_inv = fr == FrStrategy::kType2Window;
  report("probe", true,
         pr.device.name + " " + transport_name(tr) + " fr=" + fr_strategy_name(fr) +
             " inline=" + std::to_string(lim.max_inline));

  sockaddr_storage ss{};
  auto* in4 = reinterpret_cast<sockaddr_in*>(&ss);
  in4->sin_family = AF_INET;
  in4->sin_port = htons(port);
  if (inet_pton(AF_INET, addr.c_str(), &in4->sin_addr) != 1) {
    report("address", false, "IPv4 address expected");
    return 1;
  }
  rdma_event_channel* sch = rdma_create_event_channel();
  rdma_event_channel* cch = rdma_create_event_channel();
  if (sch == nullptr || cch == nullptr) {
    report("event_channel", false, strerror(errno));
    return 1;
  }
  for (rdma_event_channel* c : {sch, cch})
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
  Side srv, cli;
  srv.abi = cli.abi = wc_flags_abi(pr.facts);
  rdma_cm_id* listen_id = nullptr;
  std::string why;
  rdma_cm_event* ev = nullptr;
  bool ok = rdma_create_id(sch, &listen_id, nullptr, RDMA_PS_TCP) == 0 &&
            rdma_bind_addr(listen_id, reinterpret_cast<sockaddr*>(&ss)) == 0 &&
            rdma_listen(listen_id, 4) == 0 &&
            rdma_create_id(cch, &cli.id, nullptr, RDMA_PS_TCP) == 0;
  report("listen", ok, ok ? "" : strerror(errno));
  if (!ok) return 1;
  ok = rdma_resolve_addr(cli.id, nullptr, reinterpret_cast<sockaddr*>(&ss), 5000) == 0 &&
       next_event(cch, RDMA_CM_EVENT_ADDR_RESOLVED, &ev, &why);
  if (ok) rdma_ack_cm_event(ev);
  ok = ok && rdma_resolve_route(cli.id, 5000) == 0 &&
       next_event(cch, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev, &why);
  if (ok) rdma_ack_cm_event(ev);
  ok = ok && make_resources(&cli, lim);
  report("client_resources", ok, why);
  if (!ok) return 1;

  // Private data at the transport's limit (private_data_limits()).
  const PrivateDataLimits pdl = private_data_limits(tr);
  std::vector<uint8_t> caller(pd_override >= 0 ? static_cast<size_t>(pd_override) : pdl.caller),
      callee(callee_override >= 0 ? static_cast<size_t>(callee_override) : pdl.callee);
  for (size_t k = 0; k < caller.size(); ++k) caller[k] = static_cast<uint8_t>(0xa0 + k);
  for (size_t k = 0; k < callee.size(); ++k) callee[k] = static_cast<uint8_t>(0x50 + k);
  rdma_conn_param cp{};
  cp.private_data = caller.data();
  cp.private_data_len = static_cast<uint8_t>(caller.size());
  cp.responder_resources = 1;
  cp.initiator_depth = 1;
  cp.retry_count = 7;
  cp.rnr_retry_count = 7;
  ok = rdma_connect(cli.id, &cp) == 0;
  report("rdma_connect", ok,
         ok ? "private data " + std::to_string(caller.size()) : strerror(errno));
  if (!ok) return 1;
  ok = next_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, &why);
  if (ok) {
    srv.id = ev->id;
    const auto& c = ev->param.conn;
    CmOutcome o = translate_cm_event(ev->event, ev->status, CmPhase::kEstablished);
    bool pd_ok = c.private_data_len >= caller.size() &&
                 std::memcmp(c.private_data, caller.data(), caller.size()) == 0;
    report("connect_request", o.action == CmAction::kIncoming && pd_ok,
           "private data " + std::to_string(c.private_data_len) + " bytes" +
               (pd_ok ? " verified" : " differs") + ", initiator_depth " +
               std::to_string(c.initiator_depth));
    rdma_ack_cm_event(ev);
  } else {
    // What the active side saw instead (e.g. a refused private data length).
    rdma_cm_event* cev = nullptr;
    std::string cwhy;
    if (next_event(cch, RDMA_CM_EVENT_ESTABLISHED, &cev, &cwhy)) rdma_ack_cm_event(cev);
    report("connect_request", false, why + "; active side: " + cwhy);
    return 1;
  }
  // The passive side's QP takes its receives from an SRQ
  // (NdkCreateQpWithSrq); NdkModifySrq's threshold is the SRQ limit.
  ok = make_resources(&srv, lim, true);
  report("srq_qp", ok, ok ? "" : strerror(errno));
  // Receives before the accept, as NDK consumers post them.
  for (int k = 0; k < 8; ++k) ok = ok && post_recv(&srv, 0x80000 + k * 0x2000, 0x2000, lim);
  {
    // NdkModifySrq(threshold 6): IBV_SRQ_LIMIT. The event comes once fewer
    // than 6 receives remain, i.e. after the third consumed one.
    ibv_srq_attr sa{};
    sa.srq_limit = 6;
    bool armed = ok && ibv_modify_srq(srv.srq, &sa, IBV_SRQ_LIMIT) == 0;
    report("srq_arm", armed, armed ? "limit 6 of 8" : strerror(errno));
  }
  for (int k = 0; k < 4; ++k) ok = ok && post_recv(&cli, 0x80000 + k * 0x2000, 0x2000, lim);
  rdma_conn_param ap{};
  ap.private_data = callee.data();
  ap.private_data_len = static_cast<uint8_t>(callee.size());
  ap.responder_resources = 1;
  ap.initiator_depth = 1;
  ok = ok && rdma_accept(srv.id, &ap) == 0;
  report("rdma_accept", ok, ok ? "" : strerror(errno));
  if (!ok) return 1;
  ok = next_event(cch, RDMA_CM_EVENT_ESTABLISHED, &ev, &why);
  if (ok) {
    CmOutcome o = translate_cm_event(ev->event, ev->status, CmPhase::kConnecting);
    const auto& c = ev->param.conn;
    bool pd_ok = c.private_data_len >= callee.size() &&
                 std::memcmp(c.private_data, callee.data(), callee.size()) == 0;
    report("established_active", o.status == STATUS_SUCCESS && pd_ok,
           "callee private data " + std::to_string(c.private_data_len) +
               (pd_ok ? " verified" : " differs"));
    rdma_ack_cm_event(ev);
  } else {
    report("established_active", false, why);
    return 1;
  }
  ok = next_event(sch, RDMA_CM_EVENT_ESTABLISHED, &ev, &why);
  if (ok) rdma_ack_cm_event(ev);
  report("established_passive", ok, why);

  exercise_send(cli, srv, lim);
  exercise_deferred_chain(cli, srv, lim);
  exercise_read(cli, srv, lim);
  if (fr == FrStrategy::kType2Window) {
    exercise_fast_register(cli, srv, lim);
  } else {
    exercise_no_windows(cli, srv, lim);
  }
  exercise_srq_event_and_flush(cli, srv);
  rdma_disconnect(cli.id);
  why.clear();
  ok = next_event(sch, RDMA_CM_EVENT_DISCONNECTED, &ev, &why);
  if (ok) {
    CmOutcome o = translate_cm_event(ev->event, ev->status, CmPhase::kEstablished);
    ok = o.action == CmAction::kPeerDisconnected;
    rdma_ack_cm_event(ev);
  }
  report("peer_disconnected", ok, why);
  std::printf("{\"op\": \"summary\", \"ok\": %s, \"detail\": \"%d failed\"}\n",
              failure_count() == 0 ? "true" : "false", failure_count());
  return failure_count() == 0 ? 0 : 1;
}