// SPDX-License-Identifier: Apache-2.0
// ends.h - a small fixture for connector tests whose objects come from
// several adapter instances or several open settings: End is one side's
// PD/CQ/QP/MR/connector, EndsTest opens adapters on lo and connects Ends
// over 127.0.0.1 through the public C ABI.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "abi_util.h"
#include "softndk/softndk.h"

namespace connector_test {

using namespace std::chrono_literals;

// start_accept's answer when no connect event came.
inline constexpr NTSTATUS kNoIncoming = static_cast<NTSTATUS>(0xE0000001u);

// One consumer-side endpoint whose objects may come from several instances.
struct End {
  NDK_PD* pd = nullptr;
  NDK_CQ* cq = nullptr;
  NDK_QP* qp = nullptr;
  NDK_CONNECTOR* conn = nullptr;
  NDK_MR* mr = nullptr;
  uint32_t token = 0;
  std::vector<uint8_t> mem = std::vector<uint8_t>(1 << 16);
  Events ev;
  NDK_SGE sge(size_t off, size_t len) {
    NDK_SGE s{};
    s.VirtualAddress = mem.data() + off;
    s.Length = static_cast<ULONG>(len);
    s.MemoryRegionToken = token;
    return s;
  }
};

class EndsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (NDK_ADAPTER* a : adapters_)
      if (a != nullptr) SoftNdkCloseAdapter(a);
  }
  NDK_ADAPTER* open(ULONG mpa_flags = 0, ULONG connect_timeout_ms = 3000) {
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    p.MpaFlags = mpa_flags;
    p.ConnectTimeoutMs = connect_timeout_ms;
    p.DisconnectTimeoutMs = 2000;
    NDK_ADAPTER* a = nullptr;
    EXPECT_EQ(SoftNdkOpenAdapter(test_adapter(), kVersion, &p, &a), STATUS_SUCCESS);
    adapters_.push_back(a);
    return a;
  }
  void close_adapter(NDK_ADAPTER* a) {
    for (auto& x : adapters_)
      if (x == a) x = nullptr;
    SoftNdkCloseAdapter(a);
  }
  // PD, QP and MR on `pa`; the QP's CQ on `ca`.
  void make(End& e, NDK_ADAPTER* pa, NDK_ADAPTER* ca) {
    ASSERT_EQ(pa->Dispatch->NdkCreatePd(pa, nullptr, nullptr, &e.pd), STATUS_SUCCESS);
    ASSERT_EQ(
        ca->Dispatch->NdkCreateCq(ca, 256, nullptr, nullptr, nullptr, nullptr, nullptr, &e.cq),
        STATUS_SUCCESS);
    ASSERT_EQ(
        e.pd->Dispatch->NdkCreateQp(e.pd, e.cq, e.cq, &e, 32, 32, 2, 2, 0, nullptr, nullptr, &e.qp),
        STATUS_SUCCESS);
    ASSERT_EQ(e.pd->Dispatch->NdkCreateMr(e.pd, FALSE, nullptr, nullptr, &e.mr), STATUS_SUCCESS);
    MDL mdl{};
    mdl.VirtualAddress = e.mem.data();
    mdl.ByteCount = e.mem.size();
    // With a completion, as NDKPI asks of asynchronous requests (a device
    // backend completes registrations later: docs/verbs.md).
    Req reg;
    ASSERT_EQ(reg.wait(e.mr->Dispatch->NdkRegisterMr(
                  e.mr, &mdl, e.mem.size(),
                  NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE, &Req::cb, &reg)),
              STATUS_SUCCESS);
    e.token = e.mr->Dispatch->NdkGetRemoteTokenFromMr(e.mr);
  }
  NDK_LISTENER* listen(NDK_ADAPTER* a, Incoming& in, uint16_t* port) {
    NDK_LISTENER* l = listen_on(a, in, port);
    EXPECT_NE(l, nullptr);
    return l;
  }
  NDK_CONNECTOR* connector(NDK_ADAPTER* a) {
    NDK_CONNECTOR* c = nullptr;
    EXPECT_EQ(a->Dispatch->NdkCreateConnector(a, nullptr, nullptr, &c), STATUS_SUCCESS);
    return c;
  }
  // NdkConnect (or ...WithSharedEndpoint) of c (its connector set) to the
  // listener's port; returns the inline status.
  NTSTATUS start_connect(End& c, uint16_t port, Req& r, NDK_SHARED_ENDPOINT* se = nullptr) {
    auto dst = v4("127.0.0.1", port);
    if (se != nullptr)
      return c.conn->Dispatch->NdkConnectWithSharedEndpoint(c.conn, c.qp, se, sa(dst), sizeof dst,
                                                            4, 4, nullptr, 0, &Req::cb, &r);
    auto src = v4("127.0.0.1", 0);
    return c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa(src), sizeof src, sa(dst), sizeof dst, 4,
                                        4, nullptr, 0, &Req::cb, &r);
  }
  // The next connect event of `in` accepted with s's QP; returns the
  // inline status (null connector: kNoIncoming).
  NTSTATUS start_accept(End& s, Incoming& in, Req& r) {
    s.conn = in.next();
    if (s.conn == nullptr) return kNoIncoming;
    return s.conn->Dispatch->NdkAcceptEx(s.conn, s.qp, 4, 4, nullptr, 0, &Events::cb_ex, &s.ev,
                                         &Req::cb, &r);
  }
  NTSTATUS complete_connect(End& c) {
    Req cc;
    return cc.wait(c.conn->Dispatch->NdkCompleteConnect(c.conn, &Events::cb, &c.ev, &Req::cb, &cc));
  }
  // c connects to the listener port; s is accepted from `in` with its QP.
  void establish(End& c, End& s, Incoming& in, uint16_t port, NDK_SHARED_ENDPOINT* se = nullptr) {
    Req cr, ar;
    ASSERT_EQ(start_connect(c, port, cr, se), STATUS_PENDING);
    NTSTATUS as = start_accept(s, in, ar);
    ASSERT_NE(as, kNoIncoming);
    ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
    ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  }
  static std::vector<NDK_RESULT> poll(NDK_CQ* cq, size_t n) {
    std::vector<NDK_RESULT> out;
    auto deadline = std::chrono::steady_clock::now() + 5s;
    NDK_RESULT r[8];
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      ULONG k = cq->Dispatch->NdkGetCqResults(cq, r, 8);
      out.insert(out.end(), r, r + k);
      if (k == 0) std::this_thread::sleep_for(100us);
    }
    return out;
  }
  // A Send each way and an RDMA Write from `a` into `b`'s memory.
  void exchange(End& a, End& b) {
    for (End* from : {&a, &b}) {
      End* to = from == &a ? &b : &a;
      for (size_t i = 0; i < 512; ++i) from->mem[i] = static_cast<uint8_t>(i * 3 + (from == &a));
      NDK_SGE r = to->sge(0, 512), s = from->sge(0, 512);
      ASSERT_EQ(to->qp->Dispatch->NdkReceive(to->qp, nullptr, &r, 1), STATUS_SUCCESS);
      ASSERT_EQ(from->qp->Dispatch->NdkSend(from->qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
      auto x = poll(from->cq, 1), y = poll(to->cq, 1);
      ASSERT_EQ(x.size(), 1u);
      ASSERT_EQ(y.size(), 1u);
      EXPECT_EQ(x[0].Status, STATUS_SUCCESS);
      EXPECT_EQ(y[0].Status, STATUS_SUCCESS);
      EXPECT_EQ(std::memcmp(from->mem.data(), to->mem.data(), 512), 0);
    }
    for (size_t i = 0; i < 4096; ++i) a.mem[8192 + i] = static_cast<uint8_t>(i ^ 0xA5);
    NDK_SGE w = a.sge(8192, 4096);
    ASSERT_EQ(
        a.qp->Dispatch->NdkWrite(a.qp, nullptr, &w, 1,
                                 reinterpret_cast<uintptr_t>(b.mem.data()) + 16384, b.token, 0),
        STATUS_SUCCESS);
    // A Write's completion is local (sent); a Send behind it completing at
    // b says the Write landed (iWARP places in order), as a consumer
    // would learn it.
    NDK_SGE r = b.sge(0, 16), s = a.sge(0, 16);
    ASSERT_EQ(b.qp->Dispatch->NdkReceive(b.qp, nullptr, &r, 1), STATUS_SUCCESS);
    ASSERT_EQ(a.qp->Dispatch->NdkSend(a.qp, nullptr, &s, 1, 0), STATUS_SUCCESS);
    auto x = poll(a.cq, 2), y = poll(b.cq, 1);
    ASSERT_EQ(x.size(), 2u);
    ASSERT_EQ(y.size(), 1u);
    for (auto& e : x) EXPECT_EQ(e.Status, STATUS_SUCCESS);
    EXPECT_EQ(y[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(a.mem.data() + 8192, b.mem.data() + 16384, 4096), 0);
  }
  void close_end(End& e) {
    for (void* o : {static_cast<void*>(e.conn), static_cast<void*>(e.qp), static_cast<void*>(e.mr),
                    static_cast<void*>(e.cq), static_cast<void*>(e.pd)})
      if (o != nullptr) {
        EXPECT_EQ(close_object(o), STATUS_SUCCESS);
      }
    e.conn = nullptr;
    e.qp = nullptr;
    e.mr = nullptr;
    e.cq = nullptr;
    e.pd = nullptr;
  }

  std::vector<NDK_ADAPTER*> adapters_;
};

}  // namespace connector_test
