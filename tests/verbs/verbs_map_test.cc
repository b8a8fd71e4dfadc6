// SPDX-License-Identifier: Apache-2.0
// verbs_map_test.cc - the NDK <-> verbs translation (src/verbs/verbs_map.h)
// without an RDMA device: every table of docs/verbs.md, both directions.
#include "verbs/verbs_map.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <utility>
#include <vector>

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
  r.flags |= NDK_OP_FLAG_SILENT_SUCCESS;
  ASSERT_EQ(build_send(r, lim(), &w), STATUS_SUCCESS);
  EXPECT_EQ(w.wr[1].send_flags, static_cast<unsigned>(IBV_SEND_FENCE));
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

// Device attributes as siw and rxe of Linux 6.1 report them: the values
// the interop guest's probe printed (group verbs; docs/verbs.md).
ibv_device_attr_ex siw_attr() {
  ibv_device_attr_ex a{};
  a.orig_attr.vendor_id = 0x626d74;
  a.orig_attr.vendor_part_id = 1;
  a.orig_attr.max_mr_size = ~0ull;
  a.orig_attr.max_qp_wr = 32768;
  a.orig_attr.max_sge = 6;
  a.orig_attr.max_sge_rd = 1;
  a.orig_attr.max_cqe = 3276800;
  a.orig_attr.max_qp_rd_atom = 128;
  a.orig_attr.max_qp_init_rd_atom = 128;
  a.orig_attr.max_srq = 1024;
  a.orig_attr.max_srq_wr = 327680;
  a.orig_attr.max_mw = 0;
  a.orig_attr.device_cap_flags = IBV_DEVICE_MEM_MGT_EXTENSIONS;
  return a;
}

ibv_device_attr_ex rxe_attr() {
  ibv_device_attr_ex a{};
  a.orig_attr.vendor_id = 0xffffff;
  a.orig_attr.max_mr_size = ~0ull;
  a.orig_attr.max_qp_wr = 1048576;
  a.orig_attr.max_sge = 32;
  a.orig_attr.max_sge_rd = 32;
  a.orig_attr.max_cqe = 32767;
  a.orig_attr.max_qp_rd_atom = 128;
  a.orig_attr.max_qp_init_rd_atom = 128;
  a.orig_attr.max_srq = 917503;
  a.orig_attr.max_srq_wr = 1048576;
  a.orig_attr.max_mw = 524287;
  a.orig_attr.device_cap_flags = 0x01223c76;  // MEM_WINDOW, TYPE_2B, MEM_MGT_EXTENSIONS, ...
  return a;
}

TEST(AdapterInfoMap, SiwIsIwarpWithOneReadSgeAndNoWindows) {
  ibv_port_attr port{};
  port.max_msg_sz = 0x7fffffff;
  DeviceFacts f;
  f.transport = Transport::kIwarp;
  f.max_inline = 80;
  NDK_ADAPTER_INFO i = adapter_info(siw_attr(), port, f, NDK_VERSION{2, 1}, 16384);
  EXPECT_EQ(i.RdmaTechnology, NdkiWarp);
  EXPECT_EQ(i.MaxInitiatorRequestSge, 6u);
  EXPECT_EQ(i.MaxReadRequestSge, 1u);
  EXPECT_EQ(i.MaxInlineDataSize, 80u);
  EXPECT_EQ(i.MaxTransferLength, 1u << 30);
  EXPECT_EQ(i.MaxInitiatorQueueDepth, 16384u);  // two WQEs per NDK request
  EXPECT_EQ(i.MaxReceiveQueueDepth, 32768u);
  EXPECT_EQ(i.MaxSrqDepth, 327680u);
  EXPECT_EQ(i.MaxInboundReadLimit, 128u);
  EXPECT_EQ(i.MaxCallerData, 251u);
  EXPECT_EQ(i.MaxCalleeData, 251u);
  EXPECT_EQ(i.FRMRPageCount, 0u);
  EXPECT_EQ(i.MaxWindowSize, 0u);
  EXPECT_EQ(i.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, 0u);
  EXPECT_EQ(i.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED, 0u);
  EXPECT_EQ(i.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, 0u);
  EXPECT_EQ(i.VendorId, 0x626d74u);
}

TEST(AdapterInfoMap, RxeIsRoceV2WithType2Windows) {
  ibv_port_attr port{};
  port.max_msg_sz = 0x800000;
  DeviceFacts f;
  f.transport = Transport::kRoce;
  f.max_inline = 256;
  f.cq_resize = true;
  f.mw_type2 = true;
  NDK_ADAPTER_INFO i = adapter_info(rxe_attr(), port, f, NDK_VERSION{2, 1}, 16384);
  EXPECT_EQ(i.RdmaTechnology, NdkRoCEv2);
  EXPECT_EQ(i.MaxInitiatorRequestSge, kMaxSge);  // 32 offered, the object model keeps 16
  EXPECT_EQ(i.MaxReadRequestSge, kMaxSge);
  EXPECT_EQ(i.MaxTransferLength, 0x800000u);
  EXPECT_EQ(i.MaxCallerData, 56u);
  EXPECT_EQ(i.MaxCalleeData, 148u);
  EXPECT_EQ(i.FRMRPageCount, 65536u);
  EXPECT_EQ(i.MaxInitiatorQueueDepth, 524288u);
  EXPECT_NE(i.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, 0u);
  EXPECT_NE(i.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED, 0u);
  EXPECT_NE(i.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, 0u);
  EXPECT_EQ(i.AdapterFlags & NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED, 0u);
}

TEST(Transports, FromVerbs) {
  EXPECT_EQ(transport_of(IBV_TRANSPORT_IWARP, IBV_LINK_LAYER_ETHERNET), Transport::kIwarp);
  EXPECT_EQ(transport_of(IBV_TRANSPORT_IB, IBV_LINK_LAYER_ETHERNET), Transport::kRoce);
  EXPECT_EQ(transport_of(IBV_TRANSPORT_IB, IBV_LINK_LAYER_INFINIBAND), Transport::kInfiniBand);
  EXPECT_EQ(transport_of(IBV_TRANSPORT_USNIC, IBV_LINK_LAYER_ETHERNET), Transport::kUnknown);
  EXPECT_EQ(private_data_limits(Transport::kUnknown).caller, 0u);
}

TEST(FastRegister, StrategyNeedsType2WindowsOrTheOptIn) {
  DeviceFacts f;
  f.mw_type2 = true;
  EXPECT_EQ(choose_fr_strategy(rxe_attr(), f, false), FrStrategy::kType2Window);
  f.mw_type2 = false;  // the flag says yes, the device refused one
  EXPECT_EQ(choose_fr_strategy(rxe_attr(), f, false), FrStrategy::kUnsupported);
  EXPECT_EQ(choose_fr_strategy(siw_attr(), f, false), FrStrategy::kUnsupported);
  EXPECT_EQ(choose_fr_strategy(siw_attr(), f, true), FrStrategy::kRegisterPerFastRegister);
  ibv_device_attr_ex type1_only = rxe_attr();
  type1_only.orig_attr.device_cap_flags = IBV_DEVICE_MEM_WINDOW;
  f.mw_type2 = true;
  EXPECT_EQ(choose_fr_strategy(type1_only, f, false), FrStrategy::kUnsupported);
  EXPECT_STREQ(fr_strategy_name(FrStrategy::kType2Window), "type2-window");
}

TEST(FastRegister, WindowBindPlan) {
  const uint64_t arena = 0x7f0000000000;
  NDK_LOGICAL_ADDRESS pages[3];
  for (int k = 0; k < 3; ++k) pages[k].QuadPart = static_cast<int64_t>(arena + 0x2000 + 0x1000 * k);
  FrBind b;
  ASSERT_EQ(plan_window_bind(pages, 3, 0x10, 0x2000, arena + 0x2010, arena, 0x10000, false, &b),
            STATUS_SUCCESS);
  EXPECT_EQ(b.addr, arena + 0x2010);
  EXPECT_EQ(b.length, 0x2000u);
  EXPECT_FALSE(b.zero_based);
  // Zero-based only where the device offers it; another base never.
  EXPECT_EQ(plan_window_bind(pages, 3, 0x10, 0x2000, 0, arena, 0x10000, false, &b),
            STATUS_NOT_SUPPORTED);
  ASSERT_EQ(plan_window_bind(pages, 3, 0x10, 0x2000, 0, arena, 0x10000, true, &b), STATUS_SUCCESS);
  EXPECT_TRUE(b.zero_based);
  EXPECT_EQ(plan_window_bind(pages, 3, 0x10, 0x2000, 0x1234000, arena, 0x10000, true, &b),
            STATUS_NOT_SUPPORTED);
  // Outside the arena, not contiguous, longer than the pages, bad FBO.
  EXPECT_EQ(plan_window_bind(pages, 3, 0, 0x3000, arena + 0x2000, arena, 0x4000, false, &b),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(
      plan_window_bind(pages, 3, 0, 0x3000, arena + 0x2000, arena + 0x3000, 0x10000, false, &b),
      STATUS_INVALID_PARAMETER);
  NDK_LOGICAL_ADDRESS gap[2] = {pages[0], pages[2]};
  EXPECT_EQ(plan_window_bind(gap, 2, 0, 0x2000, arena + 0x2000, arena, 0x10000, false, &b),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(plan_window_bind(pages, 3, 0x10, 0x3000, arena + 0x2010, arena, 0x10000, false, &b),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(plan_window_bind(pages, 3, 0x1000, 0x10, arena + 0x3000, arena, 0x10000, false, &b),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(plan_window_bind(pages, 0, 0, 0x10, arena + 0x2000, arena, 0x10000, false, &b),
            STATUS_INVALID_PARAMETER);
}

TEST(FastRegister, BindKeepsTheWindowsKeyInsideTheMr) {
  // The structures only: build_bind never calls into libibverbs.
  ibv_mw mw{};
  mw.rkey = 0x1234;
  ibv_mr mr{};
  std::vector<uint8_t> mem(0x10000);
  mr.addr = mem.data();
  mr.length = mem.size();
  const uint64_t base = reinterpret_cast<uintptr_t>(mem.data());
  BindRequest b;
  b.mw = &mw;
  b.mr = &mr;
  b.rkey = mw.rkey;
  b.addr = base + 0x2000;
  b.length = 0x3000;
  b.flags = NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_READ_FENCE;
  b.wr_id = 77;
  ibv_send_wr w;
  ASSERT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_SUCCESS);
  EXPECT_EQ(w.opcode, IBV_WR_BIND_MW);
  EXPECT_EQ(w.wr_id, 77u);
  EXPECT_EQ(w.bind_mw.mw, &mw);
  EXPECT_EQ(w.bind_mw.rkey, 0x1234u);  // the token the consumer read stays the token
  EXPECT_EQ(w.bind_mw.bind_info.mr, &mr);
  EXPECT_EQ(w.bind_mw.bind_info.addr, base + 0x2000);
  EXPECT_EQ(w.bind_mw.bind_info.length, 0x3000u);
  EXPECT_EQ(w.bind_mw.bind_info.mw_access_flags,
            static_cast<unsigned>(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE));
  EXPECT_EQ(w.send_flags, static_cast<unsigned>(IBV_SEND_SIGNALED | IBV_SEND_FENCE));
  EXPECT_EQ(w.next, nullptr);
  // iWARP read sinks need remote write on the window too.
  b.flags = NDK_OP_FLAG_RDMA_READ_SINK;
  ASSERT_EQ(build_bind(b, Transport::kIwarp, &w), STATUS_SUCCESS);
  EXPECT_TRUE(w.bind_mw.bind_info.mw_access_flags & IBV_ACCESS_REMOTE_WRITE);
  // Outside the MR, empty, no window or MR, a flag Bind does not take.
  b.flags = 0;
  b.addr = base + 0xe000;
  EXPECT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_INVALID_PARAMETER);
  b.addr = base - 0x1000;
  EXPECT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_INVALID_PARAMETER);
  b.addr = base;
  b.length = 0;
  EXPECT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_INVALID_PARAMETER);
  b.length = 0x10000;
  EXPECT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_SUCCESS);
  b.mw = nullptr;
  EXPECT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_INVALID_PARAMETER);
  b.mw = &mw;
  b.mr = nullptr;
  EXPECT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_INVALID_PARAMETER);
  b.mr = &mr;
  b.flags = NDK_OP_FLAG_INLINE;
  EXPECT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_INVALID_PARAMETER);
}

TEST(FastRegister, WindowTokensInLocalSgesUseTheArena) {
  const uint64_t a = 0x100000;
  EXPECT_TRUE(sge_in_arena(a, 0x1000, a, 0x1000));
  EXPECT_TRUE(sge_in_arena(a + 0xfff, 1, a, 0x1000));
  EXPECT_FALSE(sge_in_arena(a + 0xfff, 2, a, 0x1000));
  EXPECT_FALSE(sge_in_arena(a - 1, 1, a, 0x1000));
  EXPECT_FALSE(sge_in_arena(a, 0x1001, a, 0x1000));
  // No wrap-around at the top of the address space.
  EXPECT_FALSE(sge_in_arena(~uint64_t{0} - 1, 0x10, ~uint64_t{0} - 0x100, 0x100));
}

TEST(Access, MrFlags) {
  unsigned a = 0;
  ASSERT_EQ(mr_access(NDK_MR_FLAG_ALLOW_LOCAL_READ, Transport::kRoce, &a), STATUS_SUCCESS);
  EXPECT_EQ(a, 0u);
  ASSERT_EQ(mr_access(NDK_MR_FLAG_ALLOW_REMOTE_WRITE, Transport::kRoce, &a), STATUS_SUCCESS);
  EXPECT_EQ(a, static_cast<unsigned>(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE));
  ASSERT_EQ(mr_access(NDK_MR_FLAG_ALLOW_REMOTE_READ, Transport::kIwarp, &a), STATUS_SUCCESS);
  EXPECT_EQ(a, static_cast<unsigned>(IBV_ACCESS_REMOTE_READ));
  // A Read sink: local write, and on iWARP remote write (the Read Response
  // is placed like a tagged Write).
  ASSERT_EQ(mr_access(NDK_MR_FLAG_RDMA_READ_SINK, Transport::kRoce, &a), STATUS_SUCCESS);
  EXPECT_EQ(a, static_cast<unsigned>(IBV_ACCESS_LOCAL_WRITE));
  ASSERT_EQ(mr_access(NDK_MR_FLAG_RDMA_READ_SINK, Transport::kIwarp, &a), STATUS_SUCCESS);
  EXPECT_EQ(a, static_cast<unsigned>(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  EXPECT_EQ(mr_access(0x100, Transport::kRoce, &a), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(window_access(NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                          Transport::kRoce),
            static_cast<unsigned>(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
                                  IBV_ACCESS_LOCAL_WRITE));
}

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
