// SPDX-License-Identifier: Apache-2.0
// obs_fixture.h - two QPs connected through the public C ABI (listener,
// NdkConnect/NdkAccept/NdkCompleteConnect) on 127.0.0.1, each on its own
// adapter instance of "lo", so that one end's adapter counters and traces
// hold only that end's connection.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../connector/abi_util.h"
#include "softndk/softndk.h"

namespace obstest {

using namespace std::chrono_literals;
using connector_test::CloseWait;
using connector_test::Events;
using connector_test::eventually;
using connector_test::Incoming;
using connector_test::kVersion;
using connector_test::Req;
inline constexpr uint32_t kNoTerminate = 0xFFFFFFFFu;

struct Side {
  NDK_ADAPTER* a = nullptr;
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
  uint64_t addr(size_t off) const { return reinterpret_cast<uintptr_t>(mem.data()) + off; }
  SOFTNDK_COUNTERS qp_counters() const {
    SOFTNDK_COUNTERS k{};
    EXPECT_EQ(SoftNdkQueryQpCounters(qp, &k), STATUS_SUCCESS);
    return k;
  }
  SOFTNDK_COUNTERS adapter_counters() const {
    SOFTNDK_COUNTERS k{};
    EXPECT_EQ(SoftNdkQueryAdapterCounters(a, &k), STATUS_SUCCESS);
    return k;
  }
  SOFTNDK_CONNECTION_INFO info() const {
    SOFTNDK_CONNECTION_INFO i{};
    EXPECT_EQ(SoftNdkQueryConnectionInfo(conn, &i), STATUS_SUCCESS);
    return i;
  }
  // Zero-length Writes this end (an initiator) sent to a peer that stayed
  // silent past its wake-up bound (docs/compatibility.md note 1). Between
  // two softndk ends none goes once the same-host rendezvous found the
  // peer, but on a slow host (ASan, load 20) the rendezvous can take longer
  // than the 300 ms the wake-up waits for it: each is one more Write FPDU
  // on the wire, in the counters and in a trace.
  ULONG wake_ups() const {
    SOFTNDK_PEER_ACTIVITY act{};
    act.Size = sizeof act;
    EXPECT_EQ(SoftNdkQueryPeerActivity(conn, &act), STATUS_SUCCESS);
    return act.WakeUpsSent;
  }
};

inline sockaddr_in v4(const char* ip, uint16_t port) {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(port);
  inet_pton(AF_INET, ip, &s.sin_addr);
  return s;
}
inline const SOCKADDR* sa(const sockaddr_in& s) { return reinterpret_cast<const SOCKADDR*>(&s); }

// A scratch file path, removed when the test passed.
inline std::string temp_path(const std::string& tag) {
  return (std::filesystem::temp_directory_path() /
          ("softndk-obs-" + tag + "-" + std::to_string(::getpid()) + ".pcap"))
      .string();
}

class ObsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (Side* s : {&c_, &s_}) {
      for (void* o : {static_cast<void*>(s->conn), static_cast<void*>(s->qp)})
        if (o != nullptr) close(o);
    }
    if (l_ != nullptr) close(l_);
    if (c_.a != nullptr) SoftNdkCloseAdapter(c_.a);
    if (s_.a != nullptr && s_.a != c_.a) SoftNdkCloseAdapter(s_.a);
  }

  NDK_ADAPTER* open_adapter(ULONG mpa_flags) {
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    p.EngineThreads = 1;
    p.MpaFlags = mpa_flags;
    p.ConnectTimeoutMs = 3000;
    p.DisconnectTimeoutMs = 2000;
    NDK_ADAPTER* a = nullptr;
    EXPECT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_SUCCESS);
    return a;
  }

  // Adapters and QPs for both ends; the connection is made by connect().
  void prepare(ULONG mpa_flags = 0, size_t mem = 1 << 20) {
    c_.a = open_adapter(mpa_flags);
    s_.a = open_adapter(mpa_flags);
    ASSERT_TRUE(c_.a && s_.a);
    make_side(c_, mem);
    make_side(s_, mem);
  }

  // Both ends in one adapter instance.
  void prepare_one_adapter(ULONG mpa_flags = 0, size_t mem = 1 << 20) {
    c_.a = s_.a = open_adapter(mpa_flags);
    ASSERT_TRUE(c_.a);
    make_side(c_, mem);
    make_side(s_, mem);
  }

  void make_side(Side& s, size_t mem) {
    const NDK_ADAPTER_DISPATCH* d = s.a->Dispatch;
    ASSERT_EQ(d->NdkCreatePd(s.a, nullptr, nullptr, &s.pd), STATUS_SUCCESS);
    ASSERT_EQ(d->NdkCreateCq(s.a, 1024, nullptr, nullptr, nullptr, nullptr, nullptr, &s.cq),
              STATUS_SUCCESS);
    ASSERT_EQ(s.pd->Dispatch->NdkCreateQp(s.pd, s.cq, s.cq, &s, 64, 64, 4, 4, 64, nullptr, nullptr,
                                          &s.qp),
              STATUS_SUCCESS);
    s.mem.assign(mem, 0);
    ASSERT_EQ(s.pd->Dispatch->NdkCreateMr(s.pd, FALSE, nullptr, nullptr, &s.mr), STATUS_SUCCESS);
    MDL mdl{};
    mdl.VirtualAddress = s.mem.data();
    mdl.ByteCount = s.mem.size();
    ASSERT_EQ(s.mr->Dispatch->NdkRegisterMr(s.mr, &mdl, s.mem.size(),
                                            NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
                                                NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                                NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                                            nullptr, nullptr),
              STATUS_SUCCESS);
    s.token = s.mr->Dispatch->NdkGetRemoteTokenFromMr(s.mr);
  }

  // Client c_ (initiator) to server s_ through a listener on s_'s adapter.
  void connect() {
    ASSERT_EQ(s_.a->Dispatch->NdkCreateListener(s_.a, &Incoming::cb, &in_, nullptr, nullptr, &l_),
              STATUS_SUCCESS);
    auto any = v4("127.0.0.1", 0);
    Req lr;
    ASSERT_EQ(lr.wait(l_->Dispatch->NdkListen(l_, sa(any), sizeof any, &Req::cb, &lr)),
              STATUS_SUCCESS);
    sockaddr_in got{};
    ULONG len = sizeof got;
    ASSERT_EQ(l_->Dispatch->NdkGetLocalAddress(l_, reinterpret_cast<SOCKADDR*>(&got), &len),
              STATUS_SUCCESS);
    port_ = ntohs(got.sin_port);
    ASSERT_EQ(c_.a->Dispatch->NdkCreateConnector(c_.a, nullptr, nullptr, &c_.conn), STATUS_SUCCESS);
    auto src = v4("127.0.0.1", 0);
    auto dst = v4("127.0.0.1", port_);
    Req cr;
    ASSERT_EQ(c_.conn->Dispatch->NdkConnect(c_.conn, c_.qp, sa(src), sizeof src, sa(dst),
                                            sizeof dst, 8, 8, nullptr, 0, &Req::cb, &cr),
              STATUS_PENDING);
    s_.conn = in_.next();
    ASSERT_NE(s_.conn, nullptr);
    Req ar;
    NTSTATUS as = s_.conn->Dispatch->NdkAcceptEx(s_.conn, s_.qp, 8, 8, nullptr, 0, &Events::cb_ex,
                                                 &s_.ev, &Req::cb, &ar);
    ASSERT_EQ(cr.wait(STATUS_PENDING), STATUS_SUCCESS);
    Req cc;
    ASSERT_EQ(cc.wait(c_.conn->Dispatch->NdkCompleteConnectEx(c_.conn, &Events::cb_ex, &c_.ev,
                                                              &Req::cb, &cc)),
              STATUS_SUCCESS);
    ASSERT_EQ(ar.wait(as), STATUS_SUCCESS);
  }

  // NdkDisconnect on both ends at once (a graceful close waits for the
  // peer's). STATUS_SUCCESS for each, or STATUS_CONNECTION_ABORTED where
  // the connection had already broken (a Terminate).
  void disconnect_both(bool broken = false) {
    Req rc, rs;
    NTSTATUS c = c_.conn->Dispatch->NdkDisconnect(c_.conn, &Req::cb, &rc);
    NTSTATUS s = s_.conn->Dispatch->NdkDisconnect(s_.conn, &Req::cb, &rs);
    for (NTSTATUS st : {rc.wait(c), rs.wait(s)}) {
      if (broken) {
        EXPECT_TRUE(st == STATUS_SUCCESS || st == STATUS_CONNECTION_ABORTED) << std::hex << st;
      } else {
        EXPECT_EQ(st, STATUS_SUCCESS);
      }
    }
  }

  static NTSTATUS close(void* obj) {
    auto* h = static_cast<NDK_OBJECT_HEADER*>(obj);
    // Every dispatch table starts with its close function.
    auto close_fn = *reinterpret_cast<NDK_FN_CLOSE_OBJECT const*>(
        reinterpret_cast<NDK_CONNECTOR*>(h)->Dispatch);
    CloseWait w;
    NTSTATUS st = close_fn(h, &CloseWait::cb, &w);
    if (st == STATUS_PENDING)
      return eventually([&] { return w.calls.load() == 1; }) ? STATUS_SUCCESS : STATUS_IO_TIMEOUT;
    return st;
  }

  // Busy-polls (this drives receive progress) for n completions.
  static std::vector<NDK_RESULT> poll(NDK_CQ* cq, size_t n, std::chrono::milliseconds t = 5000ms) {
    std::vector<NDK_RESULT> out;
    auto deadline = std::chrono::steady_clock::now() + t;
    NDK_RESULT r[16];
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      ULONG k = cq->Dispatch->NdkGetCqResults(
          cq, r, static_cast<ULONG>(std::min<size_t>(16, n - out.size())));
      out.insert(out.end(), r, r + k);
      if (k == 0) std::this_thread::sleep_for(50us);
    }
    return out;
  }
  // Whatever arrives within t (to check that nothing more does).
  static std::vector<NDK_RESULT> drain(NDK_CQ* cq, std::chrono::milliseconds t = 100ms) {
    return poll(cq, 1u << 30, t);
  }

  static void fill(Side& s, size_t off, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; ++i) s.mem[off + i] = static_cast<uint8_t>(i * 7 + seed);
  }

  // Send of n bytes from `from` (offset 0) into a receive posted at `to`
  // (offset 0); both complete with success.
  void send_ok(Side& from, Side& to, size_t n, uint32_t seed = 3) {
    fill(from, 0, n, seed);
    NDK_SGE rs = to.sge(0, n);
    ASSERT_EQ(to.qp->Dispatch->NdkReceive(to.qp, &to, &rs, 1), STATUS_SUCCESS);
    NDK_SGE ss = from.sge(0, n);
    ASSERT_EQ(from.qp->Dispatch->NdkSend(from.qp, &from, &ss, 1, 0), STATUS_SUCCESS);
    auto a = poll(from.cq, 1);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].Status, STATUS_SUCCESS);
    auto b = poll(to.cq, 1);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(b[0].BytesTransferred, n);
    EXPECT_EQ(std::memcmp(from.mem.data(), to.mem.data(), n), 0);
  }
  // Write of n bytes from `from` offset 0 to `to` at offset `at`, then a
  // 16-byte Send (the last 64 bytes of memory on both sides): a Write has
  // no completion at its target, and the Send's receive completion is what
  // says (iWARP placement order) that the Write landed.
  void write_ok(Side& from, Side& to, size_t n, size_t at) {
    fill(from, 0, n, 11);
    NDK_SGE ss = from.sge(0, n);
    ASSERT_EQ(from.qp->Dispatch->NdkWrite(from.qp, &from, &ss, 1, to.addr(at), to.token, 0),
              STATUS_SUCCESS);
    NDK_SGE rs = to.sge(to.mem.size() - 64, 64), fs = from.sge(from.mem.size() - 64, 16);
    ASSERT_EQ(to.qp->Dispatch->NdkReceive(to.qp, &to, &rs, 1), STATUS_SUCCESS);
    ASSERT_EQ(from.qp->Dispatch->NdkSend(from.qp, &from, &fs, 1, 0), STATUS_SUCCESS);
    auto a = poll(from.cq, 2);
    ASSERT_EQ(a.size(), 2u);
    for (auto& r : a) EXPECT_EQ(r.Status, STATUS_SUCCESS);
    auto b = poll(to.cq, 1);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(from.mem.data(), to.mem.data() + at, n), 0);
  }
  // Read of n bytes from `peer` offset `at` into `from` at offset `into`.
  void read_ok(Side& from, Side& peer, size_t n, size_t at, size_t into) {
    fill(peer, at, n, 29);
    NDK_SGE ss = from.sge(into, n);
    ASSERT_EQ(from.qp->Dispatch->NdkRead(from.qp, &from, &ss, 1, peer.addr(at), peer.token, 0),
              STATUS_SUCCESS);
    auto a = poll(from.cq, 1);
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(from.mem.data() + into, peer.mem.data() + at, n), 0);
  }

  Side c_, s_;
  NDK_LISTENER* l_ = nullptr;
  Incoming in_;
  uint16_t port_ = 0;
};

// A shell command's standard output, standard error and how it ended.
struct CmdResult {
  std::string out, err;
  int status = -1;  // the wait status (pclose); -1: not started
  bool ok() const { return status == 0; }
  // "exit N" / "signal N" / "not started", and its standard error.
  std::string how() const {
    std::string h = status == -1          ? std::string("not started")
                    : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                          : "exit " + std::to_string(WEXITSTATUS(status));
    return err.empty() ? h : h + ", stderr: " + err;
  }
};

// Runs a shell command; its standard error is kept (in a scratch file), so
// a failing tool says why instead of looking like empty output.
inline CmdResult run_cmd(const std::string& cmd) {
  CmdResult r;
  const std::string errf = (std::filesystem::temp_directory_path() /
                            ("softndk-obs-stderr-" + std::to_string(::getpid()) + ".txt"))
                               .string();
  FILE* f = ::popen((cmd + " 2>" + errf).c_str(), "r");
  if (f == nullptr) {
    r.err = std::string("popen: ") + std::strerror(errno);
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  r.status = ::pclose(f);
  if (FILE* e = std::fopen(errf.c_str(), "r")) {
    while ((n = std::fread(buf, 1, sizeof buf, e)) > 0) r.err.append(buf, n);
    std::fclose(e);
  }
  std::filesystem::remove(errf);
  return r;
}

// Runs a shell command and returns its standard output.
inline std::string run(const std::string& cmd) { return run_cmd(cmd + " 2>/dev/null").out; }

// The packet records in a pcap file, counted without tshark: -1 if the
// file is missing or its header or a record is cut short.
inline long pcap_records(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return -1;
  uint8_t h[24];
  long n = std::fread(h, 1, sizeof h, f) == sizeof h ? 0 : -1;
  uint8_t rec[16];
  size_t got;
  while (n >= 0 && (got = std::fread(rec, 1, sizeof rec, f)) > 0) {
    uint32_t incl = 0;
    std::memcpy(&incl, rec + 8, sizeof incl);  // host order, like the writer's magic
    if (got != sizeof rec || std::fseek(f, static_cast<long>(incl), SEEK_CUR) != 0)
      n = -1;
    else
      ++n;
  }
  if (n >= 0 && std::ftell(f) != static_cast<long>(std::filesystem::file_size(path))) n = -1;
  std::fclose(f);
  return n;
}

inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) v.push_back(l);
  return v;
}

}  // namespace obstest
