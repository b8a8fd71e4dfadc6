// SPDX-License-Identifier: Apache-2.0
// dp_fixture.h - two connected QPs over 127.0.0.1 for the data-path tests.
//
// Objects come from the public C ABI on the "lo" adapter; the connection is
// made with the TCP/MPA engine of that adapter (tcp::Listener +
// tcp::ActiveConnect) and handed to rdmap::start_stream(), exactly what the
// connector glue does after NdkConnect/NdkAccept.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "ndk/adapter.h"
#include "ndk/cq.h"
#include "ndk/object.h"
#include "ndk/qp.h"
#include "rdmap/stream.h"
#include "softndk/softndk.h"
#include "transport/tcp/connector.h"
#include "transport/tcp/listener.h"

namespace dptest {

using namespace std::chrono_literals;
namespace ndk = softndk::ndk;
namespace tcp = softndk::tcp;
namespace rdmap = softndk::rdmap;

inline constexpr NDK_VERSION kVersion{NDK_VERSION_MAJOR, NDK_VERSION_MINOR};

// Registered memory a test body let go of. The data path may still touch it
// after the body returned (a Write completes at the initiator once TCP took
// it, before the target placed it; a posted receive or a queued Send still
// names it), so it is only freed with the fixture, after TearDown stopped
// every stream and closed the adapter.
struct Graveyard {
  std::mutex mu;
  std::vector<std::vector<uint8_t>> mem;
};

struct Buf {
  std::vector<uint8_t> mem;
  NDK_MR* mr = nullptr;
  uint32_t token = 0;
  Graveyard* grave = nullptr;

  Buf() = default;
  Buf(Buf&& o) noexcept
      : mem(std::move(o.mem)), mr(o.mr), token(o.token), grave(std::exchange(o.grave, nullptr)) {}
  Buf& operator=(Buf&& o) noexcept {
    if (this != &o) {
      bury();
      mem = std::move(o.mem);
      mr = o.mr;
      token = o.token;
      grave = std::exchange(o.grave, nullptr);
    }
    return *this;
  }
  ~Buf() { bury(); }
  void bury() {
    if (grave != nullptr && !mem.empty()) {
      std::lock_guard lk(grave->mu);
      grave->mem.push_back(std::move(mem));  // the heap block keeps its address
    }
    mem = {};
    grave = nullptr;
  }
  uint8_t* data() { return mem.data(); }
  uint64_t addr() const { return reinterpret_cast<uintptr_t>(mem.data()); }
  NDK_SGE sge(size_t off, size_t len) const {
    NDK_SGE s{};
    s.VirtualAddress = const_cast<uint8_t*>(mem.data()) + off;
    s.Length = static_cast<ULONG>(len);
    s.MemoryRegionToken = token;
    return s;
  }
};

struct Side {
  NDK_PD* pd = nullptr;
  NDK_CQ* cq = nullptr;   // receive CQ
  NDK_CQ* icq = nullptr;  // initiator CQ (same as cq unless asked)
  NDK_QP* qp = nullptr;
  NDK_SRQ* srq = nullptr;
  ndk::Qp* q = nullptr;
  std::shared_ptr<tcp::Connection> conn;
  std::shared_ptr<rdmap::Stream> stream;
  // Dispatch shortcuts.
  const NDK_QP_DISPATCH* d() const { return qp->Dispatch; }
};

struct SideConfig {
  ULONG cq_depth = 1024;
  bool separate_icq = false;
  ULONG rq = 256, sq = 256, rsge = 16, ssge = 16, inl = 256;
  NDK_SRQ* srq = nullptr;
  NDK_FN_CQ_NOTIFICATION_CALLBACK notify = nullptr;
  void* notify_ctx = nullptr;
  NDK_PD* pd = nullptr;  // share a PD
};

class DpTest : public ::testing::Test {
 protected:
  void SetUp() override { open(); }
  void TearDown() override {
    for (Side* s : sides_) teardown_side(*s);
    for (auto& c : raw_conns_) c->abort();
    if (a_ != nullptr) SoftNdkCloseAdapter(a_);
    a_ = nullptr;
  }

  void open(ULONG threads = 1, ULONG flags = 0) {
    SOFTNDK_OPEN_PARAMETERS p{};
    p.Size = sizeof p;
    p.EngineThreads = threads;
    p.Flags = flags;
    ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a_), STATUS_SUCCESS);
    ndk::Adapter::from(a_, &adapter_);
  }

  NDK_PD* make_pd() {
    NDK_PD* pd = nullptr;
    EXPECT_EQ(a_->Dispatch->NdkCreatePd(a_, nullptr, nullptr, &pd), STATUS_SUCCESS);
    return pd;
  }
  NDK_CQ* make_cq(ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK cb = nullptr, void* ctx = nullptr) {
    NDK_CQ* cq = nullptr;
    EXPECT_EQ(a_->Dispatch->NdkCreateCq(a_, depth, cb, ctx, nullptr, nullptr, nullptr, &cq),
              STATUS_SUCCESS);
    return cq;
  }
  NDK_SRQ* make_srq(NDK_PD* pd, ULONG depth, ULONG threshold = 0,
                    NDK_FN_SRQ_NOTIFICATION_CALLBACK cb = nullptr, void* ctx = nullptr) {
    NDK_SRQ* srq = nullptr;
    EXPECT_EQ(pd->Dispatch->NdkCreateSrq(pd, depth, 16, threshold, cb, ctx, nullptr, nullptr,
                                         nullptr, &srq),
              STATUS_SUCCESS);
    return srq;
  }

  void make_side(Side& s, const SideConfig& c = {}) {
    s.pd = c.pd ? c.pd : make_pd();
    s.cq = make_cq(c.cq_depth, c.notify, c.notify_ctx);
    s.icq = c.separate_icq ? make_cq(c.cq_depth) : s.cq;
    s.srq = c.srq;
    if (c.srq != nullptr) {
      ASSERT_EQ(s.pd->Dispatch->NdkCreateQpWithSrq(s.pd, s.cq, s.icq, c.srq, &s, c.sq, c.ssge,
                                                   c.inl, nullptr, nullptr, &s.qp),
                STATUS_SUCCESS);
    } else {
      ASSERT_EQ(s.pd->Dispatch->NdkCreateQp(s.pd, s.cq, s.icq, &s, c.rq, c.sq, c.rsge, c.ssge,
                                            c.inl, nullptr, nullptr, &s.qp),
                STATUS_SUCCESS);
    }
    ndk::resolve(s.qp, NdkObjectTypeQp, &s.q, true);
    sides_.push_back(&s);
  }

  // Connects a (initiator) to b (responder) and starts both streams.
  void connect(Side& a, Side& b, uint16_t ird = 16, uint16_t ord = 16, bool crc = false,
               uint16_t b_ird = 0, uint16_t b_ord = 0) {
    std::shared_ptr<tcp::Connection> ca, cb;
    establish(&ca, &cb, ird, ord, crc, b_ird, b_ord);
    if (!ca || !cb) return;
    a.conn = ca;
    b.conn = cb;
    a.stream = rdmap::start_stream(a.q, a.conn, options(a));
    b.stream = rdmap::start_stream(b.q, b.conn, options(b));
    ASSERT_TRUE(a.stream && b.stream);
    wait_connected(a);
    wait_connected(b);
  }

  // Connects an initiator with no QP behind it to b (responder) and starts
  // only b's stream: the test drives the initiator's socket by hand
  // (raw_peer.h). Returns the initiator's connection.
  std::shared_ptr<tcp::Connection> connect_raw(Side& b, bool crc = false, uint16_t b_ird = 0) {
    std::shared_ptr<tcp::Connection> ca, cb;
    establish(&ca, &cb, 16, 16, crc, b_ird, 0);
    if (!ca || !cb) return nullptr;
    raw_conns_.push_back(ca);
    b.conn = cb;
    b.stream = rdmap::start_stream(b.q, b.conn, options(b));
    EXPECT_TRUE(b.stream);
    wait_connected(b);
    return ca;
  }

  // What the connection glue passes: the adapter's SOFTNDK_SAMEHOST.
  static rdmap::StreamOptions options(Side& s) {
    rdmap::StreamOptions so;
    so.samehost = s.q->adapter()->samehost() ? 1 : 0;
    return so;
  }

  void wait_connected(Side& s) {
    for (int i = 0; i < 5000 && s.q->state() != ndk::QpState::kConnected; ++i)
      std::this_thread::sleep_for(1ms);
    ASSERT_EQ(s.q->state(), ndk::QpState::kConnected);
  }

  // Where establish() listens and connects from: each side's calls run
  // through a wrapper (e.g. inside a network namespace), and the initiator
  // may be sent to another port than the listener's (a relay).
  struct Route {
    std::function<void(const std::function<void()>&)> listen_in, connect_in;
    const char* listen_ip = "127.0.0.1";
    std::function<uint16_t(uint16_t)> via;
  };

  // A TCP + MPA connection made by the engine: *out_a the initiator's end,
  // *out_b the responder's (both left null on failure).
  void establish(std::shared_ptr<tcp::Connection>* out_a, std::shared_ptr<tcp::Connection>* out_b,
                 uint16_t ird, uint16_t ord, bool crc, uint16_t b_ird, uint16_t b_ord) {
    establish(out_a, out_b, ird, ord, crc, b_ird, b_ord, Route{});
  }
  void establish(std::shared_ptr<tcp::Connection>* out_a, std::shared_ptr<tcp::Connection>* out_b,
                 uint16_t ird, uint16_t ord, bool crc, uint16_t b_ird, uint16_t b_ord,
                 const Route& route) {
    auto run_in = [](const std::function<void(const std::function<void()>&)>& in,
                     const std::function<void()>& f) { in ? in(f) : f(); };
    tcp::ConnSettings st;
    st.mpa.crc_required = crc;
    st.congestion = adapter_->tcp_congestion();  // SOFTNDK_TCP_CONGESTION, as NDK connectors
    std::mutex mu;
    std::condition_variable cv;
    std::shared_ptr<tcp::Connection> ca, cb;
    bool a_done = false, b_done = false;
    NTSTATUS as = STATUS_PENDING, bs = STATUS_PENDING;
    uint16_t rird = b_ird ? b_ird : ird, rord = b_ord ? b_ord : ord;
    std::shared_ptr<tcp::Listener> l;
    run_in(route.listen_in, [&] {
      ASSERT_EQ(tcp::Listener::create(
                    adapter_->engine(), st, *tcp::SockAddr::parse(route.listen_ip, 0), 16,
                    [&, rird, rord](std::shared_ptr<tcp::PendingConnection> p) {
                      p->accept(rird, rord, {},
                                [&](NTSTATUS s, std::shared_ptr<tcp::Connection> c) {
                                  std::lock_guard lk(mu);
                                  bs = s;
                                  cb = std::move(c);
                                  b_done = true;
                                  cv.notify_all();
                                });
                    },
                    &l),
                STATUS_SUCCESS);
    });
    ASSERT_TRUE(l);
    tcp::ConnectArgs args;
    args.dst = l->local();
    if (route.via) args.dst.set_port(route.via(l->local().port()));
    args.ird = ird;
    args.ord = ord;
    run_in(route.connect_in, [&] {
      ASSERT_EQ(tcp::ActiveConnect::start(adapter_->engine().pick(), st, args,
                                          [&](tcp::ConnectResult r) {
                                            std::lock_guard lk(mu);
                                            as = r.status;
                                            ca = std::move(r.connection);
                                            a_done = true;
                                            cv.notify_all();
                                          }),
                STATUS_PENDING);
    });
    {
      std::unique_lock lk(mu);
      ASSERT_TRUE(cv.wait_for(lk, 5s, [&] { return a_done && b_done; }));
    }
    l->close();
    ASSERT_EQ(as, STATUS_SUCCESS);
    ASSERT_EQ(bs, STATUS_SUCCESS);
    *out_a = ca;
    *out_b = cb;
  }

  // A side owned by the fixture (outlives the test body until TearDown).
  Side& new_side(const SideConfig& c = {}) {
    owned_.push_back(std::make_unique<Side>());
    make_side(*owned_.back(), c);
    return *owned_.back();
  }

  void teardown_side(Side& s) {
    if (s.stream) s.stream->stop();
    if (s.conn) s.conn->abort();
  }

  Buf reg(NDK_PD* pd, size_t n, ULONG flags, uint8_t fill = 0) {
    Buf b;
    b.grave = &grave_;
    b.mem.assign(n == 0 ? 1 : n, fill);
    EXPECT_EQ(pd->Dispatch->NdkCreateMr(pd, FALSE, nullptr, nullptr, &b.mr), STATUS_SUCCESS);
    MDL mdl{};
    mdl.VirtualAddress = b.mem.data();
    mdl.ByteCount = b.mem.size();
    EXPECT_EQ(b.mr->Dispatch->NdkRegisterMr(b.mr, &mdl, b.mem.size(), flags, nullptr, nullptr),
              STATUS_SUCCESS);
    b.token = b.mr->Dispatch->NdkGetRemoteTokenFromMr(b.mr);
    return b;
  }
  // A fast-register MR on s's PD for up to max_pages pages, and the logical
  // address mapping of mem[0, n) to hand to NdkFastRegister.
  struct FrRegion {
    NDK_MR* mr = nullptr;
    std::vector<uint8_t> lam_buf;
    NDK_LOGICAL_ADDRESS_MAPPING* lam = nullptr;
    ULONG fbo = 0;
  };
  void prepare_fr(Side& s, uint8_t* mem, size_t n, ULONG max_pages, bool remote, FrRegion* out) {
    ASSERT_EQ(s.pd->Dispatch->NdkCreateMr(s.pd, TRUE, nullptr, nullptr, &out->mr), STATUS_SUCCESS);
    ASSERT_EQ(out->mr->Dispatch->NdkInitializeFastRegisterMr(out->mr, max_pages, remote, nullptr,
                                                             nullptr),
              STATUS_SUCCESS);
    MDL mdl{};
    mdl.VirtualAddress = mem;
    mdl.ByteCount = n;
    out->lam_buf.assign(
        sizeof(NDK_LOGICAL_ADDRESS_MAPPING) + 2 * max_pages * sizeof(NDK_LOGICAL_ADDRESS), 0);
    out->lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(out->lam_buf.data());
    ULONG lam_size = static_cast<ULONG>(out->lam_buf.size());
    ASSERT_EQ(
        a_->Dispatch->NdkBuildLAM(a_, &mdl, n, nullptr, nullptr, out->lam, &lam_size, &out->fbo),
        STATUS_SUCCESS);
  }

  static constexpr ULONG kAll = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                NDK_MR_FLAG_ALLOW_REMOTE_WRITE;

  // Busy-polls (this is what drives receive progress) for n completions.
  std::vector<NDK_RESULT_EX> poll(NDK_CQ* cq, size_t n, std::chrono::milliseconds t = 5000ms) {
    std::vector<NDK_RESULT_EX> out;
    auto deadline = std::chrono::steady_clock::now() + t;
    NDK_RESULT_EX r[64];
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      ULONG k = cq->Dispatch->NdkGetCqResultsEx(
          cq, r, static_cast<ULONG>(std::min<size_t>(64, n - out.size())));
      out.insert(out.end(), r, r + k);
      if (k == 0) std::this_thread::yield();
    }
    return out;
  }
  // Polls for `t` and returns whatever arrived (to check that nothing more does).
  std::vector<NDK_RESULT_EX> drain(NDK_CQ* cq, std::chrono::milliseconds t = 100ms) {
    return poll(cq, 1u << 30, t);
  }
  NDK_RESULT_EX poll1(NDK_CQ* cq) {
    auto v = poll(cq, 1);
    EXPECT_EQ(v.size(), 1u);
    return v.empty() ? NDK_RESULT_EX{} : v[0];
  }

  // An SGL over p[0, len): one entry, or (split, len > 1) two halves.
  // Returns the entry count (inline posts need no token).
  static ULONG sgl_of(uint8_t* p, ULONG len, bool split, NDK_SGE (&s)[2]) {
    s[0] = {{p}, len, 0};
    s[1] = {};
    if (!split || len < 2) return 1;
    s[0].Length = len / 2;
    s[1] = {{p + len / 2}, len - len / 2, 0};
    return 2;
  }
  static void fill_pattern(uint8_t* p, size_t n, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i) {
      x = x * 1103515245u + 12345u;
      p[i] = static_cast<uint8_t>(x >> 16);
    }
  }

  template <typename P>
  static bool eventually(P pred, std::chrono::milliseconds t = 5000ms) {
    auto deadline = std::chrono::steady_clock::now() + t;
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      std::this_thread::sleep_for(1ms);
    }
    return pred();
  }

  // An object a test body hands to the provider (a CQ notification context)
  // that must outlive the body: freed with the fixture, after TearDown.
  template <typename T>
  T& keep() {
    auto p = std::make_shared<T>();
    kept_.push_back(p);
    return *p;
  }

  // Declared first: destroyed last, after every Buf member of a derived fixture.
  Graveyard grave_;
  std::vector<std::shared_ptr<void>> kept_;
  NDK_ADAPTER* a_ = nullptr;
  ndk::Adapter* adapter_ = nullptr;
  std::vector<Side*> sides_;
  std::vector<std::shared_ptr<tcp::Connection>> raw_conns_;  // connect_raw()
  std::vector<std::unique_ptr<Side>> owned_;
};

}  // namespace dptest
