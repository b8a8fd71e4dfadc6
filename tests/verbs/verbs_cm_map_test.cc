// SPDX-License-Identifier: Apache-2.0
// verbs_cm_map_test.cc - rdma_cm events translated to NDK outcomes
// (src/verbs/verbs_map.h translate_cm_event) without an RDMA device: both
// sides, disconnects, the errno table and the read limits per transport.
#include <gtest/gtest.h>

#include <cerrno>
#include <utility>

#include "verbs/verbs_map.h"

namespace softndk::verbs {
namespace {

TEST(CmEvents, ActiveSide) {
  auto t = translate_cm_event;
  EXPECT_EQ(t(RDMA_CM_EVENT_ADDR_RESOLVED, 0, CmPhase::kResolvingAddr).action,
            CmAction::kNextResolveRoute);
  EXPECT_EQ(t(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, CmPhase::kResolvingRoute).action,
            CmAction::kNextConnect);
  CmOutcome o = t(RDMA_CM_EVENT_ESTABLISHED, 0, CmPhase::kConnecting);
  EXPECT_EQ(o.action, CmAction::kComplete);
  EXPECT_EQ(o.status, STATUS_SUCCESS);
  EXPECT_EQ(t(RDMA_CM_EVENT_REJECTED, 28, CmPhase::kConnecting).status, STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(t(RDMA_CM_EVENT_REJECTED, -ECONNREFUSED, CmPhase::kConnecting).status,
            STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(t(RDMA_CM_EVENT_ADDR_ERROR, -ENETUNREACH, CmPhase::kResolvingAddr).status,
            STATUS_NETWORK_UNREACHABLE);
  EXPECT_EQ(t(RDMA_CM_EVENT_ADDR_ERROR, -ENODEV, CmPhase::kResolvingAddr).status,
            STATUS_HOST_UNREACHABLE);
  EXPECT_EQ(t(RDMA_CM_EVENT_ROUTE_ERROR, -ETIMEDOUT, CmPhase::kResolvingRoute).status,
            STATUS_IO_TIMEOUT);
  EXPECT_EQ(t(RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, CmPhase::kConnecting).status,
            STATUS_IO_TIMEOUT);
  EXPECT_EQ(t(RDMA_CM_EVENT_CONNECT_ERROR, -ECONNRESET, CmPhase::kConnecting).status,
            STATUS_CONNECTION_RESET);
  // Events that do not belong to the phase are not completions.
  EXPECT_EQ(t(RDMA_CM_EVENT_ADDR_RESOLVED, 0, CmPhase::kEstablished).action, CmAction::kIgnore);
  EXPECT_EQ(t(RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, CmPhase::kEstablished).action, CmAction::kIgnore);
}

TEST(CmEvents, PassiveSideAndDisconnect) {
  auto t = translate_cm_event;
  EXPECT_EQ(t(RDMA_CM_EVENT_CONNECT_REQUEST, 0, CmPhase::kEstablished).action, CmAction::kIncoming);
  EXPECT_EQ(t(RDMA_CM_EVENT_ESTABLISHED, 0, CmPhase::kAccepting).status, STATUS_SUCCESS);
  EXPECT_EQ(t(RDMA_CM_EVENT_CONNECT_ERROR, -ETIMEDOUT, CmPhase::kAccepting).status,
            STATUS_CONNECTION_ABORTED);
  EXPECT_EQ(t(RDMA_CM_EVENT_DISCONNECTED, 0, CmPhase::kAccepting).status,
            STATUS_CONNECTION_ABORTED);
  CmOutcome o = t(RDMA_CM_EVENT_DISCONNECTED, 0, CmPhase::kEstablished);
  EXPECT_EQ(o.action, CmAction::kPeerDisconnected);
  EXPECT_EQ(o.status, STATUS_CONNECTION_DISCONNECTED);
  o = t(RDMA_CM_EVENT_DISCONNECTED, 0, CmPhase::kDisconnecting);
  EXPECT_EQ(o.action, CmAction::kComplete);
  EXPECT_EQ(o.status, STATUS_SUCCESS);
  EXPECT_EQ(t(RDMA_CM_EVENT_DEVICE_REMOVAL, 0, CmPhase::kEstablished).action,
            CmAction::kDeviceRemoved);
}

TEST(CmEvents, ErrnoTable) {
  EXPECT_EQ(status_of_errno(-EADDRINUSE, STATUS_INTERNAL_ERROR), STATUS_SHARING_VIOLATION);
  EXPECT_EQ(status_of_errno(-EADDRNOTAVAIL, STATUS_INTERNAL_ERROR), STATUS_INVALID_ADDRESS);
  EXPECT_EQ(status_of_errno(-ENOMEM, STATUS_INTERNAL_ERROR), STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(status_of_errno(-EPROTO, STATUS_INTERNAL_ERROR), STATUS_INTERNAL_ERROR);
}

// Which rdma_conn_param field holds which read limit, per transport and
// event (connector_tests ConnTest.ReadLimits* on siw0 and rxe0 showed it).
TEST(CmEvents, ReadLimitsPerTransport) {
  // A peer with IRD 3 and ORD 5. IB, request or ESTABLISHED (REP), and an
  // iWARP request: the receiver's view, initiator_depth = the peer's IRD.
  for (auto [iwarp, request] : {std::pair{false, true}, {false, false}, {true, true}}) {
    CmReadLimits r = cm_read_limits(iwarp, request, 3, 5);
    EXPECT_EQ(r.outbound, 3) << iwarp << request;
    EXPECT_EQ(r.inbound, 5) << iwarp << request;
  }
  // iWARP ESTABLISHED: the device's ird (the peer's ORD) in
  // initiator_depth, its ord (the peer's IRD) in responder_resources.
  CmReadLimits iw = cm_read_limits(true, false, 5, 3);
  EXPECT_EQ(iw.outbound, 3);
  EXPECT_EQ(iw.inbound, 5);
  // Lowered to the peer's, never raised; a peer's 0 means no reads.
  EXPECT_EQ(effective_read_limit(128, 3), 3);
  EXPECT_EQ(effective_read_limit(2, 16), 2);
  EXPECT_EQ(effective_read_limit(128, 0), 0);
}

}  // namespace
}  // namespace softndk::verbs
