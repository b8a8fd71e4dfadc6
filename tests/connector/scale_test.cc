// SPDX-License-Identifier: Apache-2.0
// scale_test.cc - 1,000 connections held open at once through the NDK C
// ABI: 500 ordinary NdkConnects to one listener plus 10 shared endpoints
// each connecting to 50 distinct listener ports (a shared endpoint needs a
// distinct peer per connection), each with its own QP on both sides. The
// whole exchange is driven from the callbacks (CompleteConnect from the
// connect completion, Accept from the connect event, the passive side's
// Disconnect from its disconnect event). Then everything is disconnected and
// closed: every callback fired exactly once, and nothing leaked (file
// descriptors, heap).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <memory>
#include <vector>

#include "abi_util.h"
#include "ndk/endpoint_reservation.h"  // internal leak probe: endpoint reservations

namespace connector_test {
namespace {

enum Kind { kConnect, kComplete, kAccept, kClientDisc, kServerDisc, kKinds };

struct Scale;
struct Conn;

// One request completion of one connection.
struct Slot {
  Conn* conn = nullptr;
  Kind kind = kConnect;
  std::atomic<int> calls{0};
  std::atomic<NTSTATUS> st{STATUS_PENDING};
};

// A close completion.
struct CloseSlot {
  std::atomic<int> calls{0};
  NTSTATUS ret = STATUS_PENDING;
  static void cb(PVOID ctx) { static_cast<CloseSlot*>(ctx)->calls++; }
};

struct Conn {
  Scale* t = nullptr;
  uint32_t index = 0;  // sent as private data: the passive side finds its Conn
  NDK_QP* cqp = nullptr;
  NDK_QP* sqp = nullptr;
  NDK_CONNECTOR* cc = nullptr;
  std::atomic<NDK_CONNECTOR*> sc{nullptr};
  Slot slot[kKinds];
  std::atomic<NTSTATUS> inline_bad{STATUS_SUCCESS};  // a chained call that did not pend
  std::atomic<int> up{0};
  std::atomic<int> connect_events{0}, client_events{0}, server_events{0};
  CloseSlot close_cc, close_sc, close_cqp, close_sqp;
};

struct Scale {
  std::vector<std::unique_ptr<Conn>> conns;
  std::mutex mu;
  std::condition_variable cv;
  int established = 0, failed = 0, client_disc = 0, server_disc = 0;
  std::atomic<int> stray_events{0};  // connect events that matched no Conn

  void bump(int Scale::*field) {
    std::lock_guard lk(mu);
    ++(this->*field);
    cv.notify_all();
  }
  bool wait(int Scale::*field, int n, std::chrono::milliseconds t) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, t, [&] { return this->*field >= n; });
  }
  // Connections that finished setting up, either way.
  bool wait_settled(int n, std::chrono::milliseconds t) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, t, [&] { return established + failed >= n; });
  }
};

void on_client_event(PVOID ctx, ULONG) { static_cast<Conn*>(ctx)->client_events++; }

void on_request(PVOID ctx, NTSTATUS st);

void on_server_event(PVOID ctx) {
  auto* c = static_cast<Conn*>(ctx);
  c->server_events++;
  // The peer disconnected: answer with our own Disconnect (a provider call
  // from inside a provider callback).
  NDK_CONNECTOR* sc = c->sc.load();
  NTSTATUS r = sc->Dispatch->NdkDisconnect(sc, &on_request, &c->slot[kServerDisc]);
  if (r != STATUS_PENDING) {
    c->inline_bad = r;
    c->t->bump(&Scale::server_disc);
  }
}

void on_request(PVOID ctx, NTSTATUS st) {
  auto* s = static_cast<Slot*>(ctx);
  Conn* c = s->conn;
  Scale* t = c->t;
  s->st = st;
  s->calls++;
  switch (s->kind) {
    case kConnect: {
      if (st != STATUS_SUCCESS) return t->bump(&Scale::failed);
      NTSTATUS r = c->cc->Dispatch->NdkCompleteConnectEx(c->cc, &on_client_event, c, &on_request,
                                                         &c->slot[kComplete]);
      if (r != STATUS_PENDING) {
        c->inline_bad = r;
        t->bump(&Scale::failed);
      }
      return;
    }
    case kComplete:
    case kAccept:
      if (st != STATUS_SUCCESS) return t->bump(&Scale::failed);
      if (++c->up == 2) t->bump(&Scale::established);
      return;
    case kClientDisc:
      return t->bump(&Scale::client_disc);
    case kServerDisc:
      return t->bump(&Scale::server_disc);
    default:
      return;
  }
}

void on_connect_event(PVOID ctx, NDK_CONNECTOR* sc) {
  auto* t = static_cast<Scale*>(ctx);
  uint32_t index = UINT32_MAX;
  ULONG len = sizeof index;
  NTSTATUS st = sc->Dispatch->NdkGetConnectionData(sc, nullptr, nullptr, &index, &len);
  if (st != STATUS_SUCCESS || len != sizeof index || index >= t->conns.size()) {
    t->stray_events++;
    sc->Dispatch->NdkReject(sc, nullptr, 0);
    return;
  }
  Conn* c = t->conns[index].get();
  c->connect_events++;
  c->sc = sc;
  NTSTATUS r = sc->Dispatch->NdkAccept(sc, c->sqp, 4, 4, nullptr, 0, &on_server_event, c,
                                       &on_request, &c->slot[kAccept]);
  if (r != STATUS_PENDING) {
    c->inline_bad = r;
    t->bump(&Scale::failed);
  }
}

NTSTATUS close_with(void* obj, CloseSlot& s) {
  auto* h = static_cast<NDK_OBJECT_HEADER*>(obj);
  auto close_fn =
      *reinterpret_cast<NDK_FN_CLOSE_OBJECT const*>(reinterpret_cast<NDK_CONNECTOR*>(h)->Dispatch);
  s.ret = close_fn(h, &CloseSlot::cb, &s);
  return s.ret;
}

struct Shape {
  int plain;         // NdkConnect to listener 0
  int endpoints;     // shared endpoints ...
  int per_endpoint;  // ... each to this many distinct listener ports
  int total() const { return plain + endpoints * per_endpoint; }
};

// Opens an adapter, runs `shape` connections all open at once, disconnects
// and closes everything, closes the adapter. Assertions inside.
void run(const Shape& shape) {
  constexpr int kWindow = 100;  // connects in flight (listener backlog 128)
  const int total = shape.total();
  SOFTNDK_OPEN_PARAMETERS p{};
  p.Size = sizeof p;
  p.EngineThreads = 2;
  p.ConnectTimeoutMs = 20000;
  p.DisconnectTimeoutMs = 10000;
  NDK_ADAPTER* a = nullptr;
  ASSERT_EQ(SoftNdkOpenAdapter("lo", kVersion, &p, &a), STATUS_SUCCESS);
  auto* d = a->Dispatch;
  NDK_PD* pd = nullptr;
  NDK_CQ *ccq = nullptr, *scq = nullptr;
  ASSERT_EQ(d->NdkCreatePd(a, nullptr, nullptr, &pd), STATUS_SUCCESS);
  ASSERT_EQ(d->NdkCreateCq(a, 4096, nullptr, nullptr, nullptr, nullptr, nullptr, &ccq),
            STATUS_SUCCESS);
  ASSERT_EQ(d->NdkCreateCq(a, 4096, nullptr, nullptr, nullptr, nullptr, nullptr, &scq),
            STATUS_SUCCESS);

  Scale t;
  t.conns.reserve(total);
  for (int i = 0; i < total; ++i) {
    auto c = std::make_unique<Conn>();
    c->t = &t;
    c->index = static_cast<uint32_t>(i);
    for (int k = 0; k < kKinds; ++k) {
      c->slot[k].conn = c.get();
      c->slot[k].kind = static_cast<Kind>(k);
    }
    ASSERT_EQ(pd->Dispatch->NdkCreateQp(pd, ccq, ccq, c.get(), 16, 16, 1, 1, 0, nullptr, nullptr,
                                        &c->cqp),
              STATUS_SUCCESS);
    ASSERT_EQ(pd->Dispatch->NdkCreateQp(pd, scq, scq, c.get(), 16, 16, 1, 1, 0, nullptr, nullptr,
                                        &c->sqp),
              STATUS_SUCCESS);
    ASSERT_EQ(d->NdkCreateConnector(a, nullptr, nullptr, &c->cc), STATUS_SUCCESS);
    t.conns.push_back(std::move(c));
  }
  // Listener 0 takes the ordinary connects; 1..per_endpoint are the
  // distinct peers of every shared endpoint.
  std::vector<NDK_LISTENER*> listeners(1 + shape.per_endpoint);
  std::vector<sockaddr_in> ports(listeners.size());
  for (size_t i = 0; i < listeners.size(); ++i) {
    ASSERT_EQ(d->NdkCreateListener(a, &on_connect_event, &t, nullptr, nullptr, &listeners[i]),
              STATUS_SUCCESS);
    auto any = v4("127.0.0.1", 0);
    ASSERT_EQ(
        listeners[i]->Dispatch->NdkListen(listeners[i], sa(any), sizeof any, nullptr, nullptr),
        STATUS_SUCCESS);
    ULONG len = sizeof ports[i];
    ASSERT_EQ(listeners[i]->Dispatch->NdkGetLocalAddress(
                  listeners[i], reinterpret_cast<SOCKADDR*>(&ports[i]), &len),
              STATUS_SUCCESS);
  }
  std::vector<NDK_SHARED_ENDPOINT*> eps(shape.endpoints);
  std::vector<sockaddr_in> ep_addr(eps.size());
  for (size_t i = 0; i < eps.size(); ++i) {
    auto any = v4("127.0.0.1", 0);
    ASSERT_EQ(d->NdkCreateSharedEndpoint(a, sa(any), sizeof any, nullptr, nullptr, &eps[i]),
              STATUS_SUCCESS);
    ULONG len = sizeof ep_addr[i];
    ASSERT_EQ(eps[i]->Dispatch->NdkGetLocalAddress(eps[i], reinterpret_cast<SOCKADDR*>(&ep_addr[i]),
                                                   &len),
              STATUS_SUCCESS);
  }

  // Connect everything, at most kWindow in flight.
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < total; ++i) {
    ASSERT_TRUE(t.wait_settled(i - kWindow + 1, 20000ms))
        << "stalled at " << i << ", failed " << t.failed;
    Conn* c = t.conns[i].get();
    NTSTATUS st;
    if (i < shape.plain) {
      auto src = v4("127.0.0.1", 0);
      st = c->cc->Dispatch->NdkConnect(c->cc, c->cqp, sa(src), sizeof src, sa(ports[0]),
                                       sizeof ports[0], 4, 4, &c->index, sizeof c->index,
                                       &on_request, &c->slot[kConnect]);
    } else {
      int k = i - shape.plain;
      const sockaddr_in& dst = ports[1 + k % shape.per_endpoint];
      st = c->cc->Dispatch->NdkConnectWithSharedEndpoint(
          c->cc, c->cqp, eps[k / shape.per_endpoint], sa(dst), sizeof dst, 4, 4, &c->index,
          sizeof c->index, &on_request, &c->slot[kConnect]);
    }
    ASSERT_EQ(st, STATUS_PENDING) << i;
  }
  ASSERT_TRUE(t.wait_settled(total, 30000ms))
      << t.established << " established, " << t.failed << " failed";
  auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(t.failed, 0);
  EXPECT_EQ(t.stray_events.load(), 0);

  // All open at once.
  SOFTNDK_COUNTERS k{};
  ASSERT_EQ(SoftNdkQueryAdapterCounters(a, &k), STATUS_SUCCESS);
  EXPECT_EQ(k.ActiveConnection, 2u * total);
  EXPECT_EQ(k.Connect, static_cast<UINT64>(total));
  EXPECT_EQ(k.Accept, static_cast<UINT64>(total));
  for (int i = shape.plain; i < total; ++i) {
    sockaddr_in la{};
    ULONG len = sizeof la;
    Conn* c = t.conns[i].get();
    ASSERT_EQ(c->cc->Dispatch->NdkGetLocalAddress(c->cc, reinterpret_cast<SOCKADDR*>(&la), &len),
              STATUS_SUCCESS);
    EXPECT_EQ(la.sin_port, ep_addr[(i - shape.plain) / shape.per_endpoint].sin_port) << i;
  }

  // Disconnect from the active side; the passive side answers from its
  // disconnect event.
  for (auto& c : t.conns) {
    NTSTATUS st = c->cc->Dispatch->NdkDisconnect(c->cc, &on_request, &c->slot[kClientDisc]);
    EXPECT_EQ(st, STATUS_PENDING);
    if (st != STATUS_PENDING) t.bump(&Scale::client_disc);
  }
  EXPECT_TRUE(t.wait(&Scale::client_disc, total, 30000ms)) << t.client_disc;
  EXPECT_TRUE(t.wait(&Scale::server_disc, total, 30000ms)) << t.server_disc;
  ASSERT_EQ(SoftNdkQueryAdapterCounters(a, &k), STATUS_SUCCESS);
  EXPECT_EQ(k.ActiveConnection, 0u);

  // Close everything: connectors first (they hold their QPs and endpoints).
  for (auto& c : t.conns) {
    close_with(c->cc, c->close_cc);
    close_with(c->sc.load(), c->close_sc);
  }
  for (auto& c : t.conns) {
    close_with(c->cqp, c->close_cqp);
    close_with(c->sqp, c->close_sqp);
  }
  std::vector<CloseSlot> misc(listeners.size() + eps.size() + 3);
  size_t m = 0;
  for (auto* l : listeners) close_with(l, misc[m++]);
  for (auto* e : eps) close_with(e, misc[m++]);
  close_with(ccq, misc[m++]);
  close_with(scq, misc[m++]);
  close_with(pd, misc[m++]);
  auto all_closed = [&] {
    auto done = [](const CloseSlot& s) {
      return s.ret == STATUS_SUCCESS || (s.ret == STATUS_PENDING && s.calls.load() > 0);
    };
    for (auto& c : t.conns)
      if (!done(c->close_cc) || !done(c->close_sc) || !done(c->close_cqp) || !done(c->close_sqp))
        return false;
    for (auto& s : misc)
      if (!done(s)) return false;
    return true;
  };
  EXPECT_TRUE(eventually(all_closed, 20000ms));
  auto t2 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(100ms);  // a duplicate callback would land now

  // Every callback exactly once (close completions only when pended).
  auto close_once = [](const CloseSlot& s) {
    return (s.ret == STATUS_SUCCESS && s.calls.load() == 0) ||
           (s.ret == STATUS_PENDING && s.calls.load() == 1);
  };
  int bad = 0;
  for (auto& cp : t.conns) {
    Conn& c = *cp;
    bool ok = c.connect_events == 1 && c.server_events == 1 && c.client_events == 0 &&
              c.inline_bad == STATUS_SUCCESS && close_once(c.close_cc) && close_once(c.close_sc) &&
              close_once(c.close_cqp) && close_once(c.close_sqp);
    for (int s = 0; s < kKinds; ++s) {
      ok = ok && c.slot[s].calls == 1;
      ok = ok && c.slot[s].st == STATUS_SUCCESS;
    }
    if (!ok && ++bad <= 5) {
      ADD_FAILURE() << "connection " << c.index << ": connect event " << c.connect_events
                    << ", server event " << c.server_events << ", client event " << c.client_events
                    << ", completions " << c.slot[kConnect].calls << "/" << c.slot[kComplete].calls
                    << "/" << c.slot[kAccept].calls << "/" << c.slot[kClientDisc].calls << "/"
                    << c.slot[kServerDisc].calls << ", statuses " << std::hex << c.slot[kConnect].st
                    << "/" << c.slot[kComplete].st << "/" << c.slot[kAccept].st << "/"
                    << c.slot[kClientDisc].st << "/" << c.slot[kServerDisc].st << ", inline "
                    << c.inline_bad << std::dec << ", closes " << c.close_cc.calls << "/"
                    << c.close_sc.calls << "/" << c.close_cqp.calls << "/" << c.close_sqp.calls;
    }
  }
  EXPECT_EQ(bad, 0);
  for (auto& s : misc) EXPECT_TRUE(close_once(s));
  SoftNdkCloseAdapter(a);
  auto t3 = std::chrono::steady_clock::now();
  using ms = std::chrono::milliseconds;
  std::fprintf(stderr, "%d connections: open %lld ms, disconnect+close %lld ms, adapter %lld ms\n",
               total, static_cast<long long>(std::chrono::duration_cast<ms>(t1 - t0).count()),
               static_cast<long long>(std::chrono::duration_cast<ms>(t2 - t1).count()),
               static_cast<long long>(std::chrono::duration_cast<ms>(t3 - t2).count()));
}

TEST(ConnectorScale, ThousandConnectionsWithQpsOpenAtOnceThenClosedWithoutLeaks) {
  // Per connection: two sockets, each with the data path's own duplicate.
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < 4500) GTEST_SKIP() << "needs 4500 file descriptors";

  // Warm-up: one-time allocations (statics, thread arenas) are not leaks.
  run(Shape{4, 2, 3});
  if (HasFailure()) return;
  const int fds_before = open_fd_count();
  const long heap_before = heap_bytes();
  const long reservations_before = softndk::ndk::reservation_count();
  run(Shape{500, 10, 50});
  const int fds_after = open_fd_count();
  const long heap_after = heap_bytes();
  // Every listener, shared endpoint and accepted connector gave its
  // endpoint reference back (NDKPI.md 6.1).
  EXPECT_EQ(softndk::ndk::reservation_count(), reservations_before);
  std::fprintf(stderr, "fds %d -> %d, heap %ld -> %ld bytes\n", fds_before, fds_after, heap_before,
               heap_after);
  EXPECT_EQ(fds_after, fds_before);
  // A leak of even one small object per connection (1,000 x 64 bytes)
  // would show; allocator caches of the main thread stay below this.
  EXPECT_LT(heap_after - heap_before, 64 * 1024);
}

}  // namespace
}  // namespace connector_test
