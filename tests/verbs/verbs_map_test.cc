// SPDX-License-Identifier: Apache-2.0
// verbs_map_test.cc - the NDK <-> verbs translation (src/verbs/verbs_map.h)
// without an RDMA device, requests and completions: work requests built
// from NDK requests (build_send/build_recv), completions translated back
// (result_of) and the window states behind invalidation. The device facts
// are in verbs_device_map_test.cc, rdma_cm events in verbs_cm_map_test.cc.
#include "verbs/verbs_map.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace softndk::verbs {
namespace {

QpLimits lim() {
  QpLimits l;
  l.send_sge = 4;
  l.recv_sge = 4;
  l.read_sge = 1;
  l.max_inline = 64;
  l.max_transfer = 1u << 30;
  l.local_inv = true;
  return l;
}

NDK_SGE sge(uint64_t va, ULONG len, UINT32 token) {
  NDK_SGE s{};
  s.LogicalAddress.QuadPart = static_cast<int64_t>(va);
  s.Length = len;
  s.MemoryRegionToken = token;
  return s;
}

TEST(BuildSend, SendCarriesSgesAndIsSignaled) {
  NDK_SGE s[2] = {sge(0x1000, 100, 7), sge(0x3000, 28, 9)};
  SendRequest r;
  r.op = SendOp::kSend;
  r.sgl = s;
  r.nsge = 2;
  r.wr_id = 42;
  SendWqes w;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  ASSERT_EQ(w.count, 1u);
  EXPECT_EQ(w.wr[0].opcode, IBV_WR_SEND);
  EXPECT_EQ(w.wr[0].wr_id, 42u);
  EXPECT_EQ(w.wr[0].num_sge, 2);
  EXPECT_EQ(w.wr[0].sg_list, w.sge);
  EXPECT_EQ(w.sge[1].addr, 0x3000u);
  EXPECT_EQ(w.sge[1].length, 28u);
  EXPECT_EQ(w.sge[1].lkey, 9u);
  EXPECT_EQ(w.wr[0].send_flags, static_cast<unsigned>(IBV_SEND_SIGNALED));
  EXPECT_EQ(w.wr[0].next, nullptr);
  EXPECT_EQ(w.length, 128u);
  EXPECT_TRUE(w.signaled);
  EXPECT_FALSE(w.deferred);
}

TEST(BuildSend, FlagsMapToSendFlags) {
  NDK_SGE s = sge(0x1000, 8, 1);
  SendRequest r;
  r.sgl = &s;
  r.nsge = 1;
  r.flags = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
            NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER;
  SendWqes w;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[0].send_flags,
            static_cast<unsigned>(IBV_SEND_FENCE | IBV_SEND_SOLICITED | IBV_SEND_INLINE));
  EXPECT_FALSE(w.signaled);
  EXPECT_TRUE(w.deferred);
  EXPECT_EQ(w.sge[0].lkey, 0u);  // inline: the token is not used (NDKPI 2.3)
}

TEST(SignalPolicy, SilentSuccessesGoUnsignaledUpToHalfTheQueue) {
  // NDK send queue of 128: a run of silent requests is cut by a signaled
  // WQE every 64; a request that wants its completion is always signaled
  // and starts the count again.
  SignalPolicy p(128);
  EXPECT_EQ(p.every(), 64u);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 63; ++i) EXPECT_FALSE(p.signal(true)) << round << " " << i;
    EXPECT_TRUE(p.signal(true)) << round;
  }
  for (int i = 0; i < 40; ++i) EXPECT_FALSE(p.signal(true));
  EXPECT_TRUE(p.signal(false));  // a completion wanted: signaled, run reset
  for (int i = 0; i < 63; ++i) EXPECT_FALSE(p.signal(true));
  EXPECT_TRUE(p.signal(true));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(p.signal(false));
}

TEST(SignalPolicy, ConsumerSignalsOneInNAsPerftestsCqMod) {
  // ndkperf -Q 100 -t 128 (send queue 144: every 72): the consumer signals
  // every 100th; the policy adds one in between. Never more than 71 done
  // requests wait for a later completion.
  SignalPolicy p(144);
  unsigned signaled = 0, run = 0, longest = 0;
  for (unsigned i = 1; i <= 1000; ++i) {
    const bool s = p.signal(i % 100 != 0);
    run = s ? 0 : run + 1;
    longest = std::max(longest, run);
    signaled += s ? 1 : 0;
  }
  EXPECT_EQ(signaled, 20u);  // 10 by the consumer, 10 by the policy
  EXPECT_EQ(longest, 71u);
}

TEST(SignalPolicy, ShallowQueuesSignalEverything) {
  for (uint32_t depth : {0u, 1u, 2u, 3u}) {
    SignalPolicy p(depth);
    EXPECT_EQ(p.every(), 1u) << depth;
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(p.signal(true)) << depth;
  }
  SignalPolicy four(4);  // every 2nd of a silent run
  EXPECT_FALSE(four.signal(true));
  EXPECT_TRUE(four.signal(true));
  EXPECT_FALSE(four.signal(true));
  EXPECT_TRUE(four.signal(true));
}

TEST(BuildSend, SendAndInvalidateWriteRead) {
  NDK_SGE s = sge(0x1000, 512, 5);
  SendRequest r;
  r.sgl = &s;
  r.nsge = 1;
  r.op = SendOp::kSendAndInvalidate;
  r.remote_token = 0xabcd01;
  SendWqes w;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[0].opcode, IBV_WR_SEND_WITH_INV);
  EXPECT_EQ(w.wr[0].invalidate_rkey, 0xabcd01u);
  EXPECT_EQ(w.wr[0].wr.rdma.rkey, 0xabcd01u);  // where libsiw reads it
  r.op = SendOp::kWrite;
  r.remote_addr = 0x7f0000001000;
  r.remote_token = 0x1234;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[0].opcode, IBV_WR_RDMA_WRITE);
  EXPECT_EQ(w.wr[0].wr.rdma.remote_addr, 0x7f0000001000u);
  EXPECT_EQ(w.wr[0].wr.rdma.rkey, 0x1234u);
  r.op = SendOp::kRead;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[0].opcode, IBV_WR_RDMA_READ);
  EXPECT_EQ(w.count, 1u);
  EXPECT_EQ(w.length, 512u);
}

TEST(BuildSend, ReadWithLocalInvalidateIsReadThenFencedLocalInv) {
  NDK_SGE s = sge(0x1000, 4096, 0x3301);
  SendRequest r;
  r.op = SendOp::kRead;
  r.sgl = &s;
  r.nsge = 1;
  r.flags = NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE;
  r.remote_addr = 0x5000;
  r.remote_token = 0x77;
  r.local_token = 0x3301;
  r.wr_id = 9;
  SendWqes w;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  ASSERT_EQ(w.count, 2u);
  EXPECT_EQ(w.wr[0].next, &w.wr[1]);
  EXPECT_EQ(w.wr[1].next, nullptr);
  EXPECT_EQ(w.wr[0].opcode, IBV_WR_RDMA_READ);
  EXPECT_EQ(w.wr[0].send_flags & IBV_SEND_SIGNALED, 0u);  // one completion: the second
  EXPECT_EQ(w.wr[1].opcode, IBV_WR_LOCAL_INV);
  EXPECT_EQ(w.wr[1].invalidate_rkey, 0x3301u);
  EXPECT_EQ(w.wr[1].send_flags, static_cast<unsigned>(IBV_SEND_FENCE | IBV_SEND_SIGNALED));
  EXPECT_EQ(w.wr[1].wr_id, 9u);
  // Silent all the same: a Read is always signaled (siw completes the WQEs
  // behind a Read before its response lands, so no later CQE may retire it).
  r.flags |= NDK_OP_FLAG_SILENT_SUCCESS;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_TRUE(w.signaled);
  EXPECT_EQ(w.wr[1].send_flags, static_cast<unsigned>(IBV_SEND_FENCE | IBV_SEND_SIGNALED));
  r.flags = NDK_OP_FLAG_SILENT_SUCCESS;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  ASSERT_EQ(w.count, 1u);
  EXPECT_TRUE(w.signaled);
  EXPECT_NE(w.wr[0].send_flags & IBV_SEND_SIGNALED, 0u);
}

TEST(BuildSend, InvalidateIsLocalInvWithoutSges) {
  SendRequest r;
  r.op = SendOp::kInvalidate;
  r.local_token = 0x4402;
  r.flags = NDK_OP_FLAG_READ_FENCE;
  SendWqes w;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[0].opcode, IBV_WR_LOCAL_INV);
  EXPECT_EQ(w.wr[0].invalidate_rkey, 0x4402u);
  EXPECT_EQ(w.wr[0].num_sge, 0);
  EXPECT_EQ(w.wr[0].sg_list, nullptr);
  NDK_SGE s = sge(0x1000, 8, 1);
  r.sgl = &s;
  r.nsge = 1;
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_INVALID_PARAMETER);
}

// rxe replays a local operation that already ran when it retransmits from
// an earlier, unacknowledged request (local_ops_rerun_on_retry): seen as
// an NdkFastRegister completing with STATUS_INVALID_PARAMETER (the second
// bind of a bound window) under a multi-queue NVMe-oF load in the guest.
// There every local operation is fenced; elsewhere only on request.
TEST(BuildSend, LocalOperationsAreFencedOnDevicesThatReplayThem) {
  DeviceFacts rxe, siw, mlx5;
  rxe.driver = "rxe";
  siw.driver = "siw";
  mlx5.driver = "mlx5";
  EXPECT_TRUE(local_ops_rerun_on_retry(rxe));
  EXPECT_FALSE(local_ops_rerun_on_retry(siw));
  EXPECT_FALSE(local_ops_rerun_on_retry(mlx5));
  SendRequest r;
  r.op = SendOp::kInvalidate;
  r.local_token = 0x4402;
  SendWqes w;
  QpLimits l = lim();
  ASSERT_EQ(build_send(r, l, &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[0].send_flags & IBV_SEND_FENCE, 0u);
  l.fence_local_ops = true;
  ASSERT_EQ(build_send(r, l, &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[0].opcode, IBV_WR_LOCAL_INV);
  EXPECT_NE(w.wr[0].send_flags & IBV_SEND_FENCE, 0u);
  // Data requests are not fenced for it.
  NDK_SGE s = sge(0x1000, 8, 1);
  r.op = SendOp::kSend;
  r.sgl = &s;
  r.nsge = 1;
  ASSERT_EQ(build_send(r, l, &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[0].send_flags & IBV_SEND_FENCE, 0u);
  // A bind asked to fence is fenced without NDK_OP_FLAG_READ_FENCE.
  ibv_mw mw{};
  mw.rkey = 0x100;
  ibv_mr mr{};
  std::vector<uint8_t> mem(0x2000);
  mr.addr = mem.data();
  mr.length = mem.size();
  BindRequest b;
  b.mw = &mw;
  b.mr = &mr;
  b.rkey = mw.rkey;
  b.addr = reinterpret_cast<uintptr_t>(mem.data());
  b.length = 0x1000;
  b.flags = NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
  ibv_send_wr bw;
  ASSERT_EQ(build_bind(b, Transport::kRoce, &bw), STATUS_SUCCESS);
  EXPECT_EQ(bw.send_flags & IBV_SEND_FENCE, 0u);
  b.fence = true;
  ASSERT_EQ(build_bind(b, Transport::kRoce, &bw), STATUS_SUCCESS);
  EXPECT_NE(bw.send_flags & IBV_SEND_FENCE, 0u);
}

// siw and cxgb4 post no LOCAL_INV from user space.
TEST(BuildSend, InvalidationNeedsADeviceThatCanInvalidate) {
  QpLimits l = lim();
  l.local_inv = false;
  SendRequest r;
  r.op = SendOp::kInvalidate;
  r.local_token = 1;
  SendWqes w;
  EXPECT_EQ(build_send(r, l, &w), STATUS_NOT_SUPPORTED);
  NDK_SGE s = sge(0x1000, 8, 1);
  r.op = SendOp::kRead;
  r.sgl = &s;
  r.nsge = 1;
  r.flags = NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE;
  EXPECT_EQ(build_send(r, l, &w), STATUS_NOT_SUPPORTED);
  r.flags = 0;
  EXPECT_EQ(build_send(r, l, &w), STATUS_SUCCESS);
  r.op = SendOp::kSendAndInvalidate;  // the peer invalidates: no local support needed
  EXPECT_EQ(build_send(r, l, &w), STATUS_SUCCESS);
}

TEST(BuildSend, LimitsGiveTheSoftwareBackendsStatus) {
  NDK_SGE s[kMaxSge + 1];
  for (auto& e : s) e = sge(0x1000, 8, 1);
  SendRequest r;
  r.sgl = s;
  SendWqes w;
  r.nsge = 5;  // above send_sge 4
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_INVALID_PARAMETER);
  r.op = SendOp::kRead;
  r.nsge = 2;  // reads: read_sge 1 (siw)
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_INVALID_PARAMETER);
  r.nsge = 1;
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  r.op = SendOp::kSend;
  r.sgl = nullptr;
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_INVALID_PARAMETER);
  r.sgl = s;
  r.flags = NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE;  // not a Send flag
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_INVALID_PARAMETER);
  r.op = SendOp::kWrite;
  r.flags = NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT;  // not a Write flag
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_INVALID_PARAMETER);
  r.flags = 0x80000000u;
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_INVALID_PARAMETER);
  // Inline above the QP's inline size, transfer above MaxTransferLength.
  NDK_SGE big = sge(0x1000, 65, 1);
  r.flags = NDK_OP_FLAG_INLINE;
  r.sgl = &big;
  r.nsge = 1;
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_INVALID_PARAMETER);
  big.Length = 64;
  EXPECT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  QpLimits small = lim();
  small.max_transfer = 100;
  NDK_SGE two[2] = {sge(0x1000, 60, 1), sge(0x2000, 41, 1)};
  r.flags = 0;
  r.sgl = two;
  r.nsge = 2;
  EXPECT_EQ(build_send(r, small, &w), STATUS_INVALID_PARAMETER);
  two[1].Length = 40;
  EXPECT_EQ(build_send(r, small, &w), STATUS_SUCCESS);
}

TEST(BuildSend, InlineWithMoreSgesThanTheQpIsCoalesced) {
  NDK_SGE s[6];
  for (int k = 0; k < 6; ++k) s[k] = sge(0x1000 + 0x100 * k, 8, 0xdead);
  SendRequest r;
  r.sgl = s;
  r.nsge = 6;
  r.flags = NDK_OP_FLAG_INLINE;
  SendWqes w;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_TRUE(w.coalesce_inline);
  EXPECT_EQ(w.wr[0].num_sge, 1);
  EXPECT_EQ(w.sge[0].length, 48u);
  r.nsge = 4;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_FALSE(w.coalesce_inline);
  EXPECT_EQ(w.wr[0].num_sge, 4);
}

TEST(BuildRecv, SgesAndLimits) {
  NDK_SGE s[5];
  for (int k = 0; k < 5; ++k) s[k] = sge(0x10000 * (k + 1), 1000, 3);
  RecvWqe w;
  ASSERT_EQ(build_recv(s, 4, lim(), 77, &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr.wr_id, 77u);
  EXPECT_EQ(w.wr.num_sge, 4);
  EXPECT_EQ(w.sge[3].addr, 0x40000u);
  EXPECT_EQ(w.capacity, 4000u);
  EXPECT_EQ(build_recv(s, 5, lim(), 77, &w), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(build_recv(nullptr, 1, lim(), 77, &w), STATUS_INVALID_PARAMETER);
  ASSERT_EQ(build_recv(nullptr, 0, lim(), 78, &w), STATUS_SUCCESS);  // zero-length receive
  EXPECT_EQ(w.wr.sg_list, nullptr);
}

TEST(Completion, StatusTable) {
  EXPECT_EQ(status_of(IBV_WC_SUCCESS), STATUS_SUCCESS);
  EXPECT_EQ(status_of(IBV_WC_WR_FLUSH_ERR), STATUS_CANCELLED);
  EXPECT_EQ(status_of(IBV_WC_LOC_LEN_ERR), STATUS_BUFFER_OVERFLOW);
  EXPECT_EQ(status_of(IBV_WC_LOC_PROT_ERR), STATUS_ACCESS_VIOLATION);
  EXPECT_EQ(status_of(IBV_WC_REM_ACCESS_ERR), STATUS_ACCESS_VIOLATION);
  EXPECT_EQ(status_of(IBV_WC_MW_BIND_ERR), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(status_of(IBV_WC_LOC_QP_OP_ERR), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(status_of(IBV_WC_REM_INV_REQ_ERR), STATUS_REMOTE_RESOURCES);
  EXPECT_EQ(status_of(IBV_WC_REM_OP_ERR), STATUS_CONNECTION_ABORTED);
  EXPECT_EQ(status_of(IBV_WC_RETRY_EXC_ERR), STATUS_IO_TIMEOUT);
  EXPECT_EQ(status_of(IBV_WC_RNR_RETRY_EXC_ERR), STATUS_IO_TIMEOUT);
  EXPECT_EQ(status_of(IBV_WC_BAD_RESP_ERR), STATUS_DATA_ERROR);
  EXPECT_EQ(status_of(IBV_WC_FATAL_ERR), STATUS_INTERNAL_ERROR);
  // Every error maps to a failure, never to success.
  for (int s = IBV_WC_LOC_LEN_ERR; s <= IBV_WC_TM_RNDV_INCOMPLETE; ++s)
    EXPECT_NE(status_of(static_cast<ibv_wc_status>(s)), STATUS_SUCCESS) << s;
}

TEST(Completion, InitiatorTakesTypeAndLengthFromTheRecord) {
  ibv_wc wc{};
  wc.status = IBV_WC_SUCCESS;
  wc.opcode = IBV_WC_SEND;  // a Read's completion says RDMA_READ; the record decides
  int qpctx = 0, reqctx = 0;
  PostedRecord rec{&reqctx, NdkOperationTypeRead, 4096};
  NDK_RESULT_EX r = result_of(wc, rec, &qpctx);
  EXPECT_EQ(r.Status, STATUS_SUCCESS);
  EXPECT_EQ(r.Type, NdkOperationTypeRead);
  EXPECT_EQ(r.BytesTransferred, 4096u);
  EXPECT_EQ(r.QPContext, &qpctx);
  EXPECT_EQ(r.RequestContext, &reqctx);
  EXPECT_EQ(r.ProviderErrorCode, 0u);
  // An error completion: opcode undefined, vendor error kept.
  wc.status = IBV_WC_REM_ACCESS_ERR;
  wc.opcode = static_cast<ibv_wc_opcode>(0x55);
  wc.vendor_err = 0x1234;
  r = result_of(wc, rec, &qpctx);
  EXPECT_EQ(r.Status, STATUS_ACCESS_VIOLATION);
  EXPECT_EQ(r.Type, NdkOperationTypeRead);
  EXPECT_EQ(r.BytesTransferred, 0u);
  EXPECT_EQ(r.ProviderErrorCode, (0x1234u << 8) | IBV_WC_REM_ACCESS_ERR);
}

TEST(Completion, ReceiveAndInvalidate) {
  ibv_wc wc{};
  wc.status = IBV_WC_SUCCESS;
  wc.opcode = IBV_WC_RECV;
  wc.byte_len = 88;
  PostedRecord rec{nullptr, NdkOperationTypeReceive, 4096};
  NDK_RESULT_EX r = result_of(wc, rec, nullptr);
  EXPECT_EQ(r.Type, NdkOperationTypeReceive);
  EXPECT_EQ(r.BytesTransferred, 88u);
  EXPECT_EQ(r.TypeSpecificCompletionOutput, 0u);
  wc.wc_flags = IBV_WC_WITH_INV;
  wc.invalidated_rkey = 0xfeed01;
  r = result_of(wc, rec, nullptr);
  EXPECT_EQ(r.Type, NdkOperationTypeReceiveAndInvalidate);
  EXPECT_EQ(r.TypeSpecificCompletionOutput, 0xfeed01u);
  wc.status = IBV_WC_WR_FLUSH_ERR;
  r = result_of(wc, rec, nullptr);
  EXPECT_EQ(r.Status, STATUS_CANCELLED);
  EXPECT_EQ(r.Type, NdkOperationTypeReceive);
  EXPECT_EQ(r.BytesTransferred, 0u);
}

// rxe (Linux 6.1, rdma-core 44) reports a received Send with Invalidate
// with the kernel's flag bit (1 << 2, libibverbs' IBV_WC_IP_CSUM_OK): the
// completion softndk-verbs-exercise saw on rxe0 (wc_flags 0x5 = GRH | 4,
// the token in invalidated_rkey). Read as libibverbs defines the bits it
// was a plain receive, and the consumer's own invalidate of the dead
// window panicked the guest kernel.
TEST(Completion, RxeReportsInvalidationWithTheKernelBit) {
  DeviceFacts rxe;
  rxe.name = "rxe0";
  rxe.driver = "rxe";
  DeviceFacts siw;
  siw.name = "siw0";
  siw.driver = "siw";
  EXPECT_EQ(wc_flags_abi(rxe), WcFlagsAbi::kKernelBits);
  EXPECT_EQ(wc_flags_abi(siw), WcFlagsAbi::kUser);
  ibv_wc wc{};
  wc.status = IBV_WC_SUCCESS;
  wc.opcode = IBV_WC_RECV;
  wc.byte_len = 16;
  wc.wc_flags = 0x5;
  wc.invalidated_rkey = 0x08006e5d;
  PostedRecord rec{nullptr, NdkOperationTypeReceive, 4096};
  EXPECT_EQ(invalidated_rkey_of(wc, WcFlagsAbi::kKernelBits), 0x08006e5du);
  NDK_RESULT_EX r = result_of(wc, rec, nullptr, wc_flags_abi(rxe));
  EXPECT_EQ(r.Type, NdkOperationTypeReceiveAndInvalidate);
  EXPECT_EQ(r.TypeSpecificCompletionOutput, 0x08006e5du);
  EXPECT_EQ(r.BytesTransferred, 16u);
  // Elsewhere bit 2 is IBV_WC_IP_CSUM_OK: no invalidation.
  EXPECT_EQ(invalidated_rkey_of(wc, WcFlagsAbi::kUser), 0u);
  r = result_of(wc, rec, nullptr, wc_flags_abi(siw));
  EXPECT_EQ(r.Type, NdkOperationTypeReceive);
  // A plain receive on rxe (GRH only) and a Write with immediate are not.
  wc.wc_flags = IBV_WC_GRH;
  EXPECT_EQ(invalidated_rkey_of(wc, WcFlagsAbi::kKernelBits), 0u);
  wc.wc_flags = 0x5;
  wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
  EXPECT_EQ(invalidated_rkey_of(wc, WcFlagsAbi::kKernelBits), 0u);
  // A fixed rxe that writes IBV_WC_WITH_INV is still understood.
  wc.opcode = IBV_WC_RECV;
  wc.wc_flags = IBV_WC_GRH | IBV_WC_WITH_INV;
  EXPECT_EQ(invalidated_rkey_of(wc, WcFlagsAbi::kKernelBits), 0x08006e5du);
  // Errors never report an invalidation.
  wc.wc_flags = 0x5;
  wc.status = IBV_WC_WR_FLUSH_ERR;
  EXPECT_EQ(invalidated_rkey_of(wc, WcFlagsAbi::kKernelBits), 0u);
}

// The window states behind NdkInvalidate's refusal of a window that is
// not bound (rxe of Linux 6.1 panics on its LOCAL_INV).
TEST(WindowStates, InvalidateOnlyWhatIsBound) {
  WindowStates w;
  using I = WindowStates::Invalidate;
  EXPECT_EQ(w.invalidate(0x100), I::kNotAWindow);  // an MR's key: the device's
  w.allocated(0x200);
  EXPECT_EQ(w.invalidate(0x200), I::kRefuse);  // never bound
  w.bound(0x200);
  EXPECT_EQ(w.invalidate(0x200), I::kPost);
  EXPECT_EQ(w.invalidate(0x200), I::kRefuse);  // invalidated twice
  // Re-bound with the same key, then invalidated by the peer (reported).
  w.bound(0x200);
  w.peer_invalidated(0x200);
  EXPECT_EQ(w.invalidate(0x200), I::kRefuse);
  w.bound(0x200);
  EXPECT_EQ(w.invalidate(0x200), I::kPost);
  // A bind of a key that is no window of ours changes nothing.
  w.bound(0x300);
  EXPECT_EQ(w.invalidate(0x300), I::kNotAWindow);
  // Two windows with one rkey (a freed window's key handed out again): the
  // key stays a window until both are freed; freeing forgets the state.
  w.allocated(0x400);
  w.allocated(0x400);
  w.bound(0x400);
  w.freed(0x400);
  EXPECT_TRUE(w.is_window(0x400));
  w.freed(0x400);
  EXPECT_FALSE(w.is_window(0x400));
  w.allocated(0x400);
  EXPECT_EQ(w.invalidate(0x400), I::kRefuse);
  w.freed(0x999);  // unknown: ignored
}

}  // namespace
}  // namespace softndk::verbs
