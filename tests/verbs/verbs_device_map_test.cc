// SPDX-License-Identifier: Apache-2.0
// verbs_device_map_test.cc - the NDK <-> verbs translation of device facts
// (src/verbs/verbs_map.h) without an RDMA device: NDK_ADAPTER_INFO from
// siw's and rxe's attributes, transports, the fast-register strategy and
// its window binds, and MR/window access flags (docs/verbs.md).
#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "verbs/verbs_map.h"

namespace softndk::verbs {
namespace {

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

// NdkFastRegister at BaseVirtualAddress 0: a zero-based window, where the
// device binds them (rxe); the window's address stays the region's own,
// the peer's addresses count from 0.
TEST(FastRegister, ZeroBasedWindowsOnRxeOnly) {
  DeviceFacts f;
  f.driver = "rxe";
  EXPECT_TRUE(zero_based_windows(f));
  f.driver = "siw";
  EXPECT_FALSE(zero_based_windows(f));
  f.driver = "mlx5";
  EXPECT_FALSE(zero_based_windows(f));
  ibv_mw mw{};
  ibv_mr mr{};
  std::vector<uint8_t> mem(0x4000);
  mr.addr = mem.data();
  mr.length = mem.size();
  const uint64_t base = reinterpret_cast<uintptr_t>(mem.data());
  BindRequest b;
  b.mw = &mw;
  b.mr = &mr;
  b.addr = base + 0x1000;
  b.length = 0x2000;
  b.flags = NDK_OP_FLAG_ALLOW_REMOTE_READ;
  b.zero_based = true;
  ibv_send_wr w;
  ASSERT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_SUCCESS);
  EXPECT_EQ(w.bind_mw.bind_info.addr, base + 0x1000);
  EXPECT_EQ(w.bind_mw.bind_info.mw_access_flags,
            static_cast<unsigned>(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED));
  b.zero_based = false;
  ASSERT_EQ(build_bind(b, Transport::kRoce, &w), STATUS_SUCCESS);
  EXPECT_EQ(w.bind_mw.bind_info.mw_access_flags, static_cast<unsigned>(IBV_ACCESS_REMOTE_READ));
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

// NdkModifySrq of the depth (docs/verbs.md, "SRQ"): rxe says it resizes
// SRQs, siw does not; the device's answers as NdkModifySrq's statuses; the
// CQ of a QP on the SRQ grows with it.
TEST(SrqResize, OnlyWhereTheDeviceSaysIt) {
  EXPECT_TRUE(srq_can_resize(rxe_attr()));
  EXPECT_FALSE(srq_can_resize(siw_attr()));
  ibv_device_attr_ex no_srq = rxe_attr();
  no_srq.orig_attr.max_srq = 0;
  EXPECT_FALSE(srq_can_resize(no_srq));
}

TEST(SrqResize, DeviceAnswersAsStatuses) {
  EXPECT_EQ(srq_resize_status(0), STATUS_SUCCESS);
  EXPECT_EQ(srq_resize_status(EOPNOTSUPP), STATUS_NOT_SUPPORTED);
  EXPECT_EQ(srq_resize_status(ENOSYS), STATUS_NOT_SUPPORTED);
  EXPECT_EQ(srq_resize_status(ENOMEM), STATUS_INSUFFICIENT_RESOURCES);
  EXPECT_EQ(srq_resize_status(EINVAL), STATUS_INVALID_PARAMETER);
}

TEST(SrqResize, CqHoldsTheSendQueueAndEveryReceiveOfTheSrq) {
  EXPECT_EQ(srq_qp_cq_entries(8, 16), 25u);
  EXPECT_EQ(srq_qp_cq_entries(8, 1024), 1033u);
  EXPECT_EQ(srq_qp_cq_entries(0, 0), 3u);  // never a zero-sized queue
}

}  // namespace
}  // namespace softndk::verbs
