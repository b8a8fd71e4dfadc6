// SPDX-License-Identifier: Apache-2.0
// connector_test.cc - the NDK connection glue through the public C ABI on
// 127.0.0.1: listen/connect/accept/complete-connect, data, connection data,
// read limits, reject, refused, pause/resume, listener close, shared
// endpoints, disconnect, close at awkward moments, P2P RTRs, CRC.
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
#include "softndk/softndk.h"

namespace {

using namespace std::chrono_literals;
using namespace connector_test;  // Req, Events, Incoming, CloseWait, v4, sa, eventually

struct Side {
  NDK_PD* pd = nullptr;
  NDK_CQ* cq = nullptr;
  NDK_QP* qp = nullptr;
  NDK_CONNECTOR* conn = nullptr;
  Events ev;
  std::vector<uint8_t> mem;
  NDK_MR* mr = nullptr;
  uint32_t token = 0;
  NDK_SGE sge(size_t off, size_t len) {
    NDK_SGE s{};
    s.VirtualAddress = mem.data() + off;
    s.Length = static_cast<ULONG>(len);
    s.MemoryRegionToken = token;
    return s;
  }
};

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

TEST_F(ConnTest, ConnectAcceptSendAndWrite) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  send_and_check(c, s, 1000);
  send_and_check(s, c, 70000);

  // RDMA Write client -> server, then a Send to say it is there.
  const size_t n = 300000;
  for (size_t i = 0; i < n; ++i) c.mem[i] = static_cast<uint8_t>(i ^ 0x5a);
  NDK_SGE ws = c.sge(0, n);
  ASSERT_EQ(c.qp->Dispatch->NdkWrite(c.qp, &c, &ws, 1,
                                     reinterpret_cast<uintptr_t>(s.mem.data()) + 4096, s.token, 0),
            STATUS_SUCCESS);
  auto w = poll(c.cq, 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].Status, STATUS_SUCCESS);
  // A Send behind the Write: its receive completion says the Write landed
  // (and orders the check after the placement).
  NDK_SGE rs = s.sge(1 << 19, 8);
  ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &s, &rs, 1), STATUS_SUCCESS);
  NDK_SGE ss = c.sge(0, 8);
  ASSERT_EQ(c.qp->Dispatch->NdkSend(c.qp, &c, &ss, 1, 0), STATUS_SUCCESS);
  ASSERT_EQ(poll(c.cq, 1).size(), 1u);
  auto rr = poll(s.cq, 1);
  ASSERT_EQ(rr.size(), 1u);
  EXPECT_EQ(rr[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(std::memcmp(c.mem.data(), s.mem.data() + 4096, n), 0);

  // Addresses and counters.
  sockaddr_in la{}, pa{};
  ULONG len = 2;
  EXPECT_EQ(c.conn->Dispatch->NdkGetLocalAddress(c.conn, reinterpret_cast<SOCKADDR*>(&la), &len),
            STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, sizeof la);
  ASSERT_EQ(c.conn->Dispatch->NdkGetLocalAddress(c.conn, reinterpret_cast<SOCKADDR*>(&la), &len),
            STATUS_SUCCESS);
  len = sizeof pa;
  ASSERT_EQ(s.conn->Dispatch->NdkGetPeerAddress(s.conn, reinterpret_cast<SOCKADDR*>(&pa), &len),
            STATUS_SUCCESS);
  EXPECT_EQ(la.sin_port, pa.sin_port);
  len = sizeof pa;
  ASSERT_EQ(c.conn->Dispatch->NdkGetPeerAddress(c.conn, reinterpret_cast<SOCKADDR*>(&pa), &len),
            STATUS_SUCCESS);
  EXPECT_EQ(ntohs(pa.sin_port), port);
  SOFTNDK_COUNTERS k{};
  ASSERT_EQ(SoftNdkQueryAdapterCounters(a_, &k), STATUS_SUCCESS);
  EXPECT_EQ(k.Connect, 1u);
  EXPECT_EQ(k.Accept, 1u);
  EXPECT_EQ(k.ActiveConnection, 2u);
  SOFTNDK_CONNECTION_INFO ci{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  EXPECT_EQ(ci.MpaRevision, 2u);
  EXPECT_FALSE(ci.Crc);
  EXPECT_FALSE(ci.Markers);
  EXPECT_TRUE(ci.PeerToPeer);  // the default: NDK connection semantics
  EXPECT_EQ(ci.LastTerminateSent, 0xFFFFFFFFu);
  // CompleteConnect twice, Accept again: wrong state.
  Req r;
  EXPECT_EQ(c.conn->Dispatch->NdkCompleteConnect(c.conn, nullptr, nullptr, &Req::cb, &r),
            STATUS_CONNECTION_INVALID);
  EXPECT_EQ(
      s.conn->Dispatch->NdkAccept(s.conn, s.qp, 1, 1, nullptr, 0, nullptr, nullptr, &Req::cb, &r),
      STATUS_CONNECTION_INVALID);

  // QP closes only after its connector.
  CloseWait qw;
  EXPECT_EQ(c.qp->Dispatch->NdkCloseQp(&c.qp->Header, &CloseWait::cb, &qw), STATUS_PENDING);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(qw.calls.load(), 0);
  EXPECT_EQ(close(c.conn), STATUS_SUCCESS);
  EXPECT_TRUE(eventually([&] { return qw.calls.load() == 1; }));
  // The server sees the connection end (closing the QP first let the data
  // path end the stream; the reason depends on who was first).
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  EXPECT_EQ(close(s.conn), STATUS_SUCCESS);
  EXPECT_EQ(close(l), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryAdapterCounters(a_, &k), STATUS_SUCCESS);
  EXPECT_EQ(k.ActiveConnection, 0u);
}

TEST_F(ConnTest, ConnectionDataLengthProtocolBothWays) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  std::string cpd(40, 'c'), spd(30, 's');
  cpd[0] = 'C';
  spd[0] = 'S';
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr, 8, 8, cpd), STATUS_PENDING);
  s.conn = in.next();
  ASSERT_NE(s.conn, nullptr);
  auto* k = s.conn->Dispatch;
  ULONG len = 0;
  EXPECT_EQ(k->NdkGetConnectionData(s.conn, nullptr, nullptr, nullptr, &len), STATUS_SUCCESS);
  EXPECT_EQ(len, 40u);
  len = 5;
  EXPECT_EQ(k->NdkGetConnectionData(s.conn, nullptr, nullptr, nullptr, &len),
            STATUS_INVALID_PARAMETER);
  char buf[512] = {};
  len = 10;
  EXPECT_EQ(k->NdkGetConnectionData(s.conn, nullptr, nullptr, buf, &len), STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, 40u);
  EXPECT_EQ(std::string(buf, 10), cpd.substr(0, 10));
  EXPECT_EQ(buf[10], 0);
  len = sizeof buf;
  ULONG ird = 0, ord = 0;
  EXPECT_EQ(k->NdkGetConnectionData(s.conn, &ird, &ord, buf, &len), STATUS_SUCCESS);
  EXPECT_EQ(len, 40u);
  EXPECT_EQ(std::string(buf, 40), cpd);
  EXPECT_EQ(ird, 8u);
  EXPECT_EQ(ord, 8u);
  // Callee data above MaxCalleeData.
  std::string big(300, 'x');
  Req r;
  EXPECT_EQ(k->NdkAccept(s.conn, s.qp, 8, 8, big.data(), 300, nullptr, nullptr, &Req::cb, &r),
            STATUS_INVALID_PARAMETER);
  Req ar;
  NTSTATUS as = accept(s, 8, 8, spd, &ar);
  ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
  len = 0;
  EXPECT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, nullptr, nullptr, nullptr, &len),
            STATUS_SUCCESS);
  EXPECT_EQ(len, 30u);
  len = sizeof buf;
  EXPECT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, &ird, &ord, buf, &len), STATUS_SUCCESS);
  EXPECT_EQ(std::string(buf, 30), spd);
  ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
  ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  send_and_check(c, s, 10);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, CallerDataLimit) {
  open();
  Side c;
  make_side(c);
  Req r;
  std::string big(253, 'x');
  EXPECT_EQ(start_connect(c, 9, r, 1, 1, big), STATUS_INVALID_PARAMETER);
  auto foreign = v4("192.0.2.1", 0);
  auto dst = v4("127.0.0.1", 9);
  EXPECT_EQ(c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa(foreign), sizeof foreign, sa(dst),
                                         sizeof dst, 1, 1, nullptr, 0, &Req::cb, &r),
            STATUS_INVALID_ADDRESS);
  EXPECT_EQ(c.conn->Dispatch->NdkConnect(c.conn, c.qp, sa(foreign), 3, sa(dst), sizeof dst, 1, 1,
                                         nullptr, 0, &Req::cb, &r),
            STATUS_INVALID_PARAMETER);
  EXPECT_EQ(r.calls, 0);
}

TEST_F(ConnTest, ReadLimitsAreClamped) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr, 100000, 100000), STATUS_PENDING);
  s.conn = in.next();
  ASSERT_NE(s.conn, nullptr);
  ULONG ird = 0, ord = 0;
  ASSERT_EQ(s.conn->Dispatch->NdkGetConnectionData(s.conn, &ird, &ord, nullptr, nullptr),
            STATUS_SUCCESS);
  EXPECT_EQ(ird, 128u);  // capped at the adapter maximum
  EXPECT_EQ(ord, 128u);
  Req ar;
  NTSTATUS as = accept(s, 4, 2, "", &ar);
  ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
  ASSERT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, &ird, &ord, nullptr, nullptr),
            STATUS_SUCCESS);
  EXPECT_LE(ird, 128u);
  EXPECT_LE(ord, 128u);
  EXPECT_GE(ord, 1u);
  ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
  ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  SOFTNDK_CONNECTION_INFO ci{}, si{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
  EXPECT_EQ(ci.Ord, ord);
  EXPECT_LE(ci.Ord, si.Ird);  // never more reads in flight than the target serves
  EXPECT_LE(si.Ord, ci.Ird);
  close(c.conn);
  close(s.conn);
  close(l);
}

// NdkConnect/NdkAccept: each side's limits are clamped to the adapter's
// maxima, then a peer's lower limit becomes the effective one - effective
// ORD = min(own ORD, peer IRD), IRD = min(own IRD, peer ORD) - never raised.
// Both sides report the same pair (mirrored), and the active side keeps no
// more Reads in flight than its ORD: the passive side, which terminates a
// Read beyond its IRD, serves a burst of them.
TEST_F(ConnTest, ReadLimitsAreNegotiatedNeverRaised) {
  open();
  struct Case {
    ULONG c_ird, c_ord, s_ird, s_ord;
  };
  auto cap = [](ULONG v) { return std::min<ULONG>(v, 128); };
  for (Case k : {Case{0xFFFF, 0xFFFF, 3, 5}, Case{2, 7, 16, 16}, Case{100000, 1, 0, 0},
                 Case{8, 8, 8, 8}, Case{1, 128, 128, 1}, Case{0, 4, 2, 9}}) {
    SCOPED_TRACE(testing::Message() << "connect " << k.c_ird << "/" << k.c_ord << ", accept "
                                    << k.s_ird << "/" << k.s_ord);
    Side c, s;
    make_side(c);
    make_side(s);
    Incoming in;
    uint16_t port;
    NDK_LISTENER* l = listen(in, &port);
    Req cr;
    ASSERT_EQ(start_connect(c, port, cr, k.c_ird, k.c_ord), STATUS_PENDING);
    s.conn = in.next();
    ASSERT_NE(s.conn, nullptr);
    Req ar;
    NTSTATUS as = accept(s, k.s_ird, k.s_ord, "", &ar);
    ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    const ULONG s_ird = std::min(cap(k.s_ird), cap(k.c_ord));
    const ULONG s_ord = std::min(cap(k.s_ord), cap(k.c_ird));
    ULONG ird = 0, ord = 0;
    ASSERT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, &ird, &ord, nullptr, nullptr),
              STATUS_SUCCESS);
    EXPECT_EQ(ord, s_ird);
    EXPECT_EQ(ird, s_ord);
    ASSERT_EQ(complete_connect(c), STATUS_SUCCESS);
    ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
    SOFTNDK_CONNECTION_INFO ci{}, si{};
    ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
    ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
    EXPECT_EQ(si.Ird, s_ird);
    EXPECT_EQ(si.Ord, s_ord);
    EXPECT_EQ(ci.Ord, s_ird);
    EXPECT_EQ(ci.Ird, s_ord);
    // A burst of Reads beyond the ORD is queued, not sent: all complete and
    // the passive side never terminates the connection.
    if (ci.Ord > 0) {
      const int kReads = 24;
      for (int i = 0; i < kReads; ++i) {
        NDK_SGE d = c.sge(static_cast<size_t>(i) * 4096, 4096);
        ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, nullptr, &d, 1,
                                          reinterpret_cast<uintptr_t>(s.mem.data()) + i * 4096,
                                          s.token, 0),
                  STATUS_SUCCESS);
      }
      auto r = poll(c.cq, kReads);
      ASSERT_EQ(r.size(), static_cast<size_t>(kReads));
      for (auto& e : r) EXPECT_EQ(e.Status, STATUS_SUCCESS);
      ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
      EXPECT_EQ(si.LastTerminateSent, 0xFFFFFFFFu);
    }
    close(c.conn);
    close(s.conn);
    close(l);
    close(c.qp);
    close(s.qp);
  }
}

TEST_F(ConnTest, RejectWithPrivateDataIsRefused) {
  open();
  Side c;
  make_side(c);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr, 8, 8, "hello"), STATUS_PENDING);
  NDK_CONNECTOR* sc = in.next();
  ASSERT_NE(sc, nullptr);
  char no[] = "go away";
  EXPECT_EQ(sc->Dispatch->NdkReject(sc, no, 7), STATUS_SUCCESS);
  EXPECT_EQ(sc->Dispatch->NdkReject(sc, no, 7), STATUS_CONNECTION_INVALID);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  char buf[64] = {};
  ULONG len = sizeof buf;
  ASSERT_EQ(c.conn->Dispatch->NdkGetConnectionData(c.conn, nullptr, nullptr, buf, &len),
            STATUS_SUCCESS);
  EXPECT_EQ(std::string(buf, len), "go away");
  SOFTNDK_COUNTERS k{};
  SoftNdkQueryAdapterCounters(a_, &k);
  EXPECT_EQ(k.ConnectFailure, 1u);
  EXPECT_EQ(close(sc), STATUS_SUCCESS);
  EXPECT_EQ(close(c.conn), STATUS_SUCCESS);
  EXPECT_EQ(close(l), STATUS_SUCCESS);
}

TEST_F(ConnTest, ActiveRejectAfterConnectResetsTheConnection) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr), STATUS_PENDING);
  s.conn = in.next();
  ASSERT_NE(s.conn, nullptr);
  Req ar;
  NTSTATUS as = accept(s, 8, 8, "", &ar);
  ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
  EXPECT_EQ(c.conn->Dispatch->NdkReject(c.conn, nullptr, 0), STATUS_SUCCESS);
  // Without P2P the Accept completes once the Reply is out, so it may have
  // succeeded; then the reset reaches the server as a disconnect event.
  NTSTATUS st = ar.wait(as);
  if (st == STATUS_SUCCESS) {
    EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  } else {
    EXPECT_TRUE(st == STATUS_CONNECTION_ABORTED || st == STATUS_CONNECTION_RESET) << std::hex << st;
  }
  EXPECT_EQ(complete_connect(c), STATUS_CONNECTION_INVALID);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, NothingListeningIsRefused) {
  open();
  Side c;
  make_side(c);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  auto a = v4("127.0.0.1", 0);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t l = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &l);
  Req cr;
  ASSERT_EQ(start_connect(c, ntohs(a.sin_port), cr), STATUS_PENDING);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  ::close(fd);
  // A failed connector may try again; the second attempt fails the same way.
  Req cr2;
  ASSERT_EQ(start_connect(c, ntohs(a.sin_port), cr2), STATUS_PENDING);
  EXPECT_EQ(cr2.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
}

TEST_F(ConnTest, PauseRefusesResumeAccepts) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  l->Dispatch->NdkControlConnectEvents(l, TRUE);
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr), STATUS_PENDING);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(in.next(100ms), nullptr);
  l->Dispatch->NdkControlConnectEvents(l, FALSE);
  establish(c, s, in, port);
  send_and_check(c, s, 100);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, ListenerCloseStopsAcceptingAndWaitsForItsConnectors) {
  open();
  Side c, s, c2;
  make_side(c);
  make_side(s);
  make_side(c2);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  CloseWait lw;
  EXPECT_EQ(l->Dispatch->NdkCloseListener(&l->Header, &CloseWait::cb, &lw), STATUS_PENDING);
  Req cr;
  ASSERT_EQ(start_connect(c2, port, cr), STATUS_PENDING);
  EXPECT_EQ(cr.wait(STATUS_PENDING), STATUS_CONNECTION_REFUSED);
  EXPECT_EQ(in.next(100ms), nullptr);
  send_and_check(c, s, 100);  // the delivered connection lives on
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(lw.calls.load(), 0);  // its connector is still open
  EXPECT_EQ(close(s.conn), STATUS_SUCCESS);
  EXPECT_TRUE(eventually([&] { return lw.calls.load() == 1; }));
  close(c.conn);
}

TEST_F(ConnTest, ListenAddressChecks) {
  open();
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  NDK_LISTENER* l2 = nullptr;
  ASSERT_EQ(d()->NdkCreateListener(a_, &Incoming::cb, &in, nullptr, nullptr, &l2), STATUS_SUCCESS);
  sockaddr_in got{};
  ULONG len = 0;
  EXPECT_EQ(l2->Dispatch->NdkGetLocalAddress(l2, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_INVALID_DEVICE_REQUEST);
  auto same = v4("127.0.0.1", port);
  EXPECT_EQ(l2->Dispatch->NdkListen(l2, sa(same), sizeof same, nullptr, nullptr),
            STATUS_SHARING_VIOLATION);
  auto foreign = v4("192.0.2.1", 0);
  EXPECT_EQ(l2->Dispatch->NdkListen(l2, sa(foreign), sizeof foreign, nullptr, nullptr),
            STATUS_INVALID_ADDRESS);
  auto ok = v4("127.0.0.1", 0);
  EXPECT_EQ(l2->Dispatch->NdkListen(l2, sa(ok), sizeof ok, nullptr, nullptr), STATUS_SUCCESS);
  len = 4;
  EXPECT_EQ(l2->Dispatch->NdkGetLocalAddress(l2, reinterpret_cast<SOCKADDR*>(&got), &len),
            STATUS_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, sizeof got);
  EXPECT_EQ(l2->Dispatch->NdkListen(l2, sa(ok), sizeof ok, nullptr, nullptr),
            STATUS_INVALID_DEVICE_REQUEST);
  close(l2);
  close(l);
}

TEST_F(ConnTest, SharedEndpointToSeveralListenersAndDuplicateTuple) {
  open();
  Incoming in1, in2;
  uint16_t p1, p2;
  NDK_LISTENER* l1 = listen(in1, &p1);
  NDK_LISTENER* l2 = listen(in2, &p2);
  NDK_SHARED_ENDPOINT* se = nullptr;
  auto local = v4("127.0.0.1", 0);
  ASSERT_EQ(d()->NdkCreateSharedEndpoint(a_, sa(local), sizeof local, nullptr, nullptr, &se),
            STATUS_SUCCESS);
  sockaddr_in sel{};
  ULONG len = sizeof sel;
  ASSERT_EQ(se->Dispatch->NdkGetLocalAddress(se, reinterpret_cast<SOCKADDR*>(&sel), &len),
            STATUS_SUCCESS);
  // A second endpoint on the same port is refused (one reservation).
  NDK_SHARED_ENDPOINT* se2 = nullptr;
  EXPECT_EQ(d()->NdkCreateSharedEndpoint(a_, sa(sel), sizeof sel, nullptr, nullptr, &se2),
            STATUS_SHARING_VIOLATION);

  Side c1, c2, c3, s1, s2;
  for (Side* x : {&c1, &c2, &c3, &s1, &s2}) make_side(*x, 4096);
  auto via_se = [&](Side& c, uint16_t port, Req& r) {
    c.conn = make_connector();
    auto dst = v4("127.0.0.1", port);
    return c.conn->Dispatch->NdkConnectWithSharedEndpoint(c.conn, c.qp, se, sa(dst), sizeof dst, 4,
                                                          4, nullptr, 0, &Req::cb, &r);
  };
  Req r1, r2, r3;
  ASSERT_EQ(via_se(c1, p1, r1), STATUS_PENDING);
  ASSERT_EQ(via_se(c2, p2, r2), STATUS_PENDING);
  s1.conn = in1.next();
  s2.conn = in2.next();
  ASSERT_TRUE(s1.conn && s2.conn);
  EXPECT_EQ(via_se(c3, p1, r3), STATUS_ADDRESS_ALREADY_EXISTS);
  Req a1, a2;
  NTSTATUS as1 = accept(s1, 4, 4, "", &a1), as2 = accept(s2, 4, 4, "", &a2);
  ASSERT_EQ(r1.wait(STATUS_PENDING), STATUS_SUCCESS);
  ASSERT_EQ(r2.wait(STATUS_PENDING), STATUS_SUCCESS);
  for (Side* c : {&c1, &c2}) {
    sockaddr_in la{};
    len = sizeof la;
    ASSERT_EQ(
        c->conn->Dispatch->NdkGetLocalAddress(c->conn, reinterpret_cast<SOCKADDR*>(&la), &len),
        STATUS_SUCCESS);
    EXPECT_EQ(la.sin_port, sel.sin_port);
    ASSERT_EQ(complete_connect(*c), STATUS_SUCCESS);
  }
  ASSERT_EQ(a1.wait(as1), STATUS_SUCCESS);
  ASSERT_EQ(a2.wait(as2), STATUS_SUCCESS);
  send_and_check(c1, s1, 64);
  send_and_check(c2, s2, 64);
  // The endpoint's close waits for the connectors over it.
  CloseWait sw;
  EXPECT_EQ(se->Dispatch->NdkCloseSharedEndpoint(&se->Header, &CloseWait::cb, &sw), STATUS_PENDING);
  close(c1.conn);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(sw.calls.load(), 0);
  close(c2.conn);
  close(c3.conn);
  EXPECT_TRUE(eventually([&] { return sw.calls.load() == 1; }));
  close(s1.conn);
  close(s2.conn);
  close(l1);
  close(l2);
}

TEST_F(ConnTest, DisconnectCompletesPeerEventOnceAndFlushes) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  send_and_check(c, s, 100);
  // Receives outstanding on both sides.
  for (int i = 0; i < 3; ++i) {
    NDK_SGE rs = s.sge(0, 100);
    ASSERT_EQ(s.qp->Dispatch->NdkReceive(s.qp, &s, &rs, 1), STATUS_SUCCESS);
    NDK_SGE cs = c.sge(0, 100);
    ASSERT_EQ(c.qp->Dispatch->NdkReceive(c.qp, &c, &cs, 1), STATUS_SUCCESS);
  }
  Req dr;
  NTSTATUS st = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &dr);
  // The peer's event, then its own Disconnect completes the handshake.
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  EXPECT_EQ(s.ev.reason.load(), 0u);  // graceful
  Req sdr;
  EXPECT_EQ(sdr.wait(s.conn->Dispatch->NdkDisconnect(s.conn, &Req::cb, &sdr)), STATUS_SUCCESS);
  EXPECT_EQ(dr.wait(st), STATUS_SUCCESS);
  auto cf = poll(c.cq, 3, 2000ms);
  ASSERT_EQ(cf.size(), 3u);
  for (auto& r : cf) EXPECT_EQ(r.Status, STATUS_CANCELLED);
  auto sf = poll(s.cq, 3, 2000ms);
  ASSERT_EQ(sf.size(), 3u);
  for (auto& r : sf) EXPECT_EQ(r.Status, STATUS_CANCELLED);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(s.ev.n.load(), 1);
  EXPECT_EQ(c.ev.n.load(), 0);  // no event after our own Disconnect
  // Not reusable.
  Req again;
  EXPECT_EQ(c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &again), STATUS_CONNECTION_INVALID);
  NDK_SGE ss = c.sge(0, 1);
  EXPECT_NE(c.qp->Dispatch->NdkSend(c.qp, &c, &ss, 1, 0), STATUS_SUCCESS);
  SOFTNDK_COUNTERS k{};
  SoftNdkQueryAdapterCounters(a_, &k);
  EXPECT_EQ(k.ActiveConnection, 0u);
  close(c.conn);
  close(s.conn);
  close(l);
}

TEST_F(ConnTest, CloseMidConnectCancels) {
  open();
  Side c;
  make_side(c);
  // A raw TCP listener that never answers the MPA Request.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  auto a = v4("127.0.0.1", 0);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t al = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &al);
  Req cr;
  ASSERT_EQ(start_connect(c, ntohs(a.sin_port), cr), STATUS_PENDING);
  std::this_thread::sleep_for(50ms);
  CloseWait w;
  NTSTATUS st = c.conn->Dispatch->NdkCloseConnector(&c.conn->Header, &CloseWait::cb, &w);
  if (st == STATUS_PENDING) {
    EXPECT_TRUE(eventually([&] { return w.calls.load() == 1; }));
  }
  // The request completed (cancelled) before the close did.
  EXPECT_EQ(cr.calls, 1);
  EXPECT_EQ(cr.st, STATUS_CANCELLED);
  ::close(fd);
}

TEST_F(ConnTest, CloseIncomingAndMidAccept) {
  open();
  Side c, c2, s2;
  make_side(c);
  make_side(c2);
  make_side(s2);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  // Closing an incoming connector refuses it.
  Req cr;
  ASSERT_EQ(start_connect(c, port, cr), STATUS_PENDING);
  NDK_CONNECTOR* sc = in.next();
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(close(sc), STATUS_SUCCESS);
  NTSTATUS st = cr.wait(STATUS_PENDING);
  EXPECT_NE(st, STATUS_SUCCESS);
  EXPECT_NE(st, STATUS_PENDING);
  // P2P off: Accept completes after the Reply; close right after Accept.
  Req cr2;
  ASSERT_EQ(start_connect(c2, port, cr2), STATUS_PENDING);
  s2.conn = in.next();
  ASSERT_NE(s2.conn, nullptr);
  Req ar;
  NTSTATUS as = accept(s2, 8, 8, "", &ar);
  EXPECT_EQ(close(s2.conn), STATUS_SUCCESS);
  EXPECT_EQ(ar.calls, 1);  // completed before the close did
  (void)as;
  cr2.wait(STATUS_PENDING);
  close(c2.conn);
  close(c.conn);
  close(l);
}

TEST_F(ConnTest, CloseMidTransferIsSafe) {
  open(0, 2);
  Side c, s;
  make_side(c, 4 << 20);
  make_side(s, 4 << 20);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    while (!stop.load()) {
      NDK_SGE ws = c.sge(0, 1 << 20);
      NTSTATUS st = c.qp->Dispatch->NdkWrite(c.qp, nullptr, &ws, 1,
                                             reinterpret_cast<uintptr_t>(s.mem.data()), s.token, 0);
      if (st != STATUS_SUCCESS && st != STATUS_INSUFFICIENT_RESOURCES) break;
      NDK_RESULT r[16];
      c.cq->Dispatch->NdkGetCqResults(c.cq, r, 16);
    }
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(close(s.conn), STATUS_SUCCESS);  // RST under load
  EXPECT_TRUE(eventually([&] { return c.ev.n.load() == 1; }));
  stop = true;
  writer.join();
  EXPECT_EQ(close(c.conn), STATUS_SUCCESS);
  close(l);
}

TEST_F(ConnTest, ResetFaultAndQueryInfo) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  SOFTNDK_FAULT f{};
  f.Type = SoftNdkFaultDelayTx;  // DelayMs 0: nothing to delay by
  EXPECT_EQ(SoftNdkInjectConnectionFault(c.conn, &f), STATUS_INVALID_PARAMETER);
  const uint32_t bogus = 99;  // what a C caller can store; not an enumerator
  std::memcpy(&f.Type, &bogus, sizeof bogus);
  EXPECT_EQ(SoftNdkInjectConnectionFault(c.conn, &f), STATUS_INVALID_PARAMETER);
  f.Type = SoftNdkFaultResetConnection;
  EXPECT_EQ(SoftNdkInjectConnectionFault(c.conn, &f), STATUS_SUCCESS);
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  EXPECT_EQ(s.ev.reason.load(), static_cast<ULONG>(STATUS_CONNECTION_RESET));
  EXPECT_EQ(SoftNdkInjectConnectionFault(c.conn, &f), STATUS_CONNECTION_INVALID);
  SOFTNDK_COUNTERS qc{};
  EXPECT_EQ(SoftNdkQueryQpCounters(c.qp, &qc), STATUS_SUCCESS);
  EXPECT_EQ(qc.Connect, 1u);
  EXPECT_EQ(qc.Accept, 0u);
  EXPECT_EQ(qc.ActiveConnection, 0u);  // reset: no longer established
  close(c.conn);
  close(s.conn);
  close(l);
}

// SoftNdkQueryConnectionTcpInfo: the socket's TCP state through the ABI.
// On loopback the automatic congestion rule gives cubic at both ends
// (tests/conn/netns_test.cc covers the rule itself); the byte counts follow
// what crossed; a short Size and a connector without a connection fail.
TEST_F(ConnTest, TcpInfoReportsTheSocketsState) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  NDK_CONNECTOR* idle = make_connector();
  SOFTNDK_TCP_INFO t{};
  t.Size = sizeof t;
  EXPECT_EQ(SoftNdkQueryConnectionTcpInfo(idle, &t), STATUS_CONNECTION_INVALID);
  close(idle);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  send_and_check(c, s, 200000);
  SOFTNDK_TCP_INFO ct{}, st{};
  ct.Size = st.Size = sizeof ct;
  ASSERT_EQ(SoftNdkQueryConnectionTcpInfo(c.conn, &ct), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryConnectionTcpInfo(s.conn, &st), STATUS_SUCCESS);
  EXPECT_EQ(ct.Size, sizeof ct);
  const bool auto_rule = std::getenv("SOFTNDK_TCP_CONGESTION") == nullptr;
  if (auto_rule) {
    EXPECT_STREQ(ct.CongestionControl, "cubic");
    EXPECT_STREQ(st.CongestionControl, "cubic");
  }
  // The Send's 200,000 bytes plus the MPA exchange went one way (with
  // SOFTNDK_SAMEHOST=on the stream may have moved to the same-host ring,
  // docs/samehost.md section 4: then the ring carried them) ...
  SOFTNDK_PATH_INFO pi{};
  pi.Size = sizeof pi;
  ASSERT_EQ(SoftNdkQueryConnectionPath(c.conn, &pi), STATUS_SUCCESS);
  const uint64_t ring = pi.RingOut ? pi.RingOutOctets : 0;
  EXPECT_GE(ct.BytesSent + ring, 200000u);
  EXPECT_GE(st.BytesReceived + ring, 200000u);
  EXPECT_LT(st.BytesSent, 10000u);  // ... and little more than the Reply came back
  EXPECT_GT(ct.SendMss, 0u);
  EXPECT_GT(ct.SendCwnd, 0u);
  SOFTNDK_TCP_INFO small{};
  small.Size = sizeof small - 1;
  EXPECT_EQ(SoftNdkQueryConnectionTcpInfo(c.conn, &small), STATUS_INVALID_PARAMETER);
  EXPECT_EQ(small.BytesSent, 0u);
  EXPECT_EQ(SoftNdkQueryConnectionTcpInfo(c.conn, nullptr), STATUS_INVALID_PARAMETER);
  close(c.conn);
  close(s.conn);
  close(l);
}

class P2pTest : public ConnTest, public ::testing::WithParamInterface<ULONG> {};

TEST_P(P2pTest, RtrThenData) {
  open(SOFTNDK_MPA_PEER_TO_PEER | GetParam());
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  SOFTNDK_CONNECTION_INFO ci{}, si{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  ASSERT_EQ(SoftNdkQueryConnectionInfo(s.conn, &si), STATUS_SUCCESS);
  EXPECT_TRUE(ci.PeerToPeer);
  EXPECT_TRUE(si.PeerToPeer);
  EXPECT_EQ(ci.RtrType, GetParam() >> 4);
  EXPECT_EQ(si.RtrType, GetParam() >> 4);
  send_and_check(s, c, 500);  // responder first: the RTR went ahead
  send_and_check(c, s, 500);
  // An RDMA Read works after a Read RTR took (and returned) an ORD slot.
  for (size_t i = 0; i < 1000; ++i) s.mem[8192 + i] = static_cast<uint8_t>(i * 13);
  NDK_SGE rs = c.sge(8192, 1000);
  ASSERT_EQ(c.qp->Dispatch->NdkRead(c.qp, &c, &rs, 1,
                                    reinterpret_cast<uintptr_t>(s.mem.data()) + 8192, s.token, 0),
            STATUS_SUCCESS);
  auto r = poll(c.cq, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
  EXPECT_EQ(std::memcmp(c.mem.data() + 8192, s.mem.data() + 8192, 1000), 0);
  EXPECT_EQ(ci.LastTerminateReceived, 0xFFFFFFFFu);
  close(c.conn);
  close(s.conn);
  close(l);
}
INSTANTIATE_TEST_SUITE_P(Rtr, P2pTest,
                         ::testing::Values(SOFTNDK_MPA_RTR_WRITE, SOFTNDK_MPA_RTR_READ));

TEST_F(ConnTest, CrcRequired) {
  open(SOFTNDK_MPA_CRC_REQUIRED | SOFTNDK_MPA_RTR_WRITE | SOFTNDK_MPA_RTR_READ);
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  SOFTNDK_CONNECTION_INFO ci{};
  ASSERT_EQ(SoftNdkQueryConnectionInfo(c.conn, &ci), STATUS_SUCCESS);
  EXPECT_TRUE(ci.Crc);
  send_and_check(c, s, 100000);
  close(c.conn);
  close(s.conn);
  close(l);
}

}  // namespace

namespace {
TEST_F(ConnTest, DisconnectTimesOutWhenThePeerNeverCloses) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  Req dr;
  auto t0 = std::chrono::steady_clock::now();
  NTSTATUS st = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &dr);
  EXPECT_EQ(dr.wait(st, 6000ms), STATUS_IO_TIMEOUT);  // DisconnectTimeoutMs = 2000
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4000ms);
  EXPECT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  close(c.conn);
  close(s.conn);
  close(l);
}
}  // namespace

namespace {
TEST_F(ConnTest, PassiveQpClosesAfterItsConnector) {
  open();
  Side c, s;
  make_side(c);
  make_side(s);
  Incoming in;
  uint16_t port;
  NDK_LISTENER* l = listen(in, &port);
  establish(c, s, in, port);
  send_and_check(c, s, 10);
  Req dr;
  NTSTATUS st = c.conn->Dispatch->NdkDisconnect(c.conn, &Req::cb, &dr);
  ASSERT_TRUE(eventually([&] { return s.ev.n.load() == 1; }));
  Req sdr;
  EXPECT_EQ(sdr.wait(s.conn->Dispatch->NdkDisconnect(s.conn, &Req::cb, &sdr)), STATUS_SUCCESS);
  EXPECT_EQ(dr.wait(st), STATUS_SUCCESS);
  EXPECT_EQ(close(s.conn), STATUS_SUCCESS);
  EXPECT_EQ(close(s.qp), STATUS_SUCCESS);
  EXPECT_EQ(close(c.conn), STATUS_SUCCESS);
  EXPECT_EQ(close(c.qp), STATUS_SUCCESS);
  close(l);
}
}  // namespace
