// SPDX-License-Identifier: Apache-2.0
// conn_fixture.h - the fixture of the connector tests that run both ends
// on one adapter: Side is one end's PD/CQ/QP/MR/connector, ConnTest opens
// the adapter on lo and connects, accepts, polls and closes through the
// public C ABI with bounded waits. (Tests whose ends come from several
// adapters use ends.h.)
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "abi_util.h"
#include "ends.h"
#include "softndk/softndk.h"

namespace connector_test {

using namespace std::chrono_literals;

// One end's PD, CQ, QP, registered memory and connector: ends.h's End,
// given its objects on the fixture's one adapter by make_side().
using Side = End;

class ConnTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (a_ != nullptr) SoftNdkCloseAdapter(a_);
  }
  void open(ULONG mpa_flags = 0, ULONG threads = 2) {
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    p.EngineThreads = threads;
    p.MpaFlags = mpa_flags;
    p.ConnectTimeoutMs = 3000;
    p.DisconnectTimeoutMs = 2000;
    ASSERT_EQ(SoftNdkOpenAdapter(test_adapter(), kVersion, &p, &a_), STATUS_SUCCESS);
  }
  const NDK_ADAPTER_DISPATCH* d() { return a_->Dispatch; }

  void make_side(Side& s, size_t mem = 1 << 20) {
    ASSERT_EQ(d()->NdkCreatePd(a_, nullptr, nullptr, &s.pd), STATUS_SUCCESS);
    ASSERT_EQ(d()->NdkCreateCq(a_, 1024, nullptr, nullptr, nullptr, nullptr, nullptr, &s.cq),
              STATUS_SUCCESS);
    ASSERT_EQ(s.pd->Dispatch->NdkCreateQp(s.pd, s.cq, s.cq, &s, 64, 64, 4, 4, 64, nullptr, nullptr,
                                          &s.qp),
              STATUS_SUCCESS);
    s.mem.assign(mem, 0);
    ASSERT_EQ(s.pd->Dispatch->NdkCreateMr(s.pd, FALSE, nullptr, nullptr, &s.mr), STATUS_SUCCESS);
    MDL mdl{};
    mdl.VirtualAddress = s.mem.data();
    mdl.ByteCount = s.mem.size();
    // With a completion, as NDKPI asks of asynchronous requests (a device
    // backend completes registrations later: docs/verbs.md).
    Req reg;
    ASSERT_EQ(reg.wait(s.mr->Dispatch->NdkRegisterMr(s.mr, &mdl, s.mem.size(),
                                                     NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
                                                         NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                                         NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                                                     &Req::cb, &reg)),
              STATUS_SUCCESS);
    s.token = s.mr->Dispatch->NdkGetRemoteTokenFromMr(s.mr);
  }
  NDK_CONNECTOR* make_connector() {
    NDK_CONNECTOR* c = nullptr;
    EXPECT_EQ(d()->NdkCreateConnector(a_, nullptr, nullptr, &c), STATUS_SUCCESS);
    return c;
  }
  NDK_LISTENER* listen(Incoming& in, uint16_t* port, const char* ip = "127.0.0.1") {
    NDK_LISTENER* l = listen_on(a_, in, port, ip);
    EXPECT_NE(l, nullptr);
    return l;
  }
  // Starts NdkConnect; returns its inline status.
  NTSTATUS start_connect(Side& c, uint16_t port, Req& r, ULONG ird = 8, ULONG ord = 8,
                         const std::string& pd = "") {
    if (c.conn == nullptr) c.conn = make_connector();
    auto src = v4("127.0.0.1", 0);
    auto dst = v4("127.0.0.1", port);
    return c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa(src), sizeof src, sa(dst), sizeof dst, ird,
                                        ord, pd.empty() ? nullptr : const_cast<char*>(pd.data()),
                                        static_cast<ULONG>(pd.size()), &Req::cb, &r);
  }
  NTSTATUS accept(Side& s, ULONG ird = 8, ULONG ord = 8, const std::string& pd = "",
                  Req* r = nullptr) {
    Req local;
    Req& rr = r ? *r : local;
    NTSTATUS st = s.conn->Dispatch->NdkAcceptEx(
        s.conn, s.qp, ird, ord, pd.empty() ? nullptr : const_cast<char*>(pd.data()),
        static_cast<ULONG>(pd.size()), &Events::cb_ex, &s.ev, &Req::cb, &rr);
    if (r != nullptr) return st;
    return rr.wait(st);
  }
  NTSTATUS complete_connect(Side& c) {
    Req r;
    return r.wait(c.conn->Dispatch->NdkCompleteConnect(c.conn, &Events::cb, &c.ev, &Req::cb, &r));
  }
  // Full establishment: client c -> server s through listener port.
  void establish(Side& c, Side& s, Incoming& in, uint16_t port, const std::string& cpd = "",
                 const std::string& spd = "") {
    Req cr;
    ASSERT_EQ(start_connect(c, port, cr, 8, 8, cpd), STATUS_PENDING);
    s.conn = in.next();
    ASSERT_NE(s.conn, nullptr);
    Req ar;
    NTSTATUS as = accept(s, 8, 8, spd, &ar);
    ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
    ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  }
  // How most tests start: both ends given their objects, a listener on a
  // free port (its requests go to `in`) and, if `connect`, c connected to s
  // through it. Returns the listener.
  NDK_LISTENER* pair_up(Side& c, Side& s, Incoming& in, uint16_t* port, bool connect = true) {
    make_side(c);
    make_side(s);
    NDK_LISTENER* l = listen(in, port);
    if (connect) establish(c, s, in, *port);
    return l;
  }
  std::vector<NDK_RESULT> poll(NDK_CQ* cq, size_t n, std::chrono::milliseconds t = 5000ms) {
    std::vector<NDK_RESULT> out;
    auto deadline = std::chrono::steady_clock::now() + t;
    NDK_RESULT r[16];
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      ULONG k = cq->Dispatch->NdkGetCqResults(cq, r, 16);
      out.insert(out.end(), r, r + k);
      if (k == 0) std::this_thread::sleep_for(100us);
    }
    return out;
  }
  NTSTATUS close(void* obj) {
    auto* h = static_cast<NDK_OBJECT_HEADER*>(obj);
    // Every dispatch table starts with its close function.
    auto close_fn = *reinterpret_cast<NDK_FN_CLOSE_OBJECT const*>(
        reinterpret_cast<NDK_CONNECTOR*>(h)->Dispatch);
    CloseWait w;
    NTSTATUS st = close_fn(h, &CloseWait::cb, &w);
    if (st == STATUS_PENDING) {
      if (!eventually([&] { return w.calls.load() == 1; })) return STATUS_IO_TIMEOUT;
      return STATUS_SUCCESS;
    }
    return st;
  }
  void send_and_check(Side& from, Side& to, size_t len) {
    for (size_t i = 0; i < len; ++i) from.mem[i] = static_cast<uint8_t>(i * 7 + 3);
    NDK_SGE rs = to.sge(0, len);
    ASSERT_EQ(to.qp->Dispatch->NdkReceive(to.qp, &to, &rs, 1), STATUS_SUCCESS);
    NDK_SGE ss = from.sge(0, len);
    ASSERT_EQ(from.qp->Dispatch->NdkSend(from.qp, &from, &ss, 1, 0), STATUS_SUCCESS);
    auto a = poll(from.cq, 1);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].Status, STATUS_SUCCESS);
    auto b = poll(to.cq, 1);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(b[0].BytesTransferred, len);
    EXPECT_EQ(std::memcmp(from.mem.data(), to.mem.data(), len), 0);
  }

  NDK_ADAPTER* a_ = nullptr;
};

}  // namespace connector_test
